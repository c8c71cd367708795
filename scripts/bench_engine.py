#!/usr/bin/env python3
"""Benchmarks of the Dask engine behind `burstgate sweep` / `fleet` (docs/results.md, "Distributed
sweeps and fleet replay"), both on the embedded cluster:

* overhead: N tasks that do nothing on W workers; the task phase (first submission to last
  result) divided by N is what each task pays on top of its own work.
* speed-up: N identical burstgate-sim runs (the sweep's task: scenario in, report out) on 1 and on
  2 workers, alternated REPS times. Printed per run: the task phase's wall time, the load average,
  how busy the engine kept its workers (the tasks' own wall times ÷ (workers × the phase): below
  1 is time the engine lost to overhead, gathering or a straggler) and the CPU the simulations got
  (their CPU seconds ÷ their wall seconds: below 1 is other jobs taking the cores). The speed-up
  is given from the best runs (on a shared machine other jobs only ever add time) and from the
  medians.

    scripts/bench_engine.py overhead [--tasks 500] [--workers 2]
    scripts/bench_engine.py speedup [--scenario scenarios/example.yaml] [--duration-ms 400000] [--tasks 8] [--reps 3]
"""

import argparse
import os
import pathlib
import resource
import statistics
import sys
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl"))

from burstgate.tools.engine import Failure, run_tasks  # noqa: E402
from burstgate.tools.sweep import sweep_task  # noqa: E402


def noop(i):
    return i


def timed_task(*args):
    """The sweep's task, with its wall time and its simulation's CPU time (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    sweep_task(*args)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def load():
    return os.getloadavg()[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--tasks", type=int, default=500)
    o.add_argument("--workers", type=int, default=2)
    s = sub.add_parser("speedup")
    s.add_argument("--scenario", default=str(ROOT / "scenarios" / "example.yaml"))
    s.add_argument("--duration-ms", type=float, default=400000)
    s.add_argument("--tasks", type=int, default=8)
    s.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    if a.what == "overhead":
        results, info = run_tasks(noop, [(i,) for i in range(a.tasks)], workers=a.workers, progress=False)
        assert results == list(range(a.tasks))
        print(f"{a.tasks} no-op tasks on {info['workers']} workers: {info['tasks_s']:.2f} s, "
              f"{1000 * info['tasks_s'] / a.tasks:.2f} ms per task (cluster start {info['startup_s']:.1f} s; "
              f"load average {load():.1f})")
        return 0
    scenario = yaml.safe_load(pathlib.Path(a.scenario).read_text())
    scenario["duration_ms"] = a.duration_ms
    times = {1: [], 2: []}
    for rep in range(a.reps):
        for w in (1, 2):
            before = load()
            results, info = run_tasks(timed_task, [(scenario, "model", "bios", 1 + i % 4) for i in range(a.tasks)],
                                      workers=w, progress=False)
            assert not any(isinstance(r, Failure) for r in results), results
            phase = info["tasks_s"]
            busy = sum(r[0] for r in results) / (w * phase)
            cpu = sum(r[1] for r in results) / sum(r[0] for r in results)
            times[w].append(phase)
            print(f"rep {rep + 1}: {a.tasks} runs on {w} worker(s): {phase:.2f} s, workers busy {busy:.3f}, "
                  f"simulations got {cpu:.2f} of a core each (load average {before:.1f} before, {load():.1f} after)",
                  flush=True)
    best = {w: min(t) for w, t in times.items()}
    med = {w: statistics.median(t) for w, t in times.items()}
    try:
        autogroup = pathlib.Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        autogroup = False
    if autogroup:
        # Linux then shares the CPUs between sessions first: while other sessions keep the cores
        # busy, a second worker of this session splits this session's share instead of adding one.
        print("note: sched_autogroup is on: under other sessions' load this session's workers share "
              "one session's part of the CPUs (see 'simulations got' above); measure on an idle machine")
    print(f"best of {a.reps}: 1 worker {best[1]:.2f} s, 2 workers {best[2]:.2f} s: speed-up {best[1] / best[2]:.2f}x")
    print(f"median of {a.reps}: 1 worker {med[1]:.2f} s, 2 workers {med[2]:.2f} s: speed-up {med[1] / med[2]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
