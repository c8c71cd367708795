"""Running ``amaranth.sim`` testbenches against one block."""

from amaranth.sim import Simulator

__all__ = ["simulate"]


def simulate(dut, *testbenches, period=1e-8):
    """Run ``testbenches`` (async functions of ``ctx``) on ``dut`` with one clock of ``period``
    seconds, until every testbench returns."""
    sim = Simulator(dut)
    sim.add_clock(period)
    for tb in testbenches:
        sim.add_testbench(tb)
    sim.run()
