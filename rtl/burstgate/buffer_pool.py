"""The two-tier I/O buffer pool (BurstCBS §5.1, Figure 12) as credit accounting, one acquire,
one release and one window tick per clock.

The rule is the one of ``sw/model/include/burstgate/model/buffer_pool.hpp``, which the unit
and cocotb testbenches compare against decision by decision.
"""

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .regmap import C

__all__ = ["BufferPool", "BufferRequest", "BufferGrant", "BufferRelease"]

_COUNT = C["BP_COUNT_BITS"]
_QUIET = C["BP_QUIET_BITS"]
_QUEUE = C["QUEUE_BITS"]

#: An I/O asking its queue for a buffer; ``tag`` is carried through untouched.
BufferRequest = data.StructLayout({
    "queue": unsigned(_QUEUE),
    "tag":   unsigned(C["TAG_BITS"]),
})

#: A granted buffer: ``borrowed`` when it was just moved from the shared pool (the one time
#: it is prefilled with the queue's metadata), else one the queue already held.
BufferGrant = data.StructLayout({
    "queue":    unsigned(_QUEUE),
    "tag":      unsigned(C["TAG_BITS"]),
    "borrowed": unsigned(1),
})

#: An I/O of ``queue`` finished and gave its buffer back.
BufferRelease = data.StructLayout({
    "queue": unsigned(_QUEUE),
})


class BufferPool(wiring.Component):
    """Per-queue dedicated buffers plus a shared pool a bursting queue borrows from.

    An I/O of queue q gets a buffer the queue holds while ``inflight < dedicated + extra``;
    otherwise it borrows one from the shared pool (``extra += 1``) unless the pool is empty
    or q already holds ``borrow_cap`` extra buffers, in which case it waits (``i.ready``
    stays low, nothing changes). At a window tick, a queue holding extra buffers whose peak
    in-flight count in the window stayed within its dedicated buffers counts one quiet
    window; after ``quiet_windows`` of them in a row all its extra buffers go back. With
    ``quiet_windows = 0`` an extra buffer goes back on its release instead.

    Within one cycle the events apply in the order acquire (decided on the state at the start
    of the cycle), release, tick — the order the reference model is driven in. Throughput:
    one acquire per cycle while ``o.ready``; a release and a tick every cycle.

    The free shared count is kept as ``shared - sum(extra)``, so all state resets to zero and
    the configuration inputs need no load strobe. Change the configuration only with no I/O
    outstanding, then pulse ``rebuild`` (the register map's "a write rebuilds the pool").

    Parameters
    ----------
    queues : int
        Queues, 1..``QUEUES_MAX``.
    committed : bool
        The caller asks ``query_ok`` first and offers on ``i`` only an acquire it says is
        served, and ticks only in a cycle without an acquire, after a cycle with no acquire,
        release, tick or rebuild, and when no descriptor asks next cycle (the core's
        admission and drain: issue 22). Then ``i.ready`` does not depend on the request (low only while ``o`` is
        held or in a ``rebuild`` cycle): the late ``valid`` alone selects the next counts.
        And ``query_ok`` comes from registers: the answer for every queue is formed a cycle
        ahead for each outcome of that cycle's acquire and release (taken or not), and those
        two only select. It is exact in every cycle but the one after a ``tick`` or a
        ``rebuild``, in which it must not be used. Default False: every request is checked,
        ``query_ok`` is combinational.

    Members
    -------
    i : In(stream.Signature(BufferRequest))
        Acquire requests. ``ready`` depends combinationally on ``valid`` and
        ``payload.queue``. A queue id at or above ``queues`` is never accepted (a caller
        bug; the model raises). With ``committed``, ``ready`` is ``o``'s room and not a
        rebuild, whatever the request: one the pool could not serve is a caller bug.
    o : Out(stream.Signature(BufferGrant))
        Grants, in order. Latency 1 cycle from ``i`` to ``o``.
    release : In(stream.Signature(BufferRelease))
        Releases; ``ready`` is always 1 (never backpressured; ``always_ready`` streams are not
        used because a constant port cannot be a top-level Verilog port). A release of a queue with nothing in flight (a caller bug; the model
        raises) changes nothing and sets ``underflow``.
    tick : In(1)
        Window boundary, one cycle high.
    rebuild : In(1)
        Return every count to zero (the state after configuration). Events in the same
        cycle are ignored (``i.ready`` is low).
    dedicated : In(data.ArrayLayout(BP_COUNT_BITS, queues))
        Buffers each queue owns.
    shared : In(BP_COUNT_BITS)
        Buffers in the shared pool.
    borrow_cap : In(BP_COUNT_BITS)
        Most extra buffers one queue may hold.
    quiet_windows : In(BP_QUIET_BITS)
        Quiet windows before extra buffers go back; 0: back on release.
    stall : Out(1)
        ``i`` holds a request that cannot be served now (the model's ``kStall``).
    query_queue : In(QUEUE_BITS)
        A queue to ask about.
    query_ok : Out(1)
        Whether an acquire for ``query_queue`` would be served this cycle (the model's
        ``can_acquire``; combinational, or with ``committed`` a select of registers by
        ``query_queue``, exact but in the cycle after a ``tick`` or ``rebuild``).
    extra, inflight, peak : Out(data.ArrayLayout(BP_COUNT_BITS, queues))
        Per-queue state: buffers borrowed and kept, I/Os holding a buffer, peak in-flight
        since the last tick.
    quiet : Out(data.ArrayLayout(BP_QUIET_BITS, queues))
        Consecutive quiet windows so far.
    shared_free : Out(BP_COUNT_BITS)
        Free shared buffers (0 while the configuration is below what is borrowed).
    underflow : Out(1)
        Sticky: a release arrived for a queue with nothing in flight.
    """

    def __new__(cls, *, queues=C["QUEUES_MAX"], committed=False):
        # Checked before the object exists: a rejected one would warn "created but never used".
        if not isinstance(queues, int) or isinstance(queues, bool):
            raise TypeError(f"Queues must be an integer, not {queues!r}")
        if not 1 <= queues <= C["QUEUES_MAX"]:
            raise ValueError(f"Queues must be 1..{C['QUEUES_MAX']}, not {queues!r}")
        if not isinstance(committed, bool):
            raise TypeError(f"Committed must be a bool, not {committed!r}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, *, queues=C["QUEUES_MAX"], committed=False):
        self._queues = queues
        self._committed = committed
        counts = data.ArrayLayout(unsigned(_COUNT), queues)
        super().__init__({
            "i": In(stream.Signature(BufferRequest)),
            "o": Out(stream.Signature(BufferGrant)),
            "release": In(stream.Signature(BufferRelease)),
            "tick": In(1),
            "rebuild": In(1),
            "dedicated": In(counts),
            "shared": In(_COUNT),
            "borrow_cap": In(_COUNT),
            "quiet_windows": In(_QUIET),
            "stall": Out(1),
            "query_queue": In(_QUEUE),
            "query_ok": Out(1),
            "extra": Out(counts),
            "inflight": Out(counts),
            "peak": Out(counts),
            "quiet": Out(data.ArrayLayout(unsigned(_QUIET), queues)),
            "shared_free": Out(_COUNT),
            "underflow": Out(1),
        })

    @property
    def queues(self):
        return self._queues

    @property
    def committed(self):
        return self._committed

    def _serves(self, m, name, queue, held_total):
        """(known, need_borrow, can_borrow) for an acquire on ``queue`` right now."""
        hits = [Signal(name=f"{name}_hit{q}") for q in range(self._queues)]
        m.d.comb += [hits[q].eq(queue == q) for q in range(self._queues)]
        inflight = Signal(_COUNT, name=f"{name}_inflight")
        owned = Signal(_COUNT + 1, name=f"{name}_owned")
        extra = Signal(_COUNT, name=f"{name}_extra")
        for q in range(self._queues):
            with m.If(hits[q]):
                m.d.comb += [
                    inflight.eq(self.inflight[q]),
                    owned.eq(self.dedicated[q] + self.extra[q]),
                    extra.eq(self.extra[q]),
                ]
        known = Signal(name=f"{name}_known")
        m.d.comb += known.eq(queue < self._queues)
        need = inflight >= owned
        can_borrow = (held_total < self.shared) & (extra < self.borrow_cap)
        return known, need, can_borrow

    def _query_ahead(self, m, held_total):
        """``query_ok`` from registers (``committed``): next cycle's answer for every queue,
        for each outcome of this cycle's acquire (``a``: taken on ``i.payload.queue``) and
        release (``r``: applied on ``release.payload.queue``); next cycle the registered
        ``a``, ``r`` and ``query_queue`` select. A tick or a rebuild this cycle is not in it
        (see ``committed``).

        An acquire or a release moves a queue's counts by at most one, so every compare of
        the answer is formed from the registers with the offsets it may need (in flight vs
        owned: ``>=``, ``>``, ``+ 1 >=``; extra vs the cap and ``held_total`` vs the pool:
        one less, the same, one more), and the outcome, the queues and the release's rules
        only select (issue 22: a count's next value in front of a compare was 11 LUT levels).
        Counts are taken not to wrap (below 2**BP_COUNT_BITS - 1, as in the core)."""
        nq = self._queues
        rel = self.release
        qw0 = self.quiet_windows == 0
        ge, gt, ge_m1, lt, lt_p1, le, nz_in, nz_ex, iq, hq = ([] for _ in range(10))
        for k in range(nq):
            owned = Signal(_COUNT + 1, name=f"qa_owned{k}")
            m.d.comb += owned.eq(self.dedicated[k] + self.extra[k])
            sig = {}
            for name, value in (("ge", self.inflight[k] >= owned), ("gt", self.inflight[k] > owned),
                                ("ge_m1", (self.inflight[k] + 1) >= owned),
                                ("lt", self.extra[k] < self.borrow_cap),
                                ("lt_p1", (self.extra[k] + 1) < self.borrow_cap),
                                ("le", self.extra[k] <= self.borrow_cap),
                                ("nz_in", self.inflight[k] != 0), ("nz_ex", self.extra[k] != 0),
                                ("iq", self.i.payload.queue == k), ("hq", rel.payload.queue == k)):
                sig[name] = Signal(name=f"qa_{name}{k}")
                m.d.comb += sig[name].eq(value)
            for lst, name in ((ge, "ge"), (gt, "gt"), (ge_m1, "ge_m1"), (lt, "lt"), (lt_p1, "lt_p1"),
                              (le, "le"), (nz_in, "nz_in"), (nz_ex, "nz_ex"), (iq, "iq"), (hq, "hq")):
                lst.append(sig[name])
        room = {(1, 0): (held_total + 1) < self.shared, (0, 1): held_total <= self.shared,
                (0, 0): held_total < self.shared}
        ahead = [[[Signal(name=f"ok_ahead{k}_{a}{r}") for r in (0, 1)] for a in (0, 1)] for k in range(nq)]
        for a in (0, 1):
            for r in (0, 1):
                inc, dec, need2, cap_ok = [], [], [], []
                for k in range(nq):
                    acq = iq[k] if a else Const(0)
                    taken = (hq[k] & (nz_in[k] | acq)) if r else Const(0)
                    # The acquire borrows when the queue needs a buffer (``ge``: in flight >= owned);
                    # the release returns one with quiet_windows = 0 when the queue then holds one.
                    inc_k = Signal(name=f"qa_inc{k}_{a}{r}")
                    dec_k = Signal(name=f"qa_dec{k}_{a}{r}")
                    m.d.comb += [inc_k.eq(acq & ge[k]), dec_k.eq(taken & qw0 & (nz_ex[k] | inc_k))]
                    # in flight + acq - taken >= owned + inc - dec, by cases of the four
                    n2 = Signal(name=f"qa_need{k}_{a}{r}")
                    m.d.comb += n2.eq(Mux(acq, Mux(taken & ~dec_k, gt[k], ge_m1[k]),
                                          Mux(taken & ~dec_k, gt[k], ge[k])))
                    c2 = Signal(name=f"qa_cap{k}_{a}{r}")  # extra + inc - dec < borrow_cap
                    m.d.comb += c2.eq(Mux(inc_k & ~dec_k, lt_p1[k], Mux(dec_k & ~inc_k, le[k], lt[k])))
                    inc.append(inc_k)
                    dec.append(dec_k)
                    need2.append(n2)
                    cap_ok.append(c2)
                borrow, back = Cat(*inc).any(), Cat(*dec).any()
                held_ok = Signal(name=f"qa_room_{a}{r}")  # held_total + borrow - back < shared
                m.d.comb += held_ok.eq(Mux(borrow & ~back, room[1, 0], Mux(back & ~borrow, room[0, 1], room[0, 0])))
                for k in range(nq):
                    m.d.sync += ahead[k][a][r].eq(~need2[k] | (held_ok & cap_ok[k]))
        acquired = Signal()  # the registered outcomes of the cycle the answers were formed in
        released = Signal()
        m.d.sync += [acquired.eq(self.i.valid & self.i.ready), released.eq(rel.valid)]
        with m.Switch(self.query_queue):
            for k in range(nq):
                with m.Case(k):
                    m.d.comb += self.query_ok.eq(
                        Mux(acquired, Mux(released, ahead[k][1][1], ahead[k][1][0]),
                            Mux(released, ahead[k][0][1], ahead[k][0][0])))

    def elaborate(self, platform):
        m = Module()
        nq = self._queues

        held_total = Signal(_COUNT)  # sum of extra: the shared buffers not free
        m.d.comb += self.shared_free.eq(Mux(held_total < self.shared, self.shared - held_total, 0))

        known, need, can_borrow = self._serves(m, "acq", self.i.payload.queue, held_total)
        if self._committed:
            self._query_ahead(m, held_total)
        else:
            q_known, q_need, q_can_borrow = self._serves(m, "query", self.query_queue, held_total)
            m.d.comb += self.query_ok.eq(q_known & (~q_need | q_can_borrow))

        advance = Signal()
        blocked = Signal()
        m.d.comb += [
            advance.eq(~self.o.valid | self.o.ready),
            blocked.eq(~known | (need & ~can_borrow)),
            self.stall.eq(self.i.valid & blocked & ~self.rebuild),
        ]
        if self._committed:
            m.d.comb += self.i.ready.eq(advance & ~self.rebuild)
        else:
            m.d.comb += self.i.ready.eq(advance & ~blocked & ~self.rebuild)
        accept = self.i.valid & self.i.ready

        with m.If(advance):
            m.d.sync += self.o.valid.eq(accept)
            with m.If(accept):
                m.d.sync += [
                    self.o.payload.queue.eq(self.i.payload.queue),
                    self.o.payload.tag.eq(self.i.payload.tag),
                    self.o.payload.borrowed.eq(need),
                ]

        rel = self.release
        m.d.comb += rel.ready.eq(1)
        # Each queue's next state is formed for both outcomes of this cycle's acquire (taken
        # or not) from the state and the release alone: ``accept`` follows the admission
        # decision of the same cycle, so on the ECP5 it only selects at the end.
        ret = [[], []]             # per outcome, per queue: a release returns its buffer on the spot
        would_back = []            # per queue: a tick now, with no acquire, would return its extra buffers
        tick_back = [[], []]       # per outcome, per queue: the tick returns the queue's extra buffers
        needs = []                 # per queue: an acquire on it now would borrow
        for q in range(nq):
            acq_q = Signal(name=f"acq{q}")
            m.d.comb += acq_q.eq(accept & (self.i.payload.queue == q))
            # The taken outcome of queue q is used only for an acquire on q, whose ``need`` is
            # q's own compare: formed from q's registers, not selected by the request's queue.
            need_q = Signal(name=f"need{q}")
            m.d.comb += need_q.eq(self.inflight[q] >= (self.dedicated[q] + self.extra[q]))
            needs.append(need_q)
            rel_q = rel.valid & (rel.payload.queue == q)
            nxt = {k: [] for k in ("inflight", "extra", "peak", "quiet", "underflow")}
            for h in (0, 1):
                # acquire
                inflight1 = Signal(_COUNT, name=f"inflight1_{q}_{h}")
                extra1 = Signal(_COUNT, name=f"extra1_{q}_{h}")
                peak1 = Signal(_COUNT, name=f"peak1_{q}_{h}")
                m.d.comb += [
                    inflight1.eq(self.inflight[q] + h),
                    extra1.eq(self.extra[q] + need_q if h else self.extra[q]),
                    peak1.eq(Mux(inflight1 > self.peak[q], inflight1, self.peak[q])),
                ]
                # release: returns its buffer on the spot only with quiet_windows = 0, so never
                # in a cycle in which a tick returns anything (that needs quiet_windows != 0)
                ok_rel = Signal(name=f"ok_rel{q}_{h}")
                can_ret = Signal(name=f"can_ret{q}_{h}")
                ret_h = Signal(name=f"ret{q}_{h}")
                inflight2 = Signal(_COUNT, name=f"inflight2_{q}_{h}")
                extra2 = Signal(_COUNT, name=f"extra2_{q}_{h}")
                # The release (late in the core: it follows the completion queue's head and
                # the decision of the same cycle) only selects between counts formed from
                # registers, one less or not.
                inflight1m = Signal(_COUNT, name=f"inflight1m_{q}_{h}")
                extra1m = Signal(_COUNT, name=f"extra1m_{q}_{h}")
                if self._committed and h:
                    # extra + need != 0 without the adder (extra < borrow_cap, so no wrap):
                    # the release's return is not behind need's sum (issue 22: extra -> owned
                    # -> need -> extra1 -> the return -> held_total was the core's only
                    # 9-level path).
                    has_extra1 = (self.extra[q] != 0) | need_q
                else:
                    has_extra1 = extra1 != 0
                m.d.comb += [
                    ok_rel.eq(rel_q & (inflight1 != 0)),
                    can_ret.eq((inflight1 != 0) & (self.quiet_windows == 0) & has_extra1),
                    ret_h.eq(rel_q & can_ret),
                    inflight1m.eq(inflight1 - 1),
                    extra1m.eq(extra1 - 1),
                    inflight2.eq(Mux(ok_rel, inflight1m, inflight1)),
                    extra2.eq(Mux(ret_h, extra1m, extra1)),
                ]
                # tick: with quiet_windows != 0 the release took nothing back, so whether the
                # queue's extra buffers (extra1 = extra2) go back is known without the release;
                # the quiet count below reads extra1 for that reason
                back_h = Signal(name=f"back{q}_{h}")
                quiet_h = Signal(_QUIET, name=f"quiet_next{q}_{h}")
                quiet_next = Signal(_QUIET + 1, name=f"quiet_inc{q}_{h}")
                m.d.comb += [quiet_next.eq(self.quiet[q] + 1), quiet_h.eq(self.quiet[q])]
                quiet_now = (self.quiet_windows != 0) & (peak1 <= self.dedicated[q])
                m.d.comb += back_h.eq(self.tick & quiet_now & (quiet_next >= self.quiet_windows))
                if h == 0 and self._committed:
                    # Without an acquire peak1 = max(inflight, peak) is peak itself: peak >=
                    # inflight always (a cycle's peak is at least its inflight1, a release
                    # only lowers inflight, and a tick and a rebuild set peak to inflight), so
                    # the tick's sum ahead starts at the quiet compare, not at that max
                    # (issue 22, round 11: inflight -> base_ahead was a 9-level path).
                    would_back.append((self.quiet_windows != 0) & (self.peak[q] <= self.dedicated[q])
                                      & (quiet_next >= self.quiet_windows))
                elif h == 0:
                    would_back.append(quiet_now & (quiet_next >= self.quiet_windows))
                with m.If(self.tick):
                    with m.If(quiet_now & (extra1 != 0)):
                        with m.If(quiet_next >= self.quiet_windows):
                            m.d.comb += quiet_h.eq(0)
                        with m.Else():
                            m.d.comb += quiet_h.eq(quiet_next)
                    with m.Else():
                        m.d.comb += quiet_h.eq(0)
                nxt["inflight"].append(inflight2)
                nxt["extra"].append(Mux(back_h, 0, extra2))
                nxt["peak"].append(Mux(self.tick, inflight2, peak1))
                nxt["quiet"].append(quiet_h)
                nxt["underflow"].append(rel_q & (inflight1 == 0))
                ret[h].append(can_ret)
                tick_back[h].append(back_h)
            with m.If(Mux(acq_q, nxt["underflow"][1], nxt["underflow"][0])):
                m.d.sync += self.underflow.eq(1)
            m.d.sync += [getattr(self, k)[q].eq(Mux(acq_q, v[1], v[0]))
                         for k, v in nxt.items() if k != "underflow"]
        # held_total's next value, formed so that the late inputs (the acquire's ``accept`` and
        # queue, the release) come in only at the end (issue 22: in the core both follow
        # decisions of the same cycle). A tick returns whole queues' extra buffers, an adder
        # tree over the queues -- but from registers only: with quiet_windows != 0 a release
        # returns nothing, and an acquire on queue r changes only r's term. ``base`` is the
        # total with no acquire and no release; an acquire on r adds r's difference (``adj``,
        # selected by the queue); a release (quiet_windows = 0, when no tick returns anything)
        # takes one off, ``base - 1`` selected before that last adder.
        base = Signal(_COUNT)
        if self._committed:
            # The tick's returns summed a cycle ahead (issue 22: the adder tree behind the quiet
            # compares was the deepest path left): the caller ticks only after a cycle with no
            # acquire, release, tick or rebuild, so nothing the sum reads has changed since.
            base_ahead = Signal(_COUNT)
            m.d.sync += base_ahead.eq(held_total - sum(Mux(would_back[q], self.extra[q], 0) for q in range(nq)))
            m.d.comb += base.eq(Mux(self.tick, base_ahead, held_total))
        else:
            m.d.comb += base.eq(held_total - sum(Mux(tick_back[0][q], self.extra[q], 0) for q in range(nq)))
        adj = Signal(_COUNT)     # accept and the queue select: r's difference with its acquire
        for r in range(nq):
            adj_r = Signal(_COUNT, name=f"held_adj{r}")
            if self._committed:
                # No acquire in a tick's cycle (the caller's drain precedes the tick): the
                # acquire's term is its borrow alone, not behind the tick's quiet compares.
                m.d.comb += adj_r.eq(needs[r])
            else:
                # r's term in base (without the acquire) replaced by its term with it.
                lost = tick_back[0][r] & ~tick_back[1][r]
                gained = tick_back[1][r] & ~tick_back[0][r]
                m.d.comb += adj_r.eq(Mux(lost, self.extra[r], Mux(gained, -self.extra[r], 0))
                                     + (needs[r] & ~tick_back[1][r]))
            with m.If(accept & (self.i.payload.queue == r)):
                m.d.comb += adj.eq(adj_r)
        # The release returns a buffer when its queue (after this cycle's acquire) can.
        returns = Signal()
        with m.Switch(rel.payload.queue):
            for p in range(nq):
                with m.Case(p):
                    m.d.comb += returns.eq(rel.valid & Mux(self.i.payload.queue == p,
                                                           Mux(accept, ret[1][p], ret[0][p]), ret[0][p]))
        base_1 = Signal(_COUNT)
        m.d.comb += base_1.eq(base - 1)
        if self._committed:
            # adj is the acquire's borrow alone (0 or 1): base + 1, base and base - 1 are formed
            # beside need and the release, which only select at the end.
            base_p1 = Signal(_COUNT)
            m.d.comb += base_p1.eq(base + 1)
            m.d.sync += held_total.eq(Mux(adj[0] & ~returns, base_p1, Mux(returns & ~adj[0], base_1, base)))
        else:
            m.d.sync += held_total.eq(Mux(returns, base_1, base) + adj)
        with m.If(self.rebuild):
            m.d.sync += [held_total.eq(0), self.underflow.eq(0)]
            for q in range(nq):
                m.d.sync += [self.inflight[q].eq(0), self.extra[q].eq(0), self.peak[q].eq(0),
                             self.quiet[q].eq(0)]
        return m
