"""burstgate-sim: the normative example runs and reports contract 4's fields, reruns give the
same bytes, --scheduler overrides the file, and every kind of bad scenario or option gets exit
code 2 and one line naming file:line and the field path."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "sim" / "burstgate-sim"
EXAMPLE = ROOT.parent / "shared" / "examples" / "scenario.yaml"


def run(*args):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def short_example(tmp_path_factory):
    """The example, shortened to 300 ms so the module stays fast; every other key as shipped."""
    text = EXAMPLE.read_text().replace("duration_ms: 1000", "duration_ms: 300")
    path = tmp_path_factory.mktemp("sim") / "scenario.yaml"
    path.write_text(text)
    return path


def test_example_report_has_contract_fields(tmp_path):
    out, csv = tmp_path / "r.json", tmp_path / "s.csv"
    result = run(EXAMPLE, "--out", out, "--csv", csv, "--quiet")
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["scenario"] == "bps-burst-neighbor"
    assert report["engine"] == "model" and report["scheduler"] == "bios"
    assert [t["name"] for t in report["tenants"]] == ["victim", "bursty", "steady"]
    for t in report["tenants"]:
        assert set(t["lat_us"]) >= {"avg", "p50", "p99", "p999", "p9999", "p99999"}
        lat = t["lat_us"]
        assert 0 < lat["p50"] <= lat["p99"] <= lat["p999"] <= lat["p9999"] <= lat["p99999"] <= lat["max"]
        assert t["iops"] > 0 and t["mbps"] > 0 and t["throttled"] >= 0
    assert set(report["utilization"]) == {"cpu", "ingress", "egress", "swlimit"}
    assert all(0 <= v <= 1.05 for v in report["utilization"].values())
    assert report["ios"]["bad_completions"] == 0
    # The open-loop steady tenant asks 8000 IOPS and gets them (its base is 10000).
    steady = report["tenants"][2]
    assert abs(steady["iops"] - 8000) < 400
    # One CSV row per window and tenant.
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("window,t_ms,tenant,iops")
    assert len(lines) == 1 + report["windows"] * 3


def test_same_seed_same_bytes_and_seed_override(short_example, tmp_path):
    a, b, c = (tmp_path / f"{n}.json" for n in "abc")
    for out, extra in ((a, []), (b, []), (c, ["--seed", "99"])):
        result = run(short_example, "--out", out, "--quiet", *extra)
        assert result.returncode == 0, result.stderr
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    assert json.loads(c.read_text())["seed"] == 99


def test_scheduler_option_overrides_the_file(short_example):
    result = run(short_example, "--scheduler", "wild", "--quiet")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["scheduler"] == "wild"


BROKEN = [
    # (replace this, with that, expected "LINE: path: message" start)
    ("  threads: 2 ", "  threads: two ", "dpu.threads: expected a number, got 'two'"),
    ("      iodepth: 64", "      io_depth: 64", "tenants[1].workload.io_depth: unknown key"),
    ("      rate_iops: 8000", "      rate_iops: -8000", "tenants[2].workload.rate_iops: must not be negative"),
    ("      start_ms: 200", "      start_ms: 2000", "tenants[1].workload.stop_ms: stop before start"),
    ("{4k: 0.5, 8k: 0.5}", "{4k: 0.5, 8k: 0.4}", "tenants[2].workload.sizes: shares sum to 0.9"),
    ("{4k: 0.5, 8k: 0.5}", "{4k: 0.5, 8x: 0.5}", "tenants[2].workload.sizes.8x: bad size"),
    ("scheduler: bios ", "scheduler: fifo ", "scheduler: unknown scheduler 'fifo'"),
    ("    product: B ", "    product: Q ", "tenants[0].product: unknown product class 'Q'"),
    ("  reserved_share: 0.05", "  reserved_share: 1.5", "dpu.reserved_share: must be in 0..1"),
    ("    burst_mode: credit ", "    burst_mode: free ", "tenants[2].burst_mode: unknown value 'free'"),
]


@pytest.mark.parametrize("old,new,message", BROKEN, ids=[b[2].split(":")[0] for b in BROKEN])
def test_broken_scenario_exits_2_with_field_path(tmp_path, old, new, message):
    text = EXAMPLE.read_text()
    assert old in text, old
    broken = text.replace(old, new, 1)
    line = text[:text.index(old)].count("\n") + 1
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    result = run(path, "--quiet")
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1, err
    if "stop before start" in message:  # reported on the tenant's stop_ms line, not the edit's
        line = text[:text.index("      stop_ms: 1000", text.index(old))].count("\n") + 1
    assert err.startswith(f"burstgate-sim: {path}:{line}: {message}"), err


@pytest.mark.parametrize("args,message", [
    (["--scheduler", "fair"], "--scheduler: unknown scheduler 'fair'"),
    (["--engine", "fpga"], "--engine: unknown engine 'fpga'"),
    (["--seed", "-1"], "--seed: expected an integer"),
    (["--bogus"], "--bogus: unknown option"),
])
def test_bad_options_exit_2(args, message):
    result = run(EXAMPLE, *args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"burstgate-sim: {message}"), result.stderr


def test_missing_file_exits_2(tmp_path):
    result = run(tmp_path / "nope.yaml")
    assert result.returncode == 2
    assert "nope.yaml: cannot open" in result.stderr


def burstgate(*args):
    """The `burstgate` host-tool command (sw/py/burstgate) with this interpreter."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "sw" / "py"))
    return subprocess.run([sys.executable, "-m", "burstgate_tools", *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False, env=env)


def test_plot_writes_cdf_and_series_pngs(short_example, tmp_path):
    reports = []
    for sched in ("wild", "bios"):
        out = tmp_path / f"{sched}.json"
        result = run(short_example, "--scheduler", sched, "--out", out, "--csv", tmp_path / f"{sched}.csv", "--quiet")
        assert result.returncode == 0, result.stderr
        reports.append(out)
    result = burstgate("plot", *reports, "--csv", tmp_path / "bios.csv", "--out", tmp_path / "png")
    assert result.returncode == 0, result.stderr
    written = [pathlib.Path(p) for p in result.stdout.split()]
    assert [p.name for p in written] == ["bps-burst-neighbor-cdf.png", "bios-series.png"]
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10000
    result = burstgate("compare", *reports)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("wild") and result.stdout.splitlines()[2].startswith("bios")


def test_plot_rejects_a_file_that_is_not_a_report(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tenants": []}')
    result = burstgate("plot", bad, "--out", tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"burstgate plot: {bad}: not a burstgate-sim report (no 'scenario')"


@pytest.mark.parametrize("scheduler", ["bios", "wild", "base", "dualbucket"])
def test_verilator_engine_gives_the_model_report(tmp_path, scheduler):
    """DESIGN.md contract 3: the same scenario through the Verilated kernel and through the
    model gives byte-identical reports (but for the engine's name) and time series."""
    text = (EXAMPLE.read_text().replace("duration_ms: 1000", "duration_ms: 40")
            .replace("warmup_ms: 100", "warmup_ms: 5").replace("start_ms: 200", "start_ms: 15"))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text)
    outs = {}
    for engine in ("model", "verilator"):
        out, csv = tmp_path / f"{engine}.json", tmp_path / f"{engine}.csv"
        result = run(scenario, "--engine", engine, "--scheduler", scheduler, "--out", out, "--csv", csv, "--quiet")
        assert result.returncode == 0, result.stderr
        outs[engine] = (json.loads(out.read_text()), csv.read_bytes())
    (model, model_csv), (verilator, verilator_csv) = outs["model"], outs["verilator"]
    assert verilator.pop("engine") == "verilator" and model.pop("engine") == "model"
    assert model == verilator
    assert model_csv == verilator_csv
    assert model["ios"]["bad_completions"] == 0
