#!/usr/bin/env python3
"""`make reproduce` on the sweep engine: scripts/reproduce.py's experiments, each one a Dask task.

Each task runs one experiment exactly as scripts/reproduce.py does (its own measure function with
its own Runner, then its markdown), on a worker of the embedded local cluster or of the cluster at
--address (docs/distributed.md); the markdown is put together in reproduce.py's order and the plots
are drawn here from the returned records, so the report is the one `scripts/reproduce.py` prints,
whatever the number of workers. A failed experiment is reported with its error and the command
exits 1 after writing the others.

    scripts/reproduce_sweep.py [--sim PATH] [--only fig19,fig23] [--out FILE] [--plots DIR]
                               [--workers N | --address tcp://HOST:8786]
"""

import argparse
import json
import os
import pathlib
import shutil
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl"))
sys.path.insert(0, str(ROOT / "scripts"))

import reproduce  # noqa: E402  (scripts/reproduce.py: the experiments themselves)

from burstgate.tools.engine import Failure, run_tasks  # noqa: E402


def experiment_task(name, sim, scripts_dir):
    """One experiment on a worker: (markdown lines, the record its plot is drawn from, runs, seconds)."""
    if scripts_dir not in sys.path:
        sys.path.insert(0, scripts_dir)
    import reproduce as rep
    start = time.monotonic()
    run = rep.Runner(sim)
    try:
        data = rep.EXPERIMENTS[name].measure(run)
    except SystemExit as exc:  # reproduce.py exits on a failed simulation; here it is the task's error
        raise RuntimeError(f"{name}: {exc}") from None
    finally:
        shutil.rmtree(run.tmp, ignore_errors=True)
    return rep.EXPERIMENTS[name].markdown(data), data, run.runs, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_sim = pathlib.Path(os.environ.get("BG_BUILD_DIR", ROOT / "build" / "cmake")) / "sw" / "sim" / "burstgate-sim"
    ap.add_argument("--sim", default=str(default_sim))
    ap.add_argument("--only", default=",".join(reproduce.EXPERIMENTS))
    ap.add_argument("--out")
    ap.add_argument("--plots", metavar="DIR")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--address")
    args = ap.parse_args()
    if not pathlib.Path(args.sim).is_file():
        sys.exit(f"reproduce: {args.sim} does not exist; build it with `make cpp` or pass --sim")
    names = args.only.split(",")
    for name in names:
        if name not in reproduce.EXPERIMENTS:
            sys.exit(f"reproduce: unknown experiment '{name}' (one of {', '.join(reproduce.EXPERIMENTS)})")
    # Longest first, by the last run's times on this checkout (build/reproduce-times.json): the
    # longest experiment started last would run alone at the end. The order never changes the output.
    times_file = ROOT / "build" / "reproduce-times.json"
    try:
        last = json.loads(times_file.read_text())
    except (OSError, ValueError):
        last = {}
    last = last if isinstance(last, dict) else {}
    prio = [float(last[n]) if isinstance(last.get(n), (int, float)) else 0.0 for n in names]
    results, info = run_tasks(experiment_task, [(n, str(pathlib.Path(args.sim).resolve()), str(ROOT / "scripts"))
                                                for n in names],
                              address=args.address, workers=args.workers, progress=True, priorities=prio)
    last.update({n: round(r[3], 2) for n, r in zip(names, results) if not isinstance(r, Failure)})
    times_file.parent.mkdir(parents=True, exist_ok=True)
    times_file.write_text(json.dumps(last, indent=1, sort_keys=True) + "\n")
    plots = None
    if args.plots:
        from burstgate.tools import repro_plots as plots
        plot_dir = pathlib.Path(args.plots)
        plot_dir.mkdir(parents=True, exist_ok=True)
    lines, failed, runs = [], [], 0
    for name, res in zip(names, results):
        if isinstance(res, Failure):
            failed.append((name, res.error))
            continue
        md, data, n, secs = res
        lines += md
        runs += n
        print(f"reproduce: {name} done ({n} simulations, {secs:.0f} s on its worker)", file=sys.stderr)
        if plots and reproduce.EXPERIMENTS[name].plot:
            path = getattr(plots, reproduce.EXPERIMENTS[name].plot)(data, plot_dir / f"{name}.png")
            print(f"reproduce: wrote {path}", file=sys.stderr)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(f"reproduce: {runs} simulations in {len(names)} tasks on {info['workers'] or 'no'} worker(s), "
          f"{info['tasks_s']:.0f} s", file=sys.stderr)
    for name, err in failed:
        print(f"reproduce: experiment {name} failed: {err}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
