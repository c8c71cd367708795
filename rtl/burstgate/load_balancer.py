"""The queue-scaling load balancer (BurstCBS §5.1, Figure 10b), one decision per clock.

The rules are those of ``sw/model/include/burstgate/model/load_balancer.hpp``, which the unit
and cocotb testbenches compare against decision by decision.
"""

from amaranth import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from . import lfsr
from .regmap import C, REGMAP
from .trees import or_tree, popcount

__all__ = ["LoadBalancer", "LbPolicy", "LbRequest", "LbDecision", "LbCompletion", "clamp_charge"]

_QUEUE = C["QUEUE_BITS"]
_DEPTH = C["LB_DEPTH_BITS"]
_CHARGE = C["LB_CHARGE_BITS"]
_CHARGE_MAX = (1 << _CHARGE) - 1
_NS = 32  # outstanding CPU ns per egress: (2**DEPTH - 1) * (2**CHARGE - 1) < 2**32


class LbPolicy(enum.Enum, shape=REGMAP.block("LB").register("POLICY").width):
    """The LB policy register's encoding (the register map's LB_* constants, ``bg::LbPolicy``);
    LB_POLICIES and above are reserved (decided as STATIC)."""
    STATIC = C["LB_STATIC"]            # lowest eligible member of the set
    ROUND_ROBIN = C["LB_ROUND_ROBIN"]  # per-ingress pointer over the set
    JSQ = C["LB_JSQ"]                  # least outstanding CPU ns, lowest index on ties
    P2C = C["LB_P2C"]                  # two LFSR draws over the eligible members, less loaded, else the first
    LEAST_IOS = C["LB_LEAST_IOS"]      # fewest outstanding I/Os, lowest index on ties (docs/extending.md)


#: An admitted I/O to place. ``cpu_ns`` is its estimated CPU cost; ``tag`` is carried through.
LbRequest = data.StructLayout({
    "ingress": unsigned(_QUEUE),
    "cpu_ns":  unsigned(32),
    "tag":     unsigned(C["TAG_BITS"]),
})

#: Where it went, and the clamped charge the egress was debited (a completion must carry a
#: cpu_ns with the same clamp; the charge itself is the simplest).
LbDecision = data.StructLayout({
    "ingress": unsigned(_QUEUE),
    "egress":  unsigned(_QUEUE),
    "charge":  unsigned(_CHARGE),
    "tag":     unsigned(C["TAG_BITS"]),
})

#: An I/O dispatched to ``egress`` with ``cpu_ns`` finished.
LbCompletion = data.StructLayout({
    "egress": unsigned(_QUEUE),
    "cpu_ns": unsigned(32),
})


def _scaled_draws(m, r, count, name):
    """``(r * j) >> 32`` for ``j`` in ``0..count - 1``.

    Each multiple is built from a smaller one: an even ``j`` is a shift of ``j / 2``'s, an odd
    one one adder away (``2**n - 1`` as ``(r << n) - r``), so ``count`` values take about
    ``count / 2`` adders, none deeper than two.
    """
    multiple = {0: Const(0, 1), 1: r}
    for j in range(2, count):
        if j % 2 == 0:
            multiple[j] = multiple[j // 2] << 1
        elif (j + 1) & j == 0:
            multiple[j] = ((r << (j + 1).bit_length() - 1) - r).as_unsigned()
        else:
            multiple[j] = multiple[j - 1] + r
    values = []
    for j in range(count):
        v = Signal(_QUEUE, name=f"{name}_x{j}")
        m.d.comb += v.eq(multiple[j] >> 32)
        values.append(v)
    return values


def _p2c_tables(r1, r2, ne):
    """The P2C tables (``LoadBalancer._p2c_draws``) of the draws ``r1``, ``r2`` as integers:
    the registers' reset values."""
    first, second = {}, {}
    for k in range(1, ne + 1):
        i1 = (r1 * k) >> 32
        raw = (r2 * (k - 1)) >> 32
        i2 = (raw + 1 if raw >= i1 else raw) if k >= 2 else i1
        for r in range(k):
            first[r, k - 1 - r], second[r, k - 1 - r] = int(i1 == r), int(i2 == r)
    return first, second


def _lowest_onehot(m, vec, name):
    """The lowest set bit of ``vec`` alone (0 when none): ``vec & -vec``, one carry chain.

    As an index it was a chain of one multiplexer per bit, the deepest path on UltraScale+.
    """
    oh = Signal(len(vec), name=name)
    m.d.comb += oh.eq(vec & (~vec + 1)[:len(vec)])
    return oh


def _select(onehot, values):
    """``values[i]`` for the one set bit ``i`` of ``onehot`` (0 when none), as an AND-OR."""
    return or_tree([Mux(onehot[i], v, 0) for i, v in enumerate(values)])


def _encode(onehot, width):
    """Index of the one set bit of ``onehot``."""
    return or_tree([Mux(onehot[i], i, 0) for i in range(width)])


def clamp_charge(ns):
    """The charge of an I/O costing ``ns`` CPU ns: ``min(ns, 2**LB_CHARGE_BITS - 1)``.

    The core's admission registers it a stage ahead of its dispatch and the completion queue
    stores it (issue 22), so neither clamp is in front of the counters; the balancer clamps
    again, which on an already clamped value is no logic."""
    return Mux(ns[_CHARGE:].any(), _CHARGE_MAX, ns[:_CHARGE])


class LoadBalancer(wiring.Component):
    """Send each I/O to one eligible member of its ingress queue's egress set.

    An egress queue is eligible for an ingress when it is in the ingress's ``map`` and has
    fewer than ``depth`` I/Os outstanding. With no eligible member the I/O waits on ``i``
    (``ready`` low, ``stall`` high) and nothing changes; it is decided in the first cycle a
    member is eligible. On a decision the chosen egress is charged one I/O and
    ``min(cpu_ns, 2**LB_CHARGE_BITS - 1)`` ns; a completion takes them back.

    Policies: STATIC takes the lowest eligible member; ROUND_ROBIN the first eligible member
    at or after the ingress's pointer (cyclically), then moves the pointer past it; JSQ the
    eligible member with the least outstanding ns, lowest index on ties; P2C draws twice from
    the LFSR (32 steps each, computed as two XOR matrices derived from the LFSR's taps), maps
    the draws onto two distinct eligible members (``(r * k) >> 32``, the second among the
    other ``k - 1``) and takes the less loaded, the first on a tie; LEAST_IOS the eligible
    member with the fewest outstanding I/Os, lowest index on ties. The reserved encodings
    5..7 decide as STATIC (the model rejects them).

    Within one cycle: the decision (on the state at the start of the cycle, with the
    configuration inputs of that cycle), then the completion, then a seed load. Throughput:
    one decision per cycle while ``o.ready`` and a member is eligible, except that a P2C
    request in the cycle after a seed load waits that cycle (``ready`` low, ``stall`` low,
    ``p2c_wait`` high: the draws' tables of the new state are being written); one completion
    every cycle.
    Latency 1 cycle from ``i`` to ``o``.

    Parameters
    ----------
    ingress_queues : int
        Ingress queues, 1..``QUEUES_MAX``.
    egress_queues : int
        Egress queues (SA threads), 1..``QUEUES_MAX``; round robin wraps at this count.
    committed : bool
        The caller asks ``query_eligible`` first and offers on ``i`` only an I/O with an
        eligible member, and holds it in a ``p2c_wait`` cycle (the core's admission: issue
        22). Then ``i.ready`` does not depend on the request (``o``'s room and not
        ``p2c_wait``): the late ``valid`` alone selects the counters' next values. An
        offered I/O with no eligible member is a caller bug (it is decided to egress 0 and
        charged nowhere). It also completes only I/Os outstanding on their egress: a
        completion is applied as given (``underflow`` still reports one that exceeds what is
        outstanding). And ``depth`` is read a cycle ahead (below), so that "not full" is a
        register and the pick starts from it (issue 22). Default False: ``ready`` also needs
        an eligible member, a completion exceeding what is outstanding changes nothing, and
        ``depth`` is this cycle's.

    load_pairs : bool
        With ``committed``: which of every two egress queues has less outstanding ns, and
        fewer I/Os, is a register, and P2C's compare, JSQ and LEAST_IOS pick from these
        registers (issue 22, round 10). Measured out of context (docs/results.md "Issue 22,
        round 10"): at 4 egress queues 9 -> 7 LUT levels for 1 683 more LUTs; at 16 the
        pairs (240, each from six compares) take 37 475 LUTs and 19 levels, worse than
        without them, so the core sets it for 4 egress queues or fewer. Default False.

    Members
    -------
    i : In(stream.Signature(LbRequest))
        I/Os to place. ``ready`` depends combinationally on ``valid`` and
        ``payload.ingress`` (with ``committed``, on neither). An ingress id at or above
        ``ingress_queues`` has an empty set (the model raises).
    o : Out(stream.Signature(LbDecision))
        Decisions, in order.
    complete : In(stream.Signature(LbCompletion))
        Completions; ``ready`` is always 1 (never backpressured; ``always_ready`` streams
        are not used because a constant port cannot be a top-level Verilog port). One exceeding what its egress has outstanding (a caller bug; the model
        raises) changes nothing and sets ``underflow``.
    policy : In(LbPolicy)
        Policy of this cycle's decision.
    depth : In(LB_DEPTH_BITS)
        Outstanding I/Os at which an egress queue is full (1..4095; 0: every queue is full).
        With ``committed``: the depth in force from the next cycle on (the core's DEPTH
        register after this cycle's write); the cycle after reset takes every queue as not
        full, as any depth from 1 up does with no I/O outstanding (the core ignores a write
        of 0, as the model does).
    map : In(data.ArrayLayout(egress_queues, ingress_queues))
        Egress set of each ingress queue, a bitmask.
    seed : In(32)
    seed_load : In(1)
        The LFSR becomes ``bg_lfsr_seed(seed)`` at the end of the cycle (after this cycle's
        decision draws); P2C decides again from the cycle after next. Reset state:
        ``bg_lfsr_seed(1)``, the model's default.
    stall : Out(1)
        ``i`` holds an I/O none of whose set members is eligible.
    p2c_wait : Out(1)
        No request is taken this cycle, eligible or not: the policy is P2C and the draws'
        tables are being written after a seed load (``ready`` is low). From a register and
        ``policy`` only, so a stage that commits an I/O before offering it (the core's admission) can hold
        its decision in this cycle instead of losing the I/O.
    query_ingress : In(QUEUE_BITS)
    query_eligible : Out(egress_queues)
        Eligible members of ``query_ingress``'s set now (combinational), so an admission
        stage can tell "is any member eligible" before committing an I/O.
    out_ios : Out(data.ArrayLayout(LB_DEPTH_BITS, egress_queues))
    out_ns : Out(data.ArrayLayout(32, egress_queues))
        Outstanding I/Os and CPU ns per egress queue.
    lfsr_state : Out(32)
    underflow : Out(1)
        Sticky: a completion exceeded what its egress had outstanding.
    """

    def __new__(cls, *, ingress_queues=C["QUEUES_MAX"], egress_queues=C["QUEUES_MAX"], committed=False, load_pairs=False):
        # Checked before the object exists: a rejected one would warn "created but never used".
        for name, value in (("Ingress queues", ingress_queues), ("Egress queues", egress_queues)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be an integer, not {value!r}")
            if not 1 <= value <= C["QUEUES_MAX"]:
                raise ValueError(f"{name} must be 1..{C['QUEUES_MAX']}, not {value!r}")
        if not isinstance(committed, bool):
            raise TypeError(f"Committed must be a bool, not {committed!r}")
        if not isinstance(load_pairs, bool):
            raise TypeError(f"Load pairs must be a bool, not {load_pairs!r}")
        if load_pairs and not committed:
            raise ValueError("Load pairs needs committed: the pairs are formed for a completion applied as given")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, *, ingress_queues=C["QUEUES_MAX"], egress_queues=C["QUEUES_MAX"], committed=False, load_pairs=False):
        self._ingress, self._egress = ingress_queues, egress_queues
        self._committed = committed
        self._load_pairs = load_pairs
        egress = egress_queues
        super().__init__({
            "i": In(stream.Signature(LbRequest)),
            "o": Out(stream.Signature(LbDecision)),
            "complete": In(stream.Signature(LbCompletion)),
            "policy": In(LbPolicy),
            "depth": In(_DEPTH),
            "map": In(data.ArrayLayout(unsigned(egress), ingress_queues)),
            "seed": In(32),
            "seed_load": In(1),
            "stall": Out(1),
            "p2c_wait": Out(1),
            "query_ingress": In(_QUEUE),
            "query_eligible": Out(egress),
            "out_ios": Out(data.ArrayLayout(unsigned(_DEPTH), egress)),
            "out_ns": Out(data.ArrayLayout(unsigned(_NS), egress)),
            "lfsr_state": Out(32, init=1),  # bg_lfsr_seed(1), the model's default seed
            "underflow": Out(1),
        })

    @property
    def ingress_queues(self):
        return self._ingress

    @property
    def egress_queues(self):
        return self._egress

    @property
    def committed(self):
        return self._committed

    def _eligible(self, m, name, ingress, not_full):
        members = Signal(self._egress, name=f"{name}_set")
        for q in range(self._ingress):
            with m.If(ingress == q):
                m.d.comb += members.eq(self.map[q])
        elig = Signal(self._egress, name=f"{name}_eligible")
        m.d.comb += elig.eq(members & not_full)
        return elig

    def _jsq(self, m, elig, load=None, name="jsq"):
        """Eligible egress with the least ``load`` (default: outstanding ns), lowest index
        among equals.

        A tree of (valid, load, index) comparisons; keeping the lower-index side unless the
        higher one is strictly less is the model's upward scan with strict ``<``.
        """
        load = self.out_ns if load is None else load
        nodes = [(elig[e], load[e], e) for e in range(self._egress)]
        level = 0
        while len(nodes) > 1:
            nxt = []
            for n in range(0, len(nodes) - 1, 2):
                (va, nsa, ia), (vb, nsb, ib) = nodes[n], nodes[n + 1]
                take_b = Signal(name=f"{name}_l{level}_{n // 2}_take_hi")
                m.d.comb += take_b.eq(vb & (~va | (nsb < nsa)))
                nxt.append((va | vb, Mux(take_b, nsb, nsa), Mux(take_b, ib, ia)))
            if len(nodes) % 2:
                nxt.append(nodes[-1])
            nodes, level = nxt, level + 1
        pick = Signal(_QUEUE, name=f"{name}_pick")
        m.d.comb += pick.eq(nodes[0][2])
        pick_oh = Signal(self._egress, name=f"{name}_pick_oh")
        m.d.comb += pick_oh.eq(Cat(pick == e for e in range(self._egress)))
        return pick_oh

    def _pairs(self, name):
        """``lt[a, b]``: egress ``a``'s load is less than ``b``'s, for every ordered pair."""
        ne = self._egress
        return {(a, b): Signal(name=f"{name}_lt_{a}_{b}") for a in range(ne) for b in range(ne) if a != b}

    def _pairs_next(self, m, lt, hits, completed, nxt):
        """Register ``lt`` from the next loads: ``nxt[t][e][h]`` is egress ``e``'s with ``h``
        its pick and ``t`` the completion's valid; each pair is compared for the three
        outcomes of the pick (neither picked, or one: the pick is one-hot) and the two of the
        completion ahead of both, which select, as the pick selects the counters."""
        for (a, b), r in lt.items():
            less = [Mux(hits[a], n[a][1] < n[b][0], Mux(hits[b], n[a][0] < n[b][1], n[a][0] < n[b][0]))
                    for n in nxt]
            m.d.sync += r.eq(Mux(completed, less[1], less[0]))

    def _least(self, m, elig, lt, name):
        """As ``_jsq``, from the pairs' registers ``lt``: an eligible member is the pick when
        it is strictly less than every eligible member below it and not more than any above
        it (the least, the lowest index among equals)."""
        ne = self._egress
        pick_oh = Signal(ne, name=f"{name}_pick_oh")
        for e in range(ne):
            beats = [~elig[j] | (lt[e, j] if j < e else ~lt[j, e]) for j in range(ne) if j != e]
            m.d.comb += pick_oh[e].eq(elig[e] & Cat(*beats).all() if beats else elig[e])
        return pick_oh

    def _p2c_draws(self, m, advance):
        """The P2C tables of the LFSR's current state, registered, and the cycle they settle.

        ``first[r, a]`` (``second[r, a]``): with ``r + 1 + a`` members eligible, the first
        (second) draw takes the one with ``r`` eligible members below it and ``a`` above.
        The state ``s0`` (``lfsr_state``) is kept with the states after it, ``s1`` (its
        64-step leap, the state after a decision) and ``s2``, and ``u1`` (``s1``'s 32-step
        leap): ``u1`` and ``s2`` are ``s1``'s two draws, the tables the next decision needs,
        one multiply and compare from registers. On ``advance`` (a P2C decision) every state
        moves one step. A seed load sets ``s0``, and ``u1``/``s2`` to ``s0``'s own draws;
        the tables follow in the next cycle (``settle``: a P2C request waits it out), while
        ``u1`` and ``s2`` move on to ``s1``'s draws.
        """
        ne = self._egress
        first, second = {}, {}
        t1, t2 = _p2c_tables(lfsr.leap_int(1, 32), lfsr.leap_int(1, 64), ne)
        for r in range(ne):
            for a in range(ne - r):
                first[r, a] = Signal(name=f"p2c_first_{r}_{a}", init=t1[r, a])
                second[r, a] = Signal(name=f"p2c_second_{r}_{a}", init=t2[r, a])
        s1 = Signal(32, init=lfsr.leap_int(1, 64))
        u1 = Signal(32, init=lfsr.leap_int(1, 96))
        s2 = Signal(32, init=lfsr.leap_int(1, 128))
        settle = Signal()
        seed = self.seed_load
        src = Signal(32)
        m.d.comb += src.eq(Mux(seed, lfsr.seeded(self.seed), s2))
        m.d.sync += settle.eq(seed)
        with m.If(seed | settle | advance):
            m.d.sync += [u1.eq(lfsr.leap(src, 32)), s2.eq(lfsr.leap(src, 64))]
        with m.If(seed):
            m.d.sync += [self.lfsr_state.eq(src), s1.eq(lfsr.leap(src, 64))]
        with m.Elif(advance):
            m.d.sync += [self.lfsr_state.eq(s1), s1.eq(s2)]
        # From u1 and s2: (r * k) >> 32 for each count k, the second draw among the other k - 1.
        d1 = _scaled_draws(m, u1, ne + 1, "p2c_d1")
        d2 = _scaled_draws(m, s2, ne, "p2c_d2")
        for k in range(1, ne + 1):
            i2 = Signal(_QUEUE, name=f"p2c_i2_{k}")
            m.d.comb += i2.eq(Mux(d2[k - 1] >= d1[k], d2[k - 1] + 1, d2[k - 1]) if k >= 2 else d1[k])
            with m.If(~seed & (settle | advance)):
                for r in range(k):
                    m.d.sync += [first[r, k - 1 - r].eq(d1[k] == r), second[r, k - 1 - r].eq(i2 == r)]
        return first, second, settle

    def elaborate(self, platform):
        m = Module()
        ne = self._egress

        not_full = Signal(ne)
        if self._committed:
            # From a register formed at the end of the previous cycle with the next counters and
            # the next depth (below): the compare was the start of the pick's path.
            not_full_r = Signal(ne, init=(1 << ne) - 1)
            m.d.comb += not_full.eq(not_full_r)
        else:
            m.d.comb += not_full.eq(Cat(self.out_ios[e] < self.depth for e in range(ne)))
        req = self.i.payload
        elig = self._eligible(m, "req", req.ingress, not_full)
        m.d.comb += self.query_eligible.eq(self._eligible(m, "query", self.query_ingress, not_full))

        # Round robin: the first eligible member at or after the pointer, else the lowest.
        # Each ingress keeps its pointer as the mask of the queues at or after it, so the
        # pick needs no decoder and no shift. Picks are one-hot: ``pick == e`` in front of
        # every egress's counters was a decoder behind the longest path.
        rr_mask = Signal(data.ArrayLayout(unsigned(ne), self._ingress),
                         init=[(1 << ne) - 1] * self._ingress)
        mask = Signal(ne)
        for q in range(self._ingress):
            with m.If(req.ingress == q):
                m.d.comb += mask.eq(rr_mask[q])
        at_or_after = Signal(ne)
        m.d.comb += at_or_after.eq(elig & mask)
        static_pick = _lowest_onehot(m, elig, "static_pick")
        rr_pick = Signal(ne)
        m.d.comb += rr_pick.eq(Mux(at_or_after.any(), _lowest_onehot(m, at_or_after, "rr_after"), static_pick))

        if self._load_pairs:
            # Which of every two egress queues has less outstanding (ns, I/Os) is a register,
            # formed with the next counters (below), so the picks that compare loads are
            # AND-ORs of registers instead of compares of the counters (issue 22).
            ns_lt, ios_lt = self._pairs("ns"), self._pairs("ios")
            jsq_pick = self._least(m, elig, ns_lt, "jsq")
            least_ios_pick = self._least(m, elig, ios_lt, "least_ios")
        else:
            jsq_pick = self._jsq(m, elig)
            least_ios_pick = self._jsq(m, elig, self.out_ios, "least_ios")

        # Power of two choices. The draws depend on the LFSR state alone, which moves only on a
        # P2C decision or a seed load, so everything they decide is registered a step ahead:
        # for each eligible count k, which member the first and the second draw take
        # (``_p2c_tables``). A draw's candidate is the eligible member whose rank (eligible
        # members below it) and count above it select a set bit of its table; the late
        # eligible set only indexes registers.
        accept_p2c = Signal()
        p2c_first, p2c_second, p2c_settle = self._p2c_draws(m, accept_p2c)
        e1 = Signal(ne)
        e2 = Signal(ne)
        for p in range(ne):
            rank = Signal(range(p + 1), name=f"p2c_rank{p}")
            above = Signal(range(ne - p), name=f"p2c_above{p}")
            m.d.comb += [rank.eq(popcount([elig[j] for j in range(p)])),
                         above.eq(popcount([elig[j] for j in range(p + 1, ne)]))]
            for e, table in ((e1, p2c_first), (e2, p2c_second)):
                row = Array(Array(table[r, a] for a in range(ne - p)) for r in range(p + 1))
                m.d.comb += e[p].eq(elig[p] & row[rank][above])
        p2c_pick = Signal(ne)
        second_less = Signal()
        if self._load_pairs:
            # The two candidates' compare from the pairs' registers. The same member drawn
            # twice (one eligible) is no pair: the first is taken, as on a tie.
            m.d.comb += second_less.eq(or_tree([e2[b] & e1[a] & ns_lt[b, a] for (b, a) in ns_lt]))
        else:
            ns1 = Signal(_NS)
            ns2 = Signal(_NS)
            m.d.comb += [ns1.eq(_select(e1, [self.out_ns[e] for e in range(ne)])),
                         ns2.eq(_select(e2, [self.out_ns[e] for e in range(ne)])),
                         second_less.eq(ns2 < ns1)]
        m.d.comb += p2c_pick.eq(Mux(second_less, e2, e1))

        pick_oh = Signal(ne)
        with m.Switch(self.policy):
            with m.Case(LbPolicy.STATIC):
                m.d.comb += pick_oh.eq(static_pick)
            with m.Case(LbPolicy.ROUND_ROBIN):
                m.d.comb += pick_oh.eq(rr_pick)
            with m.Case(LbPolicy.JSQ):
                m.d.comb += pick_oh.eq(jsq_pick)
            with m.Case(LbPolicy.P2C):
                m.d.comb += pick_oh.eq(p2c_pick)
            with m.Case(LbPolicy.LEAST_IOS):
                m.d.comb += pick_oh.eq(least_ios_pick)
            with m.Default():
                m.d.comb += pick_oh.eq(static_pick)
        pick = Signal(_QUEUE)  # the index, for the decision only
        m.d.comb += pick.eq(_encode(pick_oh, ne))

        advance = Signal()
        m.d.comb += [
            advance.eq(~self.o.valid | self.o.ready),
            self.p2c_wait.eq(p2c_settle & (self.policy == LbPolicy.P2C)),
            # committed: the caller checked eligibility (query_eligible) before offering.
            self.i.ready.eq(advance & (1 if self._committed else elig.any()) & ~self.p2c_wait),
            self.stall.eq(self.i.valid & ~elig.any()),
        ]
        accept = Signal()
        m.d.comb += [accept.eq(self.i.valid & self.i.ready), accept_p2c.eq(accept & (self.policy == LbPolicy.P2C))]
        charge = Signal(_CHARGE)
        m.d.comb += charge.eq(clamp_charge(req.cpu_ns))

        with m.If(advance):
            m.d.sync += self.o.valid.eq(accept)
            with m.If(accept):
                m.d.sync += [
                    self.o.payload.ingress.eq(req.ingress),
                    self.o.payload.egress.eq(pick),
                    self.o.payload.charge.eq(charge),
                    self.o.payload.tag.eq(req.tag),
                ]

        # The pointer moves past the pick: the queues above it. After the last queue that is
        # none, which picks as the wrap to 0 does (an empty mask falls back to the lowest
        # eligible member). Formed from the round-robin pick, the pick whenever it is
        # written, so that the other policies' picks are not in front of the masks.
        past = Signal(ne)
        m.d.comb += past.eq(~((rr_pick << 1) - 1)[:ne])
        with m.If(accept & (self.policy == LbPolicy.ROUND_ROBIN)):
            for q in range(self._ingress):
                with m.If(req.ingress == q):
                    m.d.sync += rr_mask[q].eq(past)

        # The outstanding counters: this cycle's decision, then this cycle's completion.
        done = self.complete
        m.d.comb += done.ready.eq(1)
        done_charge = clamp_charge(done.payload.cpu_ns)
        # Both outcomes of the decision (this egress picked or not) are computed from the
        # counters and the completion alone; the pick, the end of the longest path, only
        # chooses between them.
        hits = []
        next_ns = [[[] for _ in range(ne)] for _ in (0, 1)]   # [t][e][h]
        next_ios = [[[] for _ in range(ne)] for _ in (0, 1)]
        for e in range(ne):
            hit = Signal(name=f"hit{e}")
            m.d.comb += hit.eq(accept & pick_oh[e])
            hits.append(hit)
            mine = done.valid & (done.payload.egress == e)
            nxt_ios, nxt_ns, bad = [], [], []
            for h in (0, 1):
                ios1 = Signal(_DEPTH + 1, name=f"ios1_{e}_{h}")
                ns1 = Signal(_NS, name=f"ns1_{e}_{h}")
                m.d.comb += [ios1.eq(self.out_ios[e] + h), ns1.eq(self.out_ns[e] + charge if h else self.out_ns[e])]
                bad_h = Signal(name=f"underflow{e}_{h}")
                m.d.comb += bad_h.eq(mine & ((ios1 == 0) | (ns1 < done_charge)))
                # committed: the caller completes only what it knows outstanding (the core
                # checks the head against the counters before this cycle's decision, which only
                # adds), so the check is not in front of the counters (issue 22).
                bad.append(bad_h)
                if self._committed:
                    # The loads compared below, for each outcome of the pick (h) and of the
                    # completion's valid (t), which comes late (the core's check of the
                    # head): its egress and charge are early, and only select. Stored widths.
                    on_e = done.payload.egress == e
                    for t in (0, 1):
                        c_ios = Signal(_DEPTH, name=f"ios_next{e}_{h}_{t}")
                        c_ns = Signal(_NS, name=f"ns_next{e}_{h}_{t}")
                        m.d.comb += [c_ios.eq(ios1 - on_e if t else ios1),
                                     c_ns.eq(ns1 - Mux(on_e, done_charge, 0) if t else ns1)]
                        next_ios[t][e].append(c_ios)
                        next_ns[t][e].append(c_ns)
                    # The counters from the same outcomes, the valid selecting: as
                    # ``ios1 - take`` (take = mine) yosys merged the two picks' subtracts
                    # into one behind the pick's select (issue 22, round 11:
                    # adm.a4 -> lb.accept -> the subtract -> out_ns); these subtracts also
                    # feed the pairs, so they stay apart and the late signals only select.
                    nxt_ios.append(Mux(done.valid, next_ios[1][e][h], next_ios[0][e][h]))
                    nxt_ns.append(Mux(done.valid, next_ns[1][e][h], next_ns[0][e][h]))
                else:
                    take = mine & ~bad_h
                    nxt_ios.append(ios1 - take)
                    nxt_ns.append(ns1 - Mux(take, done_charge, 0))
            with m.If(Mux(hit, bad[1], bad[0])):
                m.d.sync += self.underflow.eq(1)
            if self._committed:
                # Both outcomes compared ahead of the pick, as the counters are; the counter
                # is stored in DEPTH bits, so the compare is of what is stored.
                fits = [Mux(hit, next_ios[t][e][1] < self.depth, next_ios[t][e][0] < self.depth) for t in (0, 1)]
                m.d.sync += not_full_r[e].eq(Mux(done.valid, fits[1], fits[0]))
            m.d.sync += [
                self.out_ios[e].eq(Mux(hit, nxt_ios[1], nxt_ios[0])),
                self.out_ns[e].eq(Mux(hit, nxt_ns[1], nxt_ns[0])),
            ]
        with m.If(done.valid & (done.payload.egress >= ne)):
            m.d.sync += self.underflow.eq(1)
        if self._load_pairs:
            self._pairs_next(m, ns_lt, hits, done.valid, next_ns)
            self._pairs_next(m, ios_lt, hits, done.valid, next_ios)

        return m
