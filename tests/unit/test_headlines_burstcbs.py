"""BurstCBS §6 gaps measured for issue 20, held by tests (docs/results.md, "Why the gaps").

Same machinery as test_headlines.py: scripts/reproduce.py's Runner and the burstgate-sim
binary, deterministic seeds, a band around our number. What each test catches is in its
docstring.
"""

import copy

import pytest

from .headlines import R, assert_draws
from .headlines import run  # noqa: F401  (the shared fixture)


def _true_4k_cost_ns(sc, product):
    """Mean of read and write true CPU ns of a 4 KiB I/O (the estimate is this / estimate_error)."""
    prof = sc["dpu"]["cpu_ns"][product]
    return sum(prof[op]["base"] + 4 * prof[op]["per_kib"] for op in ("read", "write")) / 2


@pytest.mark.parametrize("depth", [256, 128])
def test_table3_without_adjustment_no_scheduler_defers_and_the_backlog_sets_latency(run, depth):
    """Table 3, why WildCBS = BIOS without adjustment in ours (paper: WildCBS 29 % / 16 % worse).
    With the estimate at half the true cost neither scheduler defers a single I/O, and the base
    tenants' latency is the neighbour's closed-loop FIFO backlog: iodepth x true cost (965 us at
    256, half that at 128). Catches a scheduler that starts deferring here (the equality would
    then need a new cause) and a change of the SA's queueing that breaks the backlog account."""
    sc = R.load("table3_misestimation.yaml")
    sc["dpu"]["cost_adjust"] = False
    R.tenant(sc, "bursty")["workload"]["iodepth"] = depth
    backlog_us = depth * _true_4k_cost_ns(sc, "B") / 1000
    for sched in ("wild", "bios"):
        tenants, report = run(copy.deepcopy(sc), sched)
        assert all(t["throttled"] == 0 for t in tenants.values()), (sched, {n: t["throttled"] for n, t in tenants.items()})
        assert report["ios"]["deferred_pending"] == 0
        assert report["utilization"]["cpu"] >= 0.99, report["utilization"]
        for name in ("base_read", "base_write"):
            lat = tenants[name]["lat_us"]["avg"]
            assert 0.9 * backlog_us <= lat <= 1.15 * backlog_us, f"{sched} {name}: {lat:.0f} us vs backlog {backlog_us:.0f} us"


def test_table3_burst_scoped_adjustment_protects_as_the_printed_one_and_leaves_the_cost(run):
    """Table 3 with `cost_adjust: burst` (the named variation of window.h: only what BIOS grants
    above a base shrinks by the factor; COST.FACTOR stays 1.0) beside the printed adjustment and
    none. The misestimated cost is here all the bursting neighbour's surplus, so cutting that
    surplus restores the base tenants' latency as far as raising every cost does: measured 290 /
    297 us against 289 / 291 printed and 975 / 963 without (make test's seed). Catches the burst
    scope not throttling (latency back near the backlog), or touching COST.FACTOR."""
    sc = R.load("table3_misestimation.yaml")
    got = {}
    for mode in (False, True, "burst"):
        s = copy.deepcopy(sc)
        s["dpu"]["cost_adjust"] = mode
        got[mode] = run(s, "bios")
    lat = {m: max(t[n]["lat_us"]["avg"] for n in ("base_read", "base_write")) for m, (t, _) in got.items()}
    assert lat["burst"] <= 1.15 * lat[True], lat
    assert lat["burst"] <= 0.4 * lat[False], lat
    assert got[True][1]["cost_factor"]["cpu"] > 1.5, got[True][1]["cost_factor"]
    assert got["burst"][1]["cost_factor"] == {"cpu": 1.0, "ingress": 1.0, "egress": 1.0, "swlimit": 1.0}
    assert got["burst"][1]["burst_factor"] > 1.5 and got[True][1]["burst_factor"] == 1.0
    assert got["burst"][0]["bursty"]["throttled"] > 0


def test_fig22_cpu_blind_wildcbs_still_lets_the_victim_reach_base(run):
    """Fig. 22 (paper: WildCBS misses the victim's 20k; ours reaches it). The reading of WildCBS
    as a per-tenant rate limiter blind to CPU (estimate_error 100: the CPU dimension of its
    budget never binds) was measured as the possible cause and is not: the victim still gets
    20000 IOPS at iodepth 8 in all four cases, the neighbour keeps the thread's CPU full. Catches
    a change after which CPU-blind WildCBS starves the victim (then this reading would explain
    the paper and docs/results.md's "Why the gaps" would be wrong), or a neighbour that no
    longer fills the thread (the run would test nothing)."""
    sc = R.load("fig20_iops_neighbor.yaml")
    sc["dpu"]["estimate_error"] = 100.0
    victim = R.tenant(sc, "victim")
    victim["workload"]["iodepth"] = 8
    for product, op in R.TYPES:
        victim["product"] = product
        victim["workload"]["read_share"] = 1.0 if op == "read" else 0.0
        tenants, report = run(copy.deepcopy(sc), "wild")
        assert tenants["victim"]["iops"] >= 0.99 * victim["base"]["iops"], (product, op, tenants["victim"]["iops"])
        assert tenants["bursty"]["iops"] > 240000 and report["utilization"]["cpu"] >= 0.99, (product, op, report["utilization"])


def test_fig28_bios_shields_a_single_threaded_database_from_burst_tenants(run, tmp_path):
    """BurstCBS Fig. 28 (§6.8; paper: average query latency down by up to 83 % with 8 or 16 burst
    tenants at iodepth 32). Ours (scripts/reproduce_bcbs68.py: Fig. 26's store, one user thread,
    78 % Gets, synced writes): WildCBS 5729 / 15843 us, BIOS 219 / 231 us (-96 % / -99 %),
    BaseCBS 148 / 203 us, at 8 / 16 neighbours. Catches BIOS no longer holding the neighbours to
    their allocations (the database's I/Os then queue behind theirs, as under WildCBS), WildCBS
    starting to shield it (the comparison would no longer be the paper's), and 16 neighbours not
    hurting WildCBS more than 8."""
    record = R.EXPERIMENTS["bcbs_fig28"].measure(run)
    assert_draws("bcbs_fig28", record, tmp_path)
    r = record.rows
    for n in (8, 16):
        wild, bios, base = (r[(n, s)][0] for s in ("wild", "bios", "base"))
        assert bios <= 0.17 * wild, (n, bios, wild)      # at least the paper's -83 %
        assert 150 <= bios <= 350, (n, bios)
        assert bios <= 2.0 * base, (n, bios, base)        # close to the static split
    assert r[(16, "wild")][0] >= 1.5 * r[(8, "wild")][0], r
