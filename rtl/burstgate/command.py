"""``burstgate <subcommand>``: one command for every burstgate tool.

The simulator, the trace tools, the gateway, the cost tables and the LSM side are C++ programs;
``burstgate`` runs the one a subcommand names with the arguments that follow it, so that each
keeps its own ``--help``. The plots, comparisons, fits and gateware generators are Python and run
in this process.

A C++ program is looked for, in order: in the package's own ``bin`` folder (``burstgate/bin``,
where ``pip install .`` puts the programs built with the package); under ``$BG_BUILD_DIR``; in
the build tree of the checkout this package was imported from (``build/cmake``, what ``make
cpp`` writes; the editable install of the checkout builds nothing itself); on ``PATH`` (``make
install`` puts the programs in ``PREFIX/bin`` and its launcher puts that first).
"""

import argparse
import dataclasses
import os
import pathlib
import shutil
import sys

from .tools.reports import InputError

__all__ = ["main", "SUBCOMMANDS", "find_program"]

_PACKAGE = pathlib.Path(__file__).resolve().parent
#: The programs installed with the package (CMakeLists.txt's install rules under scikit-build-core).
PACKAGE_BIN = _PACKAGE / "bin"
#: The checkout this package lives in, if it is one (``rtl/burstgate`` → the repository root).
SOURCE_ROOT = _PACKAGE.parents[1] if (_PACKAGE.parents[1] / "CMakeLists.txt").is_file() else None


@dataclasses.dataclass(frozen=True)
class Program:
    """A C++ program of the build: its path under the CMake build tree and the leading
    arguments the subcommand passes (``burstgate replay`` is ``burstgate-host replay``)."""
    build_path: str
    lead: tuple = ()

    @property
    def name(self):
        return pathlib.PurePosixPath(self.build_path).name


@dataclasses.dataclass(frozen=True)
class Subcommand:
    name: str
    summary: str
    program: Program | None = None   # a C++ program, or
    module: str | None = None        # a Python module with add_arguments(parser) and run(args)


SUBCOMMANDS = [
    Subcommand("sim", "run a scenario on an engine (model, verilator, xrt) and write its report",
               Program("sw/sim/burstgate-sim")),
    Subcommand("replay", "replay a real block trace through an engine",
               Program("sw/tools/burstgate-host", ("replay",))),
    Subcommand("trace2iolog", "convert a block trace to fio iolog v3, one file per device",
               Program("sw/tools/burstgate-host", ("trace2iolog",))),
    Subcommand("gateway", "serve the tenants' virtual disks over NBD, every I/O scheduled by an engine",
               Program("sw/gateway/burstgate-gateway")),
    Subcommand("calibrate", "measure this machine through the gateway (fio) and write the host profile it and sim read",
               module="burstgate.tools.calibrate"),
    Subcommand("cost", "cost tables: the linear CPU model, the Libra VOP curve, a mix's vectors",
               Program("sw/tools/burstgate-cost")),
    Subcommand("lsm", "the LSM side (Calcspar): cloud-volume model, caches, reproductions",
               Program("sw/lsm/tools/burstgate-lsm")),
    Subcommand("plot", "latency CDFs and per-window series of burstgate-sim reports (PNG)",
               module="burstgate.tools.plot"),
    Subcommand("compare", "one tenant's latency side by side across reports",
               module="burstgate.tools.compare"),
    Subcommand("fit-alpha", "Still Water's alpha (Eq. (1)) fitted to measured P95 SA delay",
               module="burstgate.tools.fit_alpha"),
    Subcommand("sweep", "a scenario template x a parameter grid x seeds x schedulers, as tasks on Dask (one table)",
               module="burstgate.tools.sweep"),
    Subcommand("fleet", "replay a multi-device block trace over K storage-agent nodes, one task per node x scheduler",
               module="burstgate.tools.fleet"),
    Subcommand("gen-trace", "write a synthetic multi-device block trace in the Alibaba format (bursty devices)",
               module="burstgate.tools.alibaba_gen"),
    Subcommand("rtl", "write the Verilog of the gateware's top-level blocks",
               module="burstgate.cli"),
    Subcommand("regs", "regenerate or check the files generated from the register map",
               module="burstgate.regmap.command"),
]


class NotBuilt(Exception):
    """A C++ program that is in none of the places ``find_program`` looks."""


def find_program(program):
    """The path of a C++ program of the build (see the module's docstring for the order)."""
    candidates = [PACKAGE_BIN / program.name]
    if os.environ.get("BG_BUILD_DIR"):
        candidates.append(pathlib.Path(os.environ["BG_BUILD_DIR"]) / program.build_path)
    if SOURCE_ROOT is not None:
        candidates.append(SOURCE_ROOT / "build" / "cmake" / program.build_path)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    found = shutil.which(program.name)
    if found:
        return pathlib.Path(found)
    where = ", ".join(str(p) for p in candidates)
    raise NotBuilt(f"{program.name} is not built (looked in {where} and on PATH): "
                   "run `make cpp` in the checkout, or install with `pip install .` or `make install`")


def _parser():
    parser = argparse.ArgumentParser(
        prog="burstgate",
        description="burstgate: an FPGA offload for multi-tenant, burstable cloud block storage. "
                    "`burstgate SUBCOMMAND --help` describes each subcommand.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", required=True)
    for sc in SUBCOMMANDS:
        if sc.program is not None:
            # Everything after the name goes to the program, --help included.
            p = sub.add_parser(sc.name, help=sc.summary, add_help=False, prefix_chars="\0")
            p.add_argument("rest", nargs=argparse.REMAINDER)
        else:
            p = sub.add_parser(sc.name, help=sc.summary, description=sc.summary)
            __import__(sc.module, fromlist=["add_arguments"]).add_arguments(p)
        p.set_defaults(subcommand=sc)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    args = parser.parse_args(argv)
    sc = args.subcommand
    if sc.program is not None:
        try:
            path = find_program(sc.program)
        except NotBuilt as exc:
            print(f"burstgate {sc.name}: {exc}", file=sys.stderr)
            return 2
        cmd = [str(path), *sc.program.lead, *args.rest]
        sys.stdout.flush()
        # exec: signals (the gateway's SIGINT report) and the exit code are the program's own.
        os.execv(cmd[0], cmd)
    module = sys.modules[sc.module]
    try:
        result = module.run(args)
        if isinstance(result, int):
            return result
        for line in result or ():
            print(line)
    except InputError as exc:
        print(f"burstgate {sc.name}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
