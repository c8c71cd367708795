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
    tenant between its base entitlement and its burst; the held-back tenant at its burst."""
    case56 = {}
    for t in SC56["tenants"]:
        iops = t["base"]["iops"] * 1.2
        case56[t["name"]] = {"iops": min(iops, t["burst"]["iops"]), "mbps": min(iops * 4096 / 1e6, t["burst"]["mbps"])}
    case56["report"] = {"utilization": {"cpu": 0.40, "swlimit": 0.30},
                        "tenants": [{"name": t["name"], "completed": 1000, "deferred_ios": 0, "deferred_withheld": 0}
                                    for t in SC56["tenants"]]}
    return {
        compare_qemu.BG: {"victim_iops": 2999, "victim_mean_us": 120, "victim_p99_us": 900, "bursty_mbps": 950},
        compare_qemu.QEMU: {"victim_iops": 2990, "victim_mean_us": 250, "victim_p99_us": 2000, "bursty_mbps": 1000},
        "56 connections": {compare_qemu.BG: case56},
    }


def missed(res):
    return [what for ok, what in compare_qemu.judge(res, 3000, SC56) if not ok]


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


def test_holding_a_tenant_back_on_an_idle_host_misses():
    res = good_run()
    rep = res["56 connections"][compare_qemu.BG]["report"]
    # t5k, below its burst, with the host 40 % busy: 500 deferrals of I/Os that its burst and
    # the window's unused capacity covered.
    rep["tenants"][1].update(deferred_ios=500, deferred_withheld=500)
    assert any("t5k held back" in m for m in missed(res)), missed(res)
    held = copy.deepcopy(res)
    held["56 connections"][compare_qemu.BG]["report"]["utilization"]["cpu"] = 0.97  # a full host may
    assert missed(held) == []


def test_deferrals_at_the_tenants_own_burst_are_not_withheld_capacity():
    # Issue 18's case 2 on an idle host: t20k 11467 IOPS / 219.8 MB/s (below its 300 MB/s burst
    # on average), 16 % of its I/Os deferred with the host 27 % busy. Reruns with the gateway's
    # count on that host's profile (166-198 MB/s, 9-15 % deferred) found 0.1-0.2 % of its I/Os
    # withheld: the other deferrals came in windows where it had reached its burst (its 16 I/Os
    # sent together). Its contract, not a miss.
    res = good_run()
    res["56 connections"][compare_qemu.BG]["t20k"] = {"iops": 11467, "mbps": 219.8}
    rep = res["56 connections"][compare_qemu.BG]["report"]
    rep["utilization"] = {"cpu": 0.20, "swlimit": 0.27}
    rep["tenants"][0].update(completed=172000, deferred_ios=27500, deferred_withheld=240)
    assert missed(res) == []
    # The same run with those deferrals withheld is a tenant held back on an idle host.
    rep["tenants"][0]["deferred_withheld"] = 27500
    assert any("t20k held back" in m for m in missed(res)), missed(res)


def test_a_report_without_the_withheld_count_is_judged_on_every_deferral():
    res = good_run()
    rep = res["56 connections"][compare_qemu.BG]["report"]
    del rep["tenants"][1]["deferred_withheld"]
    rep["tenants"][1]["deferred_ios"] = 500
    assert any("t5k held back" in m for m in missed(res)), missed(res)


def test_one_case_alone_is_judged_on_its_own_criteria():
    # compare_qemu.py --case 1 / --case 2 leaves the other case out of the results.
    res = good_run()
    case2 = {"56 connections": res["56 connections"]}
    lines = compare_qemu.judge(case2, 3000, SC56)
    assert lines and all(what.startswith("case 2") for _, what in lines)
    case1 = {k: v for k, v in res.items() if k != "56 connections"}
    lines = compare_qemu.judge(case1, 3000, SC56)
    assert len(lines) == 4 and all(what.startswith("case 1") for _, what in lines)
