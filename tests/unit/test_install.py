"""Installed, `burstgate` works outside the checkout: `make install PREFIX=...` (the launcher, the
package, the binding and the C++ programs under PREFIX) and `pip install .` (one package holding
its programs in burstgate/bin, the binding beside it), both from CMake's install rules.

Catches a program a subcommand runs that the install rules leave out, programs installed where
the package does not look for them (the wheel's prefix is site-packages: bin/ instead of
burstgate/bin/), a binding left out, a package that imports from the source tree only, a
launcher that cannot find its programs, and a lookup that prefers a checkout's build or PATH to
the package's own programs."""

import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys

import pytest

from burstgate import command

from ..conftest import BUILD, ROOT

#: What the subcommands run: every one must be installed.
PROGRAMS = sorted({sc.program.name for sc in command.SUBCOMMANDS if sc.program is not None})
#: A bare environment: none of the checkout's tools or Python on PATH, no build tree named.
BARE_PATH = "/usr/bin:/bin"
_CHECKOUT_ENV = ("PYTHONPATH", "BG_BUILD_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONWARNINGS",
                 "VERILATOR_ROOT", "VIRTUAL_ENV")


def _outside_env():
    """The caller's environment without what ties a run to this checkout (compiler cache settings stay)."""
    env = {k: v for k, v in os.environ.items() if k not in _CHECKOUT_ENV}
    env["PATH"] = "/usr/local/bin:" + BARE_PATH
    return env


def _installs(build):
    """{destination relative to the prefix: {installed file names}} from a CMake build's install scripts."""
    found = {}
    for script in pathlib.Path(build).rglob("cmake_install.cmake"):
        for dest, files in re.findall(r'file\(INSTALL DESTINATION "\$\{CMAKE_INSTALL_PREFIX\}/?([^"]*)"[^)]*?FILES '
                                      r'((?:"[^"]*"\s*)+)', script.read_text()):
            names = {posixpath.basename(f) for f in re.findall(r'"([^"]*)"', files)}
            found.setdefault(posixpath.normpath(dest or "."), set()).update(names)
    return found


def test_the_package_s_own_programs_come_first(tmp_path, monkeypatch):
    """An installed package runs its own programs, not a checkout's build or what PATH has."""
    own = tmp_path / "bin"
    own.mkdir()
    (own / "burstgate-sim").write_text("#!/bin/sh\n")
    (own / "burstgate-sim").chmod(0o755)
    monkeypatch.setattr(command, "PACKAGE_BIN", own)
    monkeypatch.setenv("BG_BUILD_DIR", str(BUILD))
    sim = command.Program("sw/sim/burstgate-sim")
    assert command.find_program(sim) == own / "burstgate-sim"
    monkeypatch.setattr(command, "PACKAGE_BIN", tmp_path / "none")
    assert command.find_program(sim) == BUILD / "sw" / "sim" / "burstgate-sim"


def test_the_wheel_s_install_rules_put_programs_in_the_package(tmp_path):
    """scikit-build-core's configuration (SKBUILD, the prefix is the wheel's site-packages):
    every program in burstgate/bin, where the package looks first; the binding at the top, where
    `import burstgate_model` finds it; the package itself is not installed by CMake (the wheel
    copies rtl/burstgate)."""
    build = tmp_path / "build"
    conf = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DSKBUILD=ON",
                           "-DBG_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
                          capture_output=True, text=True, timeout=300)
    assert conf.returncode == 0, conf.stderr[-3000:]
    installs = _installs(build)
    assert set(PROGRAMS) <= installs.get("burstgate/bin", set()), installs
    assert any(n.startswith("burstgate_model.") and n.endswith(".so") for n in installs.get(".", ())), installs
    assert not any(d == "burstgate" or d.endswith("/burstgate") for d in installs), installs
    assert "bin" not in installs, installs


def test_make_install_gives_a_working_burstgate(tmp_path):
    prefix = tmp_path / "prefix"
    env = {k: v for k, v in os.environ.items() if k not in _CHECKOUT_ENV}
    made = subprocess.run(["make", "-s", "-C", str(ROOT), "install", f"PREFIX={prefix}"], capture_output=True,
                          text=True, timeout=600, env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    for program in ("burstgate", *PROGRAMS):
        assert os.access(prefix / "bin" / program, os.X_OK), program
    # Run from elsewhere with a PATH that has none of the checkout's tools on it.
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path)}
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
    # So did the binding.
    python = dict(env, PYTHONPATH=str(prefix / "lib" / "burstgate" / "python"))
    binding = subprocess.run([sys.executable, "-c", "import burstgate_model; print(burstgate_model.__file__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=python, timeout=60)
    assert binding.returncode == 0, binding.stderr
    assert binding.stdout.startswith(str(prefix)), binding.stdout


def _copy_checkout(dest):
    """The checkout's files as a clone would have them plus any not yet committed: no build/,
    .venv or other ignored output."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.mark.long
def test_pip_install_gives_a_working_burstgate(tmp_path):
    """`pip install .` into a fresh venv builds the C++ project; the installed command runs from
    a folder with no checkout, no build tree and a bare PATH, on the programs inside its package."""
    src = tmp_path / "src"
    _copy_checkout(src)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # The pinned versions (requirements.lock) of the dependencies: what `make venv` installed.
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                          "-c", str(ROOT / "requirements.lock"), str(src)],
                         capture_output=True, text=True, env=_outside_env(), cwd=tmp_path, timeout=3600)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    shutil.rmtree(src)  # nothing of the source tree is needed from here on
    # The wheel's file list: the package with its programs, the binding, nothing else at the top.
    record, = venv.glob("lib/python*/site-packages/burstgate-*.dist-info/RECORD")
    files = {line.split(",")[0] for line in record.read_text().splitlines()}
    assert {f"burstgate/bin/{p}" for p in PROGRAMS} <= files, sorted(files)
    assert {"burstgate/command.py", "burstgate/regmap/__init__.py"} <= files
    tops = {f.split("/")[0] for f in files if not f.startswith("../")}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"burstgate", next(
        t for t in tops if t.startswith("burstgate_model.") and t.endswith(".so"))}, tops

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(ROOT / "scenarios" / "example.yaml", run)
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path)}

    def burstgate(*args):
        return subprocess.run([str(venv / "bin" / "burstgate"), *args], capture_output=True, text=True, cwd=run,
                              env=env, timeout=300)

    top = burstgate("--help")
    assert top.returncode == 0, top.stderr
    assert all(sc.name in top.stdout for sc in command.SUBCOMMANDS), top.stdout
    sim = burstgate("sim", "example.yaml", "--quiet", "--out", "r.json")
    assert sim.returncode == 0, sim.stderr
    assert '"scenario": "bps-burst-neighbor"' in (run / "r.json").read_text()
    cost = burstgate("cost")
    assert cost.returncode == 0 and "bottleneck" in cost.stdout, cost.stdout + cost.stderr
    lsm = burstgate("lsm", "fig3")
    assert lsm.returncode == 0 and "Fig. 3" in lsm.stdout, lsm.stdout + lsm.stderr
    for name in ("gateway", "replay", "trace2iolog"):
        helped = burstgate(name, "--help")
        assert helped.returncode == 0 and "usage:" in helped.stdout, (name, helped.stderr)

    # Every program, the package and the binding came from the venv.
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import burstgate_model\nfrom burstgate import command\n"
         "print(command.SOURCE_ROOT)\nprint(command.__file__)\nprint(burstgate_model.__file__)\n"
         "for sc in command.SUBCOMMANDS:\n"
         "    if sc.program: print(command.find_program(sc.program))"],
        capture_output=True, text=True, cwd=run, env=env, timeout=60)
    assert where.returncode == 0, where.stderr
    source_root, *paths = where.stdout.split()
    assert source_root == "None"
    site = str(venv / "lib")
    assert all(p.startswith(site) for p in paths), paths
    programs = {pathlib.Path(p).name: pathlib.Path(p) for p in paths[2:]}
    assert sorted(programs) == PROGRAMS
    assert all(p.parent.name == "bin" and p.parent.parent.name == "burstgate" for p in programs.values()), programs
