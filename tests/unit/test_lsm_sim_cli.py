"""burstgate-sim with an `lsm:` section: the shipped BurstCBS §6.7 scenario runs, its report
carries the store's per-operation latency, volume IOPS and hit ratio, BIOS keeps the store's
synced writes fast next to bursting neighbours where WildCBS does not, and a bad `lsm:` key
exits 2 naming file:line and the field path."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "sim" / "burstgate-sim"
SCENARIO = ROOT / "scenarios" / "lsm_bcbs67_rocksdb.yaml"


def run(*args):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def report(tmp_path, scheduler):
    out = tmp_path / f"{scheduler}.json"
    result = run(SCENARIO, "--scheduler", scheduler, "--out", out, "--quiet")
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


def test_bcbs67_scenario_reports_the_store_and_bios_shields_it(tmp_path):
    wild, bios = report(tmp_path, "wild"), report(tmp_path, "bios")
    for r in (wild, bios):
        lsm = r["lsm"]
        assert lsm["store"] == "rocksdb" and lsm["cache"] == "lru" and lsm["volume"] == "tenant rocksdb"
        assert lsm["paid_iops"] == 20000
        assert set(lsm["lat_us"]) == {"all", "read", "update"}  # YCSB-A
        for op in lsm["lat_us"].values():
            assert op["count"] > 0 and 0 < op["p50"] <= op["p99"] <= op["p999"] <= op["max"]
        # 5000 ops/s offered; every one is served under both schedulers.
        assert abs(lsm["throughput"] - 5000) < 250
        assert 0.3 < lsm["hit_ratio"] < 1 and lsm["volume_iops"] > 1000
        # The store's tenant is the only source of its I/O.
        store = r["tenants"][0]
        assert store["name"] == "rocksdb" and store["generated"] > 0
        assert r["ios"]["bad_completions"] == 0
        # One timeline entry per simulated second (the scenario's 1000 ms: one), counting every
        # operation completed in it, warm-up included, with its average and longest latency.
        (done, avg_us, max_us), = lsm["timeline"]
        assert done >= lsm["lat_us"]["all"]["count"] and 0 < avg_us <= max_us
    # BurstCBS §6.7 (Fig. 26): synced writes much faster with BIOS than with WildCBS.
    assert bios["lsm"]["lat_us"]["update"]["avg"] < 0.5 * wild["lsm"]["lat_us"]["update"]["avg"]
    assert bios["tenants"][0]["throttled"] == 0 < wild["tenants"][0]["throttled"]


def test_bad_lsm_key_exits_2_with_field_path(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SCENARIO.read_text().replace("    sync: true\n", "    sync: true\n    fsync: true\n"))
    result = run(bad, "--quiet")
    assert result.returncode == 2
    line = next(i for i, text in enumerate(bad.read_text().splitlines(), 1) if "fsync" in text)
    assert f"{bad}:{line}: lsm.tree.fsync: unknown key" in result.stderr


def test_bcbs67_burst_scenario_bursting_raises_store_throughput(tmp_path):
    """BurstCBS Fig. 27: with idle neighbours, BIOS lets the store burst past BaseCBS's static
    share (the paper: 1.7-2.5x), as far as WildCBS does."""
    tput = {}
    for scheduler in ("base", "bios", "wild"):
        out = tmp_path / f"{scheduler}.json"
        result = run(ROOT / "scenarios" / "lsm_bcbs67_burst.yaml", "--scheduler", scheduler, "--out", out, "--quiet")
        assert result.returncode == 0, result.stderr
        tput[scheduler] = json.loads(out.read_text())["lsm"]["throughput"]
    assert tput["bios"] > 1.6 * tput["base"]
    assert abs(tput["bios"] - tput["wild"]) < 0.02 * tput["wild"]
