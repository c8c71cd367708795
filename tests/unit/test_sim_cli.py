"""burstgate-sim: the normative example runs and reports contract 4's fields, reruns give the
same bytes, --scheduler overrides the file, and every kind of bad scenario or option gets exit
code 2 and one line naming file:line and the field path."""

import json
import os
import pathlib
import subprocess

import pytest

from ..conftest import run_burstgate

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "sim" / "burstgate-sim"
EXAMPLE = ROOT / "scenarios" / "example.yaml"


def run(*args, timeout=120):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=timeout, check=False)


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
    ("  hot_threshold_iops: 2000 #", "  monitor_unit: volume\n  hot_threshold_iops: 2000 #",
     "dualbucket.monitor_unit: unknown value 'volume'"),
    # R in bytes means nothing while the monitor counts requests: refused, not ignored.
    ("  hot_threshold_iops: 2000 #", "  hot_threshold_bps: 8192000\n  hot_threshold_iops: 2000 #",
     "dualbucket.hot_threshold_bps: applies to monitor_unit: bytes only"),
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


def test_a_folder_given_as_the_scenario_is_named_as_such(tmp_path):
    result = run(tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"burstgate-sim: {tmp_path}: is a folder, not a scenario file"


def test_a_key_given_twice_is_refused_with_its_line(tmp_path):
    """yaml-cpp keeps the first of two equal keys: the second value used to be ignored in silence."""
    text = EXAMPLE.read_text()
    old = "      iodepth: 64\n"
    line = text[:text.index(old)].count("\n") + 2
    path = tmp_path / "twice.yaml"
    path.write_text(text.replace(old, old + "      iodepth: 8\n", 1))
    result = run(path, "--quiet")
    assert result.returncode == 2
    assert result.stderr.startswith(f"burstgate-sim: {path}:{line}: tenants[1].workload.iodepth: key given twice"), \
        result.stderr


def test_an_offered_load_far_above_capacity_stops_in_bounded_memory(tmp_path):
    """rate_iops: 1e9 used to run 21 s to a std::bad_alloc at 3.5 GB (exit 1); now the backlog
    limit stops it with exit 2 naming the tenant, inside a 2 GB address space."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    path = tmp_path / "flood.yaml"
    path.write_text(EXAMPLE.read_text().replace("rate_iops: 8000", "rate_iops: 1e9", 1))
    result = subprocess.run([str(CLI), str(path), "--quiet"], capture_output=True, text=True, timeout=120,
                            preexec_fn=limit, check=False)
    assert result.returncode == 2, result.stderr
    assert "tenants[2] (steady): more than 4194304 I/Os waiting or in flight" in result.stderr, result.stderr


def test_an_unwritable_out_fails_before_the_run(tmp_path):
    """--out used to be opened after the whole simulation; now a bad path costs nothing."""
    scenario = tmp_path / "long.yaml"
    scenario.write_text(EXAMPLE.read_text().replace("duration_ms: 1000 ", "duration_ms: 600000 ", 1))
    result = run(scenario, "--out", tmp_path / "no" / "such" / "dir" / "r.json", timeout=20)
    assert result.returncode == 2
    assert "--out: cannot write" in result.stderr


def burstgate(*args):
    return run_burstgate(*args, timeout=120)


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


def test_plot_and_compare_refuse_bad_input_with_a_located_message(short_example, tmp_path):
    """Each case used to end in a traceback or to drop data in silence."""
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"scenario": "caf\xe9"}')
    bios = tmp_path / "bios.json"
    assert run(short_example, "--quiet", "--out", bios).returncode == 0
    other = json.loads(bios.read_text())
    other["scenario"] = "another"
    other_path = tmp_path / "other.json"
    other_path.write_text(json.dumps(other))
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    cases = [
        (["plot", latin1, "--out", tmp_path / "o1"], f"{latin1}: not UTF-8 text"),
        (["compare", latin1], f"{latin1}: not UTF-8 text"),
        (["plot", bios, "--out", a_file], f"--out {a_file}: exists and is not a folder"),
        (["plot", bios, other_path, "--out", tmp_path / "o2"], "scenario 'another'"),
        (["plot", bios, "--csv", latin1, "--out", tmp_path / "o3"], f"{latin1}: not UTF-8 text"),
    ]
    for args, message in cases:
        result = burstgate(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr and message in result.stderr, (args, result.stderr)


def test_plot_rejects_a_file_that_is_not_a_report(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tenants": []}')
    result = burstgate("plot", bad, "--out", tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"burstgate plot: {bad}: not a burstgate-sim report (no 'scenario')"


@pytest.mark.parametrize("scheduler", ["bios", "wild", "base", "dualbucket"])
def test_verilator_engine_gives_the_model_report(tmp_path, scheduler):
    """docs/design.md contract 3: the same scenario through the Verilated kernel and through the
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
