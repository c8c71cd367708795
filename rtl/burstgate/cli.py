"""``burstgate rtl``: generate the gateware's Verilog.

    burstgate rtl --out build/rtl
    burstgate rtl --out build/rtl --tenants 1024 --ingress 16 --egress 16 bg_core
"""

import pathlib
import sys

from .tools.reports import InputError

__all__ = ["main", "TOPS", "generate"]


def _cost_estimator():
    from .cost import CostEstimator
    return CostEstimator()


def _core(**params):
    from .core import Core
    return Core(**params)


def _segment_monitor():
    from .segment_monitor import SegmentMonitor
    return SegmentMonitor()


def _load_balancer():
    from .load_balancer import LoadBalancer
    return LoadBalancer()


def _admission(**params):
    from .admission import Admission
    return Admission(**params)


def _buffer_pool():
    from .buffer_pool import BufferPool
    return BufferPool()


#: Top-level blocks ``generate`` writes, by module name.
TOPS = {
    "bg_cost_estimator": _cost_estimator,
    "bg_core": _core,
    "bg_segment_monitor": _segment_monitor,
    "bg_load_balancer": _load_balancer,
    "bg_buffer_pool": _buffer_pool,
    "bg_admission": _admission,
}

#: Build parameters of the blocks that take them (``generate --tenants`` etc.).
PARAMETERS = {
    "bg_core": ("tenants", "ingress", "egress", "segment_bits"),
    "bg_admission": ("tenants",),
}


def generate(out, names, params=None):
    """Write ``<name>.v`` under ``out``; ``params`` go to the blocks that take them."""
    out.mkdir(parents=True, exist_ok=True)
    from amaranth.back import verilog  # here: every `burstgate` command imports this module for its arguments
    params = {k: v for k, v in (params or {}).items() if v is not None}
    for name in names:
        own = {k: v for k, v in params.items() if k in PARAMETERS.get(name, ())}
        text = verilog.convert(TOPS[name](**own), name=name, emit_src=False)
        (out / f"{name}.v").write_text(text)
        print(f"wrote {out / f'{name}.v'}")


def add_arguments(parser):
    """The ``burstgate rtl`` options."""
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    for flag in ("tenants", "ingress", "egress", "segment-bits"):
        parser.add_argument(f"--{flag}", type=int, metavar="N",
                            help=f"{flag} of the blocks that take it (bg_core); default: the block's")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"blocks to generate (default: all of {', '.join(TOPS)})")


def run(args):
    """Generate what ``args`` names; a bad block name or parameter raises InputError."""
    unknown = [n for n in args.names if n not in TOPS]
    if unknown:
        raise InputError(f"unknown block {unknown[0]!r}; known: {', '.join(TOPS)}")
    params = {"tenants": args.tenants, "ingress": args.ingress, "egress": args.egress,
              "segment_bits": args.segment_bits}
    try:
        generate(args.out, args.names or list(TOPS), params)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    except OSError as exc:
        raise InputError(f"{args.out}: {exc.strerror or exc}") from exc
    return 0


def main(argv=None):
    """``python -m burstgate.cli``: the same as ``burstgate rtl``."""
    from .command import main as burstgate
    return burstgate(["rtl", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
