"""Still Water at the paper's T = 10 ms with the main bucket metered within the window
(`dualbucket.main_slices: 100`, 100 us slices), 16 KiB proxy: the row docs/results.md prints from
`scripts/fit_alpha_t10ms.py --slices 100 --r chosen --run`, held by a test.

Runs the script's own Fig. 18 row (`_chosen_row`, the monitor counting requests with R = 16 per
T; the bytes unit gives the same row at this size) through the burstgate-sim binary with the
scenario settings the script's fit printed (alpha 177847, h_p = 15.5 % of mu) and asserts the
direction and a band around each number. The fit itself is not re-run here (five more runs).
"""

import shutil

import pytest

from . import headlines
from .test_headlines_stillwater_t10ms import FA

K = 100
ALPHA_16K = 177847  # `fit_alpha_t10ms.py --sizes 16k --slices 100`: alpha with mu fixed (docs/results.md)


@pytest.fixture(scope="module")
def row():
    runner = headlines.runner()
    sc = FA._sc("16k", slices=K)
    mu = sc["dualbucket"].get("mu_mbps") or sc["dpu"]["swlimit_mbps"] * 8  # as main_bucket_sweep: 24000
    sc["dualbucket"].update(alpha=ALPHA_16K, headroom_mbps=round(FA.HEADROOM_SHARE * mu))
    units = FA.su.UNITS
    FA.su.UNITS = ("requests",)
    try:
        r = FA._chosen_row(runner, sc, "fig18_16k", "Fig. 18, 16 KiB, T = 10 ms, metered")
    finally:
        FA.su.UNITS = units
    shutil.rmtree(runner.tmp, ignore_errors=True)
    return r


def test_fig18_reproduces_at_16_kib_with_the_main_bucket_metered(row):
    """16 KiB, proxy, T = 10 ms, the main bucket's tokens in 100 slices: every steady I/O goes
    through the cheque (recall 100 %, no steady I/O taken as hot) and the steady P99 / P99999 fall
    by ~98 % (the paper: -92...-97 %) against the metered main bucket alone, whose tail is the
    closed loop's backlog (~2.5 ms). Catches the tokens back at the tick (`main_slices` dropped
    by the loader, the firmware or the simulator's meter events: baseline P99999 ~6.8 ms and
    -67 %), a meter that mints or loses tokens (the backlog moves), and R scaled from 100 us
    (hot I/Os draw the cheque: +25 %)."""
    u = row["units"]["requests"]
    assert u["recall"] >= 99.0 and u["false_hot"] <= 0.01
    assert 2200 <= row["base"]["p99999"] <= 2900
    p99 = headlines.R.pct(u["steady"]["p99"], row["base"]["p99"])
    p99999 = headlines.R.pct(u["steady"]["p99999"], row["base"]["p99999"])
    assert -99.5 <= p99 <= -90.0
    assert -99.5 <= p99999 <= -90.0
