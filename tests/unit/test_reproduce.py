"""scripts/reproduce.py (`make reproduce`) end to end on its quickest experiment, Fig. 24.

Catches a reproduction that no longer runs (a report field renamed under it, a scenario
that stopped loading), progress or --out that stopped working, a bad --only accepted, and
the regression Fig. 24 is about: BIOS throttling a tenant that resumes at or below base.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SIM = BUILD / "sw" / "sim" / "burstgate-sim"


def reproduce(*args):
    if not SIM.is_file():
        pytest.fail(f"{SIM} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "reproduce.py"), "--sim", str(SIM), *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_fig24_table_shows_fast_recovery(tmp_path):
    out = tmp_path / "fig24.md"
    result = reproduce("--only", "fig24", "--out", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == result.stdout
    assert re.search(r"^reproduce: fig24 done \(14 simulations, \d+ s\)$", result.stderr, re.M), result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert [int(r[0]) for r in rows] == [1, 2, 4, 8, 16, 24, 32]
    for depth, iops, bios, _, wild in rows:
        if int(depth) <= 8:  # the stream is below the 45k base: BIOS throttles nothing
            assert int(bios) == 0, f"iodepth {depth}: BIOS throttled {bios} I/Os of a tenant below base"
        assert int(wild) > 0, f"iodepth {depth}: WildCBS throttled nothing (the baseline no longer differs)"
    assert int(rows[-1][2]) > 0, "BIOS never throttled the stream above the tenant's cap"


def test_unknown_experiment_is_named():
    result = reproduce("--only", "fig24,fig99")
    assert result.returncode != 0
    assert "unknown experiment 'fig99'" in result.stderr
    assert result.stdout == ""  # checked before any simulation runs
