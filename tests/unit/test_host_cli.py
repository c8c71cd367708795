"""burstgate-host: `replay` runs a real trace through burstgate-sim's engine and reports exactly
the trace's I/Os (count and bytes, from the shared CloudPhysics trace); `trace2iolog` writes fio
iolog v3 files that parse back to the source records; every malformed trace line, tenants file
or option gets exit code 2 and a message naming FILE:LINE (or the field path)."""

import gzip
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
CLI = BUILD / "sw" / "tools" / "burstgate-host"
TRACE = ROOT / "tests" / "data" / "cloudphysics-excerpt.csv"

# One trace tenant beside a small open-loop neighbour; the DPU of scenarios/cloudphysics_replay.yaml.
TENANTS = """\
name: host-cli-test
seed: 3
duration_ms: {duration}
warmup_ms: 0
scheduler: bios
window_us: 1000
dpu:
  threads: 2
  cpu_ns:
    A: {{read: {{base: 2200, per_kib: 40}}, write: {{base: 1800, per_kib: 35}}}}
    B: {{read: {{base: 3000, per_kib: 55}}, write: {{base: 2500, per_kib: 45}}}}
  backend_us: {{dist: lognormal, median: 30, p99: 120}}
tenants:
  - name: vdisk
    product: B
    base:  {{iops: 20000, mbps: 800}}
    burst: {{iops: 60000, mbps: 2000}}
    workload:
      mode: trace
      trace: {{device: "0", time_scale: {scale}}}
      read_share: 0.41
      segments: 16
      stop_ms: {stop}
  - name: neighbour
    product: A
    base:  {{iops: 20000, mbps: 200}}
    workload: {{mode: open, rate_iops: 5000, sizes: {{4k: 1.0}}, read_share: 0.5}}
"""


def run(*args):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def cloudphysics_rows():
    lines = TRACE.read_text().splitlines()
    assert lines[0] == "version,time,op,size,lbn"
    return [line.split(",") for line in lines[1:]]


def tenants_file(tmp_path, duration=100, stop=80, scale=0.0005):
    path = tmp_path / "tenants.yaml"
    path.write_text(TENANTS.format(duration=duration, stop=stop, scale=scale))
    return path


def test_replay_reports_exactly_the_traces_ios(tmp_path):
    """Arrivals at (t - t0) * time_scale before stop_ms: the report's vdisk generated and
    completed exactly those records, and moved exactly their bytes (the run's last 20 ms have
    no arrivals, so every I/O finishes)."""
    rows = cloudphysics_rows()
    t0 = int(rows[0][1])
    scale, stop_ms, duration_ms = 0.0005, 80, 100
    chosen = [r for r in rows if (int(r[1]) - t0) * scale * 1e3 < stop_ms]
    assert 0 < len(chosen) < len(rows)
    out = tmp_path / "r.json"
    result = run("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", tenants_file(tmp_path),
                 "--out", out, "--quiet")
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["engine"] == "model" and report["scheduler"] == "bios"
    vdisk = report["tenants"][0]
    assert vdisk["name"] == "vdisk"
    assert vdisk["generated"] == len(chosen)
    assert vdisk["completed"] == vdisk["finished"] == len(chosen)
    nbytes = sum(int(r[3]) for r in chosen)
    assert vdisk["mbps"] == pytest.approx(nbytes / (duration_ms / 1e3) / 1e6, abs=0.01)
    assert report["ios"]["bad_completions"] == 0
    # Same inputs, same bytes; --scheduler and --duration-ms take effect.
    again = run("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", tenants_file(tmp_path), "--quiet")
    assert again.returncode == 0 and again.stdout == out.read_text()
    wild = run("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", tenants_file(tmp_path),
               "--scheduler", "wild", "--duration-ms", "90", "--quiet")
    assert wild.returncode == 0, wild.stderr
    assert json.loads(wild.stdout)["scheduler"] == "wild" and json.loads(wild.stdout)["duration_ms"] == 90


def test_replay_on_the_verilated_kernel_equals_the_model(tmp_path):
    """The shared trace end to end through the generated RTL (bg_kernel around the core, with
    its rings, driven by the same host program): the report equals the model's but for the
    engine. A decision, counter or histogram bucket differing anywhere changes the report."""
    reports = {}
    for engine in ("model", "verilator"):
        out = tmp_path / f"{engine}.json"
        result = run("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", tenants_file(tmp_path),
                     "--engine", engine, "--out", out, "--quiet")
        assert result.returncode == 0, result.stderr
        reports[engine] = json.loads(out.read_text())
    assert reports["verilator"].pop("engine") == "verilator" and reports["model"].pop("engine") == "model"
    assert reports["verilator"]["tenants"][0]["generated"] > 0
    assert reports["verilator"] == reports["model"]


def test_replay_of_a_device_the_trace_lacks_generates_nothing(tmp_path):
    text = tenants_file(tmp_path).read_text().replace('device: "0"', 'device: "9"')
    path = tmp_path / "other.yaml"
    path.write_text(text)
    result = run("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", path, "--out", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["tenants"][0]["generated"] == 0
    assert f"warning: {path}:" in result.stderr and "no read or write of device '9'" in result.stderr, result.stderr


def parse_iolog_v3(path):
    lines = path.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog"
    name = lines[1].split()[1]
    assert lines[1] == f"0 {name} add" and lines[2] == f"0 {name} open"
    last = lines[-1].split()
    assert last[1:] == [name, "close"]
    ios = []
    for line in lines[3:-1]:
        ts, fname, act, off, length = line.split()
        assert fname == name and act in ("read", "write")
        ios.append((int(ts), act, int(off), int(length)))
    assert int(last[0]) == ios[-1][0]
    return name, ios


def test_trace2iolog_round_trip_of_the_shared_trace(tmp_path):
    result = run("trace2iolog", "--trace", TRACE, "--format", "cloudphysics", "--out-dir", tmp_path / "out",
                 "--device-map", "0=vdisk")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["vdisk.iolog"]
    name, ios = parse_iolog_v3(tmp_path / "out" / "vdisk.iolog")
    assert name == "vdisk"
    rows = cloudphysics_rows()
    t0 = int(rows[0][1])
    want = [((int(t) - t0) * 1_000_000, "read" if op == "28" else "write", int(lbn) * 512, int(size))
            for _, t, op, size, lbn in rows]
    assert ios == want
    # burstgate-host reads its own output back as the same trace.
    again = run("trace2iolog", "--trace", tmp_path / "out" / "vdisk.iolog", "--format", "iolog3",
                "--out-dir", tmp_path / "again")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "vdisk.iolog").read_text() == (tmp_path / "out" / "vdisk.iolog").read_text()


def test_trace2iolog_writes_one_file_per_device(tmp_path):
    trace = tmp_path / "ali.csv"
    trace.write_text("3,R,0,4096,1000\n5,W,8192,512,1500\n3,W,4096,8192,2000\n")
    result = run("trace2iolog", "--trace", trace, "--format", "alibaba", "--out-dir", tmp_path / "o")
    assert result.returncode == 0, result.stderr
    assert parse_iolog_v3(tmp_path / "o" / "3.iolog") == ("3", [(0, "read", 0, 4096), (1000, "write", 4096, 8192)])
    assert parse_iolog_v3(tmp_path / "o" / "5.iolog") == ("5", [(500, "write", 8192, 512)])
    only = run("trace2iolog", "--trace", trace, "--format", "alibaba", "--out-dir", tmp_path / "p",
               "--device-map", "5=db", "--only-mapped")
    assert only.returncode == 0, only.stderr
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["db.iolog"]


def test_burstgate_command_runs_trace2iolog(tmp_path):
    """`burstgate trace2iolog` is burstgate-host's converter, errors included."""
    trace = tmp_path / "msr.csv"
    trace.write_text("128166372003061629,hm,1,Read,8192,4096,1331\n128166372013061629,hm,1,Write,0,512,77\n")
    args = ["trace2iolog", "--trace", trace, "--format", "msr", "--out-dir", tmp_path / "o", "--device-map", "hm_1=vol"]
    result = run_burstgate(*args, timeout=60)
    assert result.returncode == 0, result.stderr
    assert parse_iolog_v3(tmp_path / "o" / "vol.iolog") == ("vol", [(0, "read", 8192, 4096), (1_000_000, "write", 0, 512)])
    trace.write_text("1,hm,1,Read,8192,4096,1331\nnot a record\n")
    bad = run_burstgate(*args, timeout=60)
    assert bad.returncode == 2 and f"{trace}:2" in bad.stderr, bad.stderr


# (format, file text, line of the bad record, words of the message)
BAD_TRACES = [
    ("cloudphysics", "version,time,op,size,lbn\n1,5,28,512\n", 2, "expected 5 fields"),
    ("cloudphysics", "version,time,op,size,lbn\n1,5,28,512,0\n1,5,35,512,0\n", 3, "unknown SCSI opcode"),
    ("cloudphysics", "version,time,op,size,lbn\n1,5,28,512,0\n1,4,28,512,0\n", 3, "time goes backwards"),
    ("cloudphysics", "version,time,op,size,lbn\n1,5,28,0,0\n", 2, "length 0"),
    ("cloudphysics", "version,time,op,size,lbn\n1,5,28,16777216,0\n", 2, "above the descriptor's largest I/O"),
    ("alibaba", "1,R,0,512,5\n1,R,x,512,6\n", 2, "offset: expected a non-negative integer"),
    ("alibaba", "1,R,-1,512,5\n", 1, "must not be negative"),
    ("tencent", "5,0,8,3,1\n", 1, "IOType: unknown"),
    ("msr", "5,hm,0,Trim,0,512,1\n", 1, "Type: unknown"),
    ("iolog2", "fio version 2 iolog\nf add\nf read 0 512\n", 3, "not open"),
    ("iolog3", "fio version 3 iolog\n0 f add\n0 f open\n5 f wait 1 0\n", 4, "not allowed in iolog v3"),
]


@pytest.mark.parametrize("fmt,text,line,words", BAD_TRACES, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD_TRACES)])
def test_malformed_trace_line_is_exit_2_with_file_line(tmp_path, fmt, text, line, words):
    trace = tmp_path / "bad.trace"
    trace.write_text(text)
    result = run("trace2iolog", "--trace", trace, "--format", fmt, "--out-dir", tmp_path / "o")
    assert result.returncode == 2, result.stderr
    assert f"{trace}:{line}: " in result.stderr and words in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    if fmt == "cloudphysics":  # replay reads the trace as it simulates: the same error, same exit code
        tenants = tenants_file(tmp_path, duration=100, stop=100, scale=1e-6)
        result = run("replay", "--trace", trace, "--format", fmt, "--tenants", tenants, "--quiet")
        assert result.returncode == 2, result.stderr
        assert f"{trace}:{line}: " in result.stderr and words in result.stderr, result.stderr


def test_bad_tenants_file_and_options_are_exit_2(tmp_path):
    good = tenants_file(tmp_path).read_text()
    cases = [
        (good.replace("time_scale: 0.0005", "time_scale: -1"), "tenants[0].workload.trace.time_scale: must not be negative"),
        (good.replace("segments: 16", "segments: 16\n      iodepth: 4"), "tenants[0].workload.iodepth: not for mode: trace"),
        (good.replace('      trace: {device: "0", time_scale: 0.0005}\n', ""), "tenants[0].workload.trace: missing"),
        (good.replace("device:", "dev:"), "tenants[0].workload.trace.dev: unknown key"),
        (good.replace("mode: trace", "mode: closed"), "tenants[0].workload.trace: only for mode: trace"),
    ]
    for i, (text, words) in enumerate(cases):
        path = tmp_path / f"bad{i}.yaml"
        path.write_text(text)
        result = run("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", path, "--quiet")
        assert result.returncode == 2, (words, result.stderr)
        assert f"{path}:" in result.stderr and words in result.stderr, (words, result.stderr)
    # Wrong trace path, unknown format, missing option, unknown command, unknown engine.
    t = tenants_file(tmp_path)
    for args, words in [
        (("replay", "--trace", tmp_path / "nope.csv", "--format", "cloudphysics", "--tenants", t),
         "trace.file: cannot open"),
        (("replay", "--trace", TRACE, "--format", "blktrace", "--tenants", t), "--format: unknown trace format"),
        (("replay", "--trace", TRACE, "--tenants", t), "--trace and --format are required"),
        (("replay", "--trace", TRACE, "--format", "cloudphysics", "--tenants", t, "--engine", "fpga9"), "--engine"),
        (("convert",), "unknown command"),
        (("trace2iolog", "--trace", TRACE, "--format", "cloudphysics", "--out-dir", tmp_path, "--device-map", "0"),
         "--device-map: expected DEV=NAME"),
    ]:
        result = run(*args)
        assert result.returncode == 2, (words, result.stderr)
        assert words in result.stderr, (words, result.stderr)


@pytest.mark.parametrize("content", ["", "version,time,op,size,lbn\n"], ids=["empty", "header-only"])
def test_trace2iolog_of_a_trace_without_records_fails(tmp_path, content):
    """It used to exit 0 having written nothing: a user then replays a file that is not there."""
    trace = tmp_path / "t.csv"
    trace.write_text(content)
    result = run("trace2iolog", "--trace", trace, "--format", "cloudphysics", "--out-dir", tmp_path / "out")
    assert result.returncode == 2, result.stderr
    assert f"{trace}: no I/O record in the trace; nothing written" in result.stderr
    assert not any((tmp_path / "out").iterdir()) if (tmp_path / "out").exists() else True


def test_a_compressed_trace_is_named_as_such(tmp_path):
    trace = tmp_path / "t.csv.gz"
    trace.write_bytes(gzip.compress(TRACE.read_bytes()[:4096]))
    result = run("trace2iolog", "--trace", trace, "--format", "cloudphysics", "--out-dir", tmp_path / "out")
    assert result.returncode == 2
    assert f"{trace}: gzip-compressed; decompress it first" in result.stderr, result.stderr
