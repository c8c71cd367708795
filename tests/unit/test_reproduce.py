"""scripts/reproduce.py (`make reproduce`) end to end on its quickest experiments, Fig. 24 and Table 3.

Catches a reproduction that no longer runs (a report field renamed under it, a scenario
that stopped loading), progress or --out that stopped working, a bad --only accepted, the
regression Fig. 24 is about (BIOS throttling a tenant that resumes at or below base), and
--plots drawing nothing, drawing to the wrong place, or leaking into the tables-only path.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SIM = BUILD / "sw" / "sim" / "burstgate-sim"


def reproduce(*args, python=(), cwd=None):
    if not SIM.is_file():
        pytest.fail(f"{SIM} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([sys.executable, *python, str(ROOT / "scripts" / "reproduce.py"), "--sim", str(SIM),
                           *args], capture_output=True, text=True, timeout=300, check=False, cwd=cwd)


def test_fig24_table_shows_fast_recovery(tmp_path):
    out = tmp_path / "fig24.md"
    result = reproduce("--only", "fig24", "--out", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == result.stdout
    assert re.search(r"^reproduce: fig24 done \(16 simulations, \d+ s\)$", result.stderr, re.M), result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert [int(r[0]) for r in rows] == [1, 2, 4, 8, 16, 24, 32, 64]
    below = 0
    for depth, iops, bios, _, wild in rows:
        if float(iops) < 45000 * 0.98:  # the stream is below the 45k base: BIOS throttles nothing
            below += 1
            assert int(bios) == 0, f"iodepth {depth}: BIOS throttled {bios} I/Os of a tenant below base"
        assert int(wild) > 0, f"iodepth {depth}: WildCBS throttled nothing (the baseline no longer differs)"
    assert below >= 5, f"only {below} streams below base: the sweep no longer tests recovery"
    assert float(rows[-1][1]) > 45000 and int(rows[-1][2]) > 0, "BIOS never throttled the stream above base"


def test_unknown_experiment_is_named():
    result = reproduce("--only", "fig24,fig99")
    assert result.returncode != 0
    assert "unknown experiment 'fig99'" in result.stderr
    assert result.stdout == ""  # checked before any simulation runs


def test_plots_drawn_only_when_asked(tmp_path):
    only = ("--only", "fig24,table3")
    # -X importtime lists every module imported, on stderr.
    tables = reproduce(*only, python=("-X", "importtime"), cwd=tmp_path)
    assert tables.returncode == 0, tables.stderr
    assert list(tmp_path.rglob("*.png")) == [], "a PNG written without --plots"
    assert not re.search(r"\| +matplotlib$", tables.stderr, re.M), "matplotlib imported on the tables-only path"

    plots = tmp_path / "plots" / "nested"  # created on demand, like out/reproduce
    drawn = reproduce(*only, "--plots", plots, python=("-X", "importtime"), cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    assert re.search(r"\| +matplotlib$", drawn.stderr, re.M), "the import check above cannot see matplotlib"
    # The markdown is the same numbers whether or not they are drawn, and the PNG paths go to
    # stderr: stdout stays the report (`make reproduce > report.md`).
    assert drawn.stdout == tables.stdout
    assert sorted(p.name for p in plots.iterdir()) == ["fig24.png", "table3.png"], "not one PNG per experiment key"

    import matplotlib.image
    import numpy

    for key in ("fig24", "table3"):
        png = plots / f"{key}.png"
        assert f"reproduce: wrote {png}\n" in drawn.stderr, f"{key}: path not reported"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{key}: not a PNG (another savefig format, or empty)"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")  # IHDR
        assert width >= 800 and height >= 400, f"{key}: {width} x {height} px is too small to read"
        # Empty axes with titles and labels are about 28 kB; these figures are 60-90 kB.
        assert len(data) > 40_000, f"{key}: {len(data)} bytes: axes without data?"
        # The BIOS series (tab:blue, both figures) is on the canvas, not only the frame.
        rgb = numpy.rint(matplotlib.image.imread(png)[..., :3] * 255)
        blue = (numpy.abs(rgb - (0x1F, 0x77, 0xB4)).max(axis=-1) <= 8).sum()
        assert blue > 1000, f"{key}: {blue} BIOS-coloured pixels: the data was not drawn"
