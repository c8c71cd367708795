"""The vectorized I/O cost estimator (BurstCBS §5.3, Libra §4.3)."""

from amaranth import Array, Cat, ClockSignal, Const, Instance, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
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
_STAGES = 9
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


def _is_ecp5(platform):
    """Whether ``platform`` targets a Lattice ECP5 (``LFE5U-…``/``LFE5UM-…``): the board's
    platform, or the stand-in ``scripts/pnr_ecp5.py`` elaborates out-of-context blocks with."""
    return str(getattr(platform, "device", "")).startswith("LFE5")


def _registered_product(m, platform, a, b, name):
    """``a * b`` of the operands as they were one cycle earlier (both at most 17 bits).

    The operands are registered, then multiplied: the product is combinational from those
    registers, and the caller registers it. On the ECP5 those registers are the MULT18X18D's
    own input registers (``REG_INPUTA_CLK``/``REG_INPUTB_CLK``), instantiated here because
    yosys's ECP5 flow maps a multiplier without them and nextpnr does not move fabric
    flip-flops into the DSP: with the operands' registers in fabric, the routing from them to
    the DSP (3.6 ns) and the multiplier (3.9 ns) were one cycle, the cost estimator's ECP5
    critical path at 103.7 MHz (issue 22). Elsewhere (simulation, Verilator, UltraScale+) they
    are ordinary registers with the same timing, so every flow computes the same values.
    """
    assert len(a) <= _SPLIT and len(b) <= _SPLIT
    width = len(a) + len(b)
    if not _is_ecp5(platform):
        a_r = Signal(len(a), name=f"{name}_a", reset_less=True)
        b_r = Signal(len(b), name=f"{name}_b", reset_less=True)
        m.d.sync += [a_r.eq(a), b_r.eq(b)]
        return a_r * b_r
    p = Signal(36, name=f"{name}_p")
    zero = Const(0, 1)
    ports = {f"i_A{k}": a[k] if k < len(a) else zero for k in range(18)}
    ports |= {f"i_B{k}": b[k] if k < len(b) else zero for k in range(18)}
    ports |= {f"i_C{k}": zero for k in range(18)}
    ports |= {f"o_P{k}": p[k] for k in range(36)}
    m.submodules[name] = Instance(
        "MULT18X18D",
        p_REG_INPUTA_CLK="CLK0", p_REG_INPUTA_CE="CE0", p_REG_INPUTA_RST="RST0",
        p_REG_INPUTB_CLK="CLK0", p_REG_INPUTB_CE="CE0", p_REG_INPUTB_RST="RST0",
        p_REG_INPUTC_CLK="NONE", p_REG_PIPELINE_CLK="NONE", p_REG_OUTPUT_CLK="NONE",
        p_CLK0_DIV="ENABLED", p_GSR="DISABLED", p_RESETMODE="SYNC",
        p_SOURCEB_MODE="B_SHIFT", p_MULT_BYPASS="DISABLED",
        i_SIGNEDA=zero, i_SIGNEDB=zero, i_SOURCEA=zero, i_SOURCEB=zero,
        i_CLK0=ClockSignal(), i_CE0=Const(1, 1), i_RST0=zero,
        **ports)
    return p[:width]


class CostEstimator(wiring.Component):
    """Cost every descriptor as a vector [cpu, ingress, egress, swlimit].

    Implements the formula of the COST block in ``docs/registers.md``: a programmable table
    per (product, read/write, size class), linear within the class, times a per-dimension
    Q4.12 adjustment factor, each stage saturating at 32 bits. Throughput: one descriptor
    per cycle (II = 1) while ``o.ready`` is high. Latency: 9 cycles from ``i`` to ``o``
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

        # Stage 2 registers each selected word in two halves, the AND-OR of classes 0-3 and
        # of 4-7, and stage 3 ORs them on the way into the multipliers' input registers (and
        # the base's register): the eight-way AND-OR in one cycle was the cost estimator's
        # ECP5 critical path once the multipliers had their input registers (112.7 MHz,
        # 3.8 ns of routing after the tree).
        def select(group, words, width, name):
            ge = s1_ge[group]
            onehot = [ge[k] & ~ge[k + 1:].any() for k in range(_CLASSES - 1)] + [ge[_CLASSES - 1]]
            masked = [Mux(onehot[k], w, 0) for k, w in enumerate(words)]
            half = _CLASSES // 2
            lo, hi = Signal(width, name=f"{name}_lo"), Signal(width, name=f"{name}_hi")
            m.d.sync += [lo.eq(or_tree(masked[:half])), hi.eq(or_tree(masked[half:]))]
            whole = Signal(width, name=name)
            m.d.comb += whole.eq(lo | hi)
            return whole

        delta = select("delta", s1_delta, C["SIZE_BITS"], "s2_delta")
        entry = {(kind, d): select(f"{kind}{d}", [tables[kind, d, k].data for k in range(_CLASSES)],
                                   len(tables[kind, d, 0].data), f"s2_{kind}{d}")
                 for kind in ("base", "slope") for d in range(_DIMS)}

        # Every product is formed from <= 17 x 17-bit pieces, one MULT18X18D each, whose
        # outputs are registered before they are summed: on the ECP5 the multiplier and the
        # carry chain that adds its pieces did not fit in one 10 ns cycle together. The
        # operands are registered a stage before the multipliers, in the DSPs on the ECP5
        # (``_registered_product``): stages 3 and 7.
        S = _STAGES
        valid = [Signal(name=f"s{n}_valid") for n in range(1, S + 1)]
        payload = [Signal(Descriptor, name=f"s{n}_desc") for n in range(1, S + 1)]
        factor = [[Signal(C["FACTOR_BITS"], name=f"s{n}_factor{d}") for d in range(_DIMS)]
                  for n in range(1, 7)]
        # s3: the operands of delta * slope (in the multipliers), the base; s4: the four
        # pieces of delta * slope, the base.
        pieces = [{(a, b): Signal(_width(delta, a) + _width(entry["slope", d], b),
                                  name=f"s4_pp{a}{b}_{d}")
                   for a in (0, 1) for b in (0, 1)} for d in range(_DIMS)]
        base3 = [Signal(C["TABLE_BASE_BITS"], name=f"s3_base{d}") for d in range(_DIMS)]
        base4 = [Signal(C["TABLE_BASE_BITS"], name=f"s4_base{d}") for d in range(_DIMS)]
        # s5: base * 2**SLOPE_SHIFT + the lo*lo and hi*hi pieces (disjoint bits: no carry
        # between them), and the two cross pieces added.
        outer = [Signal(max(C["TABLE_BASE_BITS"] + C["SLOPE_SHIFT"], C["SIZE_BITS"] + C["TABLE_SLOPE_BITS"]) + 1,
                        name=f"s5_outer{d}") for d in range(_DIMS)]
        cross = [Signal(max(len(p) for p in pieces[d].values()) + 1, name=f"s5_cross{d}")
                 for d in range(_DIMS)]
        # s6: base + the slope term, saturated.
        raw = [Signal(C["COST_BITS"], name=f"s6_raw{d}") for d in range(_DIMS)]
        # s7: the operands of raw * factor (in the multipliers); s8: its two pieces.
        scaled = [[Signal(_width(raw[d], a) + C["FACTOR_BITS"], name=f"s8_pp{a}_{d}") for a in (0, 1)]
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
        for n in range(1, len(factor)):
            m.d.sync += [factor[n][d].eq(factor[n - 1][d]) for d in range(_DIMS)]
        for d in range(_DIMS):
            slope = entry["slope", d]
            m.d.sync += [
                [pieces[d][a, b].eq(_registered_product(m, platform, _piece(delta, a), _piece(slope, b),
                                                        f"mul_slope{a}{b}_{d}"))
                 for (a, b) in pieces[d]],
                base3[d].eq(entry["base", d]),
                base4[d].eq(base3[d]),
            ]
            pp = pieces[d]
            m.d.sync += [
                outer[d].eq((base4[d] << C["SLOPE_SHIFT"]) + Cat(pp[0, 0], pp[1, 1])),
                cross[d].eq(pp[0, 1] + pp[1, 0]),
            ]
            # base + (delta * slope >> SLOPE_SHIFT) == (base << SLOPE_SHIFT + delta * slope)
            # >> SLOPE_SHIFT, as base << SLOPE_SHIFT has no bits below SLOPE_SHIFT.
            total = outer[d] + (cross[d] << _SPLIT)
            m.d.sync += raw[d].eq(_saturate(total >> C["SLOPE_SHIFT"], C["COST_BITS"]))
            m.d.sync += [scaled[d][a].eq(_registered_product(m, platform, _piece(raw[d], a), factor[5][d],
                                                             f"mul_factor{a}_{d}"))
                         for a in (0, 1)]
            product = scaled[d][0] + (scaled[d][1] << _SPLIT)
            m.d.sync += out_cost[d].eq(_saturate(product >> C["FACTOR_FRAC_BITS"], C["COST_BITS"]))

        # The output: the last stage straight through while the buffer is empty (latency 9),
        # else the buffer's head; the last stage goes into the buffer when it is not taken
        # now or the buffer holds older descriptors. The credits keep the buffer from
        # overflowing: it never holds more than was accepted and not taken. The buffer's RAM
        # is written whenever the last stage is valid, at the slot after its last entry,
        # which then is free (the last stage's descriptor holds a credit and is not in the
        # buffer); only the pointer's advance waits for "not taken now". A FIFO's write
        # enable made from ``o.ready`` and its fill level fanned out to all of the RAM's
        # slices, the ECP5 critical path after the multipliers' (101.4 MHz, 4.8 ns routing).
        last = Signal(CostedDescriptor)
        m.d.comb += [last.desc.eq(payload[S - 1])] + [last.cost[d].eq(out_cost[d]) for d in range(_DIMS)]
        m.submodules.out_buf = out_buf = Memory(shape=len(last.as_value()), depth=_CREDITS, init=[])
        wp = out_buf.write_port()
        rp = out_buf.read_port(domain="comb")
        w_ptr = Signal(range(_CREDITS))
        r_ptr = Signal(range(_CREDITS))
        held = Signal(range(_CREDITS + 1))
        push = Signal()
        pop = Signal()
        m.d.comb += [
            wp.addr.eq(w_ptr),
            wp.data.eq(last.as_value()),
            wp.en.eq(valid[S - 1]),
            rp.addr.eq(r_ptr),
            push.eq(valid[S - 1] & ((held != 0) | ~self.o.ready)),
            pop.eq((held != 0) & self.o.ready),
            self.o.valid.eq((held != 0) | valid[S - 1]),
            self.o.payload.eq(Mux(held != 0, rp.data, last.as_value())),
        ]
        with m.If(push):
            m.d.sync += w_ptr.eq(Mux(w_ptr == _CREDITS - 1, 0, w_ptr + 1))
        with m.If(pop):
            m.d.sync += r_ptr.eq(Mux(r_ptr == _CREDITS - 1, 0, r_ptr + 1))
        m.d.sync += held.eq(held + push - pop)
        return m
