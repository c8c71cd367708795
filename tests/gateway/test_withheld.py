"""The gateway's count of capacity withheld from a tenant (report: tenants[].deferred_withheld).

A deferral counts there when the deferred I/O would still have fit both the tenant's per-window
burst beside everything the tenant used in the window it was deferred in, and the capacity no
tenant used in that window (the schedulable total, less BIOS's reserve). make compare-qemu's
case 2 judges "the capacity left over goes to the tenants that still have demand" on it
(scripts/compare_qemu.py): the run's averages cannot tell the three cases below apart -- each
tenant is far below its burst on average, with many deferrals:

* a bursting tenant alone on a fast modelled host, whose closed loop (8 connections x iodepth 2,
  4-128 KiB: about one window's 300 kB burst grant in flight) is deferred in the windows where
  its requests arrive together: at its burst, its contract. Counting a deferral whatever the
  tenant's usage fails here.
* a tenant whose burst is far above a small modelled host: deferred in windows the host's
  capacity is used up. Counting a deferral whatever the other tenants' usage fails here. Judged
  only on a run whose client and gateway the host did not hold off (a held-off client's clumps
  are withheld capacity indeed); a host loaded through every attempt skips it, saying so.
* a tenant at its burst IOPS (the count gate) while its cost vectors have room: its own
  cap. Counting without the count grant fails here. Judged on a run on time, as the one above.
* a tenant under BaseCBS (`--scheduler base`: static shares, nothing lent) beside an idle
  tenant whose base is most of the host: it gets its base and the small unprovisioned pool while
  the host stands nearly empty, so its deferrals withhold capacity. Counting none fails here.
"""

import json

import psutil
import pytest
import yaml

from .gateway import Gateway
from .host_load import RunDelay
from .test_fio import run_fio

SECONDS = 3
MIX = "--bssplit=4k/40:16k/30:64k/20:128k/10"
#: The full-host case judges a run only when neither its client nor the gateway's readers were
#: held off: fio's threads, and the gateway's reader threads (which turn the client's requests
#: into arrivals), each waited for a CPU (host_load.RunDelay, summed over the threads) at most
#: this share of the run. Measured on this shared host at load average 2-20, the gateway's
#: threads all counted (before its store threads and writers ran at the normal policy with
#: --base-priority, which moved that sum from 22-26 % to 60-71 % at 0.5-2 % withheld): client
#: 15-24 % and gateway 16-24 %: 0.1-0.4 % of the deferrals withheld; client 32-37 % and
#: gateway 16-20 %: 0.4-1.2 %; client 36-75 % or gateway 26-59 %: 3.6-25 %.
WAIT = 0.25
#: Runs of the full-host case, each SECONDS long, before it gives up on a loaded host.
ATTEMPTS = 3


def scenario(tmp_path, swlimit_mbps, base, burst, idle_mbps=0):
    sc = {
        "name": "withheld", "seed": 1, "duration_ms": 1000, "scheduler": "bios", "window_us": 1000,
        "dpu": {"threads": 2, "lb_policy": "jsq",
                "cpu_ns": {"A": {"read": {"base": 2200, "per_kib": 40}, "write": {"base": 1800, "per_kib": 35}}},
                "ingress_gbps": 100, "egress_gbps": 100, "swlimit_mbps": swlimit_mbps, "reserved_share": 0.05},
        "tenants": [{"name": "t", "product": "A", "base": base, "burst": burst, "queues": 1,
                     "workload": {"mode": "closed", "iodepth": 1, "sizes": {"4k": 1.0}, "read_share": 0.5,
                                  "segments": 8}}],
    }
    if idle_mbps:  # a second tenant that never connects
        idle = json.loads(json.dumps(sc["tenants"][0]))
        idle.update(name="idle", base={"iops": 1000, "mbps": idle_mbps}, burst={"iops": 1000, "mbps": idle_mbps})
        sc["tenants"].append(idle)
    path = tmp_path / "withheld.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    return path


def fio_pids():
    """This test's fio processes (run_fio's child and the job processes fio forks)."""
    pids = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.name() == "fio":
                pids.append(p.pid)
        except psutil.Error:
            pass  # ended between the listing and the question
    return pids


class Timing:
    """How the host ran one gateway run: how long the client's threads and the gateway's waited
    for a CPU, and the gateway's windows run late or skipped (its live JSON)."""

    def __init__(self, client, gateway, live):
        self.client, self.gateway = client, gateway
        self.windows = live["windows"]
        self.late = live["windows_late"] + live["window_overruns"]

    @property
    def on_time(self):
        return self.client.share <= WAIT and self.gateway.share <= WAIT

    def __str__(self):
        return (f"client {self.client}, gateway {self.gateway}, {self.late} of {self.windows} windows late or "
                f"skipped")


def run(tmp_path, sc, gw_args, *fio_args):
    gw = Gateway(tmp_path, "--realtime", *gw_args, scenario=sc, export_size="256m")
    try:
        with RunDelay(fio_pids) as client, RunDelay(lambda: [gw.proc.pid], threads="bg-rd:") as gateway:
            run_fio(tmp_path, "withheld", ["--name=t", f"--uri={gw.uri('t')}", "--size=256m", *fio_args],
                    runtime=SECONDS)
        timing = Timing(client, gateway, gw.live())
    finally:
        report = gw.stop()
    t = report["tenants"][0]
    print(f"\n{t['mbps']:.1f} MB/s, {t['deferred_ios']} of {t['completed']} I/Os deferred ({t['throttled']} "
          f"deferrals), {t['deferred_withheld']} withheld; utilization {report['utilization']}; {timing}")
    return t, timing


def on_time_run(tmp_path, sc, gw_args, fio_args, exercised):
    """The first of up to ATTEMPTS runs whose client and gateway were not held off for a CPU
    (Timing.on_time): (tenant report, Timing). `exercised(t)` is asserted on every run, on time
    or not; with none on time the test is skipped with each run's figures."""
    runs = []
    for attempt in range(ATTEMPTS):
        folder = tmp_path / f"run{attempt}"
        folder.mkdir()
        t, timing = run(folder, sc, gw_args, *fio_args)
        exercised(t)
        if timing.on_time:
            return t, timing
        runs.append(f"{t['deferred_withheld']} of {t['throttled']} withheld, {timing}")
    pytest.skip(f"no run of {ATTEMPTS} on time, the bound not judged: " + "; ".join(runs))


def test_deferrals_at_its_own_burst_are_not_withheld(tmp_path):
    # compare_qemu_56.yaml's t20k and its clients, alone on a host of 3000 MB/s.
    sc = scenario(tmp_path, 3000, {"iops": 20000, "mbps": 200}, {"iops": 30000, "mbps": 300})
    t, _ = run(tmp_path, sc, [], "--rw=randrw", "--rwmixread=50", MIX, "--iodepth=2", "--numjobs=8")
    assert t["deferred_ios"] >= 0.02 * t["completed"], t  # the case is exercised: its burst binds
    assert t["deferred_withheld"] <= 0.01 * t["completed"], t


def test_deferrals_on_a_full_host_are_not_withheld(tmp_path):
    # 40 MB/s of host for a tenant that may burst to 400 MB/s: the host, not the burst, binds.
    sc = scenario(tmp_path, 40, {"iops": 1000, "mbps": 4.096}, {"iops": 100000, "mbps": 400})
    # A few windows leave room (the client's own gaps, BIOS's allocation following demand a
    # window late); counting regardless of the host's room would count all of them. A loaded
    # host makes many more such windows: a client held off for milliseconds sends in clumps, and
    # a window after a quiet one grants little, so those deferrals are withheld capacity, rightly
    # counted (CI: 1994 of 12822 at 22.6 MB/s; 0-29 of ~43000 quiet). The bound is judged only
    # on a run whose client and gateway were not held off (Timing.on_time), measured on them:
    # the gateway's late windows do not tell (its window loop is SCHED_FIFO: beside two busy
    # loops 14 of 3912 windows were late while 3227 of 7351 deferrals were withheld), nor does
    # the host's CPU pressure (50-60 % on this shared host in runs with 0.1-0.3 % withheld). A
    # loaded host gets ATTEMPTS runs to give one; none is a skip that says why.
    def exercised(t):
        assert t["mbps"] < 0.2 * 400 and t["deferred_ios"] >= 0.1 * t["completed"], t

    t, timing = on_time_run(tmp_path, sc, [], ["--rw=randread", "--bs=4k", "--iodepth=16"], exercised)
    assert t["deferred_withheld"] <= 0.05 * t["throttled"], (t, str(timing))


def test_a_static_share_below_the_burst_withholds(tmp_path):
    # BaseCBS grants the tenant its base and the pool the bases leave (3000 x 0.95 - 2800 MB/s,
    # 50 MB/s); the idle tenant's 2800 MB/s stay unused and unlent; its burst is 400 MB/s.
    sc = scenario(tmp_path, 3000, {"iops": 1000, "mbps": 4.096}, {"iops": 100000, "mbps": 400}, idle_mbps=2800)
    t, _ = run(tmp_path, sc, ["--scheduler", "base"], "--rw=randread", "--bs=64k", "--iodepth=16")
    assert t["mbps"] < 0.25 * 400 and t["deferred_ios"] >= 0.1 * t["completed"], t  # exercised
    assert t["deferred_withheld"] >= 0.5 * t["throttled"], t  # both count deferral decisions


def test_deferrals_at_its_burst_iops_are_not_withheld(tmp_path):
    # 4 KiB reads bound by the burst IOPS (3000), with bytes bought far above them (400 MB/s):
    # the count gate (TENANT.COUNT_GRANT) defers while the cost vectors still have room, so a
    # count that looks at the vectors alone calls every such deferral withheld.
    # Judged on a run on time, as the full-host case: under load its clients' clumps leave
    # windows with room (285 of 14103 withheld once, beside the whole suite on two workers).
    sc = scenario(tmp_path, 3000, {"iops": 2000, "mbps": 300}, {"iops": 3000, "mbps": 400})

    def exercised(t):  # the count binds
        assert t["deferred_ios"] >= 0.1 * t["completed"], t

    t, timing = on_time_run(tmp_path, sc, [], ["--rw=randread", "--bs=4k", "--iodepth=16"], exercised)
    assert t["deferred_withheld"] <= 0.01 * t["throttled"], (t, str(timing))
