"""`python -m burstgate_tools plot|compare|fit-alpha ...`: the `burstgate` command's entry point."""

import argparse
import sys

from burstgate_tools import compare, fit_alpha, plot
from burstgate_tools.reports import InputError


def main(argv=None):
    ap = argparse.ArgumentParser(prog="burstgate", description="burstgate host tools")
    sub = ap.add_subparsers(dest="command", required=True)
    plot.add_arguments(sub.add_parser("plot", help="latency CDFs and per-window series of burstgate-sim reports"))
    compare.add_arguments(sub.add_parser("compare", help="one tenant's latency side by side across reports"))
    fit_alpha.add_arguments(sub.add_parser("fit-alpha", help="seed 002's alpha fitted to measured P95 SA delay"))
    args = ap.parse_args(argv)
    try:
        for line in args.func(args):
            print(line)
    except InputError as exc:
        print(f"burstgate {args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
