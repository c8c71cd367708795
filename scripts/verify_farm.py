#!/usr/bin/env python3
"""`make verify-farm` and `make test-long`'s randomized checks: every case a Dask task's work.

Three suites, each a list of cases named by one number that alone reproduces the case:

* ``--contracts CASES``: issue 18's contract properties (tests/unit/test_contract_properties.py's
  ``check_case(draw_case(i))``; case i draws its scenario from random.Random(i)); batches of
  ``--batch`` cases per task, each case checked (and failing) on its own.
* ``--agent SEEDS``: the model agent's window-loop property (tests/unit/test_agent_properties.py)
  under hypothesis, ``--examples`` examples per seed, one seed per task.
* ``--core SEEDS``: the core's differential testbench (tests/cocotb/core, bg_core on Verilator
  against bg::Agent), each seed × each source/sink pattern of its TESTS one task of
  ``--events`` events. Each worker builds the Verilated core once in its own folder
  (build/farm/<worker>/cocotb/core, seeded with a copy of build/cocotb/core when that exists)
  because the cocotb build folder holds a run's results file and cannot be shared by two runs.

The checks are the tests' own functions, imported from the test modules on the worker (nothing is
copied here), so a case fails here exactly when it fails in pytest. With no suite option all
three run at `make test-long`'s sizes. On the embedded cluster (``--workers N``, default one per
core; 0: in this process, one case after another) or on a cluster (``--address``, whose workers
need this checkout at the same path: docs/distributed.md). The longest tasks are submitted first.

Output: ``suite,case,status,seconds,error`` per case on stdout, in case order; on stderr each
failed case with its parameters and the command that re-runs it alone; exit 1 if any failed.

    scripts/verify_farm.py [--contracts 300-2299] [--agent 0-39] [--core 1-4] [--events 300000]
                           [--examples 100] [--batch 10] [--workers N | --address tcp://HOST:8786]
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl"))

from burstgate.tools.engine import Failure, run_tasks  # noqa: E402

SUITES = ("contracts", "agent", "core")


def long_sizes():
    """`make test-long`'s sizes, from the test modules that define them (one place)."""
    contracts = _import_suite("tests.unit.test_contract_properties", str(ROOT))
    agent = _import_suite("tests.unit.test_agent_properties", str(ROOT))
    core = _import_suite("test_core", str(ROOT / "tests" / "cocotb" / "core"))
    return ({"contracts": list(range(contracts.CASES, contracts.CASES + contracts.LONG_CASES)),
             "agent": list(range(agent.LONG_SEEDS)),
             "core": list(range(core.LONG_SEEDS[0], core.LONG_SEEDS[1] + 1))},
            core.LONG_EVENTS, agent.LONG_EXAMPLES)


def _short(text, limit=600):
    """One line of at most ``limit`` characters (an assertion's message can hold a whole report)."""
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def _error(exc):
    return _short(f"{type(exc).__name__}: {exc}")


def _import_suite(module, root):
    if root not in sys.path:
        sys.path.insert(0, root)
    import importlib
    return importlib.import_module(module)


def contracts_task(cases, root):
    """A batch of contract cases on a worker: [(case, error or None, seconds, parameters)]."""
    mod = _import_suite("tests.unit.test_contract_properties", root)
    out = []
    for i in cases:
        start = time.monotonic()
        case = mod.draw_case(i)
        params = (f"{case['scheduler']}, {case['window_us']} us windows, {len(case['tenants'])} tenants, "
                  f"{case['duration_ms']} ms")
        error = None
        with tempfile.TemporaryDirectory(prefix="bg-farm-") as tmp:
            try:
                mod.check_case(case, pathlib.Path(tmp))
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - AssertionError, or pytest.fail's outcome
                error = _error(exc)
        out.append((i, error, time.monotonic() - start, params))
    return out


def agent_task(seeds, examples, root):
    """Hypothesis seeds of the agent property on a worker: [(seed, error or None, seconds, parameters)].
    Each seed runs in its own Python process: hypothesis counts any use of the global ``random``
    during a draw as the strategy's, and a Dask worker's own threads use it meanwhile."""
    out = []
    for s in seeds:
        start = time.monotonic()
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from tests.unit import test_agent_properties as m; "
                "m.run_seeded(int(sys.argv[2]), int(sys.argv[3]))")
        res = subprocess.run([sys.executable, "-c", code, root, str(s), str(examples)], cwd=root,
                             capture_output=True, text=True)
        error = None
        if res.returncode != 0:
            lines = res.stderr.strip().splitlines()
            example = [ln.strip() for ln in lines if ln.startswith(("Falsifying example", "    ", "  "))
                       and not ln.lstrip().startswith(("File ", "^", "~"))]
            last = lines[-1] if lines else f"exit {res.returncode}"
            notes = " ".join(ln for ln in example if ln.startswith("Falsifying") or "=" in ln)
            error = f"{last} | {notes}" if notes else last
        out.append((s, _short(error), time.monotonic() - start, f"hypothesis seed {s}, {examples} examples"))
    return out


def core_task(seed, test, events, root):
    """One seed × pattern of the core differential on a worker, in its own process (cocotb and
    Verilator run there): [(seed, error or None, seconds, parameters)]."""
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
    env = dict(os.environ, PYTHONWARNINGS="error", BG_BUILD_DIR=str(farm / "cmake"))  # cocotb dir: its parent / cocotb
    pattern = "^test_core\\." + test + "$"
    code = ("import sys; sys.path.insert(0, 'tests/cocotb/core'); import test_core; "
            f"test_core.run_core(seed={str(seed)!r}, events={int(events)}, test_filter={pattern!r})")
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    error = None
    if res.returncode != 0:
        lines = (res.stdout + res.stderr).strip().splitlines()
        first = next((ln.strip() for ln in lines if "Error" in ln or "ERROR" in ln or "assert" in ln), "")
        error = _short(f"exit {res.returncode} (worker {slot}): {first} / {lines[-1] if lines else ''}")
    return [(seed, error, time.monotonic() - start, f"seed {seed}, {test}, {events} events")]


def case_range(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected numbers like 1-16 or 1,5,9, got {text!r}") from None
        if lo < 0 or hi < lo:
            raise argparse.ArgumentTypeError(f"bad range {part!r}")
        out += range(lo, hi + 1)
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"a number is listed twice in {text!r}")
    return out


def rerun(suite, case, test, args):
    where = f"--{suite} {case}" + (f" --events {args.events}" if suite == "core" else "") + \
        (f" --examples {args.examples}" if suite == "agent" else "")
    cmd = f"scripts/verify_farm.py {where} --workers 0"
    if suite == "core":
        cmd += f" (or `make verify-core SEED={case} EVENTS={args.events}`, all patterns)"
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contracts", type=case_range, metavar="CASES", help="contract property cases, e.g. 300-2299")
    ap.add_argument("--agent", type=case_range, metavar="SEEDS", help="hypothesis seeds of the agent property")
    ap.add_argument("--core", type=case_range, metavar="SEEDS", help="seeds of the core differential")
    ap.add_argument("--events", type=int, help="events per core run (default: make test-long's)")
    ap.add_argument("--examples", type=int, help="hypothesis examples per agent seed (default: make test-long's)")
    ap.add_argument("--batch", type=int, default=10, help="contract cases per task (default 10)")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--address")
    args = ap.parse_args()
    sizes, events, examples = long_sizes()
    args.events = events if args.events is None else args.events
    args.examples = examples if args.examples is None else args.examples
    if args.batch < 1 or args.events < 1 or args.examples < 1:
        ap.error("--batch, --events and --examples must be 1 or more")
    if args.workers is not None and args.address is not None:
        ap.error("--workers: not with --address (the cluster's workers run the tasks)")
    chosen = {s: getattr(args, s) for s in SUITES if getattr(args, s) is not None} or sizes
    root = str(ROOT)
    # Tasks and a guess of their length: the core's runs take minutes, a batch of contract cases
    # seconds. Longest first, so that no long task starts last and holds one worker alone.
    tasks = []   # (suite, func, args, weight, [(case, test)])
    core_tests = _import_suite("test_core", str(ROOT / "tests" / "cocotb" / "core")).TESTS if "core" in chosen else []
    for seed in chosen.get("core", []):
        for test in core_tests:
            tasks.append(("core", core_task, (seed, test, args.events, root), args.events, [(seed, test)]))
    for s in chosen.get("agent", []):
        tasks.append(("agent", agent_task, ([s], args.examples, root), 50 * args.examples, [(s, None)]))
    cases = chosen.get("contracts", [])
    for k in range(0, len(cases), args.batch):
        batch = cases[k:k + args.batch]
        tasks.append(("contracts", contracts_task, (batch, root), 2000 * len(batch), [(i, None) for i in batch]))
    results, info = run_tasks(_dispatch, [(t[1], *t[2]) for t in tasks], address=args.address,
                              workers=args.workers, progress=True, priorities=[t[3] for t in tasks])
    rows, failed = [], []
    for (suite, _, _, _, members), res in zip(tasks, results):
        if isinstance(res, Failure):   # the whole task was lost (a worker died): each of its cases failed
            res = [(case, _short(f"task lost: {res.error}"), None, "") for case, _ in members]
        for (case, error, secs, params), (_, test) in zip(res, members):
            rows.append((suite, case, error, secs, params, test))
    print("suite,case,status,seconds,error")
    for suite, case, error, secs, params, test in sorted(rows, key=lambda r: (SUITES.index(r[0]), r[1], r[5] or "")):
        status = "failed" if error else "ok"
        label = case if test is None else f"{case}:{test}"
        print(f"{suite},{label},{status},{'' if secs is None else f'{secs:.2f}'},{(error or '').replace(',', ';')}")
        if error:
            failed.append((suite, case, error, params, test))
    for suite, case, error, params, test in failed:
        print(f"verify-farm: {suite} case {case} failed ({params}): {error}", file=sys.stderr)
        print(f"verify-farm:   re-run it alone: {rerun(suite, case, test, args)}", file=sys.stderr)
    counts = ", ".join(f"{len(chosen[s]) * (len(core_tests) if s == 'core' else 1)} {s}" for s in chosen)
    print(f"verify-farm: {len(rows) - len(failed)} of {len(rows)} cases passed ({counts}) in {len(tasks)} tasks "
          f"on {info['workers'] or 'no'} worker(s) in {info['tasks_s']:.0f} s (+ {info['startup_s']:.1f} s start-up)",
          file=sys.stderr)
    return 1 if failed else 0


def _dispatch(func, *args):
    return func(*args)


if __name__ == "__main__":
    sys.exit(main())
