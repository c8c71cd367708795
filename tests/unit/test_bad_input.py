"""The bad-input sweep: malformed inputs to every `burstgate` subcommand (tests/unit/bad_inputs.py).

Each case runs the real program (the C++ programs of the build, the Python subcommands as
`python -m burstgate`) in a fresh folder under a 2 GiB address-space limit and a timeout. Bad
input must end in exit 2 with one first line on stderr that names the file and line (or the
option) and the field; never a traceback, an uncaught C++ exception ("terminate called"), a
signal, a timeout, or an exit 0 that did not do what was asked. Valid edge inputs must succeed
within the same limits.

Catches, for instance: a scenario key whose reader lets NaN or a wrong type through, a duplicate
YAML key taken silently, a YAML alias tree walked exponentially, a trace line read whole however
long it is, an output path checked only after the run, a Python tool that raises on a malformed
report instead of naming it.

    make test runs it (about a minute); `pytest -m long tests/unit/test_bad_input.py` adds the
    randomized byte-wise mutations (BAD_INPUT_MUTATIONS cases, default 3000, seed RANDOM_SEED).
"""

import collections
import concurrent.futures
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile

import pytest

from burstgate import command

from ..conftest import BUILD, ROOT
from . import bad_inputs

MEMORY_LIMIT = 2 << 30
CRASH = re.compile(r"Traceback|terminate called|Sanitizer|Segmentation fault|core dumped|std::bad_alloc|MemoryError")
CASES = bad_inputs.all_cases()


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _command(prog, argv):
    if prog in bad_inputs.C_PROGRAMS:
        return [str(BUILD.resolve() / bad_inputs.C_PROGRAMS[prog]), *argv]
    return [sys.executable, "-m", "burstgate", *argv]


def _write(folder, files, dirs=()):
    for name in dirs:
        (folder / name).mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)


def run(prog, argv, files, dirs=(), timeout=30, check=None):
    """(exit status or "timeout", stderr with the folder written {d}, a failed check's message)."""
    with tempfile.TemporaryDirectory(prefix="bg-bad-") as tmp:
        folder = pathlib.Path(tmp)
        _write(folder, files, dirs)
        args = [a.replace("{d}", tmp) for a in argv]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "rtl"), os.environ.get("PYTHONPATH")])),
                   MPLBACKEND="Agg")
        try:
            res = subprocess.run(_command(prog, args), capture_output=True, timeout=timeout, cwd=tmp, env=env,
                                 preexec_fn=_limit_memory, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return "timeout", "", None
        err = res.stderr.decode("utf-8", "replace").replace(tmp, "{d}")
        problem = None
        if res.returncode == 0 and check is not None:
            try:
                check(folder)
            except Exception as exc:  # noqa: BLE001 -- any failure of the check is the finding
                problem = f"{type(exc).__name__}: {exc}"
        return res.returncode, err, problem


@pytest.fixture(scope="module")
def results(request):
    """The selected cases (`-k` selects), run two at a time (the C++ programs start in
    milliseconds, Python in about half a second)."""
    # This module's items only: another module may name a parameter "case" too.
    chosen = {item.callspec.params["case"].id for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec") and "case" in item.callspec.params}

    def one(case):
        return case.id, run(case.sub if case.sub in bad_inputs.C_PROGRAMS else "py", case.argv, case.files,
                            case.dirs, case.timeout, case.check)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, [c for c in CASES if c.id in chosen]))


def verdict(case, outcome):
    """None when the case ended as it must, else what went wrong."""
    rc, err, problem = outcome
    first = err.strip().splitlines()[0] if err.strip() else ""
    if rc == "timeout":
        return f"timed out after {case.timeout} s"
    if CRASH.search(err):
        return f"crashed (exit {rc}): {err.strip()[-600:]}"
    if rc < 0:
        return f"killed by signal {-rc}: {err.strip()[-300:]}"
    if case.expect == "ok":
        if rc != 0:
            return f"valid input refused (exit {rc}): {err.strip()[-400:]}"
        return problem
    if rc != 2:
        return f"exit {rc}, not 2: {first or '(no message)'}"
    if not re.search(case.where, first):
        return f"first line {first!r} does not match {case.where!r}"
    return None


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case, results):
    problem = verdict(case, results[case.id])
    assert problem is None, problem


def test_every_subcommand_is_swept():
    """At least 400 cases, and cases for every subcommand `burstgate --help` lists."""
    assert len(CASES) >= 400, len(CASES)
    by = collections.Counter(c.sub for c in CASES)
    by[bad_inputs.HOST] += by.pop("replay", 0)
    names = {bad_inputs.SIM: "sim", bad_inputs.HOST: "trace2iolog", bad_inputs.GATEWAY: "gateway",
             bad_inputs.COST: "cost", bad_inputs.LSM: "lsm"}
    covered = {names.get(k, k) for k in by} | {"replay"}
    missing = [sc.name for sc in command.SUBCOMMANDS if sc.name not in covered]
    assert not missing, missing
    assert sum(1 for c in CASES if c.expect == "ok") >= 20


@pytest.mark.long
def test_randomized_mutations():
    """Valid inputs mutated byte-wise: every run ends in 0 or 2, never a crash or a timeout."""
    seed = int(os.environ.get("RANDOM_SEED", "1"))
    count = int(os.environ.get("BAD_INPUT_MUTATIONS", "3000"))
    muts = bad_inputs.mutations(seed, count)

    def one(m):
        mid, prog, argv, data = m
        return mid, data, run(prog, argv, {"f": data}, timeout=30)

    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for mid, data, (rc, err, _) in pool.map(one, muts):
            if rc == "timeout" or CRASH.search(err) or rc not in (0, 2) or (rc == 2 and not err.strip()):
                failures.append(f"{mid} (seed {seed}): exit {rc}: {err.strip()[-300:]!r}; input {data[:200]!r}")
    assert not failures, f"{len(failures)} of {count}:\n" + "\n".join(failures[:20])
