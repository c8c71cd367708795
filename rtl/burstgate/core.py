"""The burstgate datapath core: cost estimator, segment monitor, admission, load balancer,
buffer pool and completion path behind one register bus -- ``bg::Agent`` in gateware.
"""

from amaranth import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from .admission import Admission, AdmissionInput
from .buffer_pool import BufferPool
from .cost import CostEstimator
from .csr import BusSignature, CsrBlock
from .delay_hist import BUCKET_BITS, DelayHistogram, bucket_of
from .layouts import Completion, CostedDescriptor, Decision, Descriptor
from .load_balancer import LoadBalancer, clamp_charge
from .regmap import C, REGMAP
from .segment_monitor import SegmentMonitor

__all__ = ["Core"]

_BLOCKS = ("INFO", "CTRL", "LB", "BPOOL", "COST", "SEGMON", "TENANT")
_SEQ_BITS = 16  # descriptor sequence numbers; far more than can be in flight
# A completion waits for the descriptors accepted before it (up to the 16-cycle latency, and
# two cycles to its head register); 18 entries (17 in the FIFO, one in the head register)
# keep one completion per clock flowing beside one descriptor per clock.
_PENDING_DEPTH = 18

#: A completion as it waits to be applied: its SA delay already reduced to its histogram
#: bucket (issue 22: ``bucket_of`` between the queue's head and the histogram's counters was
#: the ULX3S board top's ECP5 critical path), with the count of descriptors accepted before it.
_Queued = data.StructLayout({
    "tenant":    Completion.members["tenant"],
    "queue":     Completion.members["queue"],
    "egress":    Completion.members["egress"],
    "charge_ns": Completion.members["charge_ns"],
    "bucket":    unsigned(BUCKET_BITS),
})
_Pending = data.StructLayout({"c": _Queued, "seq": unsigned(_SEQ_BITS)})


def _check(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be {lo}..{hi}, not {value!r}")


class Core(wiring.Component):
    """The whole per-descriptor datapath, decision for decision equal to ``bg::Agent``.

    Descriptors flow COST (9 cycles) -> segment monitor (2) -> admission (5) -> ``o``: the
    admission stage decides with the load balancer's eligibility and the buffer pool's
    availability of that same cycle, and an admitted descriptor is dispatched to both in
    that cycle, exactly in ``agent.hpp``'s order. One descriptor per clock (II = 1) while
    ``o`` is ready (a due completion, an LB.SEED write under P2C and a BPOOL write each hold
    one decision a cycle; see below); latency 16 cycles from ``i`` to ``o``.

    Event order (what the model replays): events are ordered by the cycle in which they
    are *accepted* on the core's ports, and within one cycle

    1. the completion accepted on ``c``,
    2. the descriptor accepted on ``i``,
    3. the register write on ``bus``.

    A descriptor accepted in the cycle of a TICK write is decided (TICK comes after it); one
    accepted later waits until the COMMIT. Each kind of event takes effect:

    * descriptor: costed with the COST registers of its acceptance cycle; counted by the
      segment monitor 2 cycles after leaving COST (classified always, counted unless its
      ``reoffer`` bit is set); decided in admission stage A4, where it
      reads and writes the tenant, lender and pool levels, the LB and buffer pool state;
    * completion: held in a small queue with the number of descriptors accepted before it,
      and applied (load balancer, buffer pool, histograms, COMPLETIONS/BAD_COMPLETIONS) in
      the cycle the last of those descriptors is decided -- after it, since the load
      balancer and buffer pool apply a decision before a completion in one cycle -- or in a
      later cycle, holding the next decision back one cycle. A completion the model would
      count as bad is applied alone (the check needs the state after the descriptor
      decided in the same cycle), so a host bug costs one cycle, never a wrong count;
    * register write: in the cycle it is on the bus. COST registers are sampled per
      descriptor at acceptance, so COST writes are exactly ordered at any time. Writes to
      CTRL, LB, BPOOL, SEGMON and TENANT change state that descriptors in flight read at a
      later stage; firmware issues them only while CTRL.WINDOW bit 1 (busy: a descriptor or
      completion in flight, or a COMMIT pending) reads 0 -- after TICK, wait for bit 1 to
      clear. The model is atomic and reads bit 1 as 0. Reads are exact then too: a counter
      read while an event is still in flight shows the state before that event. LB.SEED may
      be written at any time: it acts between two decisions (after the one decided in its
      cycle), which is where the model must see it, and under P2C the next decision waits
      one cycle while the balancer's draw tables settle. A BPOOL write holds that cycle's
      decision (one that rebuilds the pool also the next, whose buffer answer was formed
      before the rebuild), so a write that rebuilds the pool never drops an acquire (no
      I/O is lost however firmware errs; to equal the model it still waits for the drain).
    * CTRL.WINDOW = COMMIT stops new descriptors and completions, waits until nothing is in
      flight, then applies in one cycle (tenant window words are refilled/cleared lazily by
      their window stamps; the segment monitor and buffer pool tick; histograms and active
      bits clear) and releases admission. A second COMMIT written while one is pending is
      merged with it (the model would count two windows): firmware waits for bit 1 to clear.

    Descriptors the model rejects (tenant or ingress queue not implemented) are decided
    without touching tenant state: SRC_DEFER for an unknown tenant, SRC_DEFER_EGRESS for an
    unknown queue (it has no egress set).

    Parameters
    ----------
    tenants : int
        1..``TENANTS_MAX``.
    ingress, egress : int
        Ingress (VM) and egress (SA thread) queues, 1..``QUEUES_MAX`` each.
    segment_bits : int
        log2 of the segments the segment monitor tracks, 1..``SEGMENT_BITS``.

    Members
    -------
    i : In(stream.Signature(Descriptor))
        Descriptors. ``ready`` is low between TICK and COMMIT.
    o : Out(stream.Signature(Decision))
        One decision per descriptor, in order.
    c : In(stream.Signature(Completion))
        Completions, in any order relative to their decisions; ``ready`` is low while a
        COMMIT is pending and while the 18-entry completion queue is full.
    bus : In(BusSignature(addr_width=19))
        Every register of the INFO, CTRL, LB, BPOOL, COST, SEGMON and TENANT blocks at its
        absolute byte address; other addresses read 0 and ignore writes. Read latency 1.
    """

    def __init__(self, *, tenants=64, ingress=4, egress=4, segment_bits=12):
        _check("Tenants", tenants, 1, C["TENANTS_MAX"])
        _check("Ingress", ingress, 1, C["QUEUES_MAX"])
        _check("Egress", egress, 1, C["QUEUES_MAX"])
        _check("Segment bits", segment_bits, 1, C["SEGMENT_BITS"])
        self.tenants, self.ingress, self.egress, self.segment_bits = tenants, ingress, egress, segment_bits
        self._blocks = [REGMAP.block(n) for n in _BLOCKS]
        top = max(b.base + b.size for b in self._blocks)
        super().__init__({
            "i": In(stream.Signature(Descriptor)),
            "o": Out(stream.Signature(Decision)),
            "c": In(stream.Signature(Completion)),
            "bus": In(BusSignature(addr_width=(top - 1).bit_length())),
        })

    def elaborate(self, platform):
        m = Module()
        T, NI, NE = self.tenants, self.ingress, self.egress

        m.submodules.cost = cost = CostEstimator()
        m.submodules.segmon = segmon = SegmentMonitor(segments=1 << self.segment_bits)
        m.submodules.adm = adm = Admission(tenants=T)
        # Both take a dispatch on ``valid`` alone (admission has checked eligibility and room),
        # and the pool answers admission from registers formed a cycle ahead (issue 22).
        # The load pairs (issue 22, round 10) pay at 4 egress queues and cost more than they
        # save at 16 (docs/results.md, "Issue 22, round 10").
        m.submodules.lb = lb = LoadBalancer(ingress_queues=NI, egress_queues=NE, committed=True,
                                            load_pairs=NE <= 4)
        m.submodules.bp = bp = BufferPool(queues=NI, committed=True)
        m.submodules.hist = hist = DelayHistogram(tenants=T)

        # ---- descriptors: input gate and sequence numbers --------------------------------
        accepted = Signal(_SEQ_BITS)  # descriptors accepted on i
        decided = Signal(_SEQ_BITS)   # descriptors decided by admission
        m.d.comb += [
            cost.i.payload.eq(self.i.payload),
            cost.i.valid.eq(self.i.valid & ~adm.held),
            self.i.ready.eq(cost.i.ready & ~adm.held),
        ]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += accepted.eq(accepted + 1)
        with m.If(adm.decided):
            m.d.sync += decided.eq(decided + 1)

        # COST -> segment monitor; the costed descriptor waits beside it in a FIFO, which
        # the monitor's in-order verdicts pop.
        m.submodules.beside = beside = SyncFIFO(width=CostedDescriptor.size, depth=4)
        m.d.comb += [
            segmon.i.valid.eq(cost.o.valid & beside.w_rdy),
            segmon.i.payload.segment.eq(cost.o.payload.desc.segment),
            segmon.i.payload.tag.eq(cost.o.payload.desc.tag),
            segmon.i.payload.count.eq(~cost.o.payload.desc.reoffer),
            segmon.i.payload.size.eq(cost.o.payload.desc.size),
            cost.o.ready.eq(segmon.i.ready & beside.w_rdy),
            beside.w_data.eq(cost.o.payload),
            beside.w_en.eq(cost.o.valid & cost.o.ready),
        ]
        costed = CostedDescriptor(beside.r_data)
        m.d.comb += [
            adm.i.valid.eq(segmon.o.valid),
            adm.i.payload.eq(Cat(costed.desc, costed.cost, segmon.o.payload.hot)),
            segmon.o.ready.eq(adm.i.ready),
            beside.r_en.eq(segmon.o.valid & adm.i.ready),
        ]

        # ---- admission <-> load balancer and buffer pool ---------------------------------
        bp_config_write = Signal()  # a BPOOL configuration write is on the bus (_registers)
        # The pool's answer in the cycle after a rebuild is the one formed before it: stale.
        # (After a COMMIT's tick admission's decide stage is empty: the drain emptied it.)
        rebuilt = Signal()
        m.d.sync += rebuilt.eq(bp.rebuild)
        q = adm.query_queue
        m.d.comb += [
            lb.query_ingress.eq(q),
            bp.query_queue.eq(q),
            adm.egress_ok.eq(lb.query_eligible.any()),
            adm.buffer_ok.eq(bp.query_ok),
            lb.i.valid.eq(adm.dispatch),
            lb.i.payload.ingress.eq(q),
            lb.i.payload.cpu_ns.eq(adm.dispatch_charge),
            lb.o.ready.eq(1),
            bp.i.valid.eq(adm.dispatch),
            bp.i.payload.queue.eq(q),
            bp.o.ready.eq(1),
        ]
        # The decision leaves with the egress and prefill its dispatch produced (all three
        # registered in the same cycle, all held while ``o`` is).
        admitted = adm.o.payload.source < C["SRC_DEFER"]
        m.d.comb += [
            self.o.valid.eq(adm.o.valid),
            adm.o.ready.eq(self.o.ready),
            self.o.payload.tag.eq(adm.o.payload.tag),
            self.o.payload.tenant.eq(adm.o.payload.tenant),
            self.o.payload.queue.eq(adm.o.payload.queue),
            self.o.payload.source.eq(adm.o.payload.source),
            self.o.payload.lender.eq(adm.o.payload.lender),
            self.o.payload.egress.eq(Mux(admitted, lb.o.payload.egress, 0)),
            self.o.payload.hot.eq(adm.o.payload.hot),
            self.o.payload.prefill.eq(admitted & bp.o.payload.borrowed),
            self.o.payload.cost.eq(adm.o.payload.cost),
        ]

        # ---- completions ---------------------------------------------------------------
        # The head comes from a register, not the FIFO's RAM read (issue 22: the read fed the
        # release and the buffer pool's return tree in one cycle). A completion becomes
        # visible two cycles after its acceptance instead of one; descriptors accepted after
        # it take 16, so none is decided before it, and the one it waits for holds back at
        # most one decision, as before. The queue is a FIFO and that head register beside
        # it (``_head_register``: it also keeps the head's order compares registered).
        m.submodules.pending = pending = SyncFIFO(width=_Pending.size, depth=_PENDING_DEPTH - 1)
        # The queue keeps the charge clamped as the load balancer takes it (it clamps again,
        # to the same value), so the clamp is not between the head and the release's checks.
        # The bucket is formed here, at acceptance: it depends on the completion alone.
        c_in = Signal(_Queued)
        m.d.comb += [
            c_in.tenant.eq(self.c.payload.tenant),
            c_in.queue.eq(self.c.payload.queue),
            c_in.egress.eq(self.c.payload.egress),
            c_in.bucket.eq(bucket_of(self.c.payload.sa_delay_ns)),
            c_in.charge_ns.eq(clamp_charge(self.c.payload.charge_ns)),
            self.c.ready.eq(pending.w_rdy & ~adm.commit_pending),
            pending.w_en.eq(self.c.valid & self.c.ready),
            pending.w_data.eq(Cat(c_in, accepted)),
        ]
        apply = Signal()
        head, head_valid, head_due, head_next = self._head_register(m, pending, decided, adm.decided, apply)
        hc = head.c
        charge = hc.charge_ns
        # The balancer's check of the head, per egress from its counters and the head's charge,
        # the head's egress only selecting (issue 22: it selected a count before the compare).
        outstanding = Array((lb.out_ios[e] != 0) & (lb.out_ns[e] >= charge) for e in range(NE))
        inflight = Array(bp.inflight[k] != 0 for k in range(NI))
        good = Signal()
        m.d.comb += good.eq((hc.tenant < T) & (hc.queue < NI) & (hc.egress < NE)
                            & outstanding[hc.egress] & inflight[hc.queue])
        due = Signal()     # every descriptor before it is decided; the next one is not
        after = Signal()   # the last descriptor before it is decided in this cycle
        m.d.comb += [
            due.eq(head_valid & head_due),
            after.eq(head_valid & head_next & adm.decided & good),
            apply.eq(due | after),
            # No decision while a completion is due, nor where the balancer or the buffer pool
            # could not take a dispatch that admission commits to on ``egress_ok`` and
            # ``buffer_ok`` alone: the balancer's cycle after a seed load under P2C, and a
            # BPOOL write's cycle (it may rebuild the pool, which then takes no acquire) --
            # nor in the cycle after a rebuild, whose ``buffer_ok`` was formed before it.
            adm.hold.eq(due | lb.p2c_wait | bp_config_write | rebuilt),
            lb.complete.valid.eq(apply & good),
            lb.complete.payload.egress.eq(hc.egress),
            lb.complete.payload.cpu_ns.eq(hc.charge_ns),
            bp.release.valid.eq(apply & good),
            bp.release.payload.queue.eq(hc.queue),
            hist.record.eq(apply & good),
            hist.tenant.eq(hc.tenant),
            hist.bucket.eq(hc.bucket),
            hist.window.eq(adm.window),
            hist.commit.eq(adm.commit),
        ]
        completions = Signal(32)
        bad_completions = Signal(32)
        with m.If(apply & good):
            m.d.sync += completions.eq(completions + 1)
        with m.If(apply & ~good):
            m.d.sync += bad_completions.eq(bad_completions + 1)
        m.d.comb += [adm.completions.eq(completions), adm.bad_completions.eq(bad_completions)]
        wiring.connect(m, adm.hist, hist.hist)
        wiring.connect(m, adm.hist_all, hist.hist_all)

        # ---- window --------------------------------------------------------------------
        # ``level``, not ``r_rdy``: a completion still behind the head register is in flight.
        # Registered (issue 22: the drain fed COMMIT's tick into the buffer pool's sums in one
        # cycle): drained in the last cycle with nothing accepted on ``i`` or ``c`` in it is
        # drained now (none left to decide, none queued, the histogram idle), so a COMMIT
        # never applies early; it applies a cycle later. Nor after a cycle with a COMMIT or a
        # pool rebuild: the buffer pool's tick reads sums formed in the cycle before it.
        drained_now = Signal()
        drained_last = Signal()
        m.d.comb += drained_now.eq((accepted == decided) & (pending.level == 0) & ~head_valid & ~hist.busy)
        m.d.sync += drained_last.eq(drained_now & ~(self.i.valid & self.i.ready) & ~(self.c.valid & self.c.ready)
                                    & ~adm.commit & ~bp.rebuild)
        m.d.comb += [
            adm.drained.eq(drained_last),
            segmon.tick.eq(adm.commit),
            bp.tick.eq(adm.commit),
        ]

        # ---- registers -----------------------------------------------------------------
        m.d.comb += bp_config_write.eq(self._registers(m, cost, segmon, adm, lb, bp))
        return m

    @staticmethod
    def _head_register(m, pending, decided, decides, pops):
        """The completion queue's head: a register loaded from ``pending`` whenever it is
        empty or ``pops``, with ``due`` (``decided == seq``: every descriptor before it is
        decided) and ``next`` (``decided + 1 == seq``) registered beside it.

        Issue 22, round 13: compared in the cycle they are used, ``decided == seq`` was in
        front of admission's hold and so of the dispatch into the balancer and the pool (8
        LUT levels). Both flags are formed a cycle ahead for each outcome of the two late
        signals -- this cycle's decision (``decides``: ``decided`` moves by one) and the
        head's pop (the next entry's compares) -- which only select. The compares are of
        registers alone: ``decided + 1`` and ``+ 2`` are kept as counters beside it.
        Returns ``(head, valid, due, next)``."""
        head = Signal(_Pending, name="head")
        valid = Signal(name="head_valid")
        due = Signal(name="head_due")
        nxt = Signal(name="head_next")
        # decided + k, moving with it (16-bit sequence numbers wrap together).
        plus = [decided] + [Signal(_SEQ_BITS, name=f"decided_plus{k}", init=k) for k in (1, 2)]
        with m.If(decides):
            m.d.sync += [p.eq(p + 1) for p in plus[1:]]
        incoming = _Pending(pending.r_data)
        load = Signal()
        m.d.comb += [load.eq(pending.r_rdy & (~valid | pops)), pending.r_en.eq(load)]
        # [k]: decided + k == seq, of the entry coming in and of the head staying.
        new_eq = [plus[k] == incoming.seq for k in range(3)]
        stay_eq = [due, nxt, plus[2] == head.seq]
        with m.If(load):
            m.d.sync += [head.eq(pending.r_data), valid.eq(1),
                         due.eq(Mux(decides, new_eq[1], new_eq[0])),
                         nxt.eq(Mux(decides, new_eq[2], new_eq[1]))]
        with m.Else():
            with m.If(pops):
                m.d.sync += valid.eq(0)
            m.d.sync += [due.eq(Mux(decides, stay_eq[1], stay_eq[0])),
                         nxt.eq(Mux(decides, stay_eq[2], stay_eq[1]))]
        return head, valid, due, nxt

    def _registers(self, m, cost, segmon, adm, lb, bp):
        """The register blocks; returns the strobe of a BPOOL configuration write."""
        NI, NE = self.ingress, self.egress
        blocks = {b.name: b for b in self._blocks}
        csr = {}
        # The balancer takes DEPTH a cycle ahead: its "not full" is a register (issue 22).
        lookahead = {"LB": ("DEPTH",)}
        for name in ("INFO", "LB", "BPOOL", "SEGMON"):
            m.submodules[f"csr_{name.lower()}"] = csr[name] = CsrBlock(block=blocks[name],
                                                                       lookahead=lookahead.get(name, ()))
        targets = {"INFO": csr["INFO"].bus, "LB": csr["LB"].bus, "BPOOL": csr["BPOOL"].bus,
                   "SEGMON": csr["SEGMON"].bus, "COST": cost.bus, "CTRL": adm.ctrl_bus,
                   "TENANT": adm.tenant_bus}

        # Writes the model ignores never reach the registers: LB.DEPTH = 0, and
        # SEGMON.STEADY_WINDOWS above what the hold counter takes.
        bus = self.bus
        lb_depth = blocks["LB"].base + blocks["LB"].register("DEPTH").offset
        steady = blocks["SEGMON"].base + blocks["SEGMON"].register("STEADY_WINDOWS").offset
        steady_max = 254  # SegmentMonitor::kMaxSteadyIntervals
        word = bus.addr[2:]
        ignored = (((word == lb_depth >> 2) & (bus.w_data[:C["LB_DEPTH_BITS"]] == 0))
                   | ((word == steady >> 2) & (bus.w_data[:8] > steady_max)))

        r_sel = Signal(range(len(_BLOCKS) + 1))
        with m.If(bus.r_en):
            m.d.sync += r_sel.eq(0)
        r_data = Const(0, 32)
        for k, name in enumerate(_BLOCKS):
            block, target = blocks[name], targets[name]
            bits = (block.size - 1).bit_length()
            hit = (bus.addr >> bits) == (block.base >> bits)
            m.d.comb += [
                target.addr.eq(bus.addr[:bits]),
                target.w_data.eq(bus.w_data),
                target.w_en.eq(bus.w_en & hit & ~ignored),
                target.r_en.eq(bus.r_en & hit),
            ]
            with m.If(bus.r_en & hit):
                m.d.sync += r_sel.eq(k + 1)
            r_data = Mux(r_sel == k + 1, target.r_data, r_data)
        m.d.comb += bus.r_data.eq(r_data)

        # INFO: this build.
        info = csr["INFO"]
        for reg in blocks["INFO"].registers:
            value = {"TENANTS": self.tenants, "INGRESS": NI, "EGRESS": NE,
                     "SEGMENT_BITS": self.segment_bits}.get(reg.name, reg.resets[0])
            m.d.comb += getattr(info, reg.name.lower()).eq(value)

        # SEGMON.
        sm = csr["SEGMON"]
        m.d.comb += [segmon.hot_threshold.eq(sm.hot_threshold), segmon.steady_intervals.eq(sm.steady_windows),
                     segmon.unit.eq(sm.unit)]

        # LB: the egress sets live here; the LFSR is loaded with bg_lfsr_seed(0) after reset,
        # the model's LB.SEED reset.
        regs = csr["LB"]
        lb_map = [Signal(NE, name=f"lb_map{i}", init=1 << (i % NE)) for i in range(NI)]
        seeded = Signal()
        m.d.sync += seeded.eq(1)
        m.d.comb += [
            lb.policy.eq(regs.policy),
            lb.depth.eq(regs.depth_next),
            lb.seed.eq(Mux(seeded, regs.ext_seed.w_data, 0)),
            lb.seed_load.eq(~seeded | regs.ext_seed.w_en),
        ]
        for i in range(NI):
            m.d.comb += lb.map[i].eq(lb_map[i])
        ext = regs.ext_map
        with m.If(ext.w_en):
            for i in range(NI):
                with m.If(ext.index == i):
                    m.d.sync += lb_map[i].eq(ext.w_data[:NE])
        self._ro_array(m, ext, lb_map)
        with m.If(regs.ext_seed.r_en):
            m.d.sync += regs.ext_seed.r_data.eq(lb.lfsr_state)
        self._ro_array(m, regs.ext_out_ios, [lb.out_ios[e] for e in range(NE)])
        self._ro_array(m, regs.ext_out_ns, [lb.out_ns[e] for e in range(NE)])

        # BPOOL: the configuration as written, and the one in force, which a write copies
        # (with the new value) only while no buffer is in flight -- then the pool restarts.
        regs = csr["BPOOL"]
        breg = {r.name: r for r in blocks["BPOOL"].registers}
        w_ded = [Signal(16, name=f"bp_w_dedicated{k}", init=breg["DEDICATED"].resets[0]) for k in range(NI)]
        f_ded = [Signal(16, name=f"bp_dedicated{k}", init=breg["DEDICATED"].resets[0]) for k in range(NI)]
        w_cfg = {n: Signal(breg[n].width, name=f"bp_w_{n.lower()}", init=breg[n].resets[0])
                 for n in ("SHARED", "BORROW_CAP", "QUIET")}
        f_cfg = {n: Signal(breg[n].width, name=f"bp_{n.lower()}", init=breg[n].resets[0])
                 for n in ("SHARED", "BORROW_CAP", "QUIET")}
        m.d.comb += [bp.shared.eq(f_cfg["SHARED"]), bp.borrow_cap.eq(f_cfg["BORROW_CAP"]),
                     bp.quiet_windows.eq(f_cfg["QUIET"])]
        for k in range(NI):
            m.d.comb += bp.dedicated[k].eq(f_ded[k])
        idle = Cat(*(bp.inflight[k] == 0 for k in range(NI))).all()
        new_ded = [Signal(16, name=f"bp_new_dedicated{k}") for k in range(NI)]
        new_cfg = {n: Signal(breg[n].width, name=f"bp_new_{n.lower()}") for n in w_cfg}
        wrote = Signal()
        ded = regs.ext_dedicated
        for k in range(NI):
            m.d.comb += new_ded[k].eq(Mux(ded.w_en & (ded.index == k), ded.w_data, w_ded[k]))
            with m.If(ded.w_en & (ded.index == k)):
                m.d.comb += wrote.eq(1)
        for n in w_cfg:
            e = getattr(regs, f"ext_{n.lower()}")
            m.d.comb += new_cfg[n].eq(Mux(e.w_en, e.w_data, w_cfg[n]))
            with m.If(e.w_en):
                m.d.comb += wrote.eq(1)
        with m.If(wrote):
            m.d.sync += [w_ded[k].eq(new_ded[k]) for k in range(NI)]
            m.d.sync += [w_cfg[n].eq(new_cfg[n]) for n in w_cfg]
            with m.If(idle):
                m.d.comb += bp.rebuild.eq(1)
                m.d.sync += [f_ded[k].eq(new_ded[k]) for k in range(NI)]
                m.d.sync += [f_cfg[n].eq(new_cfg[n]) for n in w_cfg]
        self._ro_array(m, ded, f_ded)
        for n, reads in (("SHARED", f_cfg["SHARED"]), ("BORROW_CAP", w_cfg["BORROW_CAP"]),
                         ("QUIET", w_cfg["QUIET"])):
            e = getattr(regs, f"ext_{n.lower()}")
            with m.If(e.r_en):
                m.d.sync += e.r_data.eq(reads)
        self._ro_array(m, regs.ext_held, [bp.extra[k] for k in range(NI)])
        return wrote

    @staticmethod
    def _ro_array(m, ext, values):
        """Register reads of an array of which ``values`` are implemented (others read 0)."""
        with m.If(ext.r_en):
            m.d.sync += ext.r_data.eq(0)
            for k, v in enumerate(values):
                with m.If(ext.index == k):
                    m.d.sync += ext.r_data.eq(v)
