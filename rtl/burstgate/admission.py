"""The admission stage: per-tenant budgets, the burst list, the shared pools and the four
schedulers of ``sw/model/include/burstgate/model/agent.hpp``, one descriptor per clock.

The rule is the model's, step for step (``Agent::plan`` and ``Agent::io_costed``); the unit
tests and the core's cocotb testbench compare every decision with ``burstgate_model.Agent``.
"""

from types import SimpleNamespace

from amaranth import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from . import lfsr
from .csr import BusSignature, CsrBlock, ExternalSignature
from .layouts import CostVector, Descriptor
from .load_balancer import clamp_charge
from .regmap import C, REGMAP
from .window_bits import WindowBits

__all__ = ["Admission", "AdmissionInput", "AdmissionDecision"]

_DIMS = C["COST_DIMS"]
_CPU = C["DIM_CPU"]
_TENANT_BITS = C["TENANT_BITS"]
_BURST_ENTRIES = REGMAP.block("TENANT").register("BURST_LIST").count
_BURST_N_BITS = REGMAP.block("CTRL").register("BURST_N").width
_WORD_MAX = (1 << 32) - 1
_SRC_BITS = C["SRC_BITS"]
_STAMP_BITS = 32  # a window stamp is a WINDOW_INDEX value

#: A costed descriptor with its segment verdict: what admission decides on.
AdmissionInput = data.StructLayout({
    "desc": Descriptor,
    "cost": CostVector,
    "hot":  unsigned(1),
})

#: The decision, less what the load balancer and the buffer pool add (egress, prefill).
AdmissionDecision = data.StructLayout({
    "tag":    unsigned(C["TAG_BITS"]),
    "tenant": unsigned(_TENANT_BITS),
    "queue":  unsigned(C["QUEUE_BITS"]),
    "source": unsigned(_SRC_BITS),
    "lender": unsigned(_TENANT_BITS),
    "hot":    unsigned(1),
    "cost":   CostVector,
})

# Window state of a tenant, one RAM word each. ``stamp`` is the window the word was last
# written in; a word stamped with an older window reads as the COMMIT would have left it
# (refilled from the grants / cleared), so COMMIT itself touches no RAM.
_Own = data.StructLayout({       # written only for the tenant that offers the I/O
    "usage":      CostVector,
    "throttle":   CostVector,
    "throttle_n": unsigned(32),
    "spill_n":    unsigned(32),
    "count":      unsigned(32),  # I/Os admitted this window, any source (the count gate)
    "stamp":      unsigned(_STAMP_BITS),
})
_Lendable = data.StructLayout({  # written for the tenant (OWN) or its lender (BORROW)
    "rem":   CostVector,
    "lend":  CostVector,
    "stamp": unsigned(_STAMP_BITS),
})


def _covers(a, b):
    """``a`` covers ``b`` in every dimension (``bg_vec_covers``)."""
    return Cat(*(a[d] >= b[d] for d in range(_DIMS))).all()


def _sub(a, b):
    return Cat(*((a[d] - b[d])[:32] for d in range(_DIMS)))


def _add_sat(a, b):
    sums = []
    for d in range(_DIMS):
        s = a[d] + b[d]
        sums.append(Mux(s[32], _WORD_MAX, s[:32]))
    return Cat(*sums)


def _ram(m, name, shape, depth, init=()):
    mem = Memory(shape=shape, depth=depth, init=list(init))
    m.submodules[name] = mem
    return mem


class Admission(wiring.Component):
    """Decide, for each costed descriptor, which budget pays for it, at one per clock.

    Per descriptor, in the model's order (``agent.hpp``): two 32-step LFSR draws ``r1``,
    ``r2`` (always); the tenant's active bit; the scheduler's source on the levels as they
    stand; then, when the source admits, the load balancer's eligibility (``egress_ok``) and
    the buffer pool (``buffer_ok``) are checked before anything is charged, giving
    SRC_DEFER_EGRESS / SRC_DEFER_BUFFER with nothing charged; else the source is charged,
    ``dispatch`` is raised for the load balancer and the buffer pool, and the tenant's usage
    (and SPILL_N for BORROW/RESERVED) grows. A SRC_DEFER adds to THROTTLE_N and THROTTLE.
    Every decision is counted (CTRL.IOS, DEFERRED, DEFERRED_EGRESS, DEFERRED_BUFFER); a
    deferred descriptor leaves the stage like any other, so it never stalls other tenants.

    Pipeline (II = 1; the stages advance together and stop only while ``o`` is held, while
    ``hold`` is high, or for one cycle after a GRANT/LEND_GRANT write):

    * A0 (``_a0_draw``): accepted on ``i``; both draws are taken from the LFSR (two leap
      matrices);
    * A1 (``_a1_read_burst_list``): burst-list indices ``(r * BURST_N) >> 32``; the burst
      list RAM is read;
    * A2 (``_a2_read_tenant_words``): the lenders ``b1``, ``b2`` are known; the tenant RAMs
      are read for the tenant and both lenders;
    * A3 (``_a3_bring_up_to_date``): the words read are brought up to date (forwarding,
      window stamps) and registered;
    * A4 (``_a4_decide``, ``_a4_charge``, ``_a4_count``): the decision is made and written
      back; ``dispatch`` fires;
    * the decision is on ``o`` one cycle later (``_emit``; latency 5 from ``i`` to ``o``).

    Around them: ``_window_control`` (TICK, COMMIT, the window index), ``_memories`` (the
    RAMs and the copies of the last cycle's writes the forwarding uses),
    ``_tenant_registers`` and ``_ctrl_registers`` (register access).

    Read-modify-write hazards are forwarded, never stalled: the RAM read for the descriptor
    in A3 is re-issued every cycle (so it reflects every write up to the previous cycle),
    and the one write it cannot see -- the previous cycle's, for the same tenant or lender
    -- comes from a copy of that write. The words A3 registers miss the write of the
    decision in A4 beside them; A4 takes that one from the same copy, and while A4 is held
    its words keep absorbing it. Whether that copy is A4's word is known in the cycle of
    the write and registered (``own_hit``, ``lendable_hit``), and A4 forms every charge
    both on its registered words and on the copy: the forward is a select after them, not
    a mux before them (issue 22: A4's path starts at flip-flops). The budget compares are
    made a cycle earlier, in A3, for both outcomes of the decision in A4 beside them (it
    charged the same word or pool, or not), which selects (``_a3_compare_ahead``).
    Back-to-back I/Os of one tenant, of one lender, or a lender that is also the next
    I/O's tenant, all run at full rate.

    Windows: a COMMIT applies only once the whole datapath is drained (``drained`` high,
    nothing in A0..A4); until then the stage is held. Applying it increments ``window``;
    every tenant RAM word stamped with an older window then reads as refilled
    (REMAINING = GRANT, LENDABLE = LEND_GRANT) or cleared (USAGE, THROTTLE, THROTTLE_N,
    SPILL_N) -- one cycle, whatever the tenant count. A GRANT or LEND_GRANT write first
    materializes the tenant's stale word from the old grants, so the window in progress
    keeps the allocation COMMIT gave it (the model copies at COMMIT). The stamps are
    WINDOW_INDEX values: a tenant untouched for exactly 2**32 windows would alias in the
    register reads; the datapath knows a word's window from a bit per tenant beside each RAM
    (set by a write, cleared by COMMIT: :mod:`.window_bits`), which does not alias. Those
    bits are distributed RAM cleared a word per cycle after each COMMIT, so a COMMIT also
    waits for that clear (at most 32 cycles after the one before it).

    Register writes that change admission state (CTRL, TENANT) take effect in the cycle they
    are on the bus; descriptors already inside A0..A4 see them at whatever stage they are.
    Firmware therefore writes them while CTRL.WINDOW bit 1 (busy) reads 0, i.e. after TICK
    and the drain that follows it.

    Parameters
    ----------
    tenants : int
        Tenants implemented, 1..``TENANTS_MAX``; the RAM depth. A descriptor naming a tenant
        at or above it is deferred (SRC_DEFER, counted in DEFERRED) and touches no tenant
        state (the model raises instead).

    Members
    -------
    i : In(stream.Signature(AdmissionInput))
        Costed descriptors with their segment verdict. ``ready`` is not gated by the window
        hold: descriptors already inside the datapath when TICK is written are decided.
    o : Out(stream.Signature(AdmissionDecision))
        Decisions, in order. Latency 5 cycles.
    query_queue : Out(QUEUE_BITS)
        Ingress queue of the descriptor in A4.
    egress_ok : In(1)
        Some egress of ``query_queue``'s set is below LB.DEPTH (combinational, this cycle).
    buffer_ok : In(1)
        The buffer pool can give ``query_queue`` a buffer (combinational, this cycle).
    dispatch : Out(1)
        The descriptor in A4 is admitted and charged this cycle: the load balancer and the
        buffer pool must take it in this same cycle.
    dispatch_charge : Out(LB_CHARGE_BITS)
        Its CPU cost clamped as the load balancer charges it (``clamp_charge``), registered
        with A4's descriptor: the clamp was in series with the balancer's counters and its
        load pairs' compares in the core (issue 22, round 11).
    decided : Out(1)
        A descriptor is decided this cycle (in A4 and advancing).
    hold : In(1)
        Do not decide this cycle (the core orders a completion before the next decision, or
        the load balancer or buffer pool could not take a dispatch this cycle).
    drained : In(1)
        Nothing of the rest of the datapath is in flight: a pending COMMIT may apply.
    held : Out(1)
        New descriptors must not enter the datapath: between TICK and COMMIT, and while a
        COMMIT waits for the drain.
    commit_pending : Out(1)
        A COMMIT was written and waits for the drain (the core stops completions).
    commit : Out(1)
        A COMMIT applies this cycle (the core ticks the segment monitor and the buffer pool).
    busy : Out(1)
        A descriptor is inside A0..A4, or a grant write is being materialized.
    window : Out(32)
        Windows committed since reset (CTRL.WINDOW_INDEX); the stamps compare against it.
    completions, bad_completions : In(32)
        The completion path's counters, read as CTRL.COMPLETIONS / BAD_COMPLETIONS.
    ctrl_bus : In(BusSignature)
        The CTRL block (block-relative byte addresses).
    tenant_bus : In(BusSignature)
        The TENANT block (block-relative byte addresses).
    hist_all : Out(ExternalSignature)
        CTRL.HIST_ALL, owned by the completion path.
    hist : Out(ExternalSignature)
        TENANT.HIST, owned by the completion path.
    """

    def __init__(self, *, tenants=C["TENANTS_MAX"]):
        if not isinstance(tenants, int) or isinstance(tenants, bool):
            raise TypeError(f"Tenants must be an integer, not {tenants!r}")
        if not 1 <= tenants <= C["TENANTS_MAX"]:
            raise ValueError(f"Tenants must be 1..{C['TENANTS_MAX']}, not {tenants!r}")
        self._tenants = tenants
        self._ctrl = REGMAP.block("CTRL")
        self._tenant = REGMAP.block("TENANT")
        hist_all = self._ctrl.register("HIST_ALL")
        hist = self._tenant.register("HIST")
        super().__init__({
            "i": In(stream.Signature(AdmissionInput)),
            "o": Out(stream.Signature(AdmissionDecision)),
            "query_queue": Out(C["QUEUE_BITS"]),
            "egress_ok": In(1),
            "buffer_ok": In(1),
            "dispatch": Out(1),
            "dispatch_charge": Out(C["LB_CHARGE_BITS"]),
            "decided": Out(1),
            "hold": In(1),
            "drained": In(1),
            "held": Out(1),
            "commit_pending": Out(1),
            "commit": Out(1),
            "busy": Out(1),
            "window": Out(32),
            "completions": In(32),
            "bad_completions": In(32),
            "ctrl_bus": In(BusSignature(addr_width=(self._ctrl.size - 1).bit_length())),
            "tenant_bus": In(BusSignature(addr_width=(self._tenant.size - 1).bit_length())),
            "hist_all": Out(ExternalSignature(count=hist_all.count, width=hist_all.width)),
            "hist": Out(ExternalSignature(count=hist.count, width=hist.width)),
        })

    @property
    def tenants(self):
        return self._tenants

    # ---- elaboration, one method per pipeline stage -------------------------------------
    # Each method adds one part of the stage to ``m`` and puts the signals later parts use on
    # ``s`` (a namespace: ``s.ctrl`` the CTRL block, ``s.valid[n]`` stage An's valid, ...).
    # They run in the order below: where two parts assign one signal in one cycle, the later
    # assignment wins (a bus write over the datapath's update of a pool or of the LFSR, a
    # COMMIT's clear over a decision's active bit), as the docstrings of those parts say.

    def elaborate(self, platform):
        m = Module()
        s = SimpleNamespace(T=self._tenants, row_bits=max((self._tenants - 1).bit_length(), 1))
        self._register_blocks(m, s)
        self._window_control(m, s)
        self._memories(m, s)
        self._a0_draw(m, s)
        self._a1_read_burst_list(m, s)
        self._a2_read_tenant_words(m, s)
        self._a3_bring_up_to_date(m, s)
        self._a4_decide(m, s)
        self._a4_charge(m, s)
        self._a4_count(m, s)
        self._emit(m, s)
        self._tenant_registers(m, s)
        self._a4_forward_hits(m, s)
        self._a3_compare_ahead(m, s)
        self._ctrl_registers(m, s)
        return m

    def _register_blocks(self, m, s):
        """The CTRL and TENANT register blocks on their buses; the counters CTRL shows."""
        m.submodules.ctrl = s.ctrl = ctrl = CsrBlock(block=self._ctrl)
        m.submodules.tcsr = s.tcsr = tcsr = CsrBlock(block=self._tenant)
        wiring.connect(m, wiring.flipped(self.ctrl_bus), ctrl.bus)
        wiring.connect(m, wiring.flipped(self.tenant_bus), tcsr.bus)
        wiring.connect(m, wiring.flipped(self.hist_all), ctrl.ext_hist_all)
        wiring.connect(m, wiring.flipped(self.hist), tcsr.ext_hist)

        s.ios = Signal(32)
        s.deferred = Signal(32)
        s.deferred_egress = Signal(32)
        s.deferred_buffer = Signal(32)
        s.pool_drawn = Signal()
        m.d.comb += [
            ctrl.ios.eq(s.ios), ctrl.deferred.eq(s.deferred), ctrl.deferred_egress.eq(s.deferred_egress),
            ctrl.deferred_buffer.eq(s.deferred_buffer), ctrl.pool_drawn.eq(s.pool_drawn),
            ctrl.completions.eq(self.completions), ctrl.bad_completions.eq(self.bad_completions),
        ]
        s.pool = Signal(CostVector)
        s.glob = Signal(CostVector)
        # The shared pools, by name for the formal harness (tests/formal: no charge wraps them).
        self._pools = {"pool": s.pool, "global": s.glob}
        s.lfsr_state = Signal(32, init=lfsr.ZERO_SEED)  # bg_lfsr_seed(0): the model's reset
        s.active = Signal(s.T)

    def _window_control(self, m, s):
        """TICK holds new descriptors out; COMMIT waits for the drain, then increments
        ``window`` (which makes every tenant word stale: see the class docstring)."""
        tick_held = Signal()        # TICK seen, COMMIT not yet
        commit_pending = Signal()   # COMMIT seen, waiting for the drain
        tick_after = Signal()       # TICK written while a COMMIT was pending
        s.mat_valid = Signal()      # a grant write is being materialized (cycle 2 of 2)
        s.valid = [Signal(name=f"a{n}_valid") for n in range(5)]  # A1..A4 used
        busy = Signal()
        m.d.comb += [
            busy.eq(s.valid[1] | s.valid[2] | s.valid[3] | s.valid[4] | s.mat_valid),
            self.busy.eq(busy),
            self.held.eq(tick_held | commit_pending),
            self.commit_pending.eq(commit_pending),
        ]
        # The window bits (``_memories``) of the window before must be cleared first.
        s.window_bits = WindowBits(m, s.T, self.commit)
        m.d.comb += self.commit.eq(commit_pending & self.drained & ~busy & ~s.window_bits.scrubbing)
        win = s.ctrl.ext_window
        with m.If(self.commit):
            m.d.sync += [self.window.eq(self.window + 1), commit_pending.eq(0),
                         tick_held.eq(tick_after), tick_after.eq(0)]
        with m.If(win.w_en & (win.w_data == C["WINDOW_TICK"])):
            with m.If(commit_pending & ~self.commit):
                m.d.sync += tick_after.eq(1)
            with m.Else():
                m.d.sync += tick_held.eq(1)
        with m.If(win.w_en & (win.w_data == C["WINDOW_COMMIT"])):
            m.d.sync += commit_pending.eq(1)
        with m.If(win.r_en):
            m.d.sync += win.r_data.eq(Cat(tick_held | commit_pending, busy | commit_pending | ~self.drained))
        m.d.comb += s.ctrl.window_index.eq(self.window)

    def _memories(self, m, s):
        """The tenant RAMs (window words, configuration) and the burst list, and the copies
        of the last cycle's window-word writes that the forwarding reads."""
        T = s.T
        s.own = _ram(m, "own", _Own, T)
        s.lendable = _ram(m, "lendable", _Lendable, T)
        s.base = [_ram(m, f"base{d}", unsigned(32), T) for d in range(_DIMS)]
        s.grant = [_ram(m, f"grant{d}", unsigned(32), T) for d in range(_DIMS)]
        s.lend_grant = [_ram(m, f"lend_grant{d}", unsigned(32), T) for d in range(_DIMS)]
        s.burst = _ram(m, "burst", unsigned(_TENANT_BITS), _BURST_ENTRIES)
        # TENANT.COUNT_GRANT's reset is every element's RAM init (no cap until written).
        s.count_grant = _ram(m, "count_grant", unsigned(32), T,
                             init=self._tenant.register("COUNT_GRANT").resets[:T])

        # The previous cycle's writes, which the reads cannot see yet.
        s.own_wp = own_wp = s.own.write_port()
        s.lendable_wp = lendable_wp = s.lendable.write_port()
        own_last = Signal(_Own)
        own_last_row = Signal(_TENANT_BITS)
        own_last_valid = Signal()
        lendable_last = Signal(_Lendable)
        lendable_last_row = Signal(_TENANT_BITS)
        lendable_last_valid = Signal()
        m.d.sync += [
            own_last_valid.eq(own_wp.en), own_last_row.eq(own_wp.addr), own_last.eq(own_wp.data),
            lendable_last_valid.eq(lendable_wp.en), lendable_last_row.eq(lendable_wp.addr),
            lendable_last.eq(lendable_wp.data),
        ]
        s.own_last, s.own_last_row, s.own_last_valid = own_last, own_last_row, own_last_valid
        s.lendable_last, s.lendable_last_row, s.lendable_last_valid = \
            lendable_last, lendable_last_row, lendable_last_valid
        # Whether each tenant's word is stamped with this window (the stamp compare, kept
        # beside the RAMs so that A3 knows it from a register, not from a 32-bit compare of
        # the word it reads): set by every write (a written word is stamped with the
        # window), cleared by COMMIT; at reset every word is stamp 0 = window 0. Set from
        # the copies of the last write, so the bits' own RAM writes start at flip-flops.
        s.own_fresh = s.window_bits.bits("own", own_last_valid, own_last_row)
        s.lendable_fresh = s.window_bits.bits("lendable", lendable_last_valid, lendable_last_row)
        names = []

        def current_own(word, row):
            """The word as it stands now: forwarded, then cleared if from an older window."""
            fwd = _Own(Mux(own_last_valid & (own_last_row == row), own_last, word))
            cur = Signal(_Own, name=f"own_cur_{len(names)}")
            names.append(cur)
            m.d.comb += cur.eq(Mux(fwd.stamp == self.window, fwd, Cat(Const(0, _Own.size - _STAMP_BITS), self.window)))
            return cur

        def current_lendable(word, row, grant_v, lend_v):
            """The word as it stands now: forwarded, then refilled if from an older window."""
            fwd = _Lendable(Mux(lendable_last_valid & (lendable_last_row == row), lendable_last, word))
            cur = Signal(_Lendable, name=f"lendable_cur_{len(names)}")
            names.append(cur)
            m.d.comb += cur.eq(Mux(fwd.stamp == self.window, fwd,
                                   Cat(*grant_v, *lend_v, self.window)))
            return cur
        s.current_own, s.current_lendable = current_own, current_lendable

    def _a0_draw(self, m, s):
        """A0 -> A1: the pipeline's advance, and both LFSR draws of an accepted descriptor."""
        s.advance = advance = Signal()
        m.d.comb += [
            advance.eq((~self.o.valid | self.o.ready) & ~self.hold & ~s.mat_valid),
            self.i.ready.eq(advance),
        ]
        accept = self.i.valid & self.i.ready
        r1 = Signal(32)
        r2 = Signal(32)
        m.d.comb += [r1.eq(lfsr.leap(s.lfsr_state, 32)), r2.eq(lfsr.leap(s.lfsr_state, 64))]
        s.a1 = Signal(AdmissionInput)
        s.a1_r = [Signal(32, name="a1_r1"), Signal(32, name="a1_r2")]
        with m.If(advance):
            m.d.sync += [s.valid[1].eq(accept), s.a1.eq(self.i.payload), s.a1_r[0].eq(r1), s.a1_r[1].eq(r2)]
        with m.If(accept):
            m.d.sync += s.lfsr_state.eq(r2)

    def _a1_read_burst_list(self, m, s):
        """A1 -> A2: the burst-list indices ``(r * BURST_N) >> 32``; the burst list is read
        (re-read every cycle at A2's index while the pipeline stands)."""
        advance = s.advance
        n = s.ctrl.burst_n
        s.a2 = Signal(AdmissionInput)
        a2_idx = [Signal(_BURST_N_BITS, name=f"a2_idx{j}") for j in (1, 2)]
        s.a2_use = [Signal(name=f"a2_use{j}") for j in (1, 2)]
        idx = [Signal(_BURST_N_BITS, name=f"a1_idx{j}") for j in (1, 2)]
        burst_rp = []
        for j in range(2):
            m.d.comb += idx[j].eq((s.a1_r[j] * n) >> 32)
            rp = s.burst.read_port()
            addr = Mux(advance, idx[j], a2_idx[j])
            m.d.comb += [rp.addr.eq(addr[:(_BURST_ENTRIES - 1).bit_length()]), rp.en.eq(1)]
            burst_rp.append(rp)
        with m.If(advance):
            m.d.sync += [s.valid[2].eq(s.valid[1]), s.a2.eq(s.a1)]
            for j in range(2):
                m.d.sync += [a2_idx[j].eq(idx[j]), s.a2_use[j].eq((n != 0) & (idx[j] < _BURST_ENTRIES))]
        s.a2_b = [burst_rp[j].data for j in range(2)]  # the lenders b1, b2

    def _a2_read_tenant_words(self, m, s):
        """A2 -> A3: the lenders are known; the tenant RAMs are read for the tenant and both
        lenders, re-read every cycle for the descriptor that is in A3 next cycle."""
        advance, row_bits = s.advance, s.row_bits
        s.a3 = Signal(AdmissionInput)
        s.a3_b = [Signal(_TENANT_BITS, name=f"a3_b{j}") for j in (1, 2)]
        s.a3_use = [Signal(name=f"a3_use{j}") for j in (1, 2)]
        with m.If(advance):
            m.d.sync += [s.valid[3].eq(s.valid[2]), s.a3.eq(s.a2)]
            for j in range(2):
                m.d.sync += [s.a3_b[j].eq(s.a2_b[j]), s.a3_use[j].eq(s.a2_use[j])]

        # Enabled only while a descriptor is there to read for: what a port returns for an
        # empty A3 is never used, and a simulator then skips the copy of every RAM word.
        a3_next_valid = Signal()
        m.d.comb += a3_next_valid.eq(Mux(advance, s.valid[2], s.valid[3]))

        def read(mem, a2_addr, a3_addr):
            """A read port re-issued every cycle for the descriptor that is in A3 next cycle."""
            rp = mem.read_port()
            m.d.comb += [rp.addr.eq(Mux(advance, a2_addr, a3_addr)[:row_bits]), rp.en.eq(a3_next_valid)]
            return rp.data

        k2, k3 = s.a2.desc.tenant, s.a3.desc.tenant
        rows = ((k2, k3), (s.a2_b[0], s.a3_b[0]), (s.a2_b[1], s.a3_b[1]))
        s.own_k = read(s.own, k2, k3)
        s.lendable_x = [read(s.lendable, a, b) for a, b in rows]
        s.base_k = [read(s.base[d], k2, k3) for d in range(_DIMS)]
        s.count_grant_k = read(s.count_grant, k2, k3)
        s.grant_x = [[read(s.grant[d], a, b) for d in range(_DIMS)] for a, b in rows]
        s.lend_grant_x = [[read(s.lend_grant[d], a, b) for d in range(_DIMS)] for a, b in rows]

        # Which of those words A3 takes from the copy of this cycle's write (``own_last``,
        # ``lendable_last`` next cycle) and which are of this window, read beside them: A3
        # then selects each word with one LUT (issue 22, round 12). The window bit of a
        # word entering A3 is read from its RAM at A2's row; of a word staying in A3 it is
        # the flag A3 has, set by the write its forward flag took (no COMMIT while A3 holds
        # a descriptor), so ``advance`` only selects (issue 22, round 14).
        nxt = [Mux(advance, a, b) for a, b in rows]
        s.own_fwd3 = Signal()
        s.own_fresh3 = Signal()
        s.lendable_fwd3 = [Signal(name=f"lendable_fwd3_{j}") for j in range(3)]
        s.lendable_fresh3 = [Signal(name=f"lendable_fresh3_{j}") for j in range(3)]
        m.d.sync += [
            s.own_fwd3.eq(s.own_wp.en & (s.own_wp.addr == nxt[0])),
            s.own_fresh3.eq(Mux(advance, s.own_fresh.fresh(k2), s.own_fresh3 | s.own_fwd3)),
        ]
        for j, (a2_row, _) in enumerate(rows):
            m.d.sync += s.lendable_fwd3[j].eq(s.lendable_wp.en & (s.lendable_wp.addr == nxt[j]))
            m.d.sync += s.lendable_fresh3[j].eq(Mux(advance, s.lendable_fresh.fresh(a2_row),
                                                    s.lendable_fresh3[j] | s.lendable_fwd3[j]))

    def _a3_bring_up_to_date(self, m, s):
        """A3 -> A4: the words as they stand, registered.

        Reading, forwarding and the window check take one cycle and deciding another: in
        one cycle they chain the RAM output, the forward and stamp muxes, 32-bit compares,
        the source priority, the charge and the write-back data. A3 registers the words
        with every write up to the previous cycle's; the one write they miss (the decision
        in A4 in that same cycle) is forwarded into A4 from the copy of the last write, and
        a held A4 keeps taking in that copy so no write is lost while it waits. Whether the
        copy is A4's word is itself registered (``own_hit``, ``lendable_hit``: see
        :meth:`_a4_forward_hits`), so A4 starts from flip-flops only.
        """
        advance = s.advance
        # The word as it stands (``current_own``, ``current_lendable``), selected by the
        # registered forward and window flags: a forwarded word is always of this window (a
        # COMMIT needs a cycle with nothing in A0..A4, so no write, before it).
        s.own_3 = own_3 = Signal(_Own)
        m.d.comb += own_3.eq(Mux(s.own_fwd3, s.own_last,
                                 Mux(s.own_fresh3, s.own_k, Cat(Const(0, _Own.size - _STAMP_BITS), self.window))))
        s.lx_3 = lx_3 = [Signal(_Lendable, name=f"lendable_a3_{j}") for j in range(3)]
        for j in range(3):
            refill = Cat(*s.grant_x[j], *s.lend_grant_x[j], self.window)
            m.d.comb += lx_3[j].eq(Mux(s.lendable_fwd3[j], s.lendable_last,
                                       Mux(s.lendable_fresh3[j], s.lendable_x[j], refill)))
        s.a4 = a4 = Signal(AdmissionInput)
        s.a4_b = a4_b = [Signal(_TENANT_BITS, name=f"a4_b{j}") for j in (1, 2)]
        s.a4_use = [Signal(name=f"a4_use{j}") for j in (1, 2)]
        s.a4_own = a4_own = Signal(_Own)
        s.a4_lx = a4_lx = [Signal(_Lendable, name=f"a4_lendable{j}") for j in range(3)]
        s.a4_charge = Signal(C["LB_CHARGE_BITS"])
        s.k4 = a4.desc.tenant
        # The decision's compares, made a cycle ahead (:meth:`_a3_compare_ahead`).
        s.a4_within = Signal()
        s.a4_count_ok = Signal()
        s.a4_own_ok = Signal()
        s.a4_lender_covers = [Signal(name=f"a4_lender_covers{j + 1}") for j in range(2)]
        s.a4_pool_ge = Signal(_DIMS)
        s.a4_glob_ge = Signal(_DIMS)
        # A3's cost plus A4's, per dimension: what A3 compares against when the decision in
        # A4 beside it charges the same word; formed when the two enter A3 and A4.
        s.a3_c34 = [Signal(33, name=f"a3_c34_{d}") for d in range(_DIMS)]
        with m.If(advance):
            m.d.sync += [s.a3_c34[d].eq(s.a2.cost[d] + s.a3.cost[d]) for d in range(_DIMS)]
        # A4's words with the write of the cycle before (the decision that was in A4 then).
        s.own_hit = own_hit = Signal()
        s.lendable_hit = lendable_hit = [Signal(name=f"lendable_hit{j}") for j in range(3)]
        s.ok_k = ok_k = Signal(_Own)
        s.lx = lx = [Signal(_Lendable, name=f"lendable_a4_{j}") for j in range(3)]
        m.d.comb += ok_k.eq(Mux(own_hit, s.own_last, a4_own))
        for j in range(3):
            m.d.comb += lx[j].eq(Mux(lendable_hit[j], s.lendable_last, a4_lx[j]))
        with m.If(advance):
            m.d.sync += [s.valid[4].eq(s.valid[3]), a4.eq(s.a3), a4_own.eq(own_3)]
            # Taken with the descriptor, so it is always ``clamp_charge`` of A4's cost.
            m.d.sync += s.a4_charge.eq(clamp_charge(s.a3.cost[_CPU]))
            m.d.sync += [a4_lx[j].eq(lx_3[j]) for j in range(3)]
            for j in range(2):
                m.d.sync += [a4_b[j].eq(s.a3_b[j]), s.a4_use[j].eq(s.a3_use[j])]
        with m.Else():
            m.d.sync += [a4_own.eq(ok_k)] + [a4_lx[j].eq(lx[j]) for j in range(3)]

    def _a4_decide(self, m, s):
        """A4: the scheduler's source on the words as they stand, then the load balancer's
        and the buffer pool's answers (``final``); ``dispatch`` when it is charged.

        The budget compares (within RES_BASE, the count gate, the covers of the tenant's,
        the lenders', the pool's and the global word) arrive registered from
        :meth:`_a3_compare_ahead`. The richer-lender compare is still made here, twice in
        parallel, on A4's registered word and on the copy of the last write, the hit flag
        selecting the result."""
        T, a4, k4, ctrl = s.T, s.a4, s.k4, s.ctrl
        a4_b, hit = s.a4_b, s.lendable_hit
        last, a4_lx = s.lendable_last, s.a4_lx
        s.c = a4.cost
        s.tenant_ok = tenant_ok = Signal()
        m.d.comb += tenant_ok.eq(k4 < T)
        # usage + c <= RES_BASE in every dimension.
        within = s.a4_within
        # The tenant's REMAINING covers c.
        own_ok = s.a4_own_ok
        # The count gate: below COUNT_GRANT admitted I/Os this window, or deferred whatever
        # source would pay.
        s.count_ok = count_ok = s.a4_count_ok
        ok_b = [Signal(name=f"lender_ok{j + 1}") for j in range(2)]
        for j in range(2):
            m.d.comb += ok_b[j].eq(s.a4_use[j] & (a4_b[j] < T) & s.a4_lender_covers[j])
        pool_ok = ~a4.hot & s.a4_pool_ge.all()
        glob_ok = s.a4_glob_ge.all()
        # lx[2].lend[CPU] > lx[1].lend[CPU], with either side possibly the copy of the last write.
        cpu1, cpu2, cpu_last = a4_lx[1].lend[_CPU], a4_lx[2].lend[_CPU], last.lend[_CPU]
        b2_richer = Signal()
        m.d.comb += b2_richer.eq(Mux(hit[2], Mux(hit[1], 0, cpu_last > cpu1),
                                     Mux(hit[1], cpu2 > cpu_last, cpu2 > cpu1)))

        s.src = src = Signal(_SRC_BITS)
        s.lender = lender = Signal(_TENANT_BITS)
        s.lender_sel = lender_sel = Signal(2)  # which lendable word is charged: 0 tenant, 1 b1, 2 b2
        with m.Switch(ctrl.scheduler):
            with m.Case(C["SCHED_BIOS"]):
                with m.If(own_ok):
                    m.d.comb += src.eq(C["SRC_OWN"])
                with m.Elif(~within):
                    m.d.comb += src.eq(C["SRC_DEFER"])
                with m.Elif(ok_b[0] & ok_b[1]):
                    m.d.comb += [src.eq(C["SRC_BORROW"]), lender_sel.eq(Mux(b2_richer, 2, 1))]
                with m.Elif(ok_b[0]):
                    m.d.comb += [src.eq(C["SRC_BORROW"]), lender_sel.eq(1)]
                with m.Elif(ok_b[1]):
                    m.d.comb += [src.eq(C["SRC_BORROW"]), lender_sel.eq(2)]
                with m.Elif(pool_ok):
                    m.d.comb += src.eq(C["SRC_RESERVED"])
                with m.Else():
                    m.d.comb += src.eq(C["SRC_DEFER"])
            with m.Case(C["SCHED_BASE"]):
                m.d.comb += src.eq(Mux(own_ok, C["SRC_OWN"], C["SRC_DEFER"]))
            with m.Case(C["SCHED_WILD"]):
                m.d.comb += src.eq(Mux(own_ok & glob_ok, C["SRC_OWN"], C["SRC_DEFER"]))
            with m.Case(C["SCHED_DUALBUCKET"]):
                with m.If(glob_ok):
                    m.d.comb += src.eq(C["SRC_OWN"])
                with m.Elif(pool_ok):
                    m.d.comb += src.eq(C["SRC_RESERVED"])
                with m.Else():
                    m.d.comb += src.eq(C["SRC_DEFER"])
        with m.If(~tenant_ok | ~count_ok):
            m.d.comb += src.eq(C["SRC_DEFER"])
        m.d.comb += lender.eq(Mux(lender_sel == 2, a4_b[1], a4_b[0]))

        s.decide = decide = Signal()
        admits = Signal()
        m.d.comb += [
            decide.eq(s.valid[4] & s.advance),
            admits.eq(src < C["SRC_DEFER"]),
            self.decided.eq(decide),
            self.query_queue.eq(a4.desc.queue),
            self.dispatch_charge.eq(s.a4_charge),
        ]
        s.final = final = Signal(_SRC_BITS)
        with m.If(~admits):
            m.d.comb += final.eq(src)
        with m.Elif(~self.egress_ok):
            m.d.comb += final.eq(C["SRC_DEFER_EGRESS"])
        with m.Elif(~self.buffer_ok):
            m.d.comb += final.eq(C["SRC_DEFER_BUFFER"])
        with m.Else():
            m.d.comb += final.eq(src)
        s.charge = charge = Signal()
        m.d.comb += [charge.eq(decide & admits & self.egress_ok & self.buffer_ok), self.dispatch.eq(charge)]

    def _a4_charge(self, m, s):
        """A4: the write-back words of the decision (the RAM ports are driven in
        :meth:`_tenant_registers`, where a grant write's materialization shares them).

        The charged values are formed for every candidate word (the tenant's, each lender's,
        and the copy of the last write) before the source is known; the source only selects."""
        c, src, final, charge, ok_k = s.c, s.src, s.final, s.charge, s.ok_k
        own_hit, last, hit = s.own_hit, s.lendable_last, s.lendable_hit

        def fwd(f):
            """``f`` of the tenant's own word as it stands, formed on both candidates."""
            return Mux(own_hit, f(s.own_last), f(s.a4_own))
        # The tenant's own word: every decided descriptor of a real tenant.
        s.new_own = new_own = Signal(_Own)
        m.d.comb += new_own.eq(ok_k)
        with m.If(final == C["SRC_DEFER"]):
            m.d.comb += [new_own.throttle_n.eq(fwd(lambda w: w.throttle_n + 1)),
                         new_own.throttle.eq(fwd(lambda w: _add_sat(w.throttle, c)))]
        with m.If(charge):
            m.d.comb += new_own.usage.eq(fwd(lambda w: _add_sat(w.usage, c)))
            # Below COUNT_GRANT (the gate), so it never wraps.
            m.d.comb += new_own.count.eq(fwd(lambda w: w.count + 1))
            with m.If((src == C["SRC_BORROW"]) | (src == C["SRC_RESERVED"])):
                m.d.comb += new_own.spill_n.eq(fwd(lambda w: w.spill_n + 1))

        # The lendable word that pays: the tenant (OWN) or the lender (BORROW).
        borrow = src == C["SRC_BORROW"]
        last_rem, last_lend = Signal(CostVector), Signal(CostVector)
        m.d.comb += [last_rem.eq(_sub(last.rem, c)), last_lend.eq(_sub(last.lend, c))]
        rem_c = [Mux(hit[j], last_rem, _sub(s.a4_lx[j].rem, c)) for j in range(3)]
        lend_c = [Mux(hit[j], last_lend, _sub(s.a4_lx[j].lend, c)) for j in range(3)]
        s.new_lendable = new_lendable = Signal(_Lendable)
        s.lendable_row = lendable_row = Signal(_TENANT_BITS)
        s.lendable_write = lendable_write = Signal()
        lender2 = s.lender_sel == 2
        m.d.comb += [
            new_lendable.rem.eq(Mux(borrow, Mux(lender2, rem_c[2], rem_c[1]), rem_c[0])),
            new_lendable.lend.eq(Mux(borrow, Mux(lender2, lend_c[2], lend_c[1]), s.lx[0].lend)),
            new_lendable.stamp.eq(self.window),
            lendable_row.eq(Mux(borrow, s.lender, s.k4)),
            lendable_write.eq(charge & (borrow |
                                        ((src == C["SRC_OWN"]) & (s.ctrl.scheduler != C["SCHED_DUALBUCKET"])))),
        ]

    def _a4_forward_hits(self, m, s):
        """Whether next cycle's A4 words are the ones written this cycle (``own_hit``,
        ``lendable_hit``), registered: what the copies of the last write are compared with.

        A decision writes only while the pipeline advances, so next cycle's A4 is this
        cycle's A3: its rows are compared with each row the decision may pay from (the
        tenant, either lender) in parallel with the decision, which then selects. A grant
        write's materialization happens only while the pipeline stands (next A4 = this A4).
        Every row written is an implemented tenant's (``< tenants``), so comparing the full
        tenant numbers equals comparing the RAM addresses."""
        k3, k4 = s.a3.desc.tenant, s.k4
        a3_rows = (k3, s.a3_b[0], s.a3_b[1])
        a4_rows = (k4, s.a4_b[0], s.a4_b[1])
        # Also what :meth:`_a3_compare_ahead` selects by: the decision writes next A4's word.
        s.own_hit_next = Signal()
        s.lendable_hit_next = [Signal(name=f"lendable_hit_next{j}") for j in range(3)]
        m.d.comb += s.own_hit_next.eq(s.decide & s.tenant_ok & (k4 == k3))
        m.d.sync += s.own_hit.eq(s.own_hit_next)
        borrow = s.src == C["SRC_BORROW"]
        lender2 = s.lender_sel == 2
        for j in range(3):
            same = [a4_rows[p] == a3_rows[j] for p in range(3)]  # payer p is next A4's row j
            paid = Mux(borrow, Mux(lender2, same[2], same[1]), same[0])
            m.d.comb += s.lendable_hit_next[j].eq(s.lendable_write & paid)
            with m.If(s.mat_valid):
                m.d.sync += s.lendable_hit[j].eq(s.mat_stale & (s.mat_row == a4_rows[j]))
            with m.Else():
                m.d.sync += s.lendable_hit[j].eq(s.lendable_hit_next[j])

    def _a3_compare_ahead(self, m, s):
        """A3 -> A4: the decision's budget compares, made a cycle ahead and registered, so
        that A4 starts from their outcomes (issue 22, round 12: they were A4's longest
        paths, ``usage + c`` then ``<= RES_BASE`` in series with the source and the dispatch).

        Each compare is made on the word A3 registers for A4 (its forward and window flags
        are registers, so the word is one LUT from flip-flops). The decision
        in A4 in the same cycle may change the very word (the same tenant, a lender that is
        also the next I/O's tenant or lender) or pool A3 compares; so each compare is made
        for both: on the word as A3 has it against A3's cost ``c3``, and on it less A4's
        cost ``c4`` -- as ``word >= c3 + c4`` (``c34``, formed a cycle earlier), which is
        exact because a charged word covered ``c4`` -- and A4's decision selects (its hit
        flags, its source). ``usage + c <= RES_BASE`` after a charge compares the usage
        saturated at 2**32 - 1, which ``u + c34 <= base`` matches except when ``c3`` is 0
        and the base is 2**32 - 1 (then it holds whatever the usage).

        While A4 waits its outcomes stay: nothing they compare changes without a decision
        (a grant's materialization writes the refill A4 already holds) but a bus write of
        a pool dimension, which takes the compare of the written value, in A4 or in A3, as
        the write wins over a charge in ``_ctrl_registers``."""
        advance, ctrl = s.advance, s.ctrl
        c3, c4, c34 = s.a3.cost, s.a4.cost, s.a3_c34
        base3, cg3 = s.base_k, s.count_grant_k

        def own(f):
            return f(s.own_3)

        def lendable(j, f):
            return f(s.lx_3[j])

        def covers(field, cost):
            return lambda w: _covers(getattr(w, field), cost)
        full = [(c3[d] == 0) & (base3[d] == _WORD_MAX) for d in range(_DIMS)]
        within = own(lambda w: Cat(*((w.usage[d] + c3[d]) <= base3[d] for d in range(_DIMS))).all())
        within_charged = own(lambda w: Cat(*(full[d] | ((w.usage[d] + c34[d]) <= base3[d])
                                             for d in range(_DIMS))).all())
        count = own(lambda w: w.count < cg3)
        count_charged = own(lambda w: (w.count + 1) < cg3)
        rem = [lendable(j, covers("rem", c3)) for j in range(3)]
        rem_charged = [lendable(j, covers("rem", c34)) for j in range(3)]
        lend = [None] + [lendable(j, covers("lend", c3)) for j in (1, 2)]
        lend_charged = [None] + [lendable(j, covers("lend", c34)) for j in (1, 2)]

        own_charged = s.own_hit_next & s.charge  # usage and count move only when charged
        hit = s.lendable_hit_next                # REMAINING moves on every write,
        borrow = s.src == C["SRC_BORROW"]        # LENDABLE on a lender's
        with m.If(advance):
            m.d.sync += [
                s.a4_within.eq(Mux(own_charged, within_charged, within)),
                s.a4_count_ok.eq(Mux(own_charged, count_charged, count)),
                s.a4_own_ok.eq(Mux(hit[0], rem_charged[0], rem[0])),
            ]
            for j in (1, 2):
                m.d.sync += s.a4_lender_covers[j - 1].eq(
                    Mux(hit[j], rem_charged[j] & Mux(borrow, lend_charged[j], lend[j]), rem[j] & lend[j]))
        for vec, reg, charged, ge in ((s.pool, ctrl.ext_pool, s.pool_charge, s.a4_pool_ge),
                                      (s.glob, ctrl.ext_global, s.glob_charge, s.a4_glob_ge)):
            for d in range(_DIMS):
                written = reg.w_en & (reg.index == d)
                with m.If(advance):
                    m.d.sync += ge[d].eq(Mux(written, reg.w_data >= c3[d],
                                             Mux(charged, vec[d] >= c34[d], vec[d] >= c3[d])))
                with m.Elif(written):
                    m.d.sync += ge[d].eq(reg.w_data >= c4[d])

    def _a4_count(self, m, s):
        """A4: the decision counters, the tenant's active bit and the shared pools' charge."""
        c, src, final, charge, ctrl = s.c, s.src, s.final, s.charge, s.ctrl
        deferred = s.deferred
        with m.If(s.decide):
            m.d.sync += s.ios.eq(s.ios + 1)
            with m.If(final == C["SRC_DEFER"]):
                m.d.sync += deferred.eq(deferred + 1)
            with m.If(final == C["SRC_DEFER_EGRESS"]):
                m.d.sync += s.deferred_egress.eq(s.deferred_egress + 1)
            with m.If(final == C["SRC_DEFER_BUFFER"]):
                m.d.sync += s.deferred_buffer.eq(s.deferred_buffer + 1)
            with m.If(s.tenant_ok):
                m.d.sync += s.active.bit_select(s.k4[:s.row_bits], 1).eq(1)
        s.glob_charge, s.pool_charge = Signal(), Signal()
        m.d.comb += [
            s.glob_charge.eq(charge & (src == C["SRC_OWN"]) & (ctrl.scheduler != C["SCHED_BIOS"])
                             & (ctrl.scheduler != C["SCHED_BASE"])),
            s.pool_charge.eq(charge & (src == C["SRC_RESERVED"])),
        ]
        with m.If(s.glob_charge):
            m.d.sync += s.glob.eq(_sub(s.glob, c))
        with m.If(s.pool_charge):
            m.d.sync += [s.pool.eq(_sub(s.pool, c)), s.pool_drawn.eq(1)]

    def _emit(self, m, s):
        """The output register: valid drops when taken without a new decision behind it."""
        a4, final = s.a4, s.final
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(s.advance):
            m.d.sync += [
                self.o.valid.eq(s.valid[4]),
                self.o.payload.tag.eq(a4.desc.tag),
                self.o.payload.tenant.eq(s.k4),
                self.o.payload.queue.eq(a4.desc.queue),
                self.o.payload.source.eq(final),
                self.o.payload.lender.eq(Mux(final == C["SRC_BORROW"], s.lender, 0)),
                self.o.payload.hot.eq(a4.hot),
                self.o.payload.cost.eq(s.c),
            ]

    def _tenant_registers(self, m, s):
        """TENANT register access: reads through their own RAM ports (brought up to date as
        A3 does), configuration writes, and a grant write's materialization of the stale
        window word, which takes the lendable RAM's write port from the datapath for a cycle."""
        T, row_bits, tcsr = s.T, s.row_bits, s.tcsr
        ext = {r.name: getattr(tcsr, f"ext_{r.name.lower()}") for r in self._tenant.registers
               if r.name != "HIST"}
        vectors = ("RES_BASE", "GRANT", "LEND_GRANT", "REMAINING", "LENDABLE", "USAGE", "THROTTLE")
        scalars = ("THROTTLE_N", "SPILL_N")
        configs = ("COUNT_GRANT",)  # scalar, read-write
        csr_row = Signal(_TENANT_BITS)   # the row of this cycle's TENANT access
        csr_dim = Signal(2)
        # Behind the bus strobe, as the CSR decode (csr.py): no strobe, no access, row 0.
        tenant_access = self.tenant_bus.r_en | self.tenant_bus.w_en
        with m.If(tenant_access):
            for name in vectors:
                with m.If(ext[name].r_en | ext[name].w_en):
                    m.d.comb += [csr_row.eq(ext[name].index[2:]), csr_dim.eq(ext[name].index[:2])]
            for name in scalars:
                with m.If(ext[name].r_en):
                    m.d.comb += csr_row.eq(ext[name].index)
            for name in configs:
                with m.If(ext[name].r_en | ext[name].w_en):
                    m.d.comb += csr_row.eq(ext[name].index)
        csr_row_ok = csr_row < T

        def csr_read(mem):
            """A read port that reads only in a cycle with a TENANT access: its data is used
            only in the cycle after one (the read data, a grant write's materialization)."""
            rp = mem.read_port()
            m.d.comb += [rp.addr.eq(csr_row[:row_bits]), rp.en.eq(tenant_access)]
            return rp.data
        own_csr = csr_read(s.own)
        lendable_csr = csr_read(s.lendable)
        base_csr = Array(csr_read(s.base[d]) for d in range(_DIMS))
        grant_csr = [csr_read(s.grant[d]) for d in range(_DIMS)]
        lend_grant_csr = [csr_read(s.lend_grant[d]) for d in range(_DIMS)]
        count_grant_csr = csr_read(s.count_grant)
        burst_csr = s.burst.read_port()
        m.d.comb += [burst_csr.addr.eq(ext["BURST_LIST"].index), burst_csr.en.eq(tenant_access)]

        r_row = Signal(_TENANT_BITS)
        r_dim = Signal(2)
        r_ok = Signal()
        m.d.sync += [r_row.eq(csr_row), r_dim.eq(csr_dim), r_ok.eq(csr_row_ok)]
        own_r = s.current_own(own_csr, r_row)
        lendable_r = s.current_lendable(lendable_csr, r_row, grant_csr, lend_grant_csr)
        zero = Const(0, 32)
        values = {
            "RES_BASE": base_csr[r_dim], "GRANT": Array(grant_csr)[r_dim],
            "LEND_GRANT": Array(lend_grant_csr)[r_dim],
            "REMAINING": lendable_r.rem[r_dim], "LENDABLE": lendable_r.lend[r_dim],
            "USAGE": own_r.usage[r_dim], "THROTTLE": own_r.throttle[r_dim],
            "THROTTLE_N": own_r.throttle_n, "SPILL_N": own_r.spill_n,
            "COUNT_GRANT": count_grant_csr,
        }
        for name, value in values.items():
            m.d.comb += ext[name].r_data.eq(Mux(r_ok, value, zero))
        m.d.comb += ext["BURST_LIST"].r_data.eq(burst_csr.data)

        # Config writes land at once; a grant write also materializes the tenant's window word
        # from the old grants, which the csr ports read in this same cycle.
        for name, mems in (("RES_BASE", s.base), ("GRANT", s.grant), ("LEND_GRANT", s.lend_grant)):
            for d in range(_DIMS):
                wp = mems[d].write_port()
                e = ext[name]
                m.d.comb += [wp.addr.eq(e.index[2:][:row_bits]), wp.data.eq(e.w_data),
                             wp.en.eq(e.w_en & (e.index[:2] == d) & (e.index[2:] < T))]
        cwp = s.count_grant.write_port()
        e = ext["COUNT_GRANT"]
        m.d.comb += [cwp.addr.eq(e.index[:row_bits]), cwp.data.eq(e.w_data), cwp.en.eq(e.w_en & (e.index < T))]
        bwp = s.burst.write_port()
        m.d.comb += [bwp.addr.eq(ext["BURST_LIST"].index), bwp.data.eq(ext["BURST_LIST"].w_data),
                     bwp.en.eq(ext["BURST_LIST"].w_en)]
        s.mat_row = mat_row = Signal(_TENANT_BITS)
        m.d.sync += [
            s.mat_valid.eq((ext["GRANT"].w_en | ext["LEND_GRANT"].w_en) & csr_row_ok),
            mat_row.eq(csr_row),
        ]
        mat_word = Signal(_Lendable)
        m.d.comb += mat_word.eq(Cat(*grant_csr, *lend_grant_csr, self.window))
        s.mat_stale = mat_stale = Signal()
        m.d.comb += mat_stale.eq((lendable_csr.stamp != self.window)
                                 & ~(s.lendable_last_valid & (s.lendable_last_row == mat_row)))
        lendable_wp, own_wp = s.lendable_wp, s.own_wp
        with m.If(s.mat_valid):
            m.d.comb += [lendable_wp.addr.eq(mat_row), lendable_wp.data.eq(mat_word),
                         lendable_wp.en.eq(mat_stale)]
        with m.Else():
            m.d.comb += [lendable_wp.addr.eq(s.lendable_row), lendable_wp.data.eq(s.new_lendable),
                         lendable_wp.en.eq(s.lendable_write)]
        m.d.comb += [own_wp.addr.eq(s.k4[:row_bits]), own_wp.data.eq(s.new_own),
                     own_wp.en.eq(s.decide & s.tenant_ok)]

    def _ctrl_registers(self, m, s):
        """CTRL externals: the pools, the LFSR seed, the active bits. A bus write wins over
        the datapath's update of the same cycle (firmware writes them while drained anyway),
        and a COMMIT's clear of the active bits and POOL_DRAWN over a decision's."""
        ctrl, T = s.ctrl, s.T
        for reg, vec in ((ctrl.ext_pool, s.pool), (ctrl.ext_global, s.glob)):
            with m.If(reg.w_en):
                m.d.sync += vec[reg.index].eq(reg.w_data)
            with m.If(reg.r_en):
                m.d.sync += reg.r_data.eq(vec[reg.index])
        seed = ctrl.ext_seed
        with m.If(seed.w_en):
            m.d.sync += s.lfsr_state.eq(lfsr.seeded(seed.w_data))
        with m.If(seed.r_en):
            m.d.sync += seed.r_data.eq(s.lfsr_state)
        act = ctrl.ext_active
        n_words = (T + 31) // 32
        padded = Cat(s.active, Const(0, 32 * n_words - T)) if 32 * n_words > T else s.active
        words = Array(padded[32 * w: 32 * w + 32] for w in range(n_words))
        with m.If(act.r_en):
            m.d.sync += act.r_data.eq(Mux(act.index < len(words), words[act.index], 0))
        with m.If(self.commit):
            m.d.sync += [s.active.eq(0), s.pool_drawn.eq(0)]
