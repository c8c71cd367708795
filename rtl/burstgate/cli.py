"""``burstgate-rtl``: generate the gateware's Verilog.

    burstgate-rtl generate --out build/rtl
"""

import argparse
import pathlib
import sys

from amaranth.back import verilog

__all__ = ["main", "TOPS"]


def _cost_estimator():
    from .cost import CostEstimator
    return CostEstimator()


#: Top-level blocks ``generate`` writes, by module name.
TOPS = {
    "bg_cost_estimator": _cost_estimator,
}


def generate(out, names):
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = verilog.convert(TOPS[name](), name=name, emit_src=False)
        (out / f"{name}.v").write_text(text)
        print(f"wrote {out / f'{name}.v'}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="burstgate-rtl", description="burstgate gateware tools")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write Verilog for the top-level blocks")
    gen.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    gen.add_argument("names", nargs="*", metavar="NAME",
                     help=f"blocks to generate (default: all of {', '.join(TOPS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in TOPS]
    if unknown:
        parser.error(f"unknown block {unknown[0]!r}; known: {', '.join(TOPS)}")
    generate(args.out, args.names or list(TOPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
