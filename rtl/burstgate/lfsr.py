"""The project's one LFSR (``fw/include/burstgate/lfsr.h``) for the gateware.

The tap mask and the zero-seed replacement are register-map constants (``LFSR_TAPS``,
``LFSR_ZERO_SEED``), which ``regs.h`` gives the firmware and the model; every multi-step leap
is derived by stepping that definition over the 32 unit states, so no second copy of the
polynomial or of a leap matrix exists anywhere.
"""

from amaranth import Cat, Const, Mux

from .regmap import C

__all__ = ["LFSR_BITS", "TAPS", "ZERO_SEED", "step", "leap_columns", "leap", "seeded"]

LFSR_BITS = 32
#: The Galois feedback mask of the right-shifting LFSR (``BG_LFSR_TAPS``).
TAPS = C["LFSR_TAPS"]
#: What ``bg_lfsr_seed`` maps a zero seed to (a zero state would lock the LFSR).
ZERO_SEED = C["LFSR_ZERO_SEED"]


def step(state):
    """``bg_lfsr_next`` on an integer."""
    return (state >> 1) ^ (TAPS if state & 1 else 0)


def leap_columns(steps):
    """The state after ``steps`` steps from each unit state ``1 << i``, for i in 0..31.

    The LFSR is linear over GF(2), so the leap of any state is the XOR of the columns of
    its set bits.
    """
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"Steps must be a non-negative integer, not {steps!r}")
    columns = []
    for i in range(LFSR_BITS):
        s = 1 << i
        for _ in range(steps):
            s = step(s)
        columns.append(s)
    return columns


def leap(state, steps):
    """An Amaranth value: ``state`` advanced ``steps`` steps, one XOR tree per output bit."""
    columns = leap_columns(steps)
    bits = []
    for j in range(LFSR_BITS):
        inputs = [state[i] for i in range(LFSR_BITS) if columns[i] >> j & 1]
        bits.append(Cat(*inputs).xor() if inputs else Const(0, 1))
    return Cat(*bits)


def seeded(seed):
    """An Amaranth value: ``bg_lfsr_seed(seed)``."""
    return Mux(seed == 0, ZERO_SEED, seed)
