#!/usr/bin/env python3
"""The Dask engine's own cost per task (docs/results.md, "Distributed sweeps"): N tasks that do
nothing, on an embedded cluster of W worker processes; the time from the first submission to the
last result, divided by N, is what each task of `burstgate sweep` / `fleet` pays on top of its run.

    scripts/bench_engine.py [--tasks 500] [--workers 2]
"""

import argparse
import os

from burstgate.tools.engine import run_tasks


def noop(i):
    return i


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=500)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    results, info = run_tasks(noop, [(i,) for i in range(a.tasks)], workers=a.workers, progress=False)
    assert results == list(range(a.tasks))
    print(f"{a.tasks} no-op tasks on {info['workers']} workers: {info['tasks_s']:.2f} s, "
          f"{1000 * info['tasks_s'] / a.tasks:.2f} ms per task (cluster start {info['startup_s']:.1f} s; "
          f"load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
