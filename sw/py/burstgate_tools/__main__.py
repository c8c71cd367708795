"""`python -m burstgate_tools plot|compare REPORT.json [...]`: the `burstgate` command's entry point."""

import argparse
import sys

from burstgate_tools import compare, plot


def main(argv=None):
    ap = argparse.ArgumentParser(prog="burstgate", description="burstgate host tools")
    sub = ap.add_subparsers(dest="command", required=True)
    plot.add_arguments(sub.add_parser("plot", help="latency CDFs and per-window series of burstgate-sim reports"))
    compare.add_arguments(sub.add_parser("compare", help="one tenant's latency side by side across reports"))
    args = ap.parse_args(argv)
    try:
        for line in args.func(args):
            print(line)
    except plot.InputError as exc:
        print(f"burstgate {args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
