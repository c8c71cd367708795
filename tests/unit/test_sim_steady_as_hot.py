"""burstgate-sim's steady_as_hot / steady_new_as_hot (report fields of a tenant with hot
segments): decisions the segment monitor took as hot on I/Os to the workload's steady
segments, all and on first offers only (docs/results.md, Still Water)."""

import json
import os
import pathlib
import subprocess

import pytest
import yaml

from .headlines import R

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "sim" / "burstgate-sim"


def run(tmp_path, threshold_iops):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    # The variation `t100us` (the monitor counting requests per 100 us): 30 ms hold 300 intervals.
    sc = R.reproduce_stillwater.t100us(yaml.safe_load((ROOT / "scenarios" / "dualbucket_hot_segments.yaml").read_text()))
    sc["duration_ms"], sc["warmup_ms"] = 30, 5
    sc["dualbucket"]["hot_threshold_iops"] = threshold_iops
    path, out = tmp_path / f"s{threshold_iops}.yaml", tmp_path / f"r{threshold_iops}.json"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    result = subprocess.run([str(CLI), str(path), "--out", str(out), "--quiet"], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())["tenants"]


def test_steady_segments_taken_as_hot_are_counted(tmp_path):
    # Bugs caught: the workload's hot segments counted as steady (io.hot inverted: thousands,
    # since hot segments are hot nearly always); re-offers counted as first offers; counts
    # made when the monitor never marks anything hot.
    for t in run(tmp_path, 40000):
        assert 0 <= t["steady_new_as_hot"] <= t["steady_as_hot"]
        assert t["steady_as_hot"] < 0.2 * t["lat_steady_us"]["count"]
        assert t["steady_new_as_hot"] < 0.05 * t["lat_steady_us"]["count"]
    # R = 65535 per interval: no segment is ever hot.
    for t in run(tmp_path, 655350000):
        assert t["steady_as_hot"] == 0 and t["steady_new_as_hot"] == 0
    # R = 0: every segment is hot from its first I/O on, steady ones included.
    tenants = run(tmp_path, 0)
    assert all(t["steady_new_as_hot"] > 0.9 * t["lat_steady_us"]["count"] for t in tenants)
