"""Still Water's alpha fit (`burstgate fit-alpha`, rtl/burstgate/tools/fit_alpha.py) and the
burstgate-sim CSV columns it reads (sa_p95_us, sa_n): Eq. (1) data gives back its alpha, the
windows the firmware would not use are left out, and a series without the columns is refused
with its file:line."""

import math
import os
import pathlib
import subprocess

import pytest
import yaml

from ..conftest import run_burstgate
from .headlines import R

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "sim" / "burstgate-sim"
HEADER = ("window,t_ms,tenant,iops,mbps,alloc_cpu_ns,alloc_ingress_B,alloc_egress_B,alloc_swlimit_B,"
          "deferrals,lat_avg_us,lat_max_us,sa_p95_us,sa_n")


def burstgate(*args):
    return run_burstgate(*args, timeout=60)


def series(path, lam_mbps, p95_us, windows=20, warmup_windows=3, sparse_every=4):
    """Two tenants splitting lam_mbps (Mb/s) 3:1; every window's P95 is p95_us, except warmup
    windows and every sparse_every-th window (5 samples), which carry a wrong 9999 us."""
    rows = [HEADER]
    for k in range(1, windows + 1):
        t_ms = 0.1 * k
        bad = k <= warmup_windows or k % sparse_every == 0
        p95, n = (9999.0, 5 if k % sparse_every == 0 else 100) if bad else (p95_us, 100)
        for name, share in (("a", 0.75), ("b", 0.25)):
            mbps = lam_mbps / 8 * share
            rows.append(f"{k},{t_ms:.3f},{name},0,{mbps:.6f},0,0,0,0,0,0,0,{p95:.6f},{n}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_fit_gives_back_the_alpha_of_eq1_data(tmp_path):
    # Bugs caught: L_p not -ln(1-p); MB/s taken for Mb/s; a window's P95 counted once per
    # tenant row instead of once; warmup or under-sampled windows averaged in.
    mu, alpha = 24000.0, 160000.0
    lp = -math.log(0.05)
    paths = [series(tmp_path / f"r{i}.csv", lam, alpha * lp / (mu - lam)) for i, lam in enumerate((7200, 13440, 19200))]
    result = burstgate("fit-alpha", *paths, "--mu-mbps", mu, "--warmup-ms", 0.3)
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith("alpha = ")
    assert abs(float(last.split("=")[1]) - alpha) < 1.0
    assert "| r1.csv | 13440 | 10560 |" in result.stdout


def test_series_without_sa_delay_is_refused_with_its_location(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text(HEADER.rsplit(",", 2)[0] + "\n1,0.100,a,0,1,0,0,0,0,0,0,0\n")
    result = burstgate("fit-alpha", old, "--mu-mbps", 24000)
    assert result.returncode == 2
    assert f"{old}:1:" in result.stderr and "sa_p95_us" in result.stderr


def test_load_at_or_above_mu_is_an_error(tmp_path):
    path = series(tmp_path / "over.csv", 24000, 50.0)
    result = burstgate("fit-alpha", path, "--mu-mbps", 24000)
    assert result.returncode == 2 and "not below mu" in result.stderr


def run_sim(*args):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def short_hot_segments(tmp_path_factory):
    # The variation `t100us`: 100 us windows, so 30 ms give 250 filled rows after warm-up.
    sc = R.reproduce_stillwater.t100us(yaml.safe_load((ROOT / "scenarios" / "dualbucket_hot_segments.yaml").read_text()))
    sc["duration_ms"], sc["warmup_ms"] = 30, 5
    sc["dualbucket"]["cheque_share"] = 0.0
    path = tmp_path_factory.mktemp("alpha") / "s.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    return path


def test_simulator_writes_the_p95_the_firmware_reads(short_hot_segments, tmp_path):
    # Bugs caught: the column empty or zero under dualbucket (the histogram not read, or read
    # after the tick cleared it); filled under a scheduler whose firmware never reads it.
    csv = tmp_path / "db.csv"
    result = run_sim(short_hot_segments, "--csv", csv, "--quiet", "--out", tmp_path / "db.json")
    assert result.returncode == 0, result.stderr
    lines = csv.read_text().splitlines()
    assert lines[0] == HEADER
    filled = [ln.split(",") for ln in lines[1:] if ln.split(",")[-1] not in ("", "0")]
    assert len(filled) > 0.9 * (len(lines) - 1)
    # A saturated main bucket at 0.56 of the SA: P95 tens of us, never above a window (100 us) by far.
    assert all(0 < float(f[-2]) < 1000 for f in filled)
    fit = burstgate("fit-alpha", csv, "--mu-mbps", 24000, "--warmup-ms", 5)
    assert fit.returncode == 0, fit.stderr
    assert float(fit.stdout.splitlines()[-1].split("=")[1]) > 0
    bios = tmp_path / "bios.csv"
    result = run_sim(short_hot_segments, "--scheduler", "bios", "--csv", bios, "--quiet", "--out", tmp_path / "b.json")
    assert result.returncode == 0, result.stderr
    assert all(ln.endswith(",,") for ln in bios.read_text().splitlines()[1:])
