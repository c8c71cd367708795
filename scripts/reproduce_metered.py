"""Still Water Fig. 18 / 20 at the paper's T = 10 ms with the main bucket metered within the
window (`dualbucket.main_slices`), imported by scripts/reproduce.py (experiment
`stillwater_metered`).

Still Water's main bucket "functions as usual" -- a token bucket whose tokens arrive
continuously -- and T is the cheque's interval. With the window's tokens at the tick the SA sees
one clump per 10 ms and Eq. (1) does not fit (scripts/fit_alpha_t10ms.py); with 100 slices of
100 us it fits (8-16 KiB: R^2 0.62) and the cheque reproduces Fig. 18 / 20 at 8-32 KiB. The
settings are the ones scripts/fit_alpha_t10ms.py prints (`--slices 100`): alpha fitted per size
with mu fixed, h_p = 15.5 % of mu, and the monitor's R chosen for T = 10 ms (16 requests per T,
between a hot segment's 29-230 and a steady one's 0.8-6.4). Counting requests; the bytes unit
(512 KiB per T) gives the same rows at 8-32 KiB (docs/results.md). 64 KiB is shown with the
mu-fixed alpha (the cheque short of the steady demand) and with the mu-free fit's alpha.
"""

import copy
import dataclasses

import reproduce_segunit as su
import reproduce_stillwater as sw

T_US = 10000
HEADROOM_SHARE = 330 / 2130  # the paper's h_p of its mu (Fig. 6)
#: The monitor's R chosen for T = 10 ms (the paper prints no R). On the Fig. 18 scenario a hot
#: segment serves 0.9 x 1.68 GB/s / 8 = 189 MB/s (230 8 KiB / 29 64 KiB requests per 10 ms), a
#: steady one 0.1 x 1.68 GB/s / 32 = 5.2 MB/s (6.4 / 0.8 requests). The 100 us scenario's R
#: scaled with T (500 requests, 2 MB per 10 ms) lies above a hot segment's rate, so only its
#: fluctuations cross it; 16 requests / 512 KiB per T lie between.
R_REQUESTS_T = 16
R_BYTES_T = 512 * 1024
SLICES = 100
#: `fit_alpha_t10ms.py --slices 100`: alpha with mu fixed per size; 64 KiB also with mu free.
ALPHA = {"8k": 177693, "16k": 177847, "32k": 188644, "64k": 208598}
ALPHA_64K_FREE = 633514
E2E_SIZES = ("8k", "16k", "32k")


@dataclasses.dataclass
class Metered:
    """One dict per row: ``label``, ``fig``, ``size``, ``alpha``, ``base`` / ``cheque`` steady
    percentiles (us), ``recall`` / ``false_hot`` %, ``cheques`` (I/Os paid from the cheque)."""
    rows: list


def t10ms_sc(load, size, end_to_end=False, slices=1):
    """The Fig. 18 scenario (reproduce_segunit._hot_sc) at T = 10 ms, ``slices`` per window."""
    sc = su._hot_sc(load, size, end_to_end=end_to_end)
    sc["window_us"] = T_US
    sc["dualbucket"]["main_slices"] = slices
    return sc


def _row(run, load, size, e2e, alpha):
    sc = t10ms_sc(load, size, e2e, SLICES)
    mu = sc["dualbucket"].get("mu_mbps") or sc["dpu"]["swlimit_mbps"] * 8
    sc["dualbucket"].update(alpha=alpha, headroom_mbps=round(HEADROOM_SHARE * mu),
                            hot_threshold_iops=R_REQUESTS_T * 1e6 / sc["window_us"])
    b = copy.deepcopy(sc)
    b["dualbucket"]["cheque_share"] = 0.0
    base = run(b, "dualbucket")[0]
    r = run(sc, "dualbucket")[0]
    recall, false_hot = su._monitor(r)
    return {"fig": "Fig. 20" if e2e else "Fig. 18", "size": size, "alpha": alpha, "base": sw._steady(base),
            "cheque": sw._steady(r), "recall": recall, "false_hot": false_hot,
            "cheques": sum(t["admitted_reserved"] for t in r.values())}


def metered(run, load, sizes=su.SIZES, e2e_sizes=E2E_SIZES):
    rows = [_row(run, load, s, False, ALPHA[s]) for s in sizes]
    if "64k" in sizes:
        rows.append(_row(run, load, "64k", False, ALPHA_64K_FREE))
    rows += [_row(run, load, s, True, ALPHA[s]) for s in e2e_sizes]
    return Metered(rows)


def metered_md(r, pct):
    lines = ["**Still Water Fig. 18 / 20 at the paper's T = 10 ms, main bucket metered** "
             f"(`scripts/reproduce.py --only stillwater_metered`; the Fig. 18 scenario, `window_us: 10000`, "
             f"`main_slices: {SLICES}`, alpha fitted metered (`scripts/fit_alpha_t10ms.py --slices {SLICES}`), "
             f"h_p 3718 (15.5 % of mu), R = {R_REQUESTS_T} requests per T; baseline: the metered main bucket "
             "alone). Paper: P99999 -92 % to -97 % (Fig. 18, proxy), -77 % to -86 % (Fig. 20, end to end).", "",
             "| figure | I/O size | alpha | baseline P99 / P99999 us | cheque P99 / P99999 us | P99 / P99999 change "
             "| recall / false hot | I/Os via cheque |", "|---|---|---|---|---|---|---|---|"]
    for x in r.rows:
        b, c = x["base"], x["cheque"]
        lines.append(f"| {x['fig']} | {x['size'][:-1]} KiB | {x['alpha']} | {b['p99']:.0f} / {b['p99999']:.0f} | "
                     f"{c['p99']:.0f} / {c['p99999']:.0f} | {pct(c['p99'], b['p99']):+.0f} % / "
                     f"{pct(c['p99999'], b['p99999']):+.0f} % | {x['recall']:.1f} % / {x['false_hot']:.2f} % | "
                     f"{x['cheques']} |")
    lines.append("")
    return lines
