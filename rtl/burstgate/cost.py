"""The vectorized I/O cost estimator (BurstCBS §5.3, Libra §4.3)."""

from amaranth import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .csr import BusSignature, CsrBlock
from .layouts import CostedDescriptor, Descriptor
from .regmap import C, REGMAP

__all__ = ["CostEstimator"]

_DIMS = C["COST_DIMS"]
_CLASSES = C["SIZE_CLASSES"]
_ENTRIES = C["PRODUCTS"] * 2 * _CLASSES
_COST_MAX = (1 << C["COST_BITS"]) - 1


#: Multiplier operands are cut at this bit: an unsigned 17-bit piece is one MULT18X18D input.
_SPLIT = 17
#: Pipeline stages from ``i`` to ``o`` (the latency in cycles).
_STAGES = 6


def _width(value, half):
    """Bits of the low (``half`` 0) or high (1) piece of ``value`` cut at ``_SPLIT``."""
    return min(len(value), _SPLIT) if half == 0 else max(len(value) - _SPLIT, 1)


def _piece(value, half):
    return value[:_SPLIT] if half == 0 else value[_SPLIT:] if len(value) > _SPLIT else Const(0, 1)


def _saturate(value, width):
    """``value`` clamped to ``width`` unsigned bits."""
    return Mux(value[width:].any(), (1 << width) - 1, value[:width])


class CostEstimator(wiring.Component):
    """Cost every descriptor as a vector [cpu, ingress, egress, swlimit].

    Implements the formula of the COST block in ``docs/registers.md``: a programmable table
    per (product, read/write, size class), linear within the class, times a per-dimension
    Q4.12 adjustment factor, each stage saturating at 32 bits. Throughput: one descriptor
    per cycle (II = 1) while ``o.ready`` is high. Latency: 6 cycles from ``i`` to ``o``.

    A descriptor is costed with the registers as they were in the cycle it was accepted;
    a register write in that same cycle applies to later descriptors only. This is what
    lets the reference model reproduce every cost given the ordered stream of register
    writes and descriptors.

    Members
    -------
    i : In(stream.Signature(Descriptor))
        Descriptors to cost.
    o : Out(stream.Signature(CostedDescriptor))
        The same descriptors, in order, with their cost vector.
    bus : In(BusSignature(addr_width=13))
        The COST register block (block-relative byte addresses).
    """

    def __init__(self):
        self._block = REGMAP.block("COST")
        super().__init__({
            "i": In(stream.Signature(Descriptor)),
            "o": Out(stream.Signature(CostedDescriptor)),
            "bus": In(BusSignature(addr_width=(self._block.size - 1).bit_length())),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.csr = csr = CsrBlock(block=self._block)
        wiring.connect(m, wiring.flipped(self.bus), csr.bus)

        # One RAM per (base|slope, dimension): a register write touches one of them, and the
        # pipeline reads all four dimensions of an entry in the same cycle.
        tables = {}
        for kind, ext, width in (("base", csr.ext_table_base, C["TABLE_BASE_BITS"]),
                                 ("slope", csr.ext_table_slope, C["TABLE_SLOPE_BITS"])):
            r_sel = Signal(range(_DIMS))
            with m.If(ext.r_en):
                m.d.sync += r_sel.eq(ext.index[:2])
            r_data = []
            for d in range(_DIMS):
                mem = Memory(shape=unsigned(width), depth=_ENTRIES, init=[])
                m.submodules[f"{kind}{d}"] = mem
                wp = mem.write_port()
                m.d.comb += [
                    wp.addr.eq(ext.index[2:]),
                    wp.data.eq(ext.w_data),
                    wp.en.eq(ext.w_en & (ext.index[:2] == d)),
                ]
                csr_rp = mem.read_port()
                m.d.comb += [csr_rp.addr.eq(ext.index[2:]), csr_rp.en.eq(ext.r_en)]
                r_data.append(csr_rp.data)
                tables[kind, d] = mem.read_port()
            m.d.comb += ext.r_data.eq(Array(r_data)[r_sel])

        # The whole pipeline advances together; it stalls only when the output is held.
        advance = Signal()
        m.d.comb += [advance.eq(~self.o.valid | self.o.ready), self.i.ready.eq(advance)]

        # Stage 1: size class from the bounds, table address, snapshot of the factors.
        desc = self.i.payload
        size_class = Signal(range(_CLASSES))
        lower = Signal(C["SIZE_BITS"])
        for k in range(1, _CLASSES):
            with m.If(desc.size >= csr.size_lo[k - 1]):
                m.d.comb += [size_class.eq(k), lower.eq(csr.size_lo[k - 1])]
        entry = Signal(range(_ENTRIES))
        m.d.comb += entry.eq((desc.product * 2 + desc.write) * _CLASSES + size_class)
        for (_, _), rp in tables.items():
            m.d.comb += [rp.addr.eq(entry), rp.en.eq(advance)]

        # Every product is formed from <= 17 x 17-bit pieces, one MULT18X18D each, whose
        # outputs are registered before they are summed: on the ECP5 the multiplier and the
        # carry chain that adds its pieces did not fit in one 10 ns cycle together.
        S = _STAGES
        valid = [Signal(name=f"s{n}_valid") for n in range(1, S + 1)]
        payload = [Signal(Descriptor, name=f"s{n}_desc") for n in range(1, S + 1)]
        delta = Signal(C["SIZE_BITS"])
        factor = [Signal(C["FACTOR_BITS"], name=f"s1_factor{d}") for d in range(_DIMS)]
        factor_pipe = [[Signal(C["FACTOR_BITS"], name=f"s{n}_factor{d}") for d in range(_DIMS)]
                       for n in (2, 3, 4)]
        # s2: the four pieces of delta * slope, and the base.
        pieces = [{(a, b): Signal(_width(delta, a) + _width(tables["slope", d].data, b),
                                  name=f"s2_pp{a}{b}_{d}")
                   for a in (0, 1) for b in (0, 1)} for d in range(_DIMS)]
        base2 = [Signal(C["TABLE_BASE_BITS"], name=f"s2_base{d}") for d in range(_DIMS)]
        # s3: base * 2**SLOPE_SHIFT + the lo*lo and hi*hi pieces (disjoint bits: no carry
        # between them), and the two cross pieces added.
        outer = [Signal(max(C["TABLE_BASE_BITS"] + C["SLOPE_SHIFT"], C["SIZE_BITS"] + C["TABLE_SLOPE_BITS"]) + 1,
                        name=f"s3_outer{d}") for d in range(_DIMS)]
        cross = [Signal(max(len(p) for p in pieces[d].values()) + 1, name=f"s3_cross{d}")
                 for d in range(_DIMS)]
        # s4: base + the slope term, saturated.
        raw = [Signal(C["COST_BITS"], name=f"s4_raw{d}") for d in range(_DIMS)]
        # s5: the two pieces of raw * factor.
        scaled = [[Signal(_width(raw[d], a) + C["FACTOR_BITS"], name=f"s5_pp{a}_{d}") for a in (0, 1)]
                  for d in range(_DIMS)]

        with m.If(advance):
            m.d.sync += [valid[0].eq(self.i.valid), payload[0].eq(desc), delta.eq(desc.size - lower)]
            m.d.sync += [factor[d].eq(csr.factor[d]) for d in range(_DIMS)]
            for n in range(1, S):
                m.d.sync += [valid[n].eq(valid[n - 1]), payload[n].eq(payload[n - 1])]
            for d in range(_DIMS):
                slope = tables["slope", d].data
                m.d.sync += [
                    [pieces[d][a, b].eq(_piece(delta, a) * _piece(slope, b)) for (a, b) in pieces[d]],
                    base2[d].eq(tables["base", d].data),
                    factor_pipe[0][d].eq(factor[d]),
                ]
                pp = pieces[d]
                m.d.sync += [
                    outer[d].eq((base2[d] << C["SLOPE_SHIFT"]) + Cat(pp[0, 0], pp[1, 1])),
                    cross[d].eq(pp[0, 1] + pp[1, 0]),
                    factor_pipe[1][d].eq(factor_pipe[0][d]),
                ]
                # base + (delta * slope >> SLOPE_SHIFT) == (base << SLOPE_SHIFT + delta * slope)
                # >> SLOPE_SHIFT, as base << SLOPE_SHIFT has no bits below SLOPE_SHIFT.
                total = outer[d] + (cross[d] << _SPLIT)
                m.d.sync += [
                    raw[d].eq(_saturate(total >> C["SLOPE_SHIFT"], C["COST_BITS"])),
                    factor_pipe[2][d].eq(factor_pipe[1][d]),
                ]
                m.d.sync += [scaled[d][a].eq(_piece(raw[d], a) * factor_pipe[2][d]) for a in (0, 1)]
                product = scaled[d][0] + (scaled[d][1] << _SPLIT)
                m.d.sync += self.o.payload.cost[d].eq(
                    _saturate(product >> C["FACTOR_FRAC_BITS"], C["COST_BITS"]))

        m.d.comb += [self.o.valid.eq(valid[S - 1]), self.o.payload.desc.eq(payload[S - 1])]
        return m
