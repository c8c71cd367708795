"""burstgate-cost (`make demo`): the default table makes BurstCBS §5.3's point, and every kind
of bad input gets exit code 2 and one line naming where it is."""

import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "tools" / "burstgate-cost"

# "A write 4k   6.25%   1940 ... | 515.5k ... | cpu": label, share, costs | IOPS | bottleneck.
ROW = re.compile(r"^([A-D] (?:read|write) \S+)\s+([\d.]+)%\s+([\d\s]+?)\s+\|[^|]*\|\s*(\S+)\s*$")


def run(*args):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def rows(stdout):
    """{label: (costs, bottleneck)} of every I/O row of the table."""
    found = {}
    for line in stdout.splitlines():
        m = ROW.match(line)
        if m:
            found[m.group(1)] = ([int(c) for c in m.group(3).split()], m.group(4))
    return found


def test_default_table_shows_cpu_and_bandwidth_bottlenecks():
    result = run()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    table = rows(result.stdout)
    assert len(table) == 16, result.stdout   # A, B x read, write x 4k 16k 64k 128k
    for product in "AB":
        # BurstCBS §5.3: "the bottlenecks are CPU and egress bandwidth for 4KB and 128KB write
        # I/Os respectively"; the default DPU's software limit binds before egress.
        assert table[f"{product} write 4k"][1] == "cpu", result.stdout
        assert table[f"{product} write 128k"][1] in ("egress", "swlimit"), result.stdout
    # Scenario cpu_ns, A write: 1800 + 35 per KiB -> 4k costs 1940 ns; data goes out once.
    costs, _ = table["A write 4k"]
    assert costs[0] == 1940 and costs[2] - costs[1] == 4096 and costs[3] == 4096


def test_mix_file_and_vop_curve(tmp_path):
    mix = tmp_path / "mix.txt"
    mix.write_text("# Libra's worked example\n\nA read 1k 0.5   # 1 VOP\r\nA write 1k 0.25\nb READ 256K 0.25\n")
    result = run("--vop", "--mix", mix)
    assert result.returncode == 0, result.stderr
    table = rows(result.stdout)
    # Milli-VOPs: Libra §4.3's 1 KB read = 1 VOP, 1 KB write = 10000/3000, 256 KB read = 10000/160.
    assert table["A read 1k"][0] == [1000]
    assert table["A write 1k"][0] == [3333]
    assert table["B read 256k"][0] == [62500]


def test_random_draw_is_reproducible():
    def without_timing(out):
        return [line for line in out.splitlines() if not line.strip().startswith("model:")]
    first, second = run("--random", 20000, "--seed", 5), run("--random", 20000, "--seed", 5)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert without_timing(first.stdout) == without_timing(second.stdout)
    assert "20000 descriptors" in first.stdout and "throughput:" in first.stdout
    other = run("--random", 20000, "--seed", 6)
    assert without_timing(other.stdout) != without_timing(first.stdout)


BAD_LINES = [
    ("A read 4q 0.5", "bad size '4q'"),
    ("A read 4k5 0.5", "bad size '4k5'"),
    ("A read -4k 0.5", "size '-4k' is negative"),
    ("A read 16m 0.5", "size '16m' is too large"),
    ("A read 16777216 0.5", "is too large"),
    ("A rw 4k 0.5", "unknown op 'rw'"),
    ("E read 4k 0.5", "unknown product 'E'"),
    ("A read 4k x", "bad share 'x'"),
    ("A read 4k -0.5", "bad share '-0.5'"),
    ("A read 4k 0", "bad share '0'"),
    ("A read 4k nan", "bad share 'nan'"),
    ("A read 4k", "expected 4 fields"),
]


def check_one_line_error(result, prefix, fragment):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(prefix), lines[0]
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("line,fragment", BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_bad_mix_line(tmp_path, line, fragment):
    mix = tmp_path / "mix.txt"
    mix.write_text(f"# a comment\nA write 4k 0.5\n{line}\nB read 8k 0.5\n")
    check_one_line_error(run("--mix", mix), f"burstgate-cost: {mix}:3: ", fragment)


def test_empty_mix(tmp_path):
    mix = tmp_path / "mix.txt"
    mix.write_text("# nothing\n\n# here\n")
    check_one_line_error(run("--mix", mix), f"burstgate-cost: {mix}:3: ", "empty mix")


BAD_FLAGS = [
    (["--random"], "--random: ", "needs a value"),
    (["--random", "x"], "--random: ", "'x'"),
    (["--random", "0"], "--random: ", "'0'"),
    (["--random", "5", "--seed", "-1"], "--seed: ", "'-1'"),
    (["--mix"], "--mix: ", "needs a value"),
    (["--mix", "/nonexistent/mix.txt"], "--mix: ", "cannot open"),
    (["--bogus"], "--bogus: ", "unknown option"),
]


@pytest.mark.parametrize("args,flag,fragment", BAD_FLAGS, ids=[" ".join(b[0]) for b in BAD_FLAGS])
def test_bad_flag(args, flag, fragment):
    check_one_line_error(run(*args), f"burstgate-cost: {flag}", fragment)


def test_mix_whose_shares_do_not_add_up_is_refused(tmp_path):
    """A typo in a share used to be rescaled away in silence (0.5 + 0.4 ran as 5/9 + 4/9)."""
    mix = tmp_path / "mix.txt"
    mix.write_text("A write 4k 0.5\nB read 8k 0.4\n")
    check_one_line_error(run("--mix", mix), f"burstgate-cost: {mix}: ", "the shares add up to 0.9, not 1")
