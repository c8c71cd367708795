"""Shared pytest set-up: where the C++ build is, and the reference model's binding."""

import importlib
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", ROOT / "build" / "cmake"))


def import_model():
    """The ``burstgate_model`` extension; a missing build is an error, never a skip."""
    try:
        return importlib.import_module("burstgate_model")
    except ImportError as exc:
        raise RuntimeError(
            f"cannot import burstgate_model ({exc}); build it with `make cpp` and put "
            f"{BUILD / 'python'} on PYTHONPATH (the Makefile does both)") from exc


#: Tests judged on the real clock: every test here runs burstgate-gateway, whose windows are 1 ms
#: of wall time, with real clients, and many judge IOPS, latency or a deadline. `make test` runs
#: them after the rest of the suite, one at a time with nothing of the suite beside them (the
#: rest runs on two pytest-xdist workers, Makefile `test`). A test elsewhere with a bound on wall
#: time is marked `wallclock` itself.
WALLCLOCK_DIR = ROOT / "tests" / "gateway"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(WALLCLOCK_DIR):
            item.add_marker(pytest.mark.wallclock)


@pytest.fixture(scope="session")
def bg_model():
    return import_model()


def run_burstgate(*args, timeout=120, **kwargs):
    """The `burstgate` command of this checkout (``python -m burstgate`` with this interpreter
    and rtl/ first on the path), as ``subprocess.run`` with text output captured."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "rtl"), os.environ.get("PYTHONPATH")])))
    env.update(kwargs.pop("env", {}))
    return subprocess.run([sys.executable, "-m", "burstgate", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, check=False, env=env, **kwargs)


def run_farm(*args):
    """scripts/verify_farm.py with these suite options, on the engine `make test-long` names
    (BG_FARM_ADDRESS: a cluster; BG_FARM_WORKERS: the embedded cluster's workers); fails with
    the farm's list of failed cases, each with its parameters and the command that re-runs it."""
    engine = []
    if os.environ.get("BG_FARM_ADDRESS"):
        engine = ["--address", os.environ["BG_FARM_ADDRESS"]]
    elif os.environ.get("BG_FARM_WORKERS"):
        engine = ["--workers", os.environ["BG_FARM_WORKERS"]]
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "verify_farm.py"), *args, *engine],
                         capture_output=True, text=True, check=False)
    summary = [ln for ln in res.stderr.splitlines() if ln.startswith("verify-farm:")]
    assert res.returncode == 0 and summary, "\n".join(summary) or res.stderr[-4000:]
    return res
