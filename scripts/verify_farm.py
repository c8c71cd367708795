#!/usr/bin/env python3
"""`make verify-farm`: the core's differential testbench (tests/cocotb/core, bg_core on Verilator
against bg::Agent decision by decision) over many seeds, one seed per Dask task.

A task is `pytest tests/cocotb/core/test_core.py::test_core` with RANDOM_SEED=seed and
CORE_EVENTS=events, exactly `make verify-core SEED=seed EVENTS=events`. Each worker builds the
Verilated core once in its own folder (build/farm/<worker>/cocotb/core, seeded with a copy of
build/cocotb/core when that exists) because the cocotb build folder holds the run's results file
and cannot be shared by two runs at once. Every seed gets a line (seed, status, seconds, error);
the command exits 1 if any seed failed, naming the seeds to replay with `make verify-core`.

    scripts/verify_farm.py --seeds 1-16 [--events 30000] [--workers N | --address tcp://HOST:8786]
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl"))

from burstgate.tools.engine import Failure, run_tasks  # noqa: E402


def seed_task(seed, events, root):
    """One seed of the core differential on a worker: seconds taken; RuntimeError with the log's end."""
    root = pathlib.Path(root)
    try:
        from distributed import get_worker
        slot = "w" + str(get_worker().name)
    except (ImportError, ValueError):
        slot = "serial"
    farm = root / "build" / "farm" / slot
    cocotb_dir = farm / "cocotb" / "core"
    shared = root / "build" / "cocotb" / "core"
    if not cocotb_dir.exists() and shared.is_dir():
        shutil.copytree(shared, cocotb_dir, symlinks=True)   # copy2: mtimes kept, so no rebuild
    env = dict(os.environ, RANDOM_SEED=str(seed), CORE_EVENTS=str(events), PYTHONWARNINGS="error",
               BG_BUILD_DIR=str(farm / "cmake"))               # cocotb_build_dir = BG_BUILD_DIR's parent / cocotb
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/cocotb/core/test_core.py::test_core"], cwd=root, env=env,
                         capture_output=True, text=True)
    if res.returncode != 0:
        lines = (res.stdout + res.stderr).strip().splitlines()
        first = next((ln.strip() for ln in lines if "Error" in ln or "ERROR" in ln or "assert" in ln), "")
        raise RuntimeError(f"pytest exit {res.returncode} (worker {slot}): {first[:400]} / {lines[-1] if lines else ''}")
    return time.monotonic() - start


def seeds_arg(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected seeds like 1-16 or 1,5,9, got {text!r}") from None
        if lo < 0 or hi < lo:
            raise argparse.ArgumentTypeError(f"bad range {part!r}")
        out += range(lo, hi + 1)
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"a seed is listed twice in {text!r}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seeds_arg, required=True, help="e.g. 1-16 or 1,5,9")
    ap.add_argument("--events", type=int, default=30000)
    ap.add_argument("--workers", type=int)
    ap.add_argument("--address")
    args = ap.parse_args()
    results, info = run_tasks(seed_task, [(s, args.events, str(ROOT)) for s in args.seeds],
                              address=args.address, workers=args.workers, progress=True)
    failed = []
    print("seed,status,seconds,error")
    for seed, res in zip(args.seeds, results):
        if isinstance(res, Failure):
            failed.append(seed)
            print(f"{seed},failed,,{res.error}")
        else:
            print(f"{seed},ok,{res:.1f},")
    print(f"verify-farm: {len(args.seeds) - len(failed)} of {len(args.seeds)} seeds passed "
          f"({args.events} events each) on {info['workers'] or 'no'} worker(s) in {info['tasks_s']:.0f} s",
          file=sys.stderr)
    if failed:
        print("verify-farm: replay a failed seed with `make verify-core SEED=N EVENTS=" f"{args.events}`: "
              + " ".join(map(str, failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
