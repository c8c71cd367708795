"""Still Water's dual-bucket headline on its own terms, held by a test.

Runs scripts/reproduce.py's `stillwater_cheque` experiment (scripts/reproduce_stillwater.py)
through the burstgate-sim binary, the numbers docs/results.md prints in "Still Water", and
asserts the direction and a band around each. The simulations are seeded, so a band only
absorbs a deliberate change. What each test catches is in its docstring.
"""

import shutil

import pytest

from . import headlines
from .headlines import R


@pytest.fixture(scope="module")
def gap():
    runner = headlines.runner()
    rows = {row["key"]: row for row in R.EXPERIMENTS["stillwater_cheque"].measure(runner).rows}
    shutil.rmtree(runner.tmp, ignore_errors=True)
    return rows


def _change(row, q):
    return R.pct(row["cheque"][q], row["base"][q])


def test_cheque_alone_cuts_the_steady_tail_when_steady_demand_is_below_the_cheque(gap):
    """Fig. 10's headline with the cheque alone (deferral-order re-offers): steady segments at
    10 % of the load, below the 20 % cheque, P99 -92 % and P99999 -83 % (measured). Catches a
    cheque that never reaches steady I/Os (no cheque admissions, or its refill lost), a monitor
    that marks steady segments hot, and a baseline that stops saturating the main bucket."""
    row = gap["steady10"]
    assert row["cheques"] > 10000
    assert -97 <= _change(row, "p99") <= -80
    assert -95 <= _change(row, "p99999") <= -65


def test_the_gap_at_the_scenario_load_is_the_steady_demand_equal_to_the_cheque(gap):
    """The measured gap: with the steady segments at 20 % of a closed loop's load, the cheque's
    own size, the cheque alone gives about -8 % at P99 and nothing at P99999; at 5 % it cuts
    as deep as at 10 %. Catches a change that silently closes or widens the gap without the
    results page being re-measured, and a cheque sized off the main issuance (0.56 x smaller)."""
    assert -20 <= _change(gap["scenario"], "p99") <= 0
    assert abs(_change(gap["scenario"], "p99999")) <= 5
    assert _change(gap["steady5"], "p99") <= -80


def test_the_papers_alpha_and_T_leave_the_cheque_empty_on_this_sa(gap):
    """With the paper's alpha = 8000 / h_p = 330, or its T = 10 ms, Eq. (1)-(2) give delta_p = 0 on
    this SA (its P95 delay is far above alpha * L / h_p), so no I/O gets a cheque and nothing
    changes. Catches a cheque that is granted regardless of Eq. (2) (a clamp or a default size)."""
    for key in ("paper_alpha", "paper_T"):
        assert gap[key]["cheques"] == 0, key
        assert abs(_change(gap[key], "p99")) <= 2, key


def test_steady_first_is_an_ablation_that_hides_the_gap(gap):
    """The host policy the paper does not have (`reoffer: steady_first`) gives the old headline
    (about -90 % at P99) at the scenario load where the cheque alone does not. Catches the
    re-offer order being lost (the ablation row then equals the scenario row)."""
    assert _change(gap["steady_first"], "p99") <= -80
    assert _change(gap["scenario"], "p99") - _change(gap["steady_first"], "p99") >= 60


@pytest.fixture(scope="module")
def sizes():
    runner = headlines.runner()
    rows = {row["key"]: row for row in R.EXPERIMENTS["stillwater_sizes"].measure(runner).rows}
    shutil.rmtree(runner.tmp, ignore_errors=True)
    return rows


def test_fig18_cheque_cuts_the_tail_from_8_to_32_kib(sizes):
    """Fig. 18: the cheque alone cuts the steady P99999 by 85-89 % at 8-32 KiB (paper: 92-97 %).
    Catches a cheque counted in I/Os rather than bytes (it would over- or under-serve large
    I/Os) and a size-dependent monitor change."""
    for size in ("8k", "16k", "32k"):
        assert -97 <= _change(sizes[size], "p99999") <= -75, size
        assert _change(sizes[size], "p99") <= -85, size


def test_fig18_64_kib_misses_because_one_window_s_cheque_is_below_one_io(sizes):
    """The measured gap at 64 KiB: the cheque of a 100 us window (20 % of 24000 Mb/s x 100 us =
    60 kB) is smaller than one 64 KiB I/O, so none is ever admitted by it. Catches a change of
    the window, the cheque size or the admission rule that would silently close or move it."""
    assert sizes["64k"]["cheques"] == 0
    assert abs(_change(sizes["64k"], "p99999")) <= 2


def test_fig13_end_to_end_with_the_cheque_alone(gap):
    """Fig. 13, the whole path (backend on), steady segments at 10 %: P99999 -81 % (paper -85 %).
    Catches a backend that swamps the proxy's share of the tail (the paper's baseline is 98 %
    proxy) or a cheque lost on the end-to-end path."""
    row = gap["end_to_end"]
    assert row["base"]["p99999"] > gap["steady10"]["base"]["p99999"]  # the backend adds its part
    assert -95 <= _change(row, "p99999") <= -65
    assert _change(row, "p99") <= -80
