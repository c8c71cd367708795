"""cocotb testbench: the ULX3S board top's self-test (``SelfTest``: core, LFSR descriptor source,
completion loopback, counter check) on Verilator, run until several batches have been checked.

The board top is this component plus a PLL, LEDs and a UART; this is what runs on the board.
"""

import os
import pathlib

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

#: Small batches so that several windows pass in a short run; the board runs 4096.
PARAMS = {"tenants": 64, "ingress": 4, "egress": 4, "segment_bits": 12, "batch": 512, "cost": 1000,
          "grant": 4000}
BATCHES = 4


class TB:
    def __init__(self, dut):
        self.dut = dut
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 4)
        self.dut.rst.value = 0


@cocotb.test()
async def self_test_passes(dut):
    """Every descriptor gets one decision in order and the core's counters agree, batch after batch.

    Catches: a lost or duplicated decision (IOS or the order check), a decision counted in
    the wrong deferral counter, a completion the core drops or counts as bad, a core that
    stops accepting descriptors (the run times out).
    """
    tb = TB(dut)
    await tb.reset()
    cycles, limit = 0, BATCHES * (PARAMS["batch"] * 4 + 2000) + PARAMS["tenants"] * 4
    while int(dut.batches.value) < BATCHES:
        await RisingEdge(dut.clk)
        cycles += 1
        assert not dut.failed.value, f"self-test failed, code {int(dut.fail_code.value)} after {cycles} cycles"
        assert cycles < limit, f"only {int(dut.batches.value)} batches in {cycles} cycles"
    decided, admitted = int(dut.decided.value), int(dut.admitted.value)
    dut._log.info("%d batches in %d cycles: %d decided, %d admitted", BATCHES, cycles, decided, admitted)
    assert dut.passed.value and not dut.failed.value
    assert decided == BATCHES * PARAMS["batch"]
    # Both kinds of decision were checked: the grant is small enough to defer some.
    assert 0 < admitted < decided, f"{admitted} of {decided} admitted"


@cocotb.test()
async def self_test_catches_a_miscount(dut):
    """A completion counter one off (forced into the self-test's own count) must fail the
    self-test with the COMPLETIONS code: catches a read-back check that cannot fail."""
    from burstgate.boards.selftest import CHECKS

    tb = TB(dut)
    await tb.reset()
    while int(dut.batches.value) < 1:
        await RisingEdge(dut.clk)
    assert dut.passed.value
    await RisingEdge(dut.clk)
    dut.completions.value = int(dut.completions.value) + 1
    for _ in range(PARAMS["batch"] * 4 + 2000):
        await RisingEdge(dut.clk)
        if dut.failed.value:
            break
    assert dut.failed.value and not dut.passed.value
    assert int(dut.fail_code.value) == 1 + CHECKS.index("COMPLETIONS")


def test_board():
    """pytest entry: generate the Verilog, build it with Verilator, run the cocotb tests."""
    from amaranth.back import verilog as amaranth_verilog

    from burstgate.boards.selftest import SelfTest
    from burstgate.testing.verilator import run_cocotb

    # Elaborated once (tens of seconds): both runs simulate the same design.
    verilog = amaranth_verilog.convert(SelfTest(**PARAMS), name="bg_selftest", emit_src=False)
    # Each test in its own simulator: block RAM keeps its contents across a reset.
    for name in ("self_test_passes", "self_test_catches_a_miscount"):
        run_cocotb(top="bg_selftest", verilog=verilog, test_module="test_board",
                   test_dir=pathlib.Path(__file__).resolve().parent, build_name="board",
                   test_filter=f"^test_board\\.{name}$",
                   # The self-test simulates in under 2 s; its C++ build took 126 s at -Os in CI.
                   compile_for_build_time=True)
