"""Still Water at the paper's T = 10 ms with the main bucket metered within the window
(`dualbucket.main_slices`), the default of scenarios/dualbucket_hot_segments.yaml: the monitor's
unit, R and N (experiment `stillwater_monitor` of scripts/reproduce.py), and the T = 10 ms
settings scripts/fit_alpha_t10ms.py starts from.

Still Water's main bucket "functions as usual" -- a token bucket whose tokens arrive
continuously -- and T is the cheque's interval. With the window's tokens at the tick the SA sees
one clump per 10 ms and Eq. (1) does not fit (scripts/fit_alpha_t10ms.py); with 100 slices of
100 us it fits and the cheque reproduces Fig. 10, 13, 18 and 20 at 4-32 KiB (the
`stillwater_cheque` / `stillwater_sizes` experiments). The paper prints no R and no N: this
experiment measures, per figure and I/O size, the monitor's recall (hot segments' new I/Os taken
as hot) and false hot (steady segments' new I/Os taken as hot) with the scenario's choice (bytes,
512 KiB per T, N = 2) beside the alternatives: requests with R = 16 per T (between a hot and a
steady segment's rate at 8-64 KiB), N = 0 and N = 1.
"""

import copy
import dataclasses

import reproduce_segunit as su
import reproduce_stillwater as sw

T_US = 10000
HEADROOM_SHARE = 330 / 2130  # the paper's h_p of its mu (Fig. 6)
#: R counting requests at T = 10 ms, for scripts/fit_alpha_t10ms.py's `--r chosen` and the
#: `stillwater_monitor` row beside the scenario's bytes: on the Fig. 18 scenario a hot segment
#: serves 0.9 x 1.68 GB/s / 8 = 189 MB/s (230 8 KiB / 29 64 KiB requests per 10 ms), a steady one
#: 0.1 x 1.68 GB/s / 32 = 5.2 MB/s (6.4 / 0.8 requests), so 16 per T lies between at 8-64 KiB;
#: at 4 KiB a steady segment sends 13 (Fig. 10's 10 %) to 26 (the scenario's 20 %) per T.
R_REQUESTS_T = 16
SLICES = 100
#: (key, label, hot_share, I/O size or None for the scenario's 4 KiB
#: at 100 % writes, end to end): the figures' workloads.
WORKLOADS = (("fig10", "Fig. 10, 4 KiB, steady 10 %", 0.9, None, False),
             ("fig10_scenario", "Fig. 10, 4 KiB, the scenario (steady 20 %)", 0.8, None, False),
             ("fig13", "Fig. 13, 4 KiB, steady 10 %, end to end", 0.9, None, True)) + tuple(
    (f"fig18_{s}", f"Fig. 18, {s[:-1]} KiB", 0.9, s, False) for s in su.SIZES)
#: (key, dualbucket overrides): the scenario's monitor and the alternatives.
MONITORS = (("bytes", {}), ("bytes_n0", {"steady_intervals": 0}), ("bytes_n1", {"steady_intervals": 1}),
            ("requests", {"monitor_unit": "requests", "hot_threshold_iops": R_REQUESTS_T * 1_000_000 // T_US}))


def _monitor_label(db, T_us, scenario):
    """What a monitor row runs, read off its dualbucket section."""
    if db.get("monitor_unit") == "bytes":
        r = f"bytes, R = {db['hot_threshold_bps'] * T_us // 1_000_000 // 1024} KiB per T"
    else:
        r = f"requests, R = {db['hot_threshold_iops'] * T_us // 1_000_000} per T"
    return f"{r}, N = {db['steady_intervals']}" + (" (the scenario)" if scenario else "")


def t10ms_sc(load, size, end_to_end=False, slices=1):
    """The Fig. 18 scenario (reproduce_segunit._hot_sc) of the variation `t100us` (its alpha, the
    monitor counting requests, R = 5 per 100 us scaled with T) at T = 10 ms, ``slices`` per window:
    what scripts/fit_alpha_t10ms.py fits and runs."""
    sc = su._hot_sc(sw.t100us_load(load), size, end_to_end=end_to_end)
    sc["window_us"] = T_US
    sc["dualbucket"]["main_slices"] = slices
    return sc


def r_bytes_t(load):
    """The scenario's R in bytes per T (its `hot_threshold_bps` x T): the one place it is set."""
    sc = load("dualbucket_hot_segments.yaml")
    return sc["dualbucket"]["hot_threshold_bps"] * sc["window_us"] // 1_000_000


@dataclasses.dataclass
class Monitor:
    """One dict per (workload, monitor): ``key`` ("<workload>/<monitor>"), ``label``, ``monitor``,
    ``change`` (steady P99 / P99999 % vs the main bucket alone), ``recall`` / ``false_hot`` %,
    ``cheques``."""
    rows: list


def monitor(run, load, workloads=WORKLOADS):
    """Every row of the page; the held test passes a subset of WORKLOADS (the same rows)."""
    rows = []
    for wkey, wlabel, hot_share, size, e2e in workloads:
        sc = su._hot_sc(load, size, end_to_end=e2e, hot_share=hot_share)
        if size:
            sc["dualbucket"]["alpha"] = sw.SIZE_ALPHA[size]
        b = copy.deepcopy(sc)
        b["dualbucket"]["cheque_share"] = 0.0
        base = sw._steady(run(b, "dualbucket")[0])
        for mkey, over in MONITORS:
            s = copy.deepcopy(sc)
            if over.get("monitor_unit") == "requests":
                s["dualbucket"].pop("hot_threshold_bps")
            s["dualbucket"].update(over)
            mlabel = _monitor_label(s["dualbucket"], s["window_us"], not over)
            r = run(s, "dualbucket")[0]
            st = sw._steady(r)
            recall, false_hot = sw.monitor(r)
            rows.append({"key": f"{wkey}/{mkey}", "label": wlabel, "monitor": mlabel, "recall": recall,
                         "false_hot": false_hot, "cheques": sum(t["admitted_reserved"] for t in r.values()),
                         "change": {q: 100.0 * (st[q] - base[q]) / base[q] for q in ("p99", "p99999")}})
    return Monitor(rows)


def monitor_md(m, pct):
    lines = ["**Still Water §4.2, the monitor at the default T = 10 ms** (`scripts/reproduce.py --only "
             "stillwater_monitor`; `scenarios/dualbucket_hot_segments.yaml`, main bucket metered, the cheque alone "
             "against the main bucket alone, deferral-order re-offers, proxy path unless end to end; Fig. 18 at "
             "50 % writes with alpha fitted per size). Recall: hot segments' new I/Os taken as hot; false hot: "
             "steady segments' new I/Os taken as hot.", "",
             "| workload | monitor | steady P99 / P99999 change | recall / false hot | I/Os via cheque |",
             "|---|---|---|---|---|"]
    for x in m.rows:
        lines.append(f"| {x['label']} | {x['monitor']} | {x['change']['p99']:+.0f} % / {x['change']['p99999']:+.0f} % "
                     f"| {x['recall']:.2f} % / {x['false_hot']:.2f} % | {x['cheques']} |")
    lines.append("")
    return lines
