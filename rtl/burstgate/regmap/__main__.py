"""``python -m burstgate.regmap (--write | --check) ROOT``: regenerate or check the generated files."""

import argparse
import pathlib
import sys

from .gen_c import render_c_header
from .gen_md import render_markdown

OUTPUTS = {
    "fw/include/burstgate/regs.h": render_c_header,
    "docs/registers.md": render_markdown,
}


def stale_files(root):
    """Paths under ``root`` whose content differs from what the map generates."""
    root = pathlib.Path(root)
    return [rel for rel, render in OUTPUTS.items()
            if not (root / rel).exists() or (root / rel).read_text() != render()]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m burstgate.regmap", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the files")
    mode.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    parser.add_argument("root", type=pathlib.Path, help="repository root")
    args = parser.parse_args(argv)
    if args.write:
        for rel, render in OUTPUTS.items():
            path = args.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render())
            print(f"wrote {rel}")
        return 0
    stale = stale_files(args.root)
    for rel in stale:
        print(f"{rel}: stale; run `make regs`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
