"""``python -m burstgate.kernel.generate --out DIR [--datapath core|passthrough] [--tenants N
--ingress N --egress N --segment-bits N]``: write ``bg_kernel.v``, the Vitis RTL kernel, around
the core (default; sizes as in ``burstgate.core.Core``) or around the shell's unit-test
passthrough harness."""

import argparse
import pathlib
import sys

from amaranth.back import verilog

from .top import BgKernel

__all__ = ["generate", "DATAPATHS"]


def _core(**params):
    try:
        from ..core import Core
    except ImportError as exc:
        raise RuntimeError(f"the datapath core (rtl/burstgate/core.py) is not available: {exc}") from exc
    return Core(**params)


def _passthrough(**params):
    if params:
        raise ValueError(f"the passthrough harness takes no sizes, not {sorted(params)}")
    from .passthrough import Passthrough
    return Passthrough()


DATAPATHS = {"core": _core, "passthrough": _passthrough}


def generate(out, *, datapath="core", **params):
    """Write ``out/bg_kernel.v`` (only when its text changes) and return its path.
    ``params``: the core's sizes (``tenants``, ``ingress``, ``egress``, ``segment_bits``)."""
    if datapath not in DATAPATHS:
        raise ValueError(f"datapath must be one of {', '.join(DATAPATHS)}, not {datapath!r}")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text = verilog.convert(BgKernel(datapath=DATAPATHS[datapath](**params)), name="bg_kernel",
                           emit_src=False)
    path = out / "bg_kernel.v"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m burstgate.kernel.generate", description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    parser.add_argument("--datapath", choices=sorted(DATAPATHS), default="core")
    for name in ("tenants", "ingress", "egress", "segment-bits"):
        parser.add_argument(f"--{name}", type=int, help="core size (default: the core's)")
    args = parser.parse_args(argv)
    params = {k: v for k, v in vars(args).items()
              if k in ("tenants", "ingress", "egress", "segment_bits") and v is not None}
    try:
        print(f"wrote {generate(args.out, datapath=args.datapath, **params)}")
    except (RuntimeError, ValueError, TypeError) as exc:
        print(f"burstgate.kernel.generate: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
