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


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sweep_and_fleet_on_a_separately_started_cluster(tmp_path):
    """docs/distributed.md's "On many hosts", on loopback: `dask scheduler` and two `dask worker`
    processes started as the steps say (their own working folder, the checkout on PYTHONPATH, no
    shared Python state with the client), then `burstgate sweep/fleet --address`. Catches: a task
    that needs the client's working folder or a relative path, a value that cannot be shipped to
    a separate worker, a table or report that depends on which cluster ran it. Every process
    started here is stopped (its whole process group), whatever happens."""
    import os
    import shutil
    import signal
    import subprocess
    import sys

    from distributed import Client

    dask = shutil.which("dask", path=os.path.dirname(sys.executable))
    assert dask, f"the dask command is not beside {sys.executable}"
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "rtl"), str(BUILD / "python")]),
               BG_BUILD_DIR=str(BUILD))
    cmds = [[dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
    for w in (1, 2):
        cmds.append([dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--host", "127.0.0.1",
                     "--no-dashboard", "--local-directory", str(tmp_path / f"host{w}")])
    procs = []
    try:
        for k, cmd in enumerate(cmds):
            here = tmp_path / (f"host{k}" if k else "scheduler")
            here.mkdir(exist_ok=True)
            with open(here / "log.txt", "w") as log:
                procs.append(subprocess.Popen(cmd, cwd=here, env=env, stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True))
            if k == 0:
                import time
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and "Scheduler at" not in (here / "log.txt").read_text():
                    assert procs[0].poll() is None, (here / "log.txt").read_text()
                    time.sleep(0.2)
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            assert len(client.scheduler_info()["workers"]) == 2

        spec = write_spec(tmp_path, SPEC)
        res = run_burstgate("sweep", spec, "--address", address, "--out", tmp_path / "cluster.csv", timeout=300)
        assert res.returncode == 0, res.stderr
        assert "on 2 worker(s)" in res.stderr
        res = run_burstgate("sweep", spec, "--workers", "0", "--out", tmp_path / "serial.csv", timeout=300)
        assert res.returncode == 0, res.stderr
        assert (tmp_path / "cluster.csv").read_bytes() == (tmp_path / "serial.csv").read_bytes()

        from burstgate.command import main as burstgate_main
        trace = tmp_path / "trace.csv"
        assert burstgate_main(["gen-trace", "--out", str(trace), "--devices", "6", "--duration-s", "0.6",
                               "--base-iops", "300", "--burst-every-s", "0.2", "--burst-len-s", "0.05"]) == 0
        out = tmp_path / "fleet"
        fleet = ["fleet", trace, "--format", "alibaba", "--nodes", "3", "--placement", "base",
                 "--schedulers", "bios,wild", "--out", out]
        res = run_burstgate(*fleet, "--address", address, "--quiet", timeout=300)
        assert res.returncode == 0, res.stderr
        assert "on 2 worker(s)" in res.stdout
        files = ["fleet.csv", "contracts.yaml", *(f"reports/node{k}-{s}.json" for k in range(3) for s in ("bios", "wild"))]
        cluster = {f: (out / f).read_bytes() for f in files}
        res = run_burstgate(*fleet, "--workers", "0", "--quiet", timeout=300)   # the same folder: same paths
        assert res.returncode == 0, res.stderr
        for f in files:
            assert (out / f).read_bytes() == cluster[f], f
    finally:
        # Each command leads its own process group (a worker's nanny and worker process in it).
        def signal_group(p, sig):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        for p in reversed(procs):
            signal_group(p, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            signal_group(p, signal.SIGKILL)   # whatever of the group outlived its leader
            p.wait(timeout=15)


def test_verify_farm_names_each_failing_case(tmp_path):
    """scripts/verify_farm.py (make test-long's property cases as tasks) on two workers, with a
    burstgate-sim that fails contract case 302 only. Catches: a failing case dropped, or blamed on
    another case of its batch (302 and 303 share a task), a failure that stops the rest of its
    batch, a failure without its parameters, and a re-run command that does not reproduce it."""
    import os
    import subprocess
    import sys
    sim = tmp_path / "build" / "sw" / "sim" / "burstgate-sim"
    sim.parent.mkdir(parents=True)
    sim.write_text("#!/bin/sh\nif grep -q '^name: contract-302$' \"$1\"; then echo 'injected failure' >&2; exit 3; fi\n"
                   f"exec {BUILD / 'sw' / 'sim' / 'burstgate-sim'} \"$@\"\n")
    sim.chmod(0o755)
    env = dict(os.environ, BG_BUILD_DIR=str(tmp_path / "build"))
    farm = [sys.executable, str(ROOT / "scripts" / "verify_farm.py")]
    res = subprocess.run([*farm, "--contracts", "300-303", "--batch", "2", "--agent", "5", "--examples", "3",
                          "--workers", "2"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 1, res.stderr
    status = {tuple(r.split(",", 2)[:2]): r.split(",")[2] for r in res.stdout.splitlines()[1:]}
    assert status == {("contracts", "300"): "ok", ("contracts", "301"): "ok", ("contracts", "302"): "failed",
                      ("contracts", "303"): "ok", ("agent", "5"): "ok"}
    row = next(r for r in res.stdout.splitlines() if r.startswith("contracts,302,"))
    assert "case 302" in row and "injected failure" in row
    from .test_contract_properties import draw_case
    case = draw_case(302)
    assert (f"contracts case 302 failed ({case['scheduler']}, {case['window_us']} us windows, "
            f"{len(case['tenants'])} tenants") in res.stderr
    rerun = "scripts/verify_farm.py --contracts 302 --workers 0"
    assert f"re-run it alone: {rerun}" in res.stderr
    alone = subprocess.run([sys.executable, str(ROOT / rerun.split()[0]), *rerun.split()[1:]], capture_output=True,
                           text=True, env=env, timeout=120)
    assert alone.returncode == 1 and "contracts,302,failed" in alone.stdout and "injected failure" in alone.stdout
