"""Payload layouts of the datapath's streams. Widths come from the register map's constants."""

from amaranth import unsigned
from amaranth.lib import data

from .regmap import C

__all__ = ["Descriptor", "CostVector", "CostedDescriptor", "Decision", "Completion", "pack", "unpack"]

#: One I/O as the VM queue hands it to the datapath.
Descriptor = data.StructLayout({
    "tag":     unsigned(C["TAG_BITS"]),      # echoed on the decision and the completion
    "tenant":  unsigned(C["TENANT_BITS"]),
    "queue":   unsigned(C["QUEUE_BITS"]),    # ingress (vCPU) queue
    "product": unsigned((C["PRODUCTS"] - 1).bit_length()),
    "write":   unsigned(1),
    "size":    unsigned(C["SIZE_BITS"]),     # bytes
    "segment": unsigned(C["SEGMENT_BITS"]),
    # The host offers a deferred I/O again: the segment monitor classifies it but does not
    # count it (Still Water §4.2 counts requests, not offers).
    "reoffer": unsigned(1),
})

#: [cpu ns, ingress bytes, egress bytes, swlimit bytes], each saturating at 2**32 - 1.
CostVector = data.ArrayLayout(unsigned(C["COST_BITS"]), C["COST_DIMS"])

#: A descriptor with its estimated cost, as the cost estimator emits it.
CostedDescriptor = data.StructLayout({
    "desc": Descriptor,
    "cost": CostVector,
})

#: The datapath's verdict on one descriptor (``IoDecision`` in burstgate/model/agent.hpp).
Decision = data.StructLayout({
    "tag":     unsigned(C["TAG_BITS"]),
    "tenant":  unsigned(C["TENANT_BITS"]),
    "queue":   unsigned(C["QUEUE_BITS"]),    # ingress queue
    "source":  unsigned(C["SRC_BITS"]),       # SRC_* constants of the register map
    "lender":  unsigned(C["TENANT_BITS"]),   # valid for SRC_BORROW
    "egress":  unsigned(C["QUEUE_BITS"]),    # valid when admitted (source < SRC_DEFER)
    "hot":     unsigned(1),                   # the segment was hot for this I/O
    "prefill": unsigned(1),                   # its buffer came from the shared pool
    "cost":    CostVector,
})

#: An I/O the storage agent finished (``IoCompletion`` in agent.hpp): it names the egress,
#: queue and charge its decision carried, so the datapath keeps no per-tag table.
Completion = data.StructLayout({
    "tag":         unsigned(C["TAG_BITS"]),
    "tenant":      unsigned(C["TENANT_BITS"]),
    "queue":       unsigned(C["QUEUE_BITS"]),
    "egress":      unsigned(C["QUEUE_BITS"]),
    "charge_ns":   unsigned(C["COST_BITS"]),  # the decision's cpu cost
    "sa_delay_ns": unsigned(32),              # time in the storage agent, backend excluded
})


def pack(layout, value):
    """The integer a ``layout``-shaped port carries for ``value``.

    ``value`` is a mapping for a struct layout, a sequence for an array layout, or an int.
    Used by testbenches and host tools that see the flattened Verilog ports.
    """
    if isinstance(layout, data.StructLayout):
        unknown = set(value) - {name for name, _ in layout}
        if unknown:
            raise KeyError(f"layout has no field {sorted(unknown)[0]!r}")
        fields = ((field, value.get(name, 0)) for name, field in layout)
    elif isinstance(layout, data.ArrayLayout):
        if len(value) != layout.length:
            raise ValueError(f"expected {layout.length} elements, not {len(value)}")
        fields = ((layout[i], v) for i, v in enumerate(value))
    else:
        raise TypeError(f"Layout must be a StructLayout or ArrayLayout, not {layout!r}")
    result = 0
    for field, v in fields:
        shape = field.shape
        if isinstance(shape, data.Layout):
            v = pack(shape, v)
        width = data.Layout.cast(shape).size if isinstance(shape, data.Layout) else shape.width
        if not 0 <= v < (1 << width):
            raise ValueError(f"{v!r} does not fit {width} bits")
        result |= v << field.offset
    return result


def unpack(layout, value):
    """Inverse of :func:`pack`: a dict (struct) or list (array) of ints."""
    def field_value(field):
        shape = field.shape
        if isinstance(shape, data.Layout):
            return unpack(shape, (value >> field.offset) & ((1 << shape.size) - 1))
        return (value >> field.offset) & ((1 << shape.width) - 1)
    if isinstance(layout, data.StructLayout):
        return {name: field_value(field) for name, field in layout}
    if isinstance(layout, data.ArrayLayout):
        return [field_value(layout[i]) for i in range(layout.length)]
    raise TypeError(f"Layout must be a StructLayout or ArrayLayout, not {layout!r}")
