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
512 KiB per T, its hold N) beside the alternatives: requests with R = 16 per T (between a hot and a
steady segment's rate at 8-64 KiB), and every hold N in HOLDS on every figure's workload
(Fig. 10 at 10 % and 20 %, Fig. 13, Fig. 18 and Fig. 20 at 8-64 KiB): the hold's table (issue 20;
Fig. 14's hold rows are scripts/reproduce_stillwater_fig14.py's).
"""

import argparse
import copy
import dataclasses
import shutil
import sys

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
#: (key, label, hot_share, I/O size or None for the scenario's 4 KiB at 100 % writes, end to end,
#: alpha or None for the scenario's / SIZE_ALPHA's): the figures' workloads. 64 KiB also with the
#: mu-free alpha, a cheque above the steady demand: where a hold too short shows (N = 1).
WORKLOADS = (("fig10", "Fig. 10, 4 KiB, steady 10 %", 0.9, None, False, None),
             ("fig10_scenario", "Fig. 10, 4 KiB, the scenario (steady 20 %)", 0.8, None, False, None),
             ("fig13", "Fig. 13, 4 KiB, steady 10 %, end to end", 0.9, None, True, None)) + tuple(
    (f"fig18_{s}", f"Fig. 18, {s[:-1]} KiB", 0.9, s, False, None) for s in su.SIZES) + (
    ("fig18_64k_free", f"Fig. 18, 64 KiB, alpha {sw.ALPHA_64K_FREE} (mu free)", 0.9, "64k", False,
     sw.ALPHA_64K_FREE),) + tuple(
    (f"fig20_{s}", f"Fig. 20, {s[:-1]} KiB, end to end", 0.9, s, True, None) for s in su.SIZES)
#: The holds N measured on every workload (the paper prints none): 0 and 1 too short (below), 2-5
#: the range Fig. 14's trace asks about.
HOLDS = (0, 1, 2, 3, 4, 5)
#: (key, dualbucket overrides): the scenario's monitor and the alternatives; a hold equal to the
#: scenario's is its own row ("bytes") and is not run twice.
MONITORS = (("bytes", {}),) + tuple((f"bytes_n{n}", {"steady_intervals": n}) for n in HOLDS) + (
    ("requests", {"monitor_unit": "requests", "hot_threshold_iops": R_REQUESTS_T * 1_000_000 // T_US}),)
#: The monitors the first table shows per workload (the holds have their own table).
UNIT_TABLE = ("bytes", "requests")


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
    ``cheques``, ``hold`` (its N), ``unit``; ``hold``: the scenario's N, ``r_kib``: its R in KiB per T."""
    rows: list
    hold: int
    r_kib: int


def monitor(run, load, workloads=WORKLOADS, monitors=MONITORS):
    """Every row of the page; the held tests pass subsets of WORKLOADS and MONITORS (the same rows).
    ``Monitor.hold``: the scenario's N."""
    rows = []
    hold = load("dualbucket_hot_segments.yaml")["dualbucket"]["steady_intervals"]
    for wkey, wlabel, hot_share, size, e2e, alpha in workloads:
        sc = su._hot_sc(load, size, end_to_end=e2e, hot_share=hot_share)
        if alpha or size:
            sc["dualbucket"]["alpha"] = alpha or sw.SIZE_ALPHA[size]
        b = copy.deepcopy(sc)
        b["dualbucket"]["cheque_share"] = 0.0
        base = sw._steady(run(b, "dualbucket")[0])
        for mkey, over in monitors:
            if over and all(sc["dualbucket"].get(k) == v for k, v in over.items()):
                continue  # the scenario's own monitor: the "bytes" row
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
                         "hold": s["dualbucket"]["steady_intervals"], "unit": s["dualbucket"]["monitor_unit"],
                         "change": {q: 100.0 * (st[q] - base[q]) / base[q] for q in ("p99", "p99999")}})
    return Monitor(rows, hold, r_bytes_t(load) // 1024)


def monitor_md(m, pct):
    lines = ["**Still Water §4.2, the monitor at the default T = 10 ms** (`scripts/reproduce.py --only "
             "stillwater_monitor`; `scenarios/dualbucket_hot_segments.yaml`, main bucket metered, the cheque alone "
             "against the main bucket alone, deferral-order re-offers, proxy path unless end to end; Fig. 18 at "
             "50 % writes with alpha fitted per size). Recall: hot segments' new I/Os taken as hot; false hot: "
             "steady segments' new I/Os taken as hot.", "",
             "| workload | monitor | steady P99 / P99999 change | recall / false hot | I/Os via cheque |",
             "|---|---|---|---|---|"]
    for x in m.rows:
        if x["key"].split("/")[1] in UNIT_TABLE:
            lines.append(f"| {x['label']} | {x['monitor']} | {x['change']['p99']:+.0f} % / "
                         f"{x['change']['p99999']:+.0f} % | {x['recall']:.2f} % / {x['false_hot']:.2f} % | "
                         f"{x['cheques']} |")
    lines.append("")
    return lines + hold_md(m)


def hold_md(m, command="the same runs as the table above: `scripts/reproduce.py --only stillwater_monitor`"):
    """The hold N on every workload: counting bytes at the scenario's R, one column per N."""
    cells, labels = {}, {}
    for x in m.rows:
        if x["unit"] == "bytes":
            wkey = x["key"].split("/")[0]
            labels[wkey] = x["label"]
            cells.setdefault(wkey, {})[x["hold"]] = x
    holds = sorted({n for per in cells.values() for n in per})
    lines = ["**Still Water §4.2, the monitor's hold N on every dual-bucket figure at the default T = 10 ms** "
             f"({command}; counting bytes, R = {m.r_kib} KiB per T; the scenario's N = {m.hold}). Each cell: the "
             "steady segments' P99 / P99999 change vs the main bucket alone, and the monitor's recall / false hot "
             "(%).", "",
             "| workload | " + " | ".join(f"N = {n}" + (" (the scenario)" if n == m.hold else "") for n in holds) + " |",
             "|---|" + "---|" * len(holds)]
    for wkey, per in cells.items():
        lines.append(f"| {labels[wkey]} | " + " | ".join(
            f"{per[n]['change']['p99']:+.0f} / {per[n]['change']['p99999']:+.0f} % "
            f"({per[n]['recall']:.2f} / {per[n]['false_hot']:.2f})" if n in per else "" for n in holds) + " |")
    lines.append("")
    return lines


def main():
    """The hold's table at other seeds of the scenario: how far a row moves with the seed alone,
    the noise a difference between two holds must exceed (docs/results.md, Still Water)."""
    ap = argparse.ArgumentParser(description="Still Water's monitor hold N on the dual-bucket figures, per seed of "
                                             "scenarios/dualbucket_hot_segments.yaml (the stillwater_monitor runs)")
    ap.add_argument("--seeds", default="2,3,4,5", help="comma-separated scenario seeds (default 2,3,4,5; 2: the scenario's)")
    ap.add_argument("--workloads", default="fig10,fig10_scenario,fig13",
                    help="comma-separated, of: " + ",".join(w[0] for w in WORKLOADS))
    ap.add_argument("--holds", default="2,3,4,5", help="comma-separated N (default 2,3,4,5)")
    args = ap.parse_args()
    known = {w[0]: w for w in WORKLOADS}
    import reproduce as rp
    from burstgate.regmap import C
    seeds = rp.int_list("reproduce_metered", "--seeds", args.seeds, 0, 2**64 - 1)
    holds = rp.int_list("reproduce_metered", "--holds", args.holds, 0, C["SEGMON_STEADY_MAX"])
    if bad := [w for w in args.workloads.split(",") if w not in known]:
        sys.exit(f"reproduce_metered: --workloads: unknown {','.join(bad)} (one of {','.join(known)})")
    run = rp.sim_runner("reproduce_metered")
    monitors = [("bytes", {})] + [(f"bytes_n{n}", {"steady_intervals": n}) for n in holds]
    for seed in seeds:
        def load(name, seed=seed):
            sc = rp.load(name)
            if name == "dualbucket_hot_segments.yaml":
                sc["seed"] = seed
            return sc
        m = monitor(run, load, [known[w] for w in args.workloads.split(",")], monitors)
        print("\n".join(hold_md(m, f"seed {seed}: `scripts/reproduce_metered.py --seeds {seed} --workloads "
                                     f"{args.workloads} --holds {args.holds}`")))
    shutil.rmtree(run.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
