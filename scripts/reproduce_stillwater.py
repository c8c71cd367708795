"""Still Water (Come Hell or Still Water, NSDI'26) §5: the cheque bucket on its own terms.

Imported by scripts/reproduce.py (experiment `stillwater_cheque`). Every row compares the main
bucket alone (the paper's baseline, `cheque_share: 0`) with the cheque bucket added, both with
the deferred I/Os re-offered in deferral order (`reoffer: fifo`, no host policy the paper does
not have), on `scenarios/dualbucket_hot_segments.yaml`'s proxy path (backend off, 100 % writes)
with one condition changed per row, to measure why the cheque alone does not move the
scenario's steady tail and which of the paper's conditions it needs. The last row is the
ablation the old headline used (`reoffer: steady_first`).
"""

import copy
import dataclasses

QS = ("p50", "p99", "p99999")
PROXY_ONLY = {"dist": "lognormal", "median": 0, "p99": 0}


@dataclasses.dataclass
class ChequeGap:
    """One dict per condition: ``label``, ``key`` (for the tests), ``steady_share`` (the steady
    segments' share of the issued load), ``base`` / ``cheque`` (steady latency percentiles in us,
    worst tenant), ``hot_p99`` (base, cheque) and ``cheques`` (I/Os admitted by the cheque)."""
    rows: list


def _steady(r):
    return {q: max(t["lat_steady_us"][q] for t in r.values() if "lat_steady_us" in t) for q in QS}


def _hot_p99(r):
    return max(t["lat_hot_us"]["p99"] for t in r.values() if "lat_hot_us" in t)


# (key, label, hot_share, dualbucket overrides, window_us or None)
CONDITIONS = (
    ("scenario", "the scenario: steady segments 20 % of the load (= the cheque)", 0.8, {}, None),
    ("steady10", "steady segments 10 % of the load (below the 20 % cheque)", 0.9, {}, None),
    ("steady5", "steady segments 5 % of the load", 0.95, {}, None),
    ("paper_alpha", "steady 10 %, the paper's alpha = 8000 and h_p = 330", 0.9,
     {"alpha": 8000, "headroom_mbps": 330}, None),
    ("paper_T", "steady 10 %, the paper's T = 10 ms (alpha, h_p fitted at 100 us)", 0.9, {}, 10000),
    ("steady_first", "ablation: the scenario with `reoffer: steady_first`", 0.8, {"reoffer": "steady_first"}, None),
    # Fig. 13: the whole path, the scenario's backend (the paper's 98 % proxy share of the P99999).
    ("end_to_end", "steady 10 %, end to end (Fig. 13: backend on)", 0.9, {}, None),
)


def _row(key, label, steady_share, base, cheque):
    """One table row of a cheque-alone experiment: the baseline run (main bucket alone) and the
    run with the cheque, both reports' tenants by name."""
    return {"key": key, "label": label, "steady_share": steady_share,
            "base": _steady(base), "cheque": _steady(cheque), "hot_p99": (_hot_p99(base), _hot_p99(cheque)),
            "cheques": sum(t["admitted_reserved"] for t in cheque.values())}


def _cells(row, pct):
    """The cells both tables share: baseline and cheque latencies, the changes, hot P99, cheques."""
    b, c = row["base"], row["cheque"]
    return (" / ".join(f"{b[q]:.0f}" for q in QS) + " | " + " / ".join(f"{c[q]:.0f}" for q in QS)
            + f" | {pct(c['p99'], b['p99']):+.0f} % | {pct(c['p99999'], b['p99999']):+.0f} % | "
            f"{row['hot_p99'][0]:.0f} / {row['hot_p99'][1]:.0f} | {row['cheques']} |")


def cheque_gap(run, load):
    base = load("dualbucket_hot_segments.yaml")
    base["dpu"]["backend_us"] = PROXY_ONLY
    base["dualbucket"]["reoffer"] = "fifo"
    rows = []
    for key, label, hot_share, over, window in CONDITIONS:
        sc = copy.deepcopy(base)
        if key == "end_to_end":
            sc["dpu"]["backend_us"] = load("dualbucket_hot_segments.yaml")["dpu"]["backend_us"]
        for t in sc["tenants"]:
            t["workload"]["hot_share"] = hot_share
        if window:
            sc["window_us"] = window
        sc["dualbucket"].update(over)
        d = run(sc, "dualbucket")[0]
        # The baseline is always the production limiter: main bucket alone, deferral order.
        sc["dualbucket"].update(cheque_share=0.0, reoffer="fifo")
        b = run(sc, "dualbucket")[0]
        rows.append(_row(key, label, 1.0 - hot_share, b, d))
    return ChequeGap(rows)


def cheque_gap_md(r, pct):
    lines = ["**Still Water Fig. 10, the cheque bucket alone** (`scenarios/dualbucket_hot_segments.yaml`, "
             "proxy path, 100 % writes; `scripts/reproduce.py --only stillwater_cheque`): the main bucket alone "
             "(baseline) against the cheque added, both re-offering deferred I/Os in deferral order, one "
             "condition changed per row (the last row: end to end, Fig. 13, paper P99999 -85 %). Steady segments' latency in us (P50 / P99 / P99999, worst tenant). "
             "Paper: steady P99 up to -96 %, P99999 up to -83 %.", "",
             "| condition | steady share of load | baseline | cheque | P99 change | P99999 change "
             "| hot P99 (base / cheque) | I/Os via cheque |", "|---|---|---|---|---|---|---|---|"]
    for row in r.rows:
        lines.append(f"| {row['label']} | {row['steady_share']:.0%} | " + _cells(row, pct))
    lines.append("")
    return lines


SIZES = ("8k", "16k", "32k", "64k")


@dataclasses.dataclass
class ChequeSizes:
    """Still Water Fig. 18 (Appendix B): one dict per I/O size, as ChequeGap's rows (``key`` = size)."""
    rows: list


def cheque_sizes(run, load, end_to_end=False):
    """Fig. 18: 8-64 KiB I/Os, 50 % writes, steady segments at 10 % of the load (below the cheque, as
    in `cheque_gap`'s headline row), cheque alone against the main bucket alone, proxy path.
    end_to_end: Fig. 20, the same with the scenario's backend on (as Fig. 13 is to Fig. 10)."""
    base = load("dualbucket_hot_segments.yaml")
    if not end_to_end:
        base["dpu"]["backend_us"] = PROXY_ONLY
    base["dualbucket"]["reoffer"] = "fifo"
    rows = []
    for size in SIZES:
        sc = copy.deepcopy(base)
        for t in sc["tenants"]:
            t["workload"].update(sizes={size: 1.0}, read_share=0.5, hot_share=0.9)
        d = run(sc, "dualbucket")[0]
        sc["dualbucket"]["cheque_share"] = 0.0
        b = run(sc, "dualbucket")[0]
        rows.append(_row(size, f"{size[:-1]} KiB", 0.1, b, d))
    return ChequeSizes(rows)


def cheque_sizes_md(r, pct, fig="Fig. 18", path="proxy path", only="stillwater_sizes",
                    paper="P99999 -92 % to -97 %, better with larger I/Os."):
    lines = [f"**Still Water {fig} (Appendix B), 8-64 KiB, cheque bucket alone** "
             f"(`scenarios/dualbucket_hot_segments.yaml`, 50 % writes, steady segments at 10 % of the load, "
             f"{path}; `scripts/reproduce.py --only {only}`). Paper: {paper}", "",
             "| I/O size | baseline P50 / P99 / P99999 | cheque P50 / P99 / P99999 | P99 change | P99999 change "
             "| hot P99 (base / cheque) | I/Os via cheque |", "|---|---|---|---|---|---|---|"]
    for row in r.rows:
        lines.append(f"| {row['label']} | " + _cells(row, pct))
    lines.append("")
    return lines


# §4.3's designs on the underloaded scenario (dpu.sa_loop): the event loop as deployed (FIFO,
# every task on the I/O thread), the thread split (FIFO, the offloadable tasks moved off), and the
# priority scheduler. §5.2 compares it "with only employing the thread split design", so ours runs
# it with the split's offload too; `priority_alone` (no split) is the sensitivity beside it.
DESIGNS = (("baseline", "fifo", False), ("split", "fifo", True), ("priority", "priority", True))
UNDERLOADED_MBPS = 200  # §5.2: "the load of each proxy server at 200MBps"
WRITE_SHARES = (1.0, 0.75, 0.5, 0.25)
UQS = ("p50", "p99", "p99999")


@dataclasses.dataclass
class Underloaded:
    """Still Water Fig. 11/12 (4 KiB, write share swept) or Fig. 19/21 (8-64 KiB, 50 % writes):
    one dict per point with ``key``, ``label``, ``proxy`` and ``e2e`` (design -> write latency
    percentiles in us, the `writes` tenant), ``priority_alone`` (proxy, no thread split) and
    ``unrelated`` (design -> I/O-unrelated tasks the SA threads ran, proxy runs)."""
    rows: list


def _underloaded_sc(load, size, write_share):
    sc = load("stillwater_underloaded.yaml")
    iops = UNDERLOADED_MBPS * 1e6 / (int(size[:-1]) * 1024)
    for t in sc["tenants"]:
        share = write_share if t["name"] == "writes" else 1.0 - write_share
        t["workload"].update(sizes={size: 1.0}, rate_iops=round(iops * share))
    return sc


def _loop(run, sc, policy, offload, backend):
    sc = copy.deepcopy(sc)
    sc["dpu"]["sa_loop"].update(policy=policy, offload=offload)
    if not backend:
        sc["dpu"]["backend_us"] = PROXY_ONLY
    r, rep = run(sc, "dualbucket")
    return {q: r["writes"]["lat_us"][q] for q in UQS}, rep["sa_loop"]["unrelated_tasks"]


def _underloaded_row(run, sc, key, label):
    row = {"key": key, "label": label, "proxy": {}, "e2e": {}, "unrelated": {}}
    for name, policy, offload in DESIGNS:
        row["proxy"][name], row["unrelated"][name] = _loop(run, sc, policy, offload, False)
        row["e2e"][name] = _loop(run, sc, policy, offload, True)[0]
    row["priority_alone"] = _loop(run, sc, "priority", False, False)[0]
    return row


def underloaded(run, load):
    """Fig. 12 (proxy, §5.2) and Fig. 11 (end to end, §5.3): 4 KiB at 200 MB/s, the write share
    swept; the write requests' latency under the three designs."""
    return Underloaded([_underloaded_row(run, _underloaded_sc(load, "4k", w), f"w{round(w * 100)}",
                                         f"{round(w * 100)} % writes") for w in WRITE_SHARES])


def underloaded_sizes(run, load):
    """Fig. 19 (proxy, §5.2) and Fig. 21 (end to end, §5.3): 8-64 KiB, 50 % writes, 200 MB/s."""
    return Underloaded([_underloaded_row(run, _underloaded_sc(load, s, 0.5), s, f"{s[:-1]} KiB") for s in SIZES])


def _underloaded_table(rows, path, pct):
    lines = ["| point | baseline P50 / P99 / P99999 | thread split | priority (+ split) | P99999 vs baseline "
             "| P99999 vs split | P99 vs split |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        d = row[path]
        cells = " | ".join(" / ".join(f"{d[n][q]:.0f}" for q in UQS) for n, _, _ in DESIGNS)
        p, b, s = d["priority"], d["baseline"], d["split"]
        lines.append(f"| {row['label']} | {cells} | {pct(p['p99999'], b['p99999']):+.0f} % "
                     f"| {pct(p['p99999'], s['p99999']):+.0f} % | {pct(p['p99'], s['p99']):+.0f} % |")
    return lines


def underloaded_md(r, pct, figs, setup, paper_proxy, paper_e2e):
    """figs = (proxy figure, end-to-end figure)."""
    alone = " / ".join(f"{row['priority_alone']['p99999']:.0f}" for row in r.rows)
    return ([f"**Still Water {figs[0]} (proxy, §5.2) and {figs[1]} (end to end, §5.3), the underloaded scenario** "
             f"(`scenarios/stillwater_underloaded.yaml`, {setup}, 200 MB/s; {figs[2]}): the write requests' latency "
             "in us under the SA thread's event loop as deployed (`sa_loop.policy: fifo`), the thread split "
             "(`offload: true`) and the §4.3 priority scheduler with the split (`policy: priority`). "
             f"Paper, proxy: {paper_proxy}", ""]
            + _underloaded_table(r.rows, "proxy", pct)
            + ["", f"End to end (the scenario's backend on). Paper: {paper_e2e}", ""]
            + _underloaded_table(r.rows, "e2e", pct)
            + ["", f"The priority scheduler without the split (`offload: false`), proxy P99999 per point: {alone} us.", ""])
