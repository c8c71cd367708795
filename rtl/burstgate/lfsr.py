"""The project's one LFSR (``fw/include/burstgate/lfsr.h``) for the gateware.

The tap mask and the zero-seed replacement are register-map constants (``LFSR_TAPS``,
``LFSR_ZERO_SEED``), which ``regs.h`` gives the firmware and the model; every multi-step leap
is derived by stepping that definition over the 32 unit states, so no second copy of the
polynomial or of a leap matrix exists anywhere.
"""

from amaranth import Mux

from .regmap import C

__all__ = ["LFSR_BITS", "TAPS", "ZERO_SEED", "step", "leap_columns", "leap", "leap_int", "seeded"]

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


def leap_int(state, steps):
    """``state`` (an integer) advanced ``steps`` steps, e.g. for a register's reset value."""
    for _ in range(steps):
        state = step(state)
    return state


def leap(state, steps):
    """An Amaranth value: ``state`` advanced ``steps`` steps: the XOR of the columns its set bits select.

    The same matrix as one parity per output bit, but Verilator evaluates it as 32 word-wide
    select-and-XOR steps instead of 32 parities and a bit-by-bit concatenation (-4.3 % of the
    kernel's instructions per cycle), and yosys maps it to fewer XORs (398 against 516 for
    admission's two draws, five levels either way)."""
    terms = [Mux(state[i], column, 0) for i, column in enumerate(leap_columns(steps))]
    while len(terms) > 1:  # a balanced tree: as deep as the rows' reductions
        terms = [terms[k] ^ terms[k + 1] if k + 1 < len(terms) else terms[k] for k in range(0, len(terms), 2)]
    return terms[0]


def seeded(seed):
    """An Amaranth value: ``bg_lfsr_seed(seed)``."""
    return Mux(seed == 0, ZERO_SEED, seed)
