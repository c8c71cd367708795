"""Tenants' contracts through the gateway, measured by real clients (Debian's fio, nbd engine).

BurstCBS §5.2's first requirement: a tenant gets its base provisioning "no matter how other
co-located tenants behave". Here every tenant asks for more than its base (closed loop, no
think time), so each must receive min(base IOPS, base MB/s / size):

* a victim alone (contracts.yaml's `large`: 4000 IOPS bought at 4 KiB, 4 KiB random reads,
  iodepth 1, nobody else connected) gets at least 95 % of its 4000 IOPS and at most its burst.
  Catches provisioning turned into too small a grant for the I/Os the tenant really sends (issue
  18 measured 2950), a grant lost when the client's round trip straddles a window (no carry:
  two_tenants.yaml, which turns it off for the headline, gave 3753), deferred requests re-offered
  late, a window loop that falls behind, pacing that holds requests longer than the stages say.
  Per window, on any host: no deferral in a window where the victim had been admitted less than
  its base of that window (the report's deferred_below_base; with the grant cut to 3/4 of the
  contract, 1081 of 7288 I/Os at load average 9.5). The run's IOPS only below LOADED.
* four tenants (contracts.yaml) with 16, 4, 1 and 4 connections provisioned 1000, 2000, 4000
  IOPS and 40 MB/s of 128 KiB I/Os: each gets at least 95 % of its own entitlement and the
  4 KiB ones at most their burst, so IOPS follow provisioning, not connection counts. Catches
  a scheduler or SA round robin that shares by queue (issue 18 measured 1:4:2:2 by queues), a
  per-connection instead of per-tenant contract, a 128 KiB tenant charged the 4 KiB price.
"""

import pathlib

import yaml

from .gateway import Gateway
from .host_load import CpuContention
from .test_fio import run_fio

SECONDS = 4
CONTRACTS = pathlib.Path(__file__).resolve().parent / "contracts.yaml"


def iops(rep):
    """Per fio job name: read IOPS (jobs are grouped by name with group_reporting off)."""
    out = {}
    for j in rep["jobs"]:
        out[j["jobname"]] = out.get(j["jobname"], 0.0) + j["read"]["iops"]
    return out


def test_victim_alone_gets_its_base(tmp_path):
    gw = Gateway(tmp_path, "--realtime", scenario=CONTRACTS, export_size="256m")
    try:
        with CpuContention() as host:
            rep = run_fio(tmp_path, "alone", ["--name=large", f"--uri={gw.uri('large')}", "--rw=randread", "--bs=4k",
                                              "--iodepth=1", "--size=256m"], runtime=SECONDS)
    finally:
        report = gw.stop()
    got = iops(rep)["large"]
    victim = next(t for t in report["tenants"] if t["name"] == "large")
    print(f"\nvictim alone: {got:.0f} IOPS of 4000 provisioned; {victim['deferred_ios']} of {victim['completed']} I/Os "
          f"deferred, {victim['deferred_below_base']} deferrals below its base in their window; "
          f"window overruns {report.get('window_overruns')}; {host}")
    assert got <= 1.02 * 4000  # base = burst: never more than bought
    # Every deferral in a window where it had been admitted its whole base of that window (4
    # I/Os): provisioning turned into a smaller grant, a grant lost across a window, a window
    # loop that falls behind all defer it below that. Counted per window, so a loaded host whose
    # scheduler holds the client off for milliseconds and then lets it send a window's worth at
    # once does not move it, where it moves the run's IOPS (3470-3730 at load average 7).
    assert victim["deferred_below_base"] <= 0.01 * victim["completed"], victim
    # The run's IOPS only on a host that scheduled fio when it was runnable (a client held off
    # for milliseconds sends in bursts: 2014-3183 IOPS at load average 12, 866-1019 beside two
    # busy loops, every deferral in a window where it had had its 4 I/Os). Catches the window
    # loop skipping the windows it woke late for: 3774 with 94 windows skipped at load average
    # 1.8, before late windows were caught up.
    assert got >= 0.95 * 4000 or host.contended, (got, str(host), victim)


def test_iops_follow_provisioning_not_connections(tmp_path):
    scenario = CONTRACTS
    # fio's 25 jobs connect at once: the handshake pool (16 by default) is raised so that none of
    # them is evicted as a handshake flood would be.
    gw = Gateway(tmp_path, "--realtime", "--handshake-slots", "32", scenario=scenario, export_size="256m")
    conns = {"small": 16, "medium": 4, "large": 1, "stream": 4}
    jobs = []
    for name, n in conns.items():
        bs = "128k" if name == "stream" else "4k"
        jobs.append([f"--name={name}", f"--uri={gw.uri(name)}", "--rw=randread", f"--bs={bs}", "--iodepth=2",
                     f"--numjobs={n}", "--size=256m"])
    try:
        with CpuContention() as host:
            rep = run_fio(tmp_path, "many", *jobs, runtime=SECONDS)
        live = gw.live()
    finally:
        report = gw.stop()
    got = iops(rep)
    entitled = {"small": 1000, "medium": 2000, "large": 4000, "stream": 40e6 / (128 << 10)}
    print("\n" + "  ".join(f"{k}: {got[k]:.0f}/{entitled[k]:.0f}" for k in entitled) +
          f"  window overruns {live['window_overruns']} of {live['windows']}; {host}")
    by_name = {t["name"]: t for t in report["tenants"]}
    for name, want in entitled.items():
        # Per window, on any host, as for the victim alone (`large` read 3637-3704 of 4000 at load
        # average 5-12 with no deferral below its base).
        t = by_name[name]
        assert t["deferred_below_base"] <= 0.01 * t["completed"], (name, t)
        # `stream`'s base is 0.3 of a 128 KiB I/O a window: only the run's rate can judge it.
        if not host.contended or name == "stream":
            assert got[name] >= 0.95 * want, (name, got, report["tenants"])
        assert got[name] <= 1.05 * want, (name, got)  # base = burst
    # Every request was admitted and completed on one of the 2 SA threads the report names, as
    # burstgate-sim reports it (catches a report that leaves threads_completed empty).
    threads = report["threads_completed"]
    assert len(threads) == 2 and sum(threads) == sum(t["completed"] for t in report["tenants"]), threads


def test_burst_scoped_adjustment_cuts_the_neighbour_not_the_victim(tmp_path):
    """`dpu.cost_adjust: burst` on the real clock (docs/contracts.md, "When the machine is smaller
    than its profile"): the victim (`large`, 4000 IOPS, iodepth 1) beside `small` made a bursting
    neighbour (base 1000, burst 20000 IOPS, 4 connections at iodepth 8), with a target SA delay
    no request meets, so the factor climbs to its ceiling (8) within ~35 windows of 4 ms (a
    window with fewer than 16 completions holds the factor: at 1 ms the victim's 4 and the
    neighbour's few stop it near 4). The neighbour is
    then held near its base plus an eighth of what BIOS grants it above (1000 + 19000 / 8 = 3375
    IOPS), the victim keeps every I/O of its base per window. Catches a gateway whose completions
    do not reach the firmware's histogram or whose windows skip the adjustment (the factor stays
    1.0; at 4.0 the neighbour took 6773), the adjustment cutting a base (the victim deferred
    below its base), or the factor written to COST.FACTOR. The target is one no delay meets, so
    this does not tell the real delay from the modelled one (docs/results.md, "Case 2 with the
    burst held to the host", measures that)."""
    sc = yaml.safe_load(CONTRACTS.read_text())
    sc["dpu"]["cost_adjust"] = "burst"
    sc["dpu"]["target_delay_us"] = 0.001
    sc["window_us"] = 4000
    by_name = {t["name"]: t for t in sc["tenants"]}
    by_name["small"]["burst"] = {"iops": 20000, "mbps": 81.92}
    scenario = tmp_path / "burst_adjust.yaml"
    scenario.write_text(yaml.safe_dump(sc))
    gw = Gateway(tmp_path, "--realtime", scenario=scenario, export_size="256m")
    try:
        with CpuContention() as host:
            rep = run_fio(tmp_path, "adjust",
                          ["--name=large", f"--uri={gw.uri('large')}", "--rw=randread", "--bs=4k", "--iodepth=1",
                           "--size=256m"],
                          ["--name=small", f"--uri={gw.uri('small')}", "--rw=randread", "--bs=4k", "--iodepth=8",
                           "--numjobs=4", "--size=256m"], runtime=SECONDS)
    finally:
        report = gw.stop()
    got = iops(rep)
    t = {x["name"]: x for x in report["tenants"]}
    print(f"\nburst-scoped adjustment: victim {got['large']:.0f} of 4000, neighbour {got['small']:.0f} "
          f"(base 1000, burst 20000; 3375 at factor 8), burst_factor {report['burst_factor']}, "
          f"cost_factor {report['cost_factor']}; {host}")
    assert report["burst_factor"] == 8.0, report["burst_factor"]
    assert report["cost_factor"] == {"cpu": 1.0, "ingress": 1.0, "egress": 1.0, "swlimit": 1.0}
    assert t["large"]["deferred_below_base"] <= 0.01 * t["large"]["completed"], t["large"]
    assert got["large"] >= 0.95 * 4000 or host.contended, (got, str(host))
    # The first ~35 windows (140 ms) run below the ceiling: ~1500 I/Os more at most.
    assert 0.9 * 1000 <= got["small"] <= 1.1 * (1000 + 19000 / 8) + 1500 / SECONDS, got
