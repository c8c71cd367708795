"""The gateway benchmarks' own verdicts (scripts/compare_qemu.py's `judge`, scripts/bench_verdict.py),
on made-up figures: no server runs.

Catches: a criterion with its comparison reversed or its threshold slipped (97 % of demand, 90 %
of qemu's MB/s, 95 % of the entitlement, the burst, 5 % of the servable total), an entitlement
taken at 4 KiB instead of the tenant's mean size, a servable total that ignores the calibrated
profile's bandwidth limit or the tenants' bursts, and medians taken over the wrong axis."""

import argparse
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import compare_qemu  # noqa: E402
from bench_verdict import median_of  # noqa: E402

PROFILE = {"threads": 2, "cpu_ns": {"read": {"base": 10000, "per_kib": 100}, "write": {"base": 10000, "per_kib": 100}},
           "swlimit_mbps": 600.0}


def results(victim_iops=3000, bursty_mbps=900, t20k=(10000, 200.0)):
    qemu = {"victim_iops": 2900, "victim_mean_us": 300, "victim_p99_us": 2000, "bursty_mbps": 1000}
    bg = {"victim_iops": victim_iops, "victim_mean_us": 150, "victim_p99_us": 1000, "bursty_mbps": bursty_mbps}
    # 20 kB I/Os: entitlements 10000 / 2500 / 2000 / 1000 IOPS, bursts 15000 / 7500 / 6000 / 6000.
    r56 = {"t20k": {"iops": t20k[0], "mbps": t20k[1]}, "t5k": {"iops": 7500, "mbps": 150.0},
           "t2k": {"iops": 6000, "mbps": 120.0}, "t1k": {"iops": 1000, "mbps": 20.0}}
    return {"burstgate bios": bg, "qemu-storage-daemon, throttle groups": qemu,
            "56 connections": {"burstgate bios": r56}}


def verdicts(tmp_path, capsys, res, profile=PROFILE):
    path = tmp_path / "host.yaml"
    path.write_text(yaml.safe_dump(profile))
    a = argparse.Namespace(profile=str(path), victim_iops=3000, rounds=3)
    sc56 = yaml.safe_load(compare_qemu.SCENARIO56.read_text())
    missed = compare_qemu.judge(a, res, sc56)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(("- PASS", "- MISS"))]
    return missed, {ln[7:].split(":")[0] + ":" + ln[7:].split(":")[1]: ln[2:6] for ln in lines}


def test_a_run_meeting_every_criterion_passes(tmp_path, capsys):
    # Servable: CPU 2e9 / (10000 + 100 x 19.5) = 167k, bandwidth 600 MB/s / 20 kB = 30k, bursts
    # 15000 + 7500 + 6000 + 6000 = 34.5k: 30k; the total is 24.5k. So a profile of 500 MB/s.
    missed, v = verdicts(tmp_path, capsys, results(), PROFILE | {"swlimit_mbps": 500.0})
    assert missed == 0, v
    assert len(v) == 13


def test_each_criterion_can_miss(tmp_path, capsys):
    missed, v = verdicts(tmp_path, capsys, results(victim_iops=2900, bursty_mbps=890, t20k=(9400, 188.0)))
    assert v["case 1: victim >= 97 % of its demand"] == "MISS"  # 2900 of 3000 is 96.7 %
    assert v["case 1: neighbour >= 90 % of qemu's MB/s"] == "MISS"
    assert v["case 2: t20k >= 95 % of its entitlement"] == "MISS"  # 9400 of 10000
    # bandwidth 600 MB/s over 20 kB: 30000 IOPS servable, 23900 served
    assert v["case 2: total within 5 % of what the machine can serve"] == "MISS"
    assert v["case 1: victim mean latency below qemu's"] == "PASS"
    assert missed == 4, v
    over = results(t20k=(16000, 320.0))
    missed, v = verdicts(tmp_path, capsys, over, PROFILE | {"swlimit_mbps": 600.0})
    assert v["case 2: t20k within its burst"] == "MISS"  # 320 MB/s above its burst 300
    assert v["case 2: t5k within its burst"] == "PASS"  # 7500 IOPS / 150 MB/s: exactly its burst


def test_medians_are_per_field():
    rounds = [{"a": 1, "b": {"c": 10}}, {"a": 5, "b": {"c": 30}}, {"a": 3, "b": {"c": 20}}]
    assert median_of(rounds) == {"a": 3, "b": {"c": 20}}
    assert median_of([{"x": None}, {"x": 2}]) == {"x": None}
