"""scripts/compare_qemu.py's judge(): issue 18's criteria on hand-made figures.

The benchmark itself needs fio and qemu-storage-daemon and a quiet host (make compare-qemu);
these cases check that each criterion can fail, and on what."""

import copy
import pathlib
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

import compare_qemu  # noqa: E402

SC56 = yaml.safe_load(compare_qemu.SCENARIO56.read_text())


def good_run():
    """A run that meets every criterion: the victim's whole demand, faster than qemu; every
    tenant between its base entitlement and its burst, and at what the same clients got under
    wild (the rule that caps only bursts and capacity)."""
    case56 = {}
    for t in SC56["tenants"]:
        iops = t["base"]["iops"] * 1.2
        case56[t["name"]] = {"iops": min(iops, t["burst"]["iops"]), "mbps": min(iops * 4096 / 1e6, t["burst"]["mbps"])}
    case56["report"] = {"utilization": {"cpu": 0.40, "swlimit": 0.30},
                        "tenants": [{"name": t["name"], "completed": 1000, "deferred_ios": 0, "deferred_withheld": 0,
                                     "lat_us": {"avg": 1000.0}} for t in SC56["tenants"]]}
    wild = copy.deepcopy(case56)
    return {
        compare_qemu.BG: {"victim_iops": 2999, "victim_mean_us": 120, "victim_p99_us": 900, "bursty_mbps": 950},
        compare_qemu.QEMU: {"victim_iops": 2990, "victim_mean_us": 250, "victim_p99_us": 2000, "bursty_mbps": 1000},
        "56 connections": {compare_qemu.BG: case56, compare_qemu.WILD: wild},
    }


def missed(res):
    return [what for ok, what in compare_qemu.judge(res, 3000, SC56) if ok is False]


def notes(res):
    return [what for ok, what in compare_qemu.judge(res, 3000, SC56) if ok is None]


def test_a_run_within_every_criterion_passes():
    assert missed(good_run()) == []


def test_each_case1_criterion_can_miss():
    for key, value, words in [("victim_iops", 2800, "victim IOPS"), ("victim_mean_us", 300, "victim mean"),
                              ("victim_p99_us", 2500, "victim P99"), ("bursty_mbps", 850, "neighbour")]:
        res = good_run()
        res[compare_qemu.BG][key] = value
        assert [m for m in missed(res) if words in m], (key, missed(res))


def test_a_tenant_above_its_burst_iops_misses():
    # What the envelope alone allowed below a contract's knee (docs/contracts.md): 6178 of 6000.
    res = good_run()
    res["56 connections"][compare_qemu.BG]["t2k"]["iops"] = 6178
    assert any("t2k within its burst" in m for m in missed(res)), missed(res)


def test_a_tenant_below_its_base_entitlement_misses():
    res = good_run()
    # 200 MB/s base at 32 kB is 6250 IOPS entitled: 5000 IOPS and 160 MB/s is below both.
    res["56 connections"][compare_qemu.BG]["t20k"] = {"iops": 5000, "mbps": 160}
    assert any("t20k" in m and "entitlement" in m for m in missed(res)), missed(res)


def lat(run, name, us):
    next(t for t in run["report"]["tenants"] if t["name"] == name)["lat_us"]["avg"] = us


def tenant(res, name, bios, wild, bios_us, wild_us):
    """Sets one tenant's case-2 figures ({"iops", "mbps"}) under bios and under wild, and its
    mean latency in the gateway (us) in each run; returns the two runs."""
    c56 = res["56 connections"]
    b, w = c56[compare_qemu.BG], c56[compare_qemu.WILD]
    b[name], w[name] = bios, wild
    lat(b, name, bios_us)
    lat(w, name, wild_us)
    return b, w


def test_holding_a_tenant_back_below_what_the_machine_serves_misses():
    # The quiet profile's case 2 under base (BaseCBS: static shares, every unused share kept):
    # t1k's requests waited 5598 us in the gateway against 2541 under wild, and it got 3012
    # IOPS where wild gave its clients 5165.
    res = good_run()
    b, _ = tenant(res, "t1k", {"iops": 3012, "mbps": 78.5}, {"iops": 5165, "mbps": 119.0}, 5598, 2541)
    m = missed(res)
    assert any("t1k held back" in x and "under wild" in x for x in notes(res)), notes(res)
    assert any(x.startswith("case 2: total") for x in m), m
    # Within 5 % of it is not held back below what the machine serves.
    b["t1k"] = {"iops": 4950, "mbps": 115.0}
    assert missed(res) == []


def test_a_tenant_slowed_outside_the_gateway_is_not_held_back():
    # The bad run of case 2 on a quiet host: t20k 5060 IOPS with 1138 deferrals. Its requests
    # waited no longer in the gateway than under wild, so the clients (or the host's CPU) were
    # its limit, not the scheduler: no miss against wild's 11000, for it or for the total.
    res = good_run()
    # 40 us more, of a 16 / 5060 s = 3162 us cycle: 1.3 %
    b, _ = tenant(res, "t20k", {"iops": 5060, "mbps": 104.6}, {"iops": 11000, "mbps": 220.0}, 640, 600)
    assert [x for x in missed(res) if "wild" in x or "machine" in x] == []
    # 250 us more, 8 % of its cycle: held back, and judged against wild.
    lat(b, "t20k", 850)
    assert any("t20k held back" in x for x in missed(res)), missed(res)


def test_what_the_machine_serves_is_at_most_a_total_it_served():
    # Case 2 on a profile calibrated at 56 connections: t20k gained from the others being held
    # back (10396 under bios, 5477 under wild), the other three were held back. Their wild
    # figures beside t20k's bios one sum to 26522, more than the machine served under either
    # rule (bios 18393, wild 21603; 21602 from these rounded figures): the total is judged against it.
    res = good_run()
    for name, bi, wi, bl, wl in [("t20k", 10396, 5477, 913, 840), ("t5k", 4694, 5519, 9145, 5817),
                                 ("t2k", 2123, 5231, 10055, 2487), ("t1k", 1180, 5375, 18838, 2505)]:
        b, _ = tenant(res, name, {"iops": bi, "mbps": bi * 20e3 / 1e6}, {"iops": wi, "mbps": wi * 20e3 / 1e6}, bl, wl)
    total = [x for x in missed(res) if x.startswith("case 2: total")]
    assert total and "can serve these clients, 21602" in total[0], total
    # Held back by less than 5 % in total against that, it passes the total criterion.
    b["t1k"]["iops"] = 1180 + 21602 * 0.95 - 18393 + 1
    assert not [x for x in missed(res) if x.startswith("case 2: total")], missed(res)


def test_deferrals_withheld_are_reported_not_judged():
    # Issue 18's case 2 on an idle host: t20k 11467 IOPS / 219.8 MB/s (below its 300 MB/s burst
    # on average), 16 % of its I/Os deferred, all counted withheld here: its clients got no more
    # under wild, so the capacity left over was not kept from them.
    res = good_run()
    c56 = res["56 connections"]
    c56[compare_qemu.BG]["t20k"] = {"iops": 11467, "mbps": 219.8}
    c56[compare_qemu.WILD]["t20k"] = {"iops": 11300, "mbps": 216.0}
    c56[compare_qemu.BG]["report"]["tenants"][0].update(completed=172000, deferred_ios=27500, deferred_withheld=27500)
    assert missed(res) == []


def test_without_a_run_under_wild_case2_is_not_passed():
    res = good_run()
    del res["56 connections"][compare_qemu.WILD]
    assert any("not judged" in m for m in missed(res)), missed(res)


def test_one_case_alone_is_judged_on_its_own_criteria():
    # compare_qemu.py --case 1 / --case 2 leaves the other case out of the results.
    res = good_run()
    case2 = {"56 connections": res["56 connections"]}
    lines = compare_qemu.judge(case2, 3000, SC56)
    assert lines and all(what.startswith("case 2") for _, what in lines)
    case1 = {k: v for k, v in res.items() if k != "56 connections"}
    lines = compare_qemu.judge(case1, 3000, SC56)
    assert len(lines) == 4 and all(what.startswith("case 1") for _, what in lines)


def test_a_victim_the_host_cannot_carry_alone_is_noted_not_excused():
    # The victim alone (no neighbour) on each server: when either gets less than 97 % of its
    # demand, a note says the demand is above the host's QD1 round trip; the IOPS line itself
    # is still judged, a MISS below 97 %.
    res = good_run()
    res[compare_qemu.BG]["victim_iops"] = 2000
    for name, alone in ((compare_qemu.BG, 2300), (compare_qemu.QEMU, 2100)):
        res[name]["alone"] = {"victim_iops": alone, "victim_mean_us": 400, "victim_p99_us": 900}
    lines = compare_qemu.judge(res, 3000, SC56)
    notes = [what for ok, what in lines if ok is None and what.startswith("case 1")]
    assert len(notes) == 1 and "2300 IOPS on burstgate bios" in notes[0] and "2100" in notes[0], notes
    assert any("victim IOPS 2000" in m for m in missed(res))
    res[compare_qemu.QEMU]["alone"]["victim_iops"] = res[compare_qemu.BG]["alone"]["victim_iops"] = 2999
    assert not [what for ok, what in compare_qemu.judge(res, 3000, SC56) if ok is None and what.startswith("case 1")]


def test_connections_are_summed_per_tenant():
    # run_56 keeps fio's jobs apart (no --group_reporting) to show a tenant's connections'
    # spread; the tenant's figures are their sums, its clat the mean weighted by I/Os.
    def job(name, riops, wiops, rclat, wclat, n):
        return {"jobname": name, "usr_cpu": 10.0, "sys_cpu": 30.0, "job_runtime": 15000,
                "read": {"iops": riops, "bw_bytes": riops * 4096, "total_ios": n, "clat_ns": {"mean": rclat}},
                "write": {"iops": wiops, "bw_bytes": wiops * 4096, "total_ios": n, "clat_ns": {"mean": wclat}}}
    agg = compare_qemu.aggregate_56([job("t20k", 600, 600, 1000e3, 3000e3, 100), job("t20k", 100, 100, 1000e3, 1000e3, 300),
                                     job("t5k", 50, 50, 5e6, 5e6, 10)])
    t = agg["t20k"]
    assert t["iops"] == 1400 and abs(t["mbps"] - 1400 * 4096 / 1e6) < 1e-9
    assert (t["conn_iops_min"], t["conn_iops_max"]) == (200, 1200)
    assert t["ios"] == 800 and abs(t["clat_mean_us"] - (100 * 1000 + 100 * 3000 + 600 * 1000) / 800) < 1e-9
    assert abs(t["fio_cpu_s"] - 2 * 0.4 * 15) < 1e-9
    assert agg["t5k"]["iops"] == 100


def test_wild_below_a_base_is_no_bound_for_the_others():
    # make compare-qemu on a quiet host, case 2 on the profile calibrated at 56 connections (bios
    # with reserve_shortfall): wild served t20k 7373 IOPS of its 10454 base entitlement, and gave
    # t2k and t1k 5420 and 5286; bios kept t20k's base (10488) and gave them 4726 and 3752. Their
    # wild figures include t20k's base: noted, not judged; the total still is (24529 of 23486).
    res = good_run()
    for name, bi, wi, bl, wl, mb, mw in [("t20k", 10488, 7373, 517, 438, 200.7, 135.6),
                                         ("t5k", 5563, 5407, 5815, 4835, 147.6, 144.8),
                                         ("t2k", 4726, 5420, 3369, 2108, 111.2, 122.6),
                                         ("t1k", 3752, 5286, 4304, 2074, 93.6, 121.4)]:
        tenant(res, name, {"iops": bi, "mbps": mb}, {"iops": wi, "mbps": mw}, bl, wl)
    assert missed(res) == [], missed(res)
    assert [x for x in notes(res) if "t2k held back" in x] and [x for x in notes(res) if "t1k held back" in x]
    # Had wild met t20k's base, t2k's and t1k's wild figures are still notes: bios divides the
    # leftover by demand, wild by connection threads (1:4:2:2, the split issue 18 measured as
    # the defect). What is judged per held-back tenant is that it got part of the leftover.
    res["56 connections"][compare_qemu.WILD]["t20k"] = {"iops": 10454, "mbps": 200.0}
    assert not [x for x in missed(res) if "held back" in x], missed(res)
    b = res["56 connections"][compare_qemu.BG]
    b["t1k"] = {"iops": 830, "mbps": 20.9}  # its base (807 IOPS at 25.2 kB), none of the leftover
    assert any("t1k held back" in x and "leftover" in x for x in missed(res)), missed(res)
    b["t1k"] = {"iops": 3752, "mbps": 93.6}
    # And the total is judged either way: 21777 of 23486 misses.
    res["56 connections"][compare_qemu.WILD]["t20k"] = {"iops": 7373, "mbps": 135.6}
    res["56 connections"][compare_qemu.BG]["t1k"] = {"iops": 1000, "mbps": 25.0}
    assert any(x.startswith("case 2: total") for x in missed(res)), missed(res)


def test_rounds_are_judged_on_their_medians():
    # make compare-qemu twice on a quiet host, 80 minutes apart: t20k 10488 then 9476 IOPS under
    # bios, wild's total 23486 then 23173. One round starved by the host (another process took a
    # core) must not decide a criterion: median_runs gives each tenant the median of its rounds.
    def run(iops, lat, overruns):
        r = {n: {"iops": iops[i], "mbps": iops[i] * 20e3 / 1e6, "clat_mean_us": 2.0 * lat[i], "ios": 15 * iops[i],
                 "conn_iops_min": 1.0, "conn_iops_max": 2.0, "fio_cpu_s": 1.0} for i, n in enumerate(compare_qemu.CONNS56)}
        r["cpu"] = {"server_cpu_s": 18.0, "server_runq_wait_s": 100.0 + iops[0] / 1e3, "clients_cpu_s": 9.0,
                    "clients_runq_wait_s": 50.0, "client_processes": 58}
        r["report"] = {"tenants": [{"name": n, "lat_us": {"avg": lat[i]}, "deferred_ios": 7, "deferred_withheld": i}
                                   for i, n in enumerate(compare_qemu.CONNS56)],
                       "sa_delay_us": {c: {"n": 1000 + k, "p50": 1.0, "p95": lat[0] / 2 + k, "p99": 9.0,
                                           "store_p95": 3.0} for k, c in
                                       enumerate(("within_first", "within_deferred", "other_first", "other_deferred"))}}
        r["window_overruns"] = overruns
        return r
    rounds = [run([10488, 5563, 4726, 3752], [500, 5800, 3400, 4300], 0),
              run([4505, 5372, 4374, 3828], [900, 6100, 3700, 4600], 14),  # the starved round
              run([10445, 5510, 4580, 3687], [520, 5900, 3500, 4400], 1)]
    m = compare_qemu.median_runs(rounds)
    assert [m[n]["iops"] for n in compare_qemu.CONNS56] == [10445, 5510, 4580, 3752]
    # The total is the median round's (24222), not the tenants' medians summed (24287: no round).
    assert m["total_iops"] == 24222
    assert [t["lat_us"]["avg"] for t in m["report"]["tenants"]] == [520, 5900, 3500, 4400]
    assert m["report"]["tenants"][3]["deferred_withheld"] == 3 and m["window_overruns"] == 14
    # The SA delay by class (the gateway's report): each figure the rounds' median.
    assert m["report"]["sa_delay_us"]["other_first"] == {"n": 1002, "p50": 1.0, "p95": 262.0, "p99": 9.0,
                                                         "store_p95": 3.0}
    assert m["cpu"]["server_runq_wait_s"] == 100.0 + 10445 / 1e3
    assert compare_qemu.median_runs(rounds[1:2]) is rounds[1]
    # The starved round alone misses t20k's base; the medians meet it.
    res = good_run()
    res["56 connections"][compare_qemu.BG] = rounds[1]
    assert any("t20k 4505 IOPS" in x for x in missed(res)), missed(res)
    res["56 connections"][compare_qemu.BG] = m
    assert not any(x.startswith("case 2: t20k") and "base entitlement" in x for x in missed(res)), missed(res)
    # The judged total is that median round's.
    lines = [what for _, what in compare_qemu.judge(res, 3000, SC56)]
    assert any(w.startswith("case 2: total 24222 IOPS") for w in lines), lines


def test_case1_rounds_are_judged_on_their_medians():
    # Case 1's victim moved 2443 -> 2999 IOPS between two runs minutes apart on the 2-core host:
    # one round whose client was held off a CPU must not decide it, nor the other three lines.
    rounds = [{"victim_iops": 2999, "victim_mean_us": 280, "victim_p99_us": 800, "bursty_mbps": 700,
               "window_overruns": 0},
              {"victim_iops": 2443, "victim_mean_us": 363, "victim_p99_us": 2310, "bursty_mbps": 500,
               "window_overruns": 10},
              {"victim_iops": 2990, "victim_mean_us": 270, "victim_p99_us": 900, "bursty_mbps": 750,
               "window_overruns": 2}]
    m = compare_qemu.median1(rounds)
    assert m == {"victim_iops": 2990, "victim_mean_us": 280, "victim_p99_us": 900, "bursty_mbps": 700,
                 "window_overruns": 10}
    res = good_run()
    # qemu's figures in the quiet run of docs/results.md's case 1.
    res[compare_qemu.QEMU] = {"victim_iops": 1713, "victim_mean_us": 577, "victim_p99_us": 1761, "bursty_mbps": 731}
    res[compare_qemu.BG] = m
    assert not [w for w in missed(res) if w.startswith("case 1")]
    res[compare_qemu.BG] = rounds[1]  # that round alone misses three
    assert len([w for w in missed(res) if w.startswith("case 1")]) == 3


def test_the_run_without_base_priority_is_not_judged():
    res = good_run()
    res[compare_qemu.NOPRIO] = {"victim_iops": 1000, "victim_mean_us": 900, "victim_p99_us": 9000, "bursty_mbps": 10}
    assert missed(res) == []
