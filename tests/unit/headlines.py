"""What every headline test file shares: scripts/reproduce.py loaded as a module (its experiment
functions are the numbers docs/results.md prints), the burstgate-sim binary it runs, and a
module-scoped runner fixture. Each paper's held headlines are in tests/unit/test_headlines*.py."""

import importlib.util
import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SIM = BUILD / "sw" / "sim" / "burstgate-sim"


def _reproduce():
    spec = importlib.util.spec_from_file_location("reproduce", ROOT / "scripts" / "reproduce.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


R = _reproduce()


def runner():
    """A reproduce.py Runner on the built burstgate-sim; the caller removes runner.tmp."""
    if not SIM.is_file():
        pytest.fail(f"{SIM} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return R.Runner(str(SIM))


@pytest.fixture(scope="module")
def run():
    r = runner()
    yield r
    shutil.rmtree(r.tmp, ignore_errors=True)


def assert_draws(key, record, folder):
    """`make reproduce --plots` draws experiment `key` from `record`: a PNG of a real figure, not
    an empty canvas (a record whose fields changed under its plot would fail only at the end of
    a long `make reproduce` otherwise)."""
    from burstgate.tools import repro_plots

    path = getattr(repro_plots, R.EXPERIMENTS[key].plot)(record, pathlib.Path(folder) / f"{key}.png")
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    assert len(data) > 25_000, (path, len(data))  # lines, bars and labels; empty axes are ~19 kB
