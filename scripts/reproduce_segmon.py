"""Still Water §4.2's segment monitor counting requests: the threshold R and hysteresis N.

Imported by scripts/reproduce.py (experiment `stillwater_threshold`). The monitor counts "the
volume of requests served by a segment" in an interval; a deferred I/O offered again carries the
descriptor's reoffer bit and is classified but not counted. The paper prints no R and no N, so
this experiment measures the choice on `scenarios/dualbucket_hot_segments.yaml`: the Fig. 10
headline row (steady segments at 10 % of the load, the cheque alone, deferral-order re-offers,
proxy path) for R and N around the scenario's, with the monitor's recall (the hot segments'
new I/Os it took as hot) and its false positives (the steady segments' new I/Os it took as
hot). A last table gives the hot segments' request rate per interval at 8-32 KiB with the
scenario's R and N: in a closed loop a segment's request rate is its share of what is served,
which halves with each doubling of the I/O size.
"""

import copy
import dataclasses

QS = ("p50", "p99", "p99999")
PROXY_ONLY = {"dist": "lognormal", "median": 0, "p99": 0}
#: (R per interval, N intervals) beside the scenario's.
GRID = ((2, 5), (3, 50), (4, 5), (4, 50), (5, 5), (5, 20), (5, 50), (6, 50))
SIZES = ("8k", "16k", "32k")


@dataclasses.dataclass
class Threshold:
    """``scenario``: (R, N) of the scenario; ``base``: the main bucket alone's steady latency;
    ``rows``: one dict per (R, N) (``r``, ``n``, ``steady`` percentiles in us, ``recall`` and
    ``false_hot`` in %, ``cheques``); ``sizes``: one dict per I/O size at the scenario's R and N
    (``size``, ``hot_rate`` requests per hot segment per interval, ``recall``, ``steady``
    percentiles with the cheque and ``base`` without)."""
    scenario: tuple
    base: dict
    rows: list
    sizes: list


def _steady(r):
    return {q: max(t["lat_steady_us"][q] for t in r.values() if "lat_steady_us" in t) for q in QS}


def _monitor(r, sc):
    """(recall %, false hot %, hot requests per hot segment per interval) of one report."""
    hot_n = sum(t["hot_new"] for t in r.values() if "hot_new" in t)
    steady_n = sum(t["lat_steady_us"]["count"] for t in r.values() if "lat_steady_us" in t)
    recall = 100.0 * sum(t["hot_new_as_hot"] for t in r.values() if "hot_new_as_hot" in t) / hot_n
    false_hot = 100.0 * sum(t["steady_new_as_hot"] for t in r.values() if "steady_new_as_hot" in t) / steady_n
    segments = sum(t["workload"]["hot_segments"] for t in sc["tenants"])
    intervals = (sc["duration_ms"] - sc["warmup_ms"]) * 1000 / sc["window_us"]
    return recall, false_hot, hot_n / segments / intervals


def _scenario(load):
    sc = load("dualbucket_hot_segments.yaml")
    sc["dpu"]["backend_us"] = PROXY_ONLY
    sc["dualbucket"]["reoffer"] = "fifo"
    for t in sc["tenants"]:
        t["workload"]["hot_share"] = 0.9
    return sc


def _set_rn(sc, r, n):
    sc["dualbucket"].update(hot_threshold_iops=r * 1_000_000 // sc["window_us"], steady_intervals=n)


def threshold(run, load):
    base_sc = _scenario(load)
    db = base_sc["dualbucket"]
    scenario = (db["hot_threshold_iops"] * base_sc["window_us"] // 1_000_000, db["steady_intervals"])
    sc = copy.deepcopy(base_sc)
    sc["dualbucket"]["cheque_share"] = 0.0
    base = _steady(run(sc, "dualbucket")[0])
    rows = []
    for r, n in GRID:
        sc = copy.deepcopy(base_sc)
        _set_rn(sc, r, n)
        rep = run(sc, "dualbucket")[0]
        recall, false_hot, _ = _monitor(rep, sc)
        rows.append({"r": r, "n": n, "steady": _steady(rep), "recall": recall, "false_hot": false_hot,
                     "cheques": sum(t["admitted_reserved"] for t in rep.values())})
    sizes = []
    for size in SIZES:
        sc = copy.deepcopy(base_sc)
        for t in sc["tenants"]:
            t["workload"].update(sizes={size: 1.0}, read_share=0.5)
        rep = run(sc, "dualbucket")[0]
        recall, _, rate = _monitor(rep, sc)
        sc["dualbucket"]["cheque_share"] = 0.0
        b = _steady(run(sc, "dualbucket")[0])
        sizes.append({"size": size, "hot_rate": rate, "recall": recall, "steady": _steady(rep), "base": b})
    return Threshold(scenario, base, rows, sizes)


def threshold_md(t, pct):
    b = t.base
    lines = ["**Still Water §4.2, the monitor's R and N with requests counted** (`scripts/reproduce.py --only "
             "stillwater_threshold`, `scripts/reproduce_segmon.py`; `scenarios/dualbucket_hot_segments.yaml`, steady "
             "segments at 10 % of the load, the cheque alone, deferral-order re-offers, proxy path, 100 % writes). "
             f"The scenario: R = {t.scenario[0]} requests per 100 us interval, N = {t.scenario[1]}. Recall: the hot "
             "segments' new I/Os the monitor took as hot; false hot: the steady segments' new I/Os it took as hot. "
             f"Baseline (main bucket alone) steady P50 / P99 / P99999: {b['p50']:.0f} / {b['p99']:.0f} / "
             f"{b['p99999']:.0f} us. The paper prints no R and no N.", "",
             "| R per interval | N | steady P50 / P99 / P99999 us | P99 change | P99999 change | recall | false hot "
             "| I/Os via cheque |", "|---|---|---|---|---|---|---|---|"]
    for row in t.rows:
        s = row["steady"]
        mark = " (scenario)" if (row["r"], row["n"]) == tuple(t.scenario) else ""
        lines.append(f"| {row['r']}{mark} | {row['n']} | {s['p50']:.0f} / {s['p99']:.0f} / {s['p99999']:.0f} | "
                     f"{pct(s['p99'], b['p99']):+.0f} % | {pct(s['p99999'], b['p99999']):+.0f} % | "
                     f"{row['recall']:.1f} % | {row['false_hot']:.3f} % | {row['cheques']} |")
    lines += ["", "The same at the scenario's R and N, 50 % writes, by I/O size (a hot segment's requests per "
              "interval fall with the size, so a fixed R stops marking it hot):", "",
              "| I/O size | hot segment requests per interval | recall | baseline steady P99 / P99999 us "
              "| cheque steady P99 / P99999 us | P99999 change |", "|---|---|---|---|---|---|"]
    for row in t.sizes:
        s, bs = row["steady"], row["base"]
        lines.append(f"| {row['size'][:-1]} KiB | {row['hot_rate']:.2f} | {row['recall']:.1f} % | "
                     f"{bs['p99']:.0f} / {bs['p99999']:.0f} | {s['p99']:.0f} / {s['p99999']:.0f} | "
                     f"{pct(s['p99999'], bs['p99999']):+.0f} % |")
    lines.append("")
    return lines
