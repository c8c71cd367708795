"""--profile HOST.yaml (make calibrate's host profile) in burstgate-sim and burstgate-gateway.

A profile replaces the scenario's SA threads, every profiled product's CPU cost and the software
limit: a closed-loop tenant on a profile twice as slow per I/O gets half the IOPS (catches a
profile read but not applied, applied to one product only, or to the estimator's table but not
the SA's true cost). A bad profile is exit 2 with FILE:LINE: field, never a traceback, in both
programs.
"""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SIM = BUILD / "sw" / "sim" / "burstgate-sim"
GATEWAY = BUILD / "sw" / "gateway" / "burstgate-gateway"

SCENARIO = """name: profile
seed: 3
duration_ms: 400
warmup_ms: 100
scheduler: bios
# The reserved pool as a share of the capacity (5 %), so the SA's capacity, not the printed
# two-tenant pool (here both bases, 90k of the fast profile's 200k), sets what the tenants get.
bios: {reserve: share}
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 1000, per_kib: 10}, write: {base: 1000, per_kib: 10}}
    B: {read: {base: 1000, per_kib: 10}, write: {base: 1000, per_kib: 10}}
  backend_us: {median: 1, p99: 2}
  swlimit_mbps: 100000
tenants:
  - name: a
    product: A
    base: {iops: 45000, mbps: 500}
    burst: {iops: 200000, mbps: 2000}
    workload: {mode: closed, iodepth: 32, sizes: {4k: 1.0}, read_share: 1.0}
  - name: b
    product: B
    base: {iops: 45000, mbps: 500}
    burst: {iops: 200000, mbps: 2000}
    workload: {mode: closed, iodepth: 32, sizes: {4k: 1.0}, read_share: 1.0}
"""


def profile(base, per_kib=0, threads=2, swlimit=100000):
    return (f"threads: {threads}\ncpu_ns:\n  read: {{base: {base}, per_kib: {per_kib}}}\n"
            f"  write: {{base: {base}, per_kib: {per_kib}}}\nswlimit_mbps: {swlimit}\n")


def sim(tmp, prof_text):
    sc = tmp / "s.yaml"
    sc.write_text(SCENARIO)
    prof = tmp / "host.yaml"
    prof.write_text(prof_text)
    return subprocess.run([str(SIM), str(sc), "--profile", str(prof), "--quiet"], capture_output=True, text=True,
                          timeout=120)


def test_profile_sets_the_sa_cost_of_every_product(tmp_path):
    fast = sim(tmp_path, profile(10000))
    slow = sim(tmp_path, profile(20000))
    assert fast.returncode == 0 and slow.returncode == 0, fast.stderr + slow.stderr
    f = {t["name"]: t["iops"] for t in json.loads(fast.stdout)["tenants"]}
    s = {t["name"]: t["iops"] for t in json.loads(slow.stdout)["tenants"]}
    # Two threads at 10 us per 4 KiB read: 200k IOPS at most (BIOS keeps its 5 % reserve); at
    # 20 us, half that. Both products.
    assert 0.85 * 200000 <= sum(f.values()) <= 200000, f
    for name in ("a", "b"):
        assert s[name] == pytest.approx(f[name] / 2, rel=0.05), (f, s)


@pytest.mark.parametrize("text, where", [
    (profile(10000).replace("threads: 2", "threads: 0"), ":1: threads: must be in 1..16"),
    (profile(10000).replace("base: 10000", "base: -5", 1), ":3: cpu_ns.read.base: must not be negative"),
    (profile(10000).replace("swlimit_mbps", "swlimit"), ":5: swlimit: unknown key"),
    (profile(10000).replace("  write: {base: 10000, per_kib: 0}\n", ""), ":3: cpu_ns.write: missing"),
    ("threads: [\n", ":2: (syntax):"),
])
def test_bad_profile_is_a_located_error(tmp_path, text, where):
    r = sim(tmp_path, text)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and str(tmp_path / "host.yaml") + where in r.stderr, r.stderr


def test_gateway_bad_profile_exit_2(tmp_path):
    prof = tmp_path / "host.yaml"
    prof.write_text(profile(10000).replace("swlimit_mbps: 100000", "swlimit_mbps: fast"))
    r = subprocess.run([str(GATEWAY), "--config", str(ROOT / "tests" / "gateway" / "two_tenants.yaml"), "--unix",
                        str(tmp_path / "s.sock"), "--profile", str(prof)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert f"{prof}:5: swlimit_mbps: expected a number" in r.stderr, r.stderr
