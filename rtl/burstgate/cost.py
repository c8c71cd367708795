"""The vectorized I/O cost estimator (BurstCBS §5.3, Libra §4.3)."""

from amaranth import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .csr import BusSignature, CsrBlock
from .layouts import CostedDescriptor, Descriptor
from .regmap import C, REGMAP
from .trees import or_tree

__all__ = ["CostEstimator"]

_DIMS = C["COST_DIMS"]
_CLASSES = C["SIZE_CLASSES"]
_ENTRIES = C["PRODUCTS"] * 2 * _CLASSES
_COST_MAX = (1 << C["COST_BITS"]) - 1


#: Multiplier operands are cut at this bit: an unsigned 17-bit piece is one MULT18X18D input.
_SPLIT = 17
#: Pipeline stages from ``i`` to ``o`` (the latency in cycles).
_STAGES = 7
#: Descriptors accepted and not yet taken from ``o``: the pipeline's stages and one more, so
#: that a descriptor can be accepted every cycle while ``o`` is ready. The output buffer holds
#: them all when ``o`` is held.
_CREDITS = _STAGES + 1
_CLASS_BITS = (_CLASSES - 1).bit_length()


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
    per cycle (II = 1) while ``o.ready`` is high. Latency: 7 cycles from ``i`` to ``o``
    (more only while ``o`` is held).

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

        # The pipeline's tables: one RAM per (base|slope, dimension, size class), addressed by
        # (product, write), so that it reads the entries of all eight classes of a descriptor
        # in the cycle it is accepted, before its class is known. Addressed by the class, the
        # read waited for seven 24-bit compares and a priority encoder in that one cycle, the
        # cost estimator's ECP5 critical path. Register reads are served by a copy in the
        # register layout, one RAM per (base|slope, dimension) as before, written alongside:
        # reading the 32 small RAMs back would take a read port and a 32-way select each.
        # The register index is (entry, dimension), entry = (product*2 + write)*8 + class.
        tables = {}
        for kind, ext, width in (("base", csr.ext_table_base, C["TABLE_BASE_BITS"]),
                                 ("slope", csr.ext_table_slope, C["TABLE_SLOPE_BITS"])):
            assert len(ext.index) == 2 + _CLASS_BITS + (C["PRODUCTS"] * 2 - 1).bit_length()
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
                for k in range(_CLASSES):
                    cmem = Memory(shape=unsigned(width), depth=C["PRODUCTS"] * 2, init=[])
                    m.submodules[f"{kind}{d}_class{k}"] = cmem
                    cwp = cmem.write_port()
                    m.d.comb += [
                        cwp.addr.eq(ext.index[2 + _CLASS_BITS:]),
                        cwp.data.eq(ext.w_data),
                        cwp.en.eq(ext.w_en & (ext.index[:2 + _CLASS_BITS] == k * _DIMS + d)),
                    ]
                    tables[kind, d, k] = cmem.read_port()
            m.d.comb += ext.r_data.eq(Array(r_data)[r_sel])

        # The pipeline never stalls: every stage advances every cycle, with a valid bit, and
        # what reaches the end while ``o`` is held waits in an output buffer. A stall signal
        # (``o.valid & ~o.ready``) as the clock enable of every stage fanned out to about
        # 4 700 registers and 32 RAM read ports, the ECP5 critical path at 92.75 MHz (9.5 ns of
        # routing). ``i.ready`` is a register instead: a credit for each descriptor the buffer
        # can still take, counted from acceptance to ``o``.
        outstanding = Signal(range(_CREDITS + 1))
        ready = Signal(init=1)
        taken = Signal()
        accept = Signal()
        m.d.comb += [
            self.i.ready.eq(ready),
            accept.eq(self.i.valid & ready),
            taken.eq(self.o.valid & self.o.ready),
        ]
        after = Signal(range(_CREDITS + 2))
        m.d.comb += after.eq(outstanding + accept - taken)
        m.d.sync += [outstanding.eq(after), ready.eq(after < _CREDITS)]

        # Stage 1: every class's table entries, each class bound compared and subtracted
        # (in parallel: size - SIZE_LO[k] is delta if the class is k + 1), the factors.
        desc = self.i.payload
        for (_, _, _), rp in tables.items():
            m.d.comb += rp.addr.eq(desc.product * 2 + desc.write)
        # Stage 2: the class (the highest whose bound the size reaches: SIZE_LO need not be
        # sorted) selects its entries and delta. Stage 1 registers only the compares, as the
        # borrows of the subtractions it makes anyway, in one copy per group of selected words
        # (one copy fanning out to all 248 bits was the next ECP5 critical path, 5.9 ns of
        # routing; the priority encoder behind the compares the one after it); each group
        # makes its own one-hot select from its copy and an AND-OR of the eight.
        groups = ["delta"] + [f"{kind}{d}" for kind in ("base", "slope") for d in range(_DIMS)]
        # ``bg_replica``: the synthesis flows keep these registers apart (yosys would merge
        # registers with the same input into one; scripts/synth.py, pnr_ecp5.py).
        s1_ge = {g: Signal(_CLASSES, name=f"s1_ge_{g}", attrs={"bg_replica": 1}) for g in groups}
        s1_delta = [Signal(C["SIZE_BITS"], name=f"s1_delta{k}") for k in range(_CLASSES)]

        def select(group, words):
            ge = s1_ge[group]
            onehot = [ge[k] & ~ge[k + 1:].any() for k in range(_CLASSES - 1)] + [ge[_CLASSES - 1]]
            return or_tree([Mux(onehot[k], w, 0) for k, w in enumerate(words)])

        delta = Signal(C["SIZE_BITS"], name="s2_delta")
        entry = {(kind, d): Signal(len(tables[kind, d, 0].data), name=f"s2_{kind}{d}")
                 for kind in ("base", "slope") for d in range(_DIMS)}

        # Every product is formed from <= 17 x 17-bit pieces, one MULT18X18D each, whose
        # outputs are registered before they are summed: on the ECP5 the multiplier and the
        # carry chain that adds its pieces did not fit in one 10 ns cycle together.
        S = _STAGES
        valid = [Signal(name=f"s{n}_valid") for n in range(1, S + 1)]
        payload = [Signal(Descriptor, name=f"s{n}_desc") for n in range(1, S + 1)]
        factor = [[Signal(C["FACTOR_BITS"], name=f"s{n}_factor{d}") for d in range(_DIMS)]
                  for n in (1, 2, 3, 4, 5)]
        # s3: the four pieces of delta * slope, and the base.
        pieces = [{(a, b): Signal(_width(delta, a) + _width(entry["slope", d], b),
                                  name=f"s3_pp{a}{b}_{d}")
                   for a in (0, 1) for b in (0, 1)} for d in range(_DIMS)]
        base3 = [Signal(C["TABLE_BASE_BITS"], name=f"s3_base{d}") for d in range(_DIMS)]
        # s4: base * 2**SLOPE_SHIFT + the lo*lo and hi*hi pieces (disjoint bits: no carry
        # between them), and the two cross pieces added.
        outer = [Signal(max(C["TABLE_BASE_BITS"] + C["SLOPE_SHIFT"], C["SIZE_BITS"] + C["TABLE_SLOPE_BITS"]) + 1,
                        name=f"s4_outer{d}") for d in range(_DIMS)]
        cross = [Signal(max(len(p) for p in pieces[d].values()) + 1, name=f"s4_cross{d}")
                 for d in range(_DIMS)]
        # s5: base + the slope term, saturated.
        raw = [Signal(C["COST_BITS"], name=f"s5_raw{d}") for d in range(_DIMS)]
        # s6: the two pieces of raw * factor.
        scaled = [[Signal(_width(raw[d], a) + C["FACTOR_BITS"], name=f"s6_pp{a}_{d}") for a in (0, 1)]
                  for d in range(_DIMS)]

        out_cost = [Signal(C["COST_BITS"], name=f"s{S}_cost{d}") for d in range(_DIMS)]
        m.d.sync += [valid[0].eq(accept), payload[0].eq(desc)]
        m.d.sync += [factor[0][d].eq(csr.factor[d]) for d in range(_DIMS)]
        m.d.sync += s1_delta[0].eq(desc.size)
        ge = [Const(1, 1)]  # ge[k]: size >= the lower bound of class k, the subtraction's carry
        for k in range(1, _CLASSES):
            diff = Signal(C["SIZE_BITS"] + 1, name=f"diff{k}")
            m.d.comb += diff.eq(Cat(desc.size, Const(1, 1)) - csr.size_lo[k - 1])
            ge.append(diff[-1])
            m.d.sync += s1_delta[k].eq(diff[:-1])
        m.d.sync += [copy.eq(Cat(*ge)) for copy in s1_ge.values()]
        for n in range(1, S):
            m.d.sync += [valid[n].eq(valid[n - 1]), payload[n].eq(payload[n - 1])]
        for n in range(1, 5):
            m.d.sync += [factor[n][d].eq(factor[n - 1][d]) for d in range(_DIMS)]
        m.d.sync += delta.eq(select("delta", s1_delta))
        for (kind, d), sig in entry.items():
            m.d.sync += sig.eq(select(f"{kind}{d}", [tables[kind, d, k].data for k in range(_CLASSES)]))
        for d in range(_DIMS):
            slope = entry["slope", d]
            m.d.sync += [
                [pieces[d][a, b].eq(_piece(delta, a) * _piece(slope, b)) for (a, b) in pieces[d]],
                base3[d].eq(entry["base", d]),
            ]
            pp = pieces[d]
            m.d.sync += [
                outer[d].eq((base3[d] << C["SLOPE_SHIFT"]) + Cat(pp[0, 0], pp[1, 1])),
                cross[d].eq(pp[0, 1] + pp[1, 0]),
            ]
            # base + (delta * slope >> SLOPE_SHIFT) == (base << SLOPE_SHIFT + delta * slope)
            # >> SLOPE_SHIFT, as base << SLOPE_SHIFT has no bits below SLOPE_SHIFT.
            total = outer[d] + (cross[d] << _SPLIT)
            m.d.sync += raw[d].eq(_saturate(total >> C["SLOPE_SHIFT"], C["COST_BITS"]))
            m.d.sync += [scaled[d][a].eq(_piece(raw[d], a) * factor[4][d]) for a in (0, 1)]
            product = scaled[d][0] + (scaled[d][1] << _SPLIT)
            m.d.sync += out_cost[d].eq(_saturate(product >> C["FACTOR_FRAC_BITS"], C["COST_BITS"]))

        # The output: the last stage straight through while the buffer is empty (latency 7),
        # else the buffer's head; the last stage goes into the buffer when it is not taken
        # now or the buffer holds older descriptors. The credits keep the buffer from
        # overflowing: it never holds more than was accepted and not taken.
        last = Signal(CostedDescriptor)
        m.d.comb += [last.desc.eq(payload[S - 1])] + [last.cost[d].eq(out_cost[d]) for d in range(_DIMS)]
        m.submodules.out_buf = out_buf = SyncFIFO(width=len(last.as_value()), depth=_CREDITS)
        m.d.comb += [
            self.o.valid.eq(out_buf.r_rdy | valid[S - 1]),
            self.o.payload.eq(Mux(out_buf.r_rdy, out_buf.r_data, last.as_value())),
            out_buf.r_en.eq(self.o.ready),
            out_buf.w_data.eq(last.as_value()),
            out_buf.w_en.eq(valid[S - 1] & (out_buf.r_rdy | ~self.o.ready)),
        ]
        return m
