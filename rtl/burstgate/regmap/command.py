"""``burstgate regs [--check] [ROOT]``: regenerate, or check, the files the register map generates.

``python -m burstgate.regmap`` is the same command.
"""

import pathlib
import sys

from ..command import SOURCE_ROOT
from ..tools.reports import InputError
from .gen_c import render_c_header
from .gen_md import render_markdown

__all__ = ["OUTPUTS", "stale_files", "add_arguments", "run", "main"]

OUTPUTS = {
    "fw/include/burstgate/regs.h": render_c_header,
    "docs/registers.md": render_markdown,
}

#: The checkout this package lives in, if it is one; an installed package has none.
_DEFAULT_ROOT = SOURCE_ROOT


def stale_files(root):
    """Paths under ``root`` whose content differs from what the map generates."""
    root = pathlib.Path(root)
    return [rel for rel, render in OUTPUTS.items()
            if not (root / rel).exists() or (root / rel).read_text() != render()]


def add_arguments(parser):
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 and name each generated file that is stale")
    parser.add_argument("--write", action="store_true", help="regenerate the files (the default)")
    parser.add_argument("root", type=pathlib.Path, nargs="?", default=_DEFAULT_ROOT,
                        help="the repository root (default: the checkout this package is in"
                             + (f", {_DEFAULT_ROOT})" if _DEFAULT_ROOT else "; this one is installed, so give ROOT)"))


def run(args):
    if args.check and args.write:
        raise InputError("--check and --write exclude each other")
    if args.root is None:
        raise InputError("this burstgate is installed, not in a checkout: give the checkout's ROOT")
    if not args.root.is_dir():
        raise InputError(f"{args.root}: no such folder")
    if args.check:
        stale = stale_files(args.root)
        for rel in stale:
            print(f"{rel}: stale; run `burstgate regs` (or `make regs`)", file=sys.stderr)
        return 1 if stale else 0
    for rel, render in OUTPUTS.items():
        path = args.root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render())
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from exc
        print(f"wrote {rel}")
    return 0


def main(argv=None):
    """``python -m burstgate.regmap``: the same as ``burstgate regs``."""
    from ..command import main as burstgate
    return burstgate(["regs", *(sys.argv[1:] if argv is None else argv)])
