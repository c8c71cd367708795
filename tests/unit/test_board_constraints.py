"""``constraints/ulx3s.lpf`` is what amaranth-boards generates for the ULX3S board top.

The LPF is committed for users of other flows; the build uses the generated one. Catches a
board top whose pins or clock constraint changed without the committed LPF (and the other
way round), and a board top that no longer elaborates for its platform.
"""

import pathlib

from amaranth_boards.ulx3s import ULX3S_85F_Platform

from burstgate.boards.ulx3s import BoardTop

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_committed_lpf_matches_the_board_top():
    plan = ULX3S_85F_Platform().build(BoardTop(), name="ulx3s", do_build=False)
    generated = plan.files["ulx3s.lpf"]
    generated = generated.decode() if isinstance(generated, bytes) else generated
    assert 'FREQUENCY PORT "clk25_0__io" 25000000.0 HZ' in generated  # nextpnr derives the PLL's
    assert (ROOT / "constraints" / "ulx3s.lpf").read_text() == generated, (
        "constraints/ulx3s.lpf: out of date; copy it from build/pnr/ulx3s-src/ulx3s.lpf")
