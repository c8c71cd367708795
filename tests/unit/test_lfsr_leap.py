"""The LFSR draws of admission, the load balancer and the board's generator (``lfsr.leap``)
against the LFSR stepped one step at a time (``lfsr.step``, the firmware's ``bg_lfsr_next``).

Catches a column taken for the wrong state bit, a wrong step count, or a leap that is not the
model's LFSR; the core's differential tests catch it too, but only through the burst-list
indices the draws select, and only for the states a run happens to reach.
"""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from burstgate import lfsr


def _stepped(state, steps):
    for _ in range(steps):
        state = lfsr.step(state)
    return state


@pytest.mark.parametrize("steps", [1, 32, 64])
def test_leap_equals_stepping(steps):
    m = Module()
    state = Signal(32)
    out = Signal(32)
    m.d.comb += out.eq(lfsr.leap(state, steps))
    rng = random.Random(steps)
    states = [1 << i for i in range(32)] + [0, 0xFFFF_FFFF, lfsr.ZERO_SEED]
    states += [rng.getrandbits(32) for _ in range(200)]

    async def bench(ctx):
        for s in states:
            ctx.set(state, s)
            assert ctx.get(out) == _stepped(s, steps), f"state {s:#010x}"

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
