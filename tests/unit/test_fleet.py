"""`burstgate gen-trace` and `burstgate fleet` (rtl/burstgate/tools/alibaba_gen.py, fleet.py): the
generator is deterministic and bursty; a fleet replay on a real two-process Dask cluster gives,
for every node and scheduler, the report that burstgate-sim writes for that node's scenario run
alone; the streaming split keeps every record of every device; bad contracts are located."""

import collections
import csv
import json
import subprocess

from burstgate.command import main

from ..conftest import BUILD, run_burstgate

SIM = BUILD / "sw" / "sim" / "burstgate-sim"


def gen(path, *extra):
    """The generator through the command's own main, in process (a subprocess costs seconds here)."""
    assert main(["gen-trace", "--out", str(path), "--devices", "6", "--duration-s", "0.6", "--base-iops", "300",
                 "--burst-every-s", "0.2", "--burst-len-s", "0.05", *extra]) == 0
    return path


def test_generator_is_deterministic_time_ordered_and_bursty(tmp_path):
    """Catches: a generator that depends on hash order or time, that interleaves devices out of
    time order (the simulator replays each file in order), or that is plain Poisson (no bursts)."""
    a, b, c = gen(tmp_path / "a.csv"), gen(tmp_path / "b.csv"), gen(tmp_path / "c.csv", "--seed", "2")
    assert a.read_bytes() == b.read_bytes() and a.read_bytes() != c.read_bytes()
    recs = [line.split(",") for line in a.read_text().splitlines()]
    times = [int(r[4]) for r in recs]
    assert times == sorted(times) and {r[1] for r in recs} == {"R", "W"}
    assert {r[0] for r in recs} == {str(d) for d in range(6)}
    # Burstiness: some 10 ms bins of a device carry several times its mean rate.
    per_bin = collections.Counter((r[0], (int(r[4]) - times[0]) // 10_000) for r in recs)
    busiest = max(per_bin.values())
    mean = len(recs) / 6 / 60
    assert busiest > 4 * mean


def test_fleet_nodes_equal_their_scenarios_run_alone(tmp_path):
    """Catches: a node's report that depends on what else ran on the cluster or on which worker
    ran it, a report attributed to the wrong node or scheduler, a node scenario that is not
    self-contained, and a split that loses or duplicates records."""
    trace = gen(tmp_path / "t.csv")
    out = tmp_path / "fleet"
    res = run_burstgate("fleet", trace, "--format", "alibaba", "--nodes", "2", "--placement", "load",
                        "--schedulers", "bios,wild", "--workers", "2", "--out", out, timeout=240)
    assert res.returncode == 0, res.stderr
    assert "I/Os replayed per second per worker" in res.stdout
    # The split: every record is in its device's file, in order, once.
    by_dev = collections.defaultdict(list)
    for line in trace.read_text().splitlines():
        by_dev[line.split(",")[0]].append(line)
    for dev, lines in by_dev.items():
        assert (out / "devices" / f"{dev}.csv").read_text().splitlines() == lines
    placed = []
    for k in range(2):
        for sched in ("bios", "wild"):
            alone = tmp_path / f"alone{k}-{sched}.json"
            run = subprocess.run([SIM, out / "nodes" / f"node{k}.yaml", "--scheduler", sched, "--out", alone, "--quiet"],
                                 capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, run.stderr
            assert (out / "reports" / f"node{k}-{sched}.json").read_bytes() == alone.read_bytes()
        report = json.loads(alone.read_text())
        assert report["ios"]["finished"] > 0
        placed += [t["name"] for t in report["tenants"]]
    assert sorted(placed) == sorted(f"d{d}" for d in by_dev)
    with open(out / "fleet.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(by_dev) and {r["scheduler"] for r in rows} == {"bios", "wild"}
    assert (out / "fleet.png").is_file()


def test_contracts_file_errors_are_located(tmp_path, capsys):
    """Catches: a contracts file with a missing device or a bad field, or a bad trace record,
    reaching the simulator or ending in a traceback (in process: these checks run before any task)."""
    trace = tmp_path / "t.csv"
    trace.write_text("1,R,0,4096,1000\n2,W,0,4096,2000\n")
    contracts = tmp_path / "c.yaml"
    args = ["fleet", str(trace), "--format", "alibaba", "--nodes", "1", "--workers", "0", "--out", str(tmp_path / "o")]
    contracts.write_text("1: {base: {iops: 100, mbps: 1}}\n2: {base: {iops: fast, mbps: 1}}\n")
    assert main([*args, "--contracts", str(contracts)]) == 2
    assert "c.yaml:2: 2.base: expected {iops: N, mbps: N}" in capsys.readouterr().err
    contracts.write_text("1: {base: {iops: 100, mbps: 1}}\n")
    assert main([*args, "--contracts", str(contracts)]) == 2
    assert "no contract for device(s) 2" in capsys.readouterr().err
    trace.write_text("1,R,0,4096,1000\n2,X,0,4096,2000\n")
    assert main(args) == 2
    assert "t.csv:2: opcode: unknown 'X'" in capsys.readouterr().err


def test_contract_rule_and_placement(tmp_path):
    """The documented rule, on a device whose per-second rates are known: 60 seconds, 50 of them at
    100 I/Os of 4 KiB and 10 at 1,000 (a burst), so P50 = 100 IOPS and P99 = 1,000 IOPS (within the
    histogram's 2 %). Catches: percentiles over records instead of seconds, idle seconds left out,
    base and burst swapped, and a greedy placement that is not largest-first onto the least loaded."""
    from burstgate.tools import fleet
    trace = tmp_path / "t.csv"
    lines = []
    for sec in range(60):
        n = 1000 if sec % 6 == 0 else 100
        lines += [f"7,R,0,4096,{sec * 1_000_000 + i * (1_000_000 // n)}" for i in range(n)]
    lines.append("8,W,0,4096,119000000")   # a second device; the span becomes 120 s, device 7 idle for 60 of them
    trace.write_text("\n".join(lines) + "\n")
    devices, names, first, last = fleet.split_trace(str(trace), "alibaba", tmp_path / "dev")
    c = fleet.derive_contract(devices["7"], {"window_us": 10000})
    # Over 120 s: 60 idle, 50 at 100, 10 at 1,000 -> P50 is in the idle half (0: the 50 IOPS floor).
    assert c["base"]["iops"] == 50.0
    assert 1000 <= c["burst"]["iops"] <= 1020
    assert c["base"]["mbps"] == 1.0
    span = (last - first) / 1e6
    assert 119 <= span <= 120
    weights = {"a": 10.0, "b": 7.0, "c": 4.0, "d": 3.0}
    contracts = {d: {"base": {"iops": w, "mbps": 1}} for d, w in weights.items()}
    placed = fleet.place({d: None for d in weights}, contracts, 2, "base", 1)
    assert placed == {"a": 0, "b": 1, "c": 1, "d": 0}   # LPT: a->0, b->1, c->1 (7<10), d->0 (10<11)
    assert fleet.place({d: None for d in weights}, contracts, 3, "rr", 1) == {"a": 0, "b": 1, "c": 2, "d": 0}
