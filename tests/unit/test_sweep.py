"""`burstgate sweep` (rtl/burstgate/tools/sweep.py) on a real Dask cluster of two worker processes:
its table is the serial runs' byte for byte, a failing grid point is reported with its parameters
(and its row kept), and spec errors are located (file:line: key) with exit 2."""

import csv
import pathlib
import textwrap

import pytest

from burstgate.command import main
from burstgate.tools import sweep
from burstgate.tools.engine import run_tasks

from ..conftest import BUILD, ROOT, run_burstgate

EXAMPLE = ROOT / "scenarios" / "example.yaml"


def write_spec(tmp_path, body):
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(body).replace("EXAMPLE", str(EXAMPLE)))
    return spec


SPEC = """\
    scenario: EXAMPLE
    set: {duration_ms: 60, warmup_ms: 10, tenants.bursty.workload.start_ms: 20}
    grid:
      tenants.bursty.workload.iodepth: [4, 64]
    seeds: [1, 2]
    schedulers: [bios, wild]
    plot: {metric: lat_us.p99, x: tenants.bursty.workload.iodepth, tenant: victim}
"""


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_cluster_table_equals_serial_runs(tmp_path):
    """Catches: rows gathered in completion order (a worker count changes the table), a task's
    parameters attached to another task's result, a seed or scheduler not passed to the run."""
    spec = write_spec(tmp_path, SPEC)
    res = run_burstgate("sweep", spec, "--workers", "2", "--out", tmp_path / "cluster.csv",
                        "--plots", tmp_path / "plots", timeout=240)
    assert res.returncode == 0, res.stderr
    # The serial reference: the same spec, each task run in this process, one after another.
    s = sweep.Spec(spec)
    tasks = s.tasks()
    results = [sweep.sweep_task(sc, engine, sched, seed) for _, sc, engine, sched, seed in tasks]
    header, table = sweep.table(s, tasks, results)
    serial = sweep.csv_text(header, table)
    assert (tmp_path / "cluster.csv").read_text() == serial
    got = rows(tmp_path / "cluster.csv")
    assert len(got) == 8 * 3 and {r["status"] for r in got} == {"ok"}
    victim = {(r["tenants.bursty.workload.iodepth"], r["seed"], r["scheduler"]): r["lat_us.p99"]
              for r in got if r["tenant"] == "victim"}
    assert victim[("4", "1", "bios")] != victim[("64", "1", "bios")]   # the grid value reached the run
    assert victim[("64", "1", "bios")] != victim[("64", "2", "bios")]   # so did the seed
    assert list((tmp_path / "plots").glob("*.png"))


def test_local_cluster_has_two_worker_processes():
    """Catches: an 'embedded cluster' that is one process (or threads) in disguise."""
    results, info = run_tasks(_pid, [()] * 6, workers=2, progress=False)
    assert info["workers"] == 2
    import os
    assert os.getpid() not in results


def _pid():
    import os
    return os.getpid()


def test_failing_task_is_reported_with_its_parameters(tmp_path):
    """Catches: a failed task dropped from the table, or reported without which grid point it was."""
    spec = write_spec(tmp_path, """\
        scenario: EXAMPLE
        set: {duration_ms: 30, warmup_ms: 5}
        grid:
          dpu.threads: [2, 99]
        schedulers: [bios]
    """)
    res = run_burstgate("sweep", spec, "--workers", "2", "--out", tmp_path / "t.csv", timeout=240)
    assert res.returncode == 1
    assert "task failed (dpu.threads=99, seed=7, scheduler=bios, engine=model)" in res.stderr
    assert "threads" in res.stderr.split("dpu.threads=99", 1)[1]          # the simulator's own message
    got = rows(tmp_path / "t.csv")
    failed = [r for r in got if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["dpu.threads"] == "99" and "exit 2" in failed[0]["error"]
    assert {r["tenant"] for r in got if r["dpu.threads"] == "2"} == {"victim", "bursty", "steady"}


@pytest.mark.parametrize("body, message", [
    ("scenario: EXAMPLE\ngrids: {}\n", "spec.yaml:2: grids: unknown key"),
    ("scenario: EXAMPLE\ngrid:\n  tenants.nobody.workload.iodepth: [1]\n",
     "spec.yaml:3: grid.tenants.nobody.workload.iodepth: tenants has no element named 'nobody'"),
    ("scenario: EXAMPLE\nschedulers: [bios, fair]\n", "spec.yaml:2: schedulers[1]: unknown 'fair'"),
    ("scenario: EXAMPLE\nseeds: [1, -3]\n", "spec.yaml:2: seeds[1]: expected a seed"),
    ("scenario: EXAMPLE\ngrid: {dpu.threads: 2}\n", "spec.yaml:2: grid.dpu.threads: expected a non-empty list"),
    ("scenario: EXAMPLE\ngrid: [\n", "spec.yaml:3: not YAML"),
])
def test_spec_errors_are_located(tmp_path, capsys, body, message):
    """Catches: a spec mistake that becomes a traceback, or a message without file and line.
    (In process, through the command's own main: the checks run before any task.)"""
    spec = write_spec(tmp_path, body)
    assert main(["sweep", str(spec), "--workers", "0"]) == 2
    assert message in capsys.readouterr().err


def test_reproduce_through_the_engine_prints_what_reproduce_prints(tmp_path):
    """`make reproduce` (scripts/reproduce_sweep.py, one experiment per task on two workers) against
    scripts/reproduce.py itself on two quick experiments. Catches: experiments' tables put together
    in completion order, a record lost or mixed up between tasks, plots not drawn from the records."""
    import subprocess
    import sys
    sim = BUILD / "sw" / "sim" / "burstgate-sim"
    serial = subprocess.run([sys.executable, ROOT / "scripts" / "reproduce.py", "--sim", sim, "--only", "alpha,table3"],
                            capture_output=True, text=True, timeout=300)
    assert serial.returncode == 0, serial.stderr
    farm = subprocess.run([sys.executable, ROOT / "scripts" / "reproduce_sweep.py", "--sim", sim, "--only",
                           "alpha,table3", "--workers", "2", "--plots", tmp_path], capture_output=True, text=True,
                          timeout=300)
    assert farm.returncode == 0, farm.stderr
    assert farm.stdout == serial.stdout and "| " in serial.stdout
    assert "on 2 worker(s)" in farm.stderr
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["alpha.png", "table3.png"]
