"""Properties of the whole model agent under the firmware's window loop, found by hypothesis.

The agent (estimator, segment monitor, admission, load balancer, buffer pool) runs behind the
firmware exactly as the simulator drives it: descriptors in, completions in any order, one
firmware window between batches. A deferred I/O is offered again the next window. Checked every
window:

* one decision per descriptor; every I/O is admitted exactly once in the end (none lost or
  duplicated), however often it was deferred;
* THROTTLE_N of each tenant equals its SRC_DEFER decisions, and CTRL counters agree;
* the cost admitted in a window never exceeds the capacity (BIOS: grants + reserved pool);
* grants never exceed burst provisioning, and BIOS grants never exceed total minus reserve.

`make test` runs 40 examples here; `make test-long` LONG_SEEDS seeds × LONG_EXAMPLES more as tasks on the engine
(scripts/verify_farm.py --agent, run_seeded below).
"""

import random

import burstgate_model as bm
import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burstgate.regmap import REGMAP, C

from ..conftest import run_farm

_CTRL = REGMAP.block("CTRL")
_TENANT = REGMAP.block("TENANT")
_COST = REGMAP.block("COST")
_LB = REGMAP.block("LB")
_DIMS = C["COST_DIMS"]
_IO = (1000, 4096, 4096, 4096)  # every I/O's cost, set through the COST table


def _addr(block, name, index=0):
    return block.base + block.register(name).offset + 4 * index


def _flat_cost(agent):
    for k in range(C["SIZE_CLASSES"] - 1):
        agent.write(_addr(_COST, "SIZE_LO", k), 0xFFFFFF)
    for write in (0, 1):
        entry = write * C["SIZE_CLASSES"]  # product 0, size class 0
        for d in range(_DIMS):
            agent.write(_addr(_COST, "TABLE_BASE", entry * _DIMS + d), _IO[d])


def _ios(n):
    return tuple(n * c for c in _IO)


def _vec(agent, name, t):
    return [agent.read(_addr(_TENANT, name, t * _DIMS + d)) for d in range(_DIMS)]


# (base, burst - base) in I/Os per window. Every tenant has some base: a tenant provisioned
# with none can be starved by design (BIOS lends only to restore base, and a capped
# proportional share smaller than one I/O never admits it).
tenants_strategy = st.lists(
    st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=6)


STRATEGIES = dict(
    tenants=tenants_strategy,
    spare=st.integers(1, 10),
    scheduler=st.sampled_from([C["SCHED_BIOS"], C["SCHED_BASE"], C["SCHED_WILD"]]),
    egress=st.integers(1, 4),
    depth=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
    demand=st.lists(st.lists(st.integers(0, 12), min_size=6, max_size=6), min_size=4, max_size=12))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STRATEGIES)
def test_nothing_lost_and_capacity_holds(tenants, spare, scheduler, egress, depth, seed, demand):
    specs = [(_ios(base), _ios(base + extra)) for base, extra in tenants]
    n = len(specs)
    total_ios = sum(base for base, _ in tenants) + spare
    # BIOS keeps 1/16 in reserve; make the bases fit beside it.
    total_ios = total_ios + (total_ios + 14) // 15
    total = _ios(total_ios)
    agent = bm.Agent(tenants=n, ingress=1, egress=egress)
    _flat_cost(agent)
    agent.write(_addr(_CTRL, "SEED"), seed)
    agent.write(_addr(_LB, "DEPTH"), depth)
    agent.write(_addr(_LB, "MAP"), (1 << egress) - 1)
    agent.write(_addr(_LB, "POLICY"), 2)  # join the shortest queue
    reserve_q16 = 4096  # 1/16
    fw = bm.Firmware(agent, scheduler=scheduler, total=total, tenants=specs, reserved_q16=reserve_q16,
                     reserve_tenants=0)
    rng = random.Random(seed)

    admitted_ids = []
    pending = []          # (id, tenant) deferred, offered again next window
    outstanding = []      # completions not yet delivered
    next_id = 0
    for window in demand:
        fresh = []
        for t in range(n):
            for _ in range(window[t % len(window)]):
                fresh.append((next_id, t))
                next_id += 1
        offers = pending + fresh
        reoffers = len(pending)  # the deferred ones go again first, with the reoffer bit
        pending = []
        rng.shuffle(fresh)
        descs = [(i & 0xFFFF, t, 0, 0, 0, 4096, i % 64, int(k < reoffers)) for k, (i, t) in enumerate(offers)]
        decisions = agent.io_many(descs)
        assert len(decisions) == len(offers)
        deferred_by_tenant = [0] * n
        admitted_cost = [0] * _DIMS
        for (ident, t), dec in zip(offers, decisions):
            tag, tenant, queue, source, lender, eg, hot, prefill, cost = dec
            assert (tag, tenant) == (ident & 0xFFFF, t)
            assert cost == _IO
            if source < C["SRC_DEFER"]:
                admitted_ids.append(ident)
                admitted_cost = [a + c for a, c in zip(admitted_cost, cost)]
                outstanding.append((tag, tenant, queue, eg, cost[0], 1000))
                assert eg < egress
            else:
                pending.append((ident, t))
                if source == C["SRC_DEFER"]:
                    deferred_by_tenant[t] += 1
            # Complete a random part of what is in flight, out of order, as the SA would.
            if outstanding and rng.random() < 0.5:
                agent.complete_many([outstanding.pop(rng.randrange(len(outstanding)))])
        for t in range(n):
            assert agent.read(_addr(_TENANT, "THROTTLE_N", t)) == deferred_by_tenant[t]
        assert all(a <= c for a, c in zip(admitted_cost, total))
        rng.shuffle(outstanding)
        agent.complete_many(outstanding)
        outstanding = []
        fw.window()
        grants = [_vec(agent, "GRANT", t) for t in range(n)]
        for t, (_, burst) in enumerate(specs):
            assert all(g <= b for g, b in zip(grants[t], burst)), f"tenant {t} granted above burst"
        if scheduler == C["SCHED_BIOS"]:
            for d in range(_DIMS):
                granted = sum(g[d] for g in grants)
                assert granted <= total[d] - (total[d] * reserve_q16 >> 16)
                assert granted + fw.reserved[d] == total[d]
    assert agent.read(_addr(_CTRL, "BAD_COMPLETIONS")) == 0

    # Drain: with no new demand, every deferred I/O is admitted within a bounded number of
    # windows (at least base per window per tenant), and each I/O exactly once.
    for _ in range(12 * len(demand) + 4):
        if not pending:
            break
        still = []
        for ident, t in pending:  # an SA that completes every I/O at once: egress never full
            dec = agent.io_many([(ident & 0xFFFF, t, 0, 0, 0, 4096, 0, 1)])[0]
            if dec[3] < C["SRC_DEFER"]:
                admitted_ids.append(ident)
                agent.complete_many([(dec[0], dec[1], dec[2], dec[5], dec[8][0], 1000)])
            else:
                still.append((ident, t))
        pending = still
        fw.window()
    assert not pending, f"{len(pending)} I/Os never admitted"
    assert sorted(admitted_ids) == list(range(next_id))


def run_seeded(seed, examples):
    """The property above under hypothesis seed ``seed`` with ``examples`` examples: one case of
    the long run (scripts/verify_farm.py --agent), which re-runs alone from its seed."""
    prop = given(**STRATEGIES)(test_nothing_lost_and_capacity_holds.hypothesis.inner_test)
    prop = settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])(prop)
    hypothesis.seed(seed)(prop)()


# make test-long: seeds 0..LONG_SEEDS-1 of LONG_EXAMPLES examples each (100x make test's 40).
LONG_SEEDS = 40
LONG_EXAMPLES = 100


@pytest.mark.long
def test_nothing_lost_and_capacity_holds_long():
    """LONG_SEEDS hypothesis seeds of LONG_EXAMPLES examples each, as tasks on the engine
    (scripts/verify_farm.py --agent); a failure names its seed and falsifying example."""
    run_farm("--agent", f"0-{LONG_SEEDS - 1}", "--examples", str(LONG_EXAMPLES))


def test_firmware_rejects_oversubscription_by_dimension():
    agent = bm.Agent(tenants=2, ingress=1, egress=1)
    with pytest.raises(ValueError, match="dimension 0"):
        bm.Firmware(agent, scheduler=C["SCHED_BIOS"], total=_ios(2),
                    tenants=[(_ios(1), _ios(1)), (_ios(1), _ios(1))], reserved_q16=1 << 15, reserve_tenants=0)
