"""The vectorized I/O cost estimator (BurstCBS §5.3, Libra §4.3)."""

from amaranth import Array, Module, Mux, Signal, unsigned
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


def _saturate(value, width):
    """``value`` clamped to ``width`` unsigned bits."""
    return Mux(value[width:].any(), (1 << width) - 1, value[:width])


class CostEstimator(wiring.Component):
    """Cost every descriptor as a vector [cpu, ingress, egress, swlimit].

    Implements the formula of the COST block in ``docs/registers.md``: a programmable table
    per (product, read/write, size class), linear within the class, times a per-dimension
    Q4.12 adjustment factor, each stage saturating at 32 bits. Throughput: one descriptor
    per cycle (II = 1) while ``o.ready`` is high. Latency: 5 cycles from ``i`` to ``o``.

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

        valid = [Signal(name=f"s{n}_valid") for n in range(1, 6)]
        payload = [Signal(Descriptor, name=f"s{n}_desc") for n in range(1, 6)]
        delta = Signal(C["SIZE_BITS"])
        factor = [Signal(C["FACTOR_BITS"], name=f"s1_factor{d}") for d in range(_DIMS)]
        product = [Signal(C["SIZE_BITS"] + C["TABLE_SLOPE_BITS"], name=f"s2_prod{d}") for d in range(_DIMS)]
        base2 = [Signal(C["TABLE_BASE_BITS"], name=f"s2_base{d}") for d in range(_DIMS)]
        raw = [Signal(C["COST_BITS"], name=f"s3_raw{d}") for d in range(_DIMS)]
        scaled = [Signal(C["COST_BITS"] + C["FACTOR_BITS"], name=f"s4_scaled{d}") for d in range(_DIMS)]
        factor_pipe = [[Signal(C["FACTOR_BITS"], name=f"s{n}_factor{d}") for d in range(_DIMS)]
                       for n in (2, 3)]

        with m.If(advance):
            m.d.sync += [valid[0].eq(self.i.valid), payload[0].eq(desc), delta.eq(desc.size - lower)]
            m.d.sync += [factor[d].eq(csr.factor[d]) for d in range(_DIMS)]
            for n in range(1, 5):
                m.d.sync += [valid[n].eq(valid[n - 1]), payload[n].eq(payload[n - 1])]
            for d in range(_DIMS):
                # Stage 2: table data is out of the RAM; multiply the offset into the class.
                m.d.sync += [
                    product[d].eq(delta * tables["slope", d].data),
                    base2[d].eq(tables["base", d].data),
                    factor_pipe[0][d].eq(factor[d]),
                ]
                # Stage 3: base plus slope term, saturated.
                m.d.sync += [
                    raw[d].eq(_saturate(base2[d] + (product[d] >> C["SLOPE_SHIFT"]), C["COST_BITS"])),
                    factor_pipe[1][d].eq(factor_pipe[0][d]),
                ]
                # Stage 4: times the adjustment factor.
                m.d.sync += scaled[d].eq(raw[d] * factor_pipe[1][d])
                # Stage 5: drop the fraction, saturate.
                m.d.sync += self.o.payload.cost[d].eq(
                    _saturate(scaled[d] >> C["FACTOR_FRAC_BITS"], C["COST_BITS"]))

        m.d.comb += [self.o.valid.eq(valid[4]), self.o.payload.desc.eq(payload[4])]
        return m
