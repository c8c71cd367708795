"""`make install PREFIX=...` gives a `burstgate` that works outside the checkout: the launcher, the
package and the C++ programs it runs. Catches a program left out of the install rules, a package
that imports from the source tree only, and a launcher that cannot find its programs."""

import os
import subprocess

from ..conftest import ROOT


def test_make_install_gives_a_working_burstgate(tmp_path):
    prefix = tmp_path / "prefix"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BG_BUILD_DIR", "MAKEFLAGS", "MFLAGS", "PYTHONWARNINGS")}
    made = subprocess.run(["make", "-s", "-C", str(ROOT), "install", f"PREFIX={prefix}"], capture_output=True,
                          text=True, timeout=600, env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    for program in ("burstgate", "burstgate-sim", "burstgate-host", "burstgate-cost", "burstgate-gateway",
                    "burstgate-lsm"):
        assert os.access(prefix / "bin" / program, os.X_OK), program
    # Run from elsewhere with a PATH that has none of the checkout's tools on it.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    top = subprocess.run([str(prefix / "bin" / "burstgate"), "--help"], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=60)
    assert top.returncode == 0, top.stderr
    sim = subprocess.run([str(prefix / "bin" / "burstgate"), "sim", str(ROOT / "scenarios" / "example.yaml"),
                          "--quiet", "--out", str(tmp_path / "r.json")], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)
    assert sim.returncode == 0, sim.stderr
    assert '"scenario": "bps-burst-neighbor"' in (tmp_path / "r.json").read_text()
    # The package came from PREFIX, not from the checkout.
    where = subprocess.run([str(prefix / "bin" / "burstgate"), "regs", "--help"], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=60)
    assert where.returncode == 0 and "this one is installed" in where.stdout and str(ROOT) not in where.stdout, \
        where.stdout
