"""The board top's clock: the PLL divisors, and what `scripts/pnr_ecp5.py` calls a miss."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

import pnr_ecp5  # noqa: E402
from burstgate.boards.ulx3s import CLOCK_HZ, pll_divisors  # noqa: E402


def test_divisors_are_ecppll_s():
    # `ecppll -i 25 -o 100` (the board's PLL before it was slowed) and `-i 25 -o 25`
    assert pll_divisors(100_000_000) == (4, 6, 2)
    assert pll_divisors(25_000_000) == (1, 24, 11)


@pytest.mark.parametrize("hz", [CLOCK_HZ, 50_000_000, 75_000_000, 100_000_000, 150_000_000])
def test_divisors_make_the_clock_with_the_vco_in_range(hz):
    fb_div, op_div, _ = pll_divisors(hz)
    assert 25_000_000 * fb_div == hz          # CLKI_DIV 1, feedback from CLKOP
    assert 400_000_000 <= hz * op_div <= 800_000_000


@pytest.mark.parametrize("hz", [0, 30_000_000, 125_000_000, 24_000_000])
def test_a_clock_the_pll_cannot_make_is_refused(hz):
    with pytest.raises(ValueError, match="multiple of 25 MHz"):
        pll_divisors(hz)


def test_board_target_is_its_own_clock():
    # the board top routed at 28.00 MHz: met at its 25 MHz PLL clock, whatever --freq says
    got = pnr_ecp5.verdict({"$glbnet$clk": {"achieved": 28.0041, "constraint": 25}}, 100.0, board=True)
    assert got == {"fmax_mhz": {"$glbnet$clk": 28.0}, "target_mhz": {"$glbnet$clk": 25.0},
                   "met": {"$glbnet$clk": True}}
    # ... and a miss when it is clocked faster than it routes (the 100 MHz bitstream of session 4)
    got = pnr_ecp5.verdict({"$glbnet$clk": {"achieved": 28.0041, "constraint": 100}}, 25.0, board=True)
    assert got["met"] == {"$glbnet$clk": False}


def test_out_of_context_target_is_freq():
    got = pnr_ecp5.verdict({"clk": {"achieved": 70.67, "constraint": 12}}, 100.0, board=False)
    assert got["target_mhz"] == {"clk": 100.0} and got["met"] == {"clk": False}
    got = pnr_ecp5.verdict({"clk": {"achieved": 70.67, "constraint": 12}}, 70.0, board=False)
    assert got["met"] == {"clk": True}
