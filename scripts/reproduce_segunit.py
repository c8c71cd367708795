"""Still Water §4.2's segment monitor with its count in requests or in bytes (`monitor_unit`).

Imported by scripts/reproduce.py (experiments `stillwater_unit` and `stillwater_unit_threshold`).
§4.2 reads both ways: "we calculate the I/O request rate of each segment under a fixed interval
T ... If the volume of requests served by a segment in the current interval exceeds the
predefined threshold R". `requests` (the default) counts requests, the printed "I/O request
rate"; `bytes` counts their volume in bytes (the hardware counts 512-byte sectors, exact for
sector-multiple sizes) against R in bytes per T. The rule for R in bytes: the 4 KiB figures
unchanged, R_bytes = R x 4 KiB (the scenario's 5 requests per 100 us: 20 KiB), which is
`hot_threshold_bps`'s default. `stillwater_unit_threshold` measures other R_bytes per size.

`stillwater_unit`: Fig. 10 (4 KiB), Fig. 18 and Fig. 20 (8-64 KiB) with the cheque alone, and
Fig. 11 / 12 (4 KiB, the §4.3 scheduler on the underloaded scenario), each under both units;
64 KiB also with T = 200 us and the paper's T = 10 ms (one 100 us cheque is smaller than one
64 KiB I/O).
"""

import copy
import dataclasses

import reproduce_stillwater as sw

QS = ("p50", "p99", "p99999")
UNITS = ("requests", "bytes")
SIZES = ("8k", "16k", "32k", "64k")
#: R_bytes swept, in 4 KiB (the scenario's R = 5 requests is 5).
R_4K = (2, 5, 8, 16)
SWEEP_SIZES = ("4k", "8k", "16k", "32k", "64k")
#: (size, T in us) beside the scenario's 100 us: 64 KiB at 200 us (a cheque holds one I/O), and
#: every size at the paper's T = 10 ms.
WINDOWS = (("64k", 200),) + tuple((s, 10000) for s in SIZES)


def _unit(sc, unit, r_bytes=None):
    sc["dualbucket"]["monitor_unit"] = unit
    if r_bytes is not None:
        sc["dualbucket"]["hot_threshold_bps"] = r_bytes * 1_000_000 // sc["window_us"]


def _hot_sc(load, size=None, end_to_end=False, hot_share=0.9):
    """dualbucket_hot_segments.yaml with the steady segments at 10 % of the load, deferral-order
    re-offers, proxy path unless ``end_to_end``; ``size`` (and 50 % writes) for Fig. 18 / 20."""
    sc = load("dualbucket_hot_segments.yaml")
    if not end_to_end:
        sc["dpu"]["backend_us"] = sw.PROXY_ONLY
    sc["dualbucket"]["reoffer"] = "fifo"
    for t in sc["tenants"]:
        t["workload"]["hot_share"] = hot_share
        if size:
            t["workload"].update(sizes={size: 1.0}, read_share=0.5)
    return sc


_monitor = sw.monitor


def _cheque_row(run, sc, key, label):
    """The main bucket alone, then the cheque under each unit, on one scenario."""
    b = copy.deepcopy(sc)
    b["dualbucket"]["cheque_share"] = 0.0
    base = run(b, "dualbucket")[0]
    row = {"key": key, "label": label, "base": sw._steady(base), "units": {}}
    for unit in UNITS:
        s = copy.deepcopy(sc)
        _unit(s, unit)
        r = run(s, "dualbucket")[0]
        recall, false_hot = _monitor(r)
        row["units"][unit] = {"steady": sw._steady(r), "hot_p99": sw._hot_p99(r), "recall": recall,
                              "false_hot": false_hot, "cheques": sum(t["admitted_reserved"] for t in r.values())}
    return row


@dataclasses.dataclass
class Units:
    """``cheque``: one dict per row (``key``, ``label``, ``base`` steady percentiles us, ``units``:
    unit -> ``steady``, ``hot_p99``, ``recall``, ``false_hot`` %, ``cheques``), keys ``fig10``,
    ``fig18_<size>``, ``fig20_<size>``, ``fig18_<size>_T<us>``. ``underloaded``: one dict per write
    share (``label``, ``proxy`` / ``e2e``: unit -> write latency percentiles us, priority design)."""
    cheque: list
    underloaded: list


def units(run, load, sizes=SIZES, e2e_sizes=SIZES, windows=WINDOWS, write_shares=None):
    """Every row of the page; the held tests (tests/unit/test_headlines_stillwater_unit.py) pass
    subsets to stay within make test's budget: the same rows, the same numbers."""
    rows = [_cheque_row(run, _hot_sc(load), "fig10", "Fig. 10, 4 KiB, 100 % writes, proxy")]
    for size in sizes:
        rows.append(_cheque_row(run, _hot_sc(load, size), f"fig18_{size}", f"Fig. 18, {size[:-1]} KiB, proxy"))
    for size in e2e_sizes:
        rows.append(_cheque_row(run, _hot_sc(load, size, end_to_end=True), f"fig20_{size}",
                                f"Fig. 20, {size[:-1]} KiB, end to end"))
    for size, window in windows:
        sc = _hot_sc(load, size)
        sc["window_us"] = window
        # Both units scaled to the window: R = 50000 IOPS x T requests, R x 4 KiB bytes.
        rows.append(_cheque_row(run, sc, f"fig18_{size}_T{window}",
                                f"Fig. 18, {size[:-1]} KiB, proxy, T = {window / 1000:g} ms"))
    under = []
    for w in sw.WRITE_SHARES if write_shares is None else write_shares:
        sc = sw._underloaded_sc(load, "4k", w)
        row = {"label": f"{round(w * 100)} % writes", "proxy": {}, "e2e": {}}
        for unit in UNITS:
            s = copy.deepcopy(sc)
            _unit(s, unit)
            row["proxy"][unit] = sw._loop(run, s, "priority", True, False)[0]
            row["e2e"][unit] = sw._loop(run, s, "priority", True, True)[0]
        under.append(row)
    return Units(rows, under)


def units_md(u, pct):
    lines = ["**Still Water §4.2, the monitor's unit: requests (default) or bytes** (`scripts/reproduce.py --only "
             "stillwater_unit`, `scripts/reproduce_segunit.py`; `scenarios/dualbucket_hot_segments.yaml`, steady "
             "segments at 10 % of the load, the cheque alone against the main bucket alone, deferral-order "
             "re-offers; Fig. 18 / 20 at 50 % writes). R: 5 requests per 100 us, or R × 4 KiB = 20 KiB per 100 us "
             "(`hot_threshold_bps` default), both scaled with T. Steady segments' P99 / P99999 change vs the "
             "main bucket alone; recall: hot segments' new I/Os taken as hot; false hot: steady segments' new I/Os "
             "taken as hot.", "",
             "| figure | baseline P99 / P99999 us | requests: P99 / P99999 change | recall / false hot | bytes: P99 "
             "/ P99999 change | recall / false hot | I/Os via cheque (requests / bytes) |",
             "|---|---|---|---|---|---|---|"]
    for row in u.cheque:
        b = row["base"]
        cells = [row["label"], f"{b['p99']:.0f} / {b['p99999']:.0f}"]
        for unit in UNITS:
            x = row["units"][unit]
            s = x["steady"]
            cells += [f"{pct(s['p99'], b['p99']):+.0f} % / {pct(s['p99999'], b['p99999']):+.0f} %",
                      f"{x['recall']:.1f} % / {x['false_hot']:.2f} %"]
        cells.append(f"{row['units']['requests']['cheques']} / {row['units']['bytes']['cheques']}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Fig. 12 (proxy) and Fig. 11 (end to end), 4 KiB at 200 MB/s, the §4.3 priority scheduler with the "
              "thread split, write P50 / P99 / P99999 us under each unit:", "",
              "| write share | proxy, requests | proxy, bytes | end to end, requests | end to end, bytes |",
              "|---|---|---|---|---|"]
    for row in u.underloaded:
        cells = [row["label"]] + [" / ".join(f"{row[p][unit][q]:.0f}" for q in QS)
                                  for p in ("proxy", "e2e") for unit in UNITS]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


@dataclasses.dataclass
class UnitThreshold:
    """``rows``: one dict per (size, R_bytes in 4 KiB) under the bytes unit (``size``, ``r4k``,
    ``change`` P99 / P99999 %, ``recall``, ``false_hot``); ``base``: size -> steady percentiles
    of the main bucket alone. Proxy path, 50 % writes (4 KiB: 100 %, Fig. 10's)."""
    rows: list
    base: dict


def unit_threshold(run, load):
    rows, base = [], {}
    for size in SWEEP_SIZES:
        sc = _hot_sc(load, None if size == "4k" else size)
        b = copy.deepcopy(sc)
        b["dualbucket"]["cheque_share"] = 0.0
        base[size] = sw._steady(run(b, "dualbucket")[0])
        for r4k in R_4K:
            s = copy.deepcopy(sc)
            _unit(s, "bytes", r4k * 4096)
            r = run(s, "dualbucket")[0]
            recall, false_hot = _monitor(r)
            st = sw._steady(r)
            rows.append({"size": size, "r4k": r4k, "recall": recall, "false_hot": false_hot,
                         "change": {q: 100.0 * (st[q] - base[size][q]) / base[size][q] for q in ("p99", "p99999")}})
    return UnitThreshold(rows, base)


def unit_threshold_md(t, pct):
    lines = ["**Still Water §4.2, R in bytes per 100 us by I/O size** (`scripts/reproduce.py --only "
             "stillwater_unit_threshold`; the `stillwater_unit` scenario, bytes unit, proxy path; 4 KiB at 100 % "
             "writes, 8-64 KiB at 50 %). Each cell: steady P99999 change vs the main bucket alone, and the "
             "monitor's recall / false hot.", "",
             "| R per 100 us | " + " | ".join(f"{s[:-1]} KiB" for s in SWEEP_SIZES) + " |",
             "|---|" + "---|" * len(SWEEP_SIZES)]
    for r4k in R_4K:
        cells = [f"{r4k * 4} KiB" + (" (R × 4 KiB)" if r4k == 5 else "")]
        for size in SWEEP_SIZES:
            row = next(x for x in t.rows if x["size"] == size and x["r4k"] == r4k)
            cells.append(f"{row['change']['p99999']:+.0f} % ({row['recall']:.0f} / {row['false_hot']:.1f} %)")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines
