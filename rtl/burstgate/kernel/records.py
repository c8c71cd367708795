"""Ring records (``burstgate.regmap.records``) to and from the datapath's stream layouts.

Fields match by name (layout ``tag`` is record field ``TAG``); a layout field is the low bits
of its record field, and a record field wider than its layout field is zero-extended.
"""

from amaranth import Signal
from amaranth.lib import data

__all__ = ["from_record", "to_record"]


def _pairs(record, layout):
    for name, field in layout:
        rf = record.field(name.upper())
        shape = field.shape
        if isinstance(shape, data.ArrayLayout):
            if shape.length != rf.count:
                raise TypeError(f"{record.name}.{rf.name}: {rf.count} elements, layout has {shape.length}")
            width = data.Layout.cast(shape.elem_shape).size if isinstance(shape.elem_shape, data.Layout) \
                else shape.elem_shape.width
        else:
            if rf.count != 1:
                raise TypeError(f"{record.name}.{rf.name} is an array, layout field {name!r} is not")
            width = shape.width
        if width > rf.width:
            raise TypeError(f"{record.name}.{rf.name}: {rf.width} bits cannot carry {name!r} ({width} bits)")
        yield name, rf, width


def from_record(m, record, layout, bits):
    """A ``layout`` view of the record held in ``bits`` (combinational)."""
    out = Signal(layout)
    for name, rf, width in _pairs(record, layout):
        target = out[name]
        for i in range(rf.count):
            lo = rf.bit + i * rf.width
            dst = target[i] if rf.count > 1 else target
            m.d.comb += dst.eq(bits[lo:lo + width])
    return out


def to_record(m, record, layout, value):
    """The record's bits for a ``layout`` value (combinational); unused bits are 0."""
    out = Signal(record.size * 8)
    for name, rf, width in _pairs(record, layout):
        source = value[name]
        for i in range(rf.count):
            lo = rf.bit + i * rf.width
            src = source[i] if rf.count > 1 else source
            m.d.comb += out[lo:lo + rf.width].eq(src)
    return out
