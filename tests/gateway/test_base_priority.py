"""A reader's real-time priority while its tenant stays within its base (--base-priority, on
with --realtime; sw/gateway/base_priority.hpp), seen as the host sees it: the scheduling policy
of the gateway's named reader threads (/proc/PID/task/TID/stat), sampled while real fio clients
run.

A victim reading 4 KiB at iodepth 1 at half its base and a neighbour reading 128 KiB at iodepth
8, bursting far above its base of 2 MB/s (its base IOPS set far above what it sends). The victim's reader must be at
SCHED_FIFO nearly all the time, the neighbour's nearly never. Catches the priority never given
(a bucket that never fills, a policy never set), given to a tenant above its base (a bucket
that does not count bytes, or one a refused request does not drain), and given without
--realtime or with --base-priority 0.
"""

import os
import pathlib
import threading
import time

import pytest
import yaml

from .gateway import Gateway
from .test_fio import run_fio

SCENARIO = pathlib.Path(__file__).resolve().parents[2] / "scenarios" / "compare_qemu.yaml"
SCHED_FIFO = 1


def can_fifo():
    """Whether this process may take SCHED_FIFO (CAP_SYS_NICE or an RLIMIT_RTPRIO)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except PermissionError:
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


def reader_policies(pid):
    """{thread name: scheduling policy} of the process's threads named bg-rd:*."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if name.startswith("bg-rd:"):
            out[name] = int(stat[stat.rindex(")") + 2:].split()[38])  # field 41, policy
    return out


def fifo_shares(tmp_path, *args):
    """Runs the victim and the neighbour on a gateway started with `args`; returns, per reader
    thread, the share of samples (every 10 ms) in which it was at SCHED_FIFO."""
    sc = yaml.safe_load(SCENARIO.read_text())
    bursty = next(t for t in sc["tenants"] if t["name"] == "bursty")
    bursty["base"] = {"iops": 100000, "mbps": 2}  # only its bytes keep it above its base
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(sc))
    gw = Gateway(tmp_path, *args, scenario=scenario, export_size="256m")
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.wait(0.01):
            samples.append(reader_policies(gw.proc.pid))

    t = threading.Thread(target=sample)
    t.start()
    try:
        run_fio(tmp_path, "prio",
                ["--name=victim", f"--uri={gw.uri('victim')}", "--rw=randread", "--bs=4k", "--iodepth=1",
                 "--rate_iops=2000", "--size=256m"],
                ["--name=bursty", f"--uri={gw.uri('bursty')}", "--rw=randread", "--bs=128k", "--iodepth=8",
                 "--size=256m"], runtime=3)
    finally:
        stop.set()
        t.join()
        gw.stop()
    shares = {}
    for name in ("bg-rd:victim", "bg-rd:bursty"):
        seen = [s[name] for s in samples if name in s]
        assert len(seen) >= 100, (name, len(seen))
        shares[name] = sum(p == SCHED_FIFO for p in seen) / len(seen)
    print(f"\nSCHED_FIFO share of samples: {shares}")
    return shares


@pytest.mark.skipif(not can_fifo(), reason="SCHED_FIFO refused here (no CAP_SYS_NICE)")
def test_a_within_base_reader_runs_at_real_time_priority_and_a_bursting_one_does_not(tmp_path):
    shares = fifo_shares(tmp_path, "--realtime")
    assert shares["bg-rd:victim"] >= 0.9
    assert shares["bg-rd:bursty"] <= 0.1


@pytest.mark.skipif(not can_fifo(), reason="SCHED_FIFO refused here (no CAP_SYS_NICE)")
def test_no_reader_is_favoured_with_base_priority_0_or_without_realtime(tmp_path):
    for args in (("--realtime", "--base-priority", "0"), ()):
        run = tmp_path / ("rt" if args else "plain")
        run.mkdir()
        shares = fifo_shares(run, *args)
        assert shares == {"bg-rd:victim": 0.0, "bg-rd:bursty": 0.0}, args
