"""A reader's real-time priority while its tenant stays within its base (--base-priority, on
with --realtime; sw/gateway/base_priority.hpp), seen as the host sees it: the scheduling policy
of the gateway's named reader threads (/proc/PID/task/TID/stat), sampled while real fio clients
run.

A victim reading 4 KiB at iodepth 1 at half its base and a neighbour reading 128 KiB at iodepth
8, bursting far above its base of 0.2 MB/s (its base IOPS set far above what it sends): the
victim's reader must be at SCHED_FIFO nearly all the time, the neighbour's nearly never. Catches
the priority never given (a bucket that never fills, a policy never set) and given to a tenant
above its base by bytes (a bucket that ignores them: 99.6 % of samples). A raw client flooding
READs past the end of the export (refused, EINVAL) at 64 in flight: its reader nearly never at
SCHED_FIFO (a refused request favoured: 175 of 175 samples). Without --realtime, or with
--base-priority 0, no reader ever is.
"""

import contextlib
import os
import pathlib
import threading
import time

import pytest
import yaml

from . import gateway as g
from .gateway import Gateway
from .test_fio import run_fio

SCENARIO = pathlib.Path(__file__).resolve().parents[2] / "scenarios" / "compare_qemu.yaml"
SCHED_FIFO = 1
ENGINE_PRIORITY = 10  # the gateway's window loop and pacer with --realtime; its readers' must be below


def can_fifo():
    """Whether this process may take the engine's SCHED_FIFO priority (CAP_SYS_NICE, or an
    RLIMIT_RTPRIO at least as high): below it the gateway turns the readers' priority off."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(ENGINE_PRIORITY))
    except PermissionError:
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


def reader_policies(pid):
    """{thread name: scheduling policy} of the process's readers (bg-rd:*), one of its store
    threads and its pacer."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if name.startswith("bg-rd:") or name in ("bg-store", "bg-pacer"):
            out[name] = int(stat[stat.rindex(")") + 2:].split()[38])  # field 41, policy
    return out


@contextlib.contextmanager
def policies(gw, period=0.01):
    """Samples the readers' policies (reader_policies) every `period` s while the block runs;
    yields the list the samples go to."""
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.wait(period):
            samples.append(reader_policies(gw.proc.pid))

    t = threading.Thread(target=sample)
    t.start()
    try:
        yield samples
    finally:
        stop.set()
        t.join()


def fifo_share(samples, name, least=50):
    seen = [s[name] for s in samples if name in s]
    assert len(seen) >= least, (name, len(seen))
    return sum(p == SCHED_FIFO for p in seen) / len(seen)


def scenario(tmp_path):
    """compare_qemu.yaml with the neighbour's base at 0.2 MB/s: one 128 KiB request in 0.65 s
    within it."""
    sc = yaml.safe_load(SCENARIO.read_text())
    bursty = next(t for t in sc["tenants"] if t["name"] == "bursty")
    bursty["base"] = {"iops": 100000, "mbps": 0.2}  # only its bytes keep it above its base
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(sc))
    return path


def fifo_shares(tmp_path, *args, seconds=3):
    """Runs the victim and the neighbour on a gateway started with `args`; returns, per reader
    thread, the share of samples (every 10 ms) in which it was at SCHED_FIFO."""
    gw = Gateway(tmp_path, *args, scenario=scenario(tmp_path), export_size="256m")
    try:
        with policies(gw) as samples:
            run_fio(tmp_path, "prio",
                    ["--name=victim", f"--uri={gw.uri('victim')}", "--rw=randread", "--bs=4k", "--iodepth=1",
                     "--rate_iops=2000", "--size=256m"],
                    ["--name=bursty", f"--uri={gw.uri('bursty')}", "--rw=randread", "--bs=128k", "--iodepth=8",
                     "--size=256m"], runtime=seconds)
    finally:
        report = gw.stop()
    shares = {name: fifo_share(samples, name, least=30 * seconds)
              for name in ("bg-rd:victim", "bg-rd:bursty", "bg-pacer")}
    # The store threads from 0.5 s on: before fio's clients connect nobody is favoured, and they
    # run at the engine's priority then, as with --base-priority 0.
    shares["bg-store"] = fifo_share(samples[50:], "bg-store", least=30 * seconds - 50)
    print(f"\nSCHED_FIFO share of samples: {shares}")
    return shares, report


@pytest.mark.skipif(not can_fifo(), reason="SCHED_FIFO refused here (no CAP_SYS_NICE)")
def test_a_within_base_reader_runs_at_real_time_priority_and_a_bursting_one_does_not(tmp_path):
    shares, report = fifo_shares(tmp_path, "--realtime")
    assert shares["bg-rd:victim"] >= 0.9
    assert shares["bg-rd:bursty"] <= 0.1
    # The neighbour's deferred requests' store work is not done at the engine's priority while
    # the victim is favoured.
    assert shares["bg-store"] <= 0.1 and shares["bg-pacer"] == 1.0
    # The report's SA delay by class counts every admitted request once, the victim's as
    # within its base and the neighbour's as not (Request::within reaches the engine, which
    # orders the store threads' queue and sets their policy by it).
    done = {t["name"]: t["completed"] for t in report["tenants"]}
    by = {k: v["n"] for k, v in report["sa_delay_us"].items()}
    assert sum(by.values()) == sum(done.values()), (by, done)
    assert by["within_first"] + by["within_deferred"] >= 0.9 * done["victim"], (by, done)
    assert by["other_first"] + by["other_deferred"] >= 0.9 * done["bursty"], (by, done)


@pytest.mark.skipif(not can_fifo(), reason="SCHED_FIFO refused here (no CAP_SYS_NICE)")
def test_no_reader_is_favoured_with_base_priority_0_or_without_realtime(tmp_path):
    for args in (("--realtime", "--base-priority", "0"), ()):
        run = tmp_path / ("rt" if args else "plain")
        run.mkdir()
        shares, _ = fifo_shares(run, *args, seconds=1)
        # --base-priority 0 is the gateway as before: its store threads at the engine's priority.
        engine = 1.0 if args else 0.0
        assert shares == {"bg-rd:victim": 0.0, "bg-rd:bursty": 0.0, "bg-store": engine, "bg-pacer": engine}, args


@pytest.mark.skipif(not can_fifo(), reason="SCHED_FIFO refused here (no CAP_SYS_NICE)")
def test_a_flood_of_refused_requests_is_not_favoured(tmp_path):
    gw = Gateway(tmp_path, "--realtime", scenario=scenario(tmp_path), export_size="64m")
    try:
        s, _ = g.connect(gw.sock, "victim")
        refused = sent = 0
        with policies(gw) as samples:
            end = time.monotonic() + 2
            while time.monotonic() < end:
                sent += 64
                for k in range(64):
                    g.request(s, g.CMD_READ, offset=64 << 20, length=4096, cookie=k)
                for _ in range(64):
                    refused += g.reply(s)[0] == g.EINVAL
        s.close()
    finally:
        gw.stop()
    share = fifo_share(samples, "bg-rd:victim")
    print(f"\n{refused} READs past the end refused; the reader at SCHED_FIFO in {100 * share:.1f} % of samples")
    assert refused == sent
    assert share <= 0.1


@pytest.mark.skipif(not can_fifo(), reason="SCHED_FIFO refused here (no CAP_SYS_NICE)")
def test_a_trickled_write_payload_is_waited_for_at_the_normal_policy(tmp_path):
    # A within-base WRITE whose payload comes 128 bytes every 8 ms: a reader that kept its
    # priority through the payload's waits woke at SCHED_FIFO once per segment, for as long as
    # the client liked (4 such connections took 356 ms of real-time CPU a second for 6 IOPS).
    gw = Gateway(tmp_path, "--realtime", scenario=scenario(tmp_path), export_size="64m")
    try:
        s, _ = g.connect(gw.sock, "victim")
        with policies(gw) as samples:
            for k in range(3):
                g.request(s, g.CMD_WRITE, offset=k << 13, length=8192, cookie=k)
                for _ in range(64):
                    s.sendall(b"\x5a" * 128)
                    time.sleep(0.008)
                assert g.reply(s)[:2] == (0, k)
        s.close()
    finally:
        gw.stop()
    share = fifo_share(samples, "bg-rd:victim")
    print(f"\nthe reader at SCHED_FIFO in {100 * share:.1f} % of samples")
    assert share <= 0.1
