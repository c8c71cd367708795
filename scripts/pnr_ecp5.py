#!/usr/bin/env python3
"""Place and route burstgate on a Lattice ECP5-85F (yosys, nextpnr-ecp5, ecppack; YoWASP).

    python scripts/pnr_ecp5.py --out build/pnr [JOB ...]

A job is a block of ``burstgate rtl`` or ``bg_core@<point>`` (the points of
``scripts/synth.py``), placed and routed out of context (``--out-of-context``: no I/O
buffers, so the Fmax of the logic alone; no bitstream), or ``ulx3s``: the board top
``burstgate.boards.ulx3s`` on the ULX3S-85F with its LPF from ``amaranth-boards``, which
also gets a bitstream (``ulx3s.bit``; flash with ``openFPGALoader -b ulx3s``).

Writes, per job, ``<job>.yosys.log``, ``<job>.nextpnr.log``, nextpnr's ``<job>.report.json``
and ``<job>.json``: ``fmax_mhz`` per clock (nextpnr's achieved Fmax), the target, the
utilization of the device and the run times; and ``fmax.json`` over every ``<job>.json``.

Two kinds of target. An out-of-context job's is ``--freq`` (default 100 MHz, issue 7's goal):
a miss is printed and recorded (``met: false``) but is not an error. The board top's is its
own clock, which nextpnr derives from the LPF and the PLL's divisors: a miss there means the
bitstream would fail on the board, so the exit status is 1.
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl"))
sys.path.insert(0, str(ROOT / "scripts"))

from ecp5_paths import lut_levels  # noqa: E402
from synth import KEEP_REPLICAS, parse_job  # noqa: E402

DEVICE = ["--85k", "--package", "CABGA381"]


class Ecp5Target:
    """The platform an out-of-context block is elaborated with: only its ``device``, which
    tells the RTL it is built for an ECP5 (the cost estimator then instantiates its
    multipliers with their input registers, ``rtl/burstgate/cost.py``), as the board's own
    platform does for the board top."""

    device = "LFE5U-85F"


def write_rtlil(folder, top, params):
    """Elaborate ``top`` with ``params`` for the ECP5 into ``folder/<top>.il``; returns the path
    (``synth.write_rtlil`` with the ECP5 platform stand-in)."""
    from amaranth.back import rtlil
    from burstgate.cli import PARAMETERS, TOPS
    folder.mkdir(parents=True, exist_ok=True)
    own = {k: v for k, v in params.items() if k in PARAMETERS.get(top, ())}
    path = folder / f"{top}.il"
    path.write_text(rtlil.convert(TOPS[top](**own), name=top, platform=Ecp5Target(), emit_src=False))
    return path


def dsp_input_registers(netlist):
    """``(registered, total)``: the MULT18X18D cells of a yosys JSON netlist whose A and B
    inputs go through the DSP's own input registers, and all of them."""
    cells = [c for mod in netlist["modules"].values() for c in mod.get("cells", {}).values()
             if c["type"] == "MULT18X18D"]
    registered = sum(all(str(c["parameters"].get(f"REG_INPUT{x}_CLK", "NONE")) not in ("NONE", "")
                         for x in "AB") for c in cells)
    return registered, len(cells)
DEFAULT_JOBS = ["bg_cost_estimator", "ulx3s"]


def _tool(name):
    return shutil.which(f"yowasp-{name}") or sys.exit(f"pnr: yowasp-{name} not found; run `make venv`")


def _run(argv, log):
    t0 = time.monotonic()
    with log.open("w") as fh:
        # YoWASP tools see only their working directory: run in ``out``, with relative paths.
        result = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=log.parent)
    if result.returncode:
        sys.exit(f"pnr: {pathlib.Path(argv[0]).name} failed ({result.returncode}); see {log}")
    return round(time.monotonic() - t0, 1)


def _board_sources(out):
    """Elaborate the ULX3S top with its platform; returns (RTLIL, LPF, top name), relative to ``out``."""
    from amaranth_boards.ulx3s import ULX3S_85F_Platform
    from burstgate.boards.ulx3s import BoardTop
    plan = ULX3S_85F_Platform().build(BoardTop(), name="ulx3s", do_build=False)
    plan.extract(out / "ulx3s-src")
    return "ulx3s-src/ulx3s.il", "ulx3s-src/ulx3s.lpf", "ulx3s"


def pnr(job, out, freq, seed):
    name = job.replace("@", "-")
    board = job == "ulx3s"
    if board:
        source, lpf, top = _board_sources(out)
        read = f"read_rtlil {source}"
    else:
        top, params = parse_job(job)
        read = f"read_rtlil {write_rtlil(out / 'rtl' / name, top, params).relative_to(out)}"
    netlist = f"{name}.netlist.json"
    # The pinned yosys (0.70) runs synth_ecp5 as synth_lattice, which always maps LUTs with
    # abc9 (it accepts -noabc9 and ignores it); abc9 aborts on the load balancer
    # (`count_id(wire->name) == 0` in ABC9_OPS -reintegrate). The LUT mapping step is spelled
    # out with classic abc instead, as synth.py does for synth_xilinx.
    script = "; ".join([
        read,
        *KEEP_REPLICAS(top),
        f"synth_ecp5 -top {top} -run :map_luts",
        "techmap -map +/lattice/latches_map.v",
        "abc -dress -lut 4:7",
        "clean",
        f"synth_ecp5 -top {top} -run map_cells: -json {netlist}",
    ])
    times = {"yosys_s": _run([_tool("yosys"), "-q", "-p", script], out / f"{name}.yosys.log")}
    report = f"{name}.report.json"
    argv = [_tool("nextpnr-ecp5"), *DEVICE, "--json", netlist, "--report", report,
            "--freq", str(freq), "--seed", str(seed), "--timing-allow-fail",
            # router1, nextpnr's default, had not routed the board top after 20 minutes
            # (minutes per 1000 arcs at the end); router2, the negotiated-congestion router,
            # routed it in 50 iterations and 328 s (docs/results.md, ECP5-85F).
            "--router", "router2"]
    if board:
        config = f"{name}.config"
        argv += ["--lpf", lpf, "--textcfg", config]
    else:
        argv += ["--out-of-context"]
    times["nextpnr_s"] = _run(argv, out / f"{name}.nextpnr.log")
    mapped = json.loads((out / netlist).read_text())
    registered, dsps = dsp_input_registers(mapped)
    levels, lut_cells = lut_levels(mapped["modules"][top])
    if board:
        times["ecppack_s"] = _run([_tool("ecppack"), "--compress", config, f"{name}.bit"],
                                  out / f"{name}.ecppack.log")
    rep = json.loads((out / report).read_text())
    if not rep.get("fmax"):
        sys.exit(f"pnr: {report}: no clock with a timing result")
    util = {cell: u for cell, u in rep.get("utilization", {}).items() if u.get("used")}
    return {"job": job, "top": top, "device": "LFE5U-85F-CABGA381", "seed": seed,
            **verdict(rep["fmax"], freq, board=board), "utilization": util,
            "bitstream": f"{name}.bit" if board else None,
            "dsp_input_registered": registered, "dsp_total": dsps,
            "lut_levels": levels, "lut_cells": lut_cells, **times}


def verdict(fmax, freq, *, board):
    """``fmax_mhz``, ``target_mhz`` and ``met`` per clock from nextpnr's report ``fmax``
    (``{clock: {"achieved": MHz, "constraint": MHz}}``). A board's target is the constraint
    nextpnr derived for the clock (the frequency it will run at); an out-of-context job's is
    ``freq``."""
    got = {clk: round(v["achieved"], 2) for clk, v in fmax.items()}
    target = {clk: round(float(v["constraint"]), 2) if board else freq for clk, v in fmax.items()}
    return {"fmax_mhz": got, "target_mhz": target,
            "met": {clk: got[clk] >= target[clk] for clk in got}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "pnr")
    parser.add_argument("--freq", type=float, default=100.0, help="target MHz (default: 100)")
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placer seed (default: 1)")
    parser.add_argument("jobs", nargs="*", metavar="JOB", help=f"default: {' '.join(DEFAULT_JOBS)}")
    args = parser.parse_args(argv)
    jobs = args.jobs or DEFAULT_JOBS
    for job in jobs:
        if job != "ulx3s":
            try:
                parse_job(job)
            except ValueError as exc:
                parser.error(str(exc))
    args.out.mkdir(parents=True, exist_ok=True)
    missed, goals = [], []
    for job in jobs:
        target = "the board's PLL clock" if job == "ulx3s" else f"{args.freq:g} MHz"
        print(f"pnr: {job} (nextpnr-ecp5 --85k, target {target}) ...", flush=True)
        r = pnr(job, args.out, args.freq, args.seed)
        (args.out / f"{job.replace('@', '-')}.json").write_text(json.dumps(r, indent=2, sort_keys=True) + "\n")
        print(f"pnr: {job}: " + ", ".join(f"{c} {f:g} MHz" for c, f in r["fmax_mhz"].items())
              + f" (yosys {r['yosys_s']} s, nextpnr {r['nextpnr_s']} s; MULT18X18D with input"
              f" registers: {r['dsp_input_registered']} of {r['dsp_total']}; abc mapped to"
              f" {r['lut_levels']} LUT levels: " + ", ".join(f"{n} {k}" for k, n in r["lut_cells"].items())
              + ")", flush=True)
        for c, ok in r["met"].items():
            if not ok:
                line = f"pnr: {job}: clock {c}: {r['fmax_mhz'][c]:g} MHz, below {r['target_mhz'][c]:g} MHz"
                if job == "ulx3s":
                    missed.append(line + ", the clock the bitstream runs at: it would fail on the board")
                else:
                    goals.append(line + " (MISS against the --freq goal)")
    results = {}
    for path in sorted(args.out.glob("*.json")):
        if path.name.endswith((".report.json", ".netlist.json")) or path.name == "fmax.json":
            continue
        r = json.loads(path.read_text())
        results[r["job"]] = {k: r.get(k) for k in ("fmax_mhz", "target_mhz", "met", "yosys_s", "nextpnr_s")}
    (args.out / "fmax.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"pnr: wrote {args.out / 'fmax.json'}")
    for line in goals:
        print(line)
    for line in missed:
        print(line, file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
