"""Formal properties of the admission stage, added to its own elaborated module.

:func:`observed` derives a class from :class:`burstgate.admission.Admission` (or from a
mutant of it, see ``test_admission_formal.py``) whose ``elaborate`` adds to the stage's
module, after the stage has built it, the environment (``Assume``) and the invariants
(``Assert``) that SymbiYosys checks from reset for a bounded number of cycles. Every port of
the stage is a free input of the proof except what is assumed here: the descriptor stream
obeys the stream rules and numbers its descriptors in its tags, reset stays low after the
initial (reset) state, and CTRL.BURST_N is at most 3 (``lenders=True``) or 0 with no LFSR
seed write (``lenders=False``). Otherwise both register buses, ``hold``, ``drained``,
``egress_ok`` and ``buffer_ok`` are free, so any firmware write or read (grants, pools,
scheduler, TICK/COMMIT, ...) may land in any cycle.

The invariants (the names are those ``Assert`` messages carry and the tests look for):

``order``
    Every accepted descriptor yields exactly one decision, in order, with its tag: a decision
    leaving ``o`` carries the tag of the oldest descriptor not yet decided, at most
    ``IN_FLIGHT_MAX`` are in flight (one per pipeline register), none is in flight when the
    stage is idle, and ``o`` holds its decision (valid and payload) until it is taken.
``underflow``
    A charge never takes a tenant's remaining allocation (or a lender's lendable surplus)
    below zero: the lendable RAM word a decision writes is the word of the tenant (OWN) or of
    its lender (BORROW), as it stood (the window's refill and every earlier charge
    included), covered the cost in every dimension, and is written back less exactly the
    cost. A decision that pays from no lendable word (RESERVED, the dual-bucket main bucket,
    any deferral) writes none. The reference value is a copy of the RAMs kept by the harness
    from their write ports, so a forwarding error in the stage's read-modify-write path shows
    up as a mismatch. The shared pools (BIOS's reserved pool, WildCBS's global budget) only
    fall between firmware writes: a charge they did not cover would wrap them upwards.
``deferred``
    A read of CTRL.DEFERRED returns the number of SRC_DEFER decisions emitted so far, and a
    read of TENANT.THROTTLE_N[t] the number of tenant t's SRC_DEFER decisions in the
    current window (both as firmware reads them, over the register buses).
"""

import inspect
import pathlib

from amaranth import Cat, Mux, ResetSignal, Signal
from amaranth.hdl import Assert, Assume

from burstgate.admission import Admission, _Lendable
from burstgate.regmap import C, REGMAP

__all__ = ["observed", "invariant_at", "IN_FLIGHT_MAX"]

#: Descriptors the stage holds at most: one per pipeline register, A1..A4 and ``o``
#: (admission.py: "Latency 5 cycles"). A change of the pipeline's depth changes this.
IN_FLIGHT_MAX = 5

_DIMS = C["COST_DIMS"]
_TAG = C["TAG_BITS"]
_DEFERRED_WORD = REGMAP.block("CTRL").register("DEFERRED").offset >> 2
_THROTTLE_N = REGMAP.block("TENANT").register("THROTTLE_N")


def _registered(m, value, name):
    """``value`` one cycle ago (its reset value, 0, in the first cycle)."""
    past = Signal.like(value, name=name)
    m.d.sync += past.eq(value)
    return past


def _environment(m, dut, lenders):
    m.d.comb += Assume(~ResetSignal(), "no reset after the initial state")
    ctrl = m.submodules.ctrl
    if lenders:
        # A burst list of at most three lenders keeps the draw's 32 x 11 multiplier small
        # for the solver; borrowing from one or two distinct lenders is still reachable.
        m.d.comb += Assume(ctrl.burst_n <= 3, "at most three bursting tenants")
    else:
        # No burst list: the LFSR draws and the lender reads drop out of the proof (OWN,
        # RESERVED, the dual-bucket and WildCBS budgets and every deferral remain).
        m.d.comb += Assume((ctrl.burst_n == 0) & ~ctrl.ext_seed.w_en, "no bursting tenant")
    i = dut.i
    held = _registered(m, i.valid & ~i.ready, "env_i_held")
    prev = _registered(m, i.payload.as_value(), "env_i_prev")
    with m.If(held):
        m.d.comb += Assume(i.valid & (i.payload.as_value() == prev), "i obeys the stream rules")
    # Tags number the descriptors, so the order property can name which one a decision is.
    n_in = Signal(_TAG)
    with m.If(i.valid):
        m.d.comb += Assume(i.payload.desc.tag == n_in, "tags number the descriptors")
    with m.If(i.valid & i.ready):
        m.d.sync += n_in.eq(n_in + 1)
    return n_in


def _order(m, dut, n_in):
    o = dut.o
    n_out = Signal(_TAG)
    in_flight = Signal(_TAG)
    m.d.comb += in_flight.eq(n_in - n_out)
    with m.If(o.valid & o.ready):
        m.d.sync += n_out.eq(n_out + 1)
        m.d.comb += Assert(o.payload.tag == n_out, "order: a decision carries the oldest tag")
    m.d.comb += Assert(in_flight <= IN_FLIGHT_MAX, "order: no more in flight than pipeline registers")
    with m.If(o.valid):
        m.d.comb += Assert(in_flight != 0, "order: no decision without a descriptor")
    with m.If(~dut.busy & ~o.valid):
        m.d.comb += Assert(in_flight == 0, "order: an idle stage holds no descriptor")
    held = _registered(m, o.valid & ~o.ready, "prop_o_held")
    prev = _registered(m, o.payload.as_value(), "prop_o_prev")
    with m.If(held):
        m.d.comb += Assert(o.valid & (o.payload.as_value() == prev), "order: o holds its decision")


def _ram_copy(m, mem, rows, shape, name):
    """Registers holding what ``mem`` (one write port) holds, row by row."""
    (wp,) = mem.write_ports
    copy = [Signal(shape, name=f"{name}{r}") for r in range(rows)]
    for r in range(rows):
        with m.If(wp.en & (wp.addr == r)):
            m.d.sync += copy[r].eq(wp.data)
    return copy


def _underflow(m, dut, tenants):
    sub = m.submodules
    lendable = _ram_copy(m, sub.lendable, tenants, _Lendable, "copy_lendable")
    grant = [_ram_copy(m, sub[f"grant{d}"], tenants, 32, f"copy_grant{d}_") for d in range(_DIMS)]
    lend_grant = [_ram_copy(m, sub[f"lend_grant{d}"], tenants, 32, f"copy_lend_grant{d}_")
                  for d in range(_DIMS)]
    # The word as a decision must see it: a word from an older window reads as the refill.
    current = []
    for r in range(tenants):
        cur = Signal(_Lendable, name=f"current_lendable{r}")
        refill = Cat(*(grant[d][r] for d in range(_DIMS)), *(lend_grant[d][r] for d in range(_DIMS)),
                     dut.window)
        m.d.comb += cur.eq(Mux(lendable[r].stamp == dut.window, lendable[r], refill))
        current.append(cur)

    (wp,) = sub.lendable.write_ports
    before = Signal(_Lendable)
    for r in range(tenants):
        with m.If(wp.addr == r):
            m.d.comb += before.eq(current[r])
    scheduler = sub.ctrl.scheduler
    # What the decided cycle wrote, checked against the decision once it is on ``o``.
    decided = _registered(m, dut.decided, "prop_decided")
    wrote = _registered(m, wp.en, "prop_wrote")
    row = _registered(m, wp.addr, "prop_row")
    was = _Lendable(_registered(m, before.as_value(), "prop_before"))
    now = _Lendable(_registered(m, wp.data.as_value(), "prop_after"))
    dual = _registered(m, scheduler == C["SCHED_DUALBUCKET"], "prop_dual")

    d = dut.o.payload
    src = d.source
    borrow = src == C["SRC_BORROW"]
    pays = borrow | ((src == C["SRC_OWN"]) & ~dual)
    with m.If(decided):
        with m.If(pays):
            m.d.comb += [
                Assert(wrote, "underflow: a paid decision writes its payer's word"),
                Assert(row == Mux(borrow, d.lender, d.tenant)[:len(row)],
                       "underflow: the payer is the tenant (OWN) or its lender (BORROW)"),
                Assert(Mux(borrow, d.lender, d.tenant) < tenants,
                       "underflow: the payer is an implemented tenant"),
            ]
            for k in range(_DIMS):
                m.d.comb += [
                    Assert(was.rem[k] >= d.cost[k], "underflow: the remaining allocation covered the cost"),
                    Assert(now.rem[k] == was.rem[k] - d.cost[k], "underflow: charged exactly the cost"),
                ]
                with m.If(borrow):
                    m.d.comb += [
                        Assert(was.lend[k] >= d.cost[k], "underflow: the lender's surplus covered the cost"),
                        Assert(now.lend[k] == was.lend[k] - d.cost[k],
                               "underflow: the surplus is charged exactly the cost"),
                    ]
                with m.Else():
                    m.d.comb += Assert(now.lend[k] == was.lend[k], "underflow: OWN leaves the surplus")
        with m.Else():
            m.d.comb += Assert(~wrote, "underflow: an unpaid decision writes no lendable word")


def _pools(m, dut):
    ctrl = m.submodules.ctrl
    for name, reg in (("pool", ctrl.ext_pool), ("global", ctrl.ext_global)):
        vec = dut._pools[name]
        # Only the firmware refills a pool; a charge only lowers it. A charge the pool did not
        # cover would wrap the dimension to near 2**32, i.e. raise it.
        written = _registered(m, reg.w_en, f"prop_{name}_written")
        past = _registered(m, vec.as_value(), f"prop_{name}_past")
        with m.If(~written):
            for k in range(_DIMS):
                m.d.comb += Assert(vec[k] <= past[32 * k: 32 * k + 32],
                                   f"underflow: a charge never raises the {name} budget (no wrap)")


def _deferred(m, dut):
    d = dut.o.payload
    decided = _registered(m, dut.decided, "prop_new_decision")  # o holds it from this cycle
    n_defer = Signal(32)
    new_defer = decided & (d.source == C["SRC_DEFER"])
    with m.If(new_defer):
        m.d.sync += n_defer.eq(n_defer + 1)
    bus = dut.ctrl_bus
    reading = _registered(m, bus.r_en & (bus.addr[2:] == _DEFERRED_WORD), "prop_read_deferred")
    expected = _registered(m, n_defer + new_defer, "prop_deferred_expected")
    with m.If(reading):
        m.d.comb += Assert(bus.r_data == expected, "deferred: CTRL.DEFERRED counts the SRC_DEFER decisions")


def _throttle_n(m, dut, tenants):
    d = dut.o.payload
    decided = _registered(m, dut.decided, "prop_new_decision_t")  # made last cycle, on o now
    count = [Signal(32, name=f"prop_throttle_n{t}") for t in range(tenants)]
    new = [decided & (d.source == C["SRC_DEFER"]) & (d.tenant == t) for t in range(tenants)]
    for t in range(tenants):
        # A COMMIT may apply the cycle after the window's last decision: that one is cleared too.
        with m.If(dut.commit):
            m.d.sync += count[t].eq(0)
        with m.Elif(new[t]):
            m.d.sync += count[t].eq(count[t] + 1)
    bus = dut.tenant_bus
    first = _THROTTLE_N.offset >> 2
    word = bus.addr[2:]
    reading = _registered(m, bus.r_en & (word >= first) & (word < first + tenants), "prop_read_throttle_n")
    row = _registered(m, (word - first)[:max((tenants - 1).bit_length(), 1)], "prop_throttle_n_row")
    with m.If(reading):
        for t in range(tenants):
            with m.If(row == t):
                m.d.comb += Assert(bus.r_data == (count[t] + new[t])[:32],
                                   "deferred: TENANT.THROTTLE_N counts the tenant's SRC_DEFER decisions "
                                   "of the window")


def invariant_at(location):
    """The invariant (``"order"``, ``"underflow"``, ``"deferred"``) whose assertion is at
    ``location`` (``"file:line"``, as sby reports a failed assertion); ``None`` if none."""
    path, _, line = location.rpartition(":")
    for name, function in (("order", _order), ("underflow", _underflow), ("underflow", _pools), ("deferred", _deferred),
                           ("deferred", _throttle_n)):
        lines, first = inspect.getsourcelines(function)
        if pathlib.Path(path) == pathlib.Path(inspect.getsourcefile(function)) and \
                first <= int(line) < first + len(lines):
            return name
    return None


def observed(base=Admission, *, lenders=True, invariants=("order", "underflow", "deferred")):
    """A subclass of ``base`` (the admission stage or a mutant) carrying the properties.

    ``lenders=False`` adds the assumption that no tenant is on the burst list (BORROW is
    unreachable), which makes the proof several times cheaper. ``invariants`` names the
    groups of assertions to add (each proof is cheaper alone).
    """
    class Observed(base):
        def elaborate(self, platform):
            m = super().elaborate(platform)
            n_in = _environment(m, self, lenders)
            if "order" in invariants:
                _order(m, self, n_in)
            if "underflow" in invariants:
                _underflow(m, self, self.tenants)
                _pools(m, self)
            if "deferred" in invariants:
                _deferred(m, self)
                _throttle_n(m, self, self.tenants)
            return m
    Observed.__name__ = f"Observed{base.__name__}"
    return Observed

