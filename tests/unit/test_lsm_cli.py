"""burstgate-lsm's volume figures write what --json asks for, and refuse a path they cannot write
before running. Catches fig3/fig4 exiting 0 with no JSON written (they printed their table only)
and a JSON whose rows disagree with the printed table."""

import json
import subprocess

from ..conftest import BUILD

CLI = BUILD / "sw" / "lsm" / "tools" / "burstgate-lsm"


def run(*args):
    assert CLI.is_file(), f"{CLI} does not exist: build it with `make cpp`"
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def test_fig3_json_holds_the_printed_rows(tmp_path):
    out = tmp_path / "fig3.json"
    result = run("fig3", "--json", out, "--quiet")
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["figure"] == "fig3" and doc["volume"] == "io2" and doc["paid_iops"] == 1000
    assert doc["columns"] == ["second", "submit_per_s", "done", "slow", "avg_us", "max_us"]
    printed = [line.split() for line in result.stdout.splitlines() if line.split() and line.split()[0].isdigit()]
    assert len(doc["rows"]) == len(printed) == 17
    for row, text in zip(doc["rows"], printed):
        assert [round(v, 1) for v in row] == [float(x) for x in text]
    # The paper's pattern: second 5 submits 2.0 x paid IOPS and completes at most the bucket's worth.
    assert doc["rows"][4][1] == 2000 and doc["rows"][4][2] < 2000


def test_json_to_an_unwritable_path_fails_before_the_run(tmp_path):
    for fig in ("fig3", "fig4"):
        result = run(fig, "--json", tmp_path / "no" / "such" / "f.json", "--quiet")
        assert result.returncode == 2, result.stderr
        assert "--json: cannot write" in result.stderr


def test_l1_size_reaches_the_tree_and_a_too_small_one_is_refused(tmp_path):
    """`--l1-mib` sets L1's target (docs/results.md, Fig. 18: the tree-shape check). Catches the flag
    parsed but not applied (the two runs would be identical) and a too-small L1 accepted or crashing."""
    bad = run("run", "--l1-mib", 4, "--keys", 20000, "--duration", 3, "--warmup", 1, "--quiet")
    assert bad.returncode == 2 and "l1 >= sst" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    reports = []
    for mib in (8, 64):
        out = tmp_path / f"l1_{mib}.json"
        res = run("run", "--l1-mib", mib, "--keys", 200000, "--duration", 6, "--warmup", 1, "--json", out, "--quiet")
        assert res.returncode == 0, res.stderr
        reports.append(json.loads(out.read_text())["runs"][0])
    assert reports[0]["hit_ratio"] != reports[1]["hit_ratio"] or reports[0]["lat_us"] != reports[1]["lat_us"]
