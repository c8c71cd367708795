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
