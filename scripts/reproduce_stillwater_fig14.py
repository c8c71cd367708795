"""Still Water (Come Hell or Still Water, NSDI'26) §5.4 Fig. 14: the "I/O-intensive trace".

Imported by scripts/reproduce.py (experiment `stillwater_fig14`). The paper replays, per I/O, a
production trace "recorded in the cluster where major clients possess I/O-intensive tasks,
introducing frequent traffic bursts in the entire cluster" and reports that dual-bucket
throttling "decreases the P99999 tail latency of innocent I/O requests by 71%" (Fig. 14a and
14b; the text prints nothing else of the figure, not even its panels' captions). The trace is
not published, so `write_trace` writes a seeded synthetic one with the statistics the paper
prints of its production clusters (§3.1, §4.2), into the run's temporary folder (nothing is
committed), and `fig14` replays it on `scenarios/dualbucket_hot_segments.yaml`'s DPU and
dual-bucket settings (the default: T = 10 ms, main bucket metered, the scenario's monitor and
hold N), the cheque alone (`reoffer: fifo`) against the main bucket alone (`cheque_share: 0`), as the
`stillwater_cheque` rows do.

What the paper prints, and where each number enters:
- "the top three [users], on average, account for 63%" of a cluster's traffic (§3.1):
  MAJOR_SHARE, the major clients' share of the trace's I/Os (all 4 KiB, so of its bytes too).
- "Major clients (i.e., top three) own 51% of the total VDs in the cluster" (§3.1): MAJOR_VDS
  of VDS (25 of 49, 51.0 %).
- "the CV of all segments' load from the top 3 major clients [...] could be up to 553 and the
  average value is 47.7" (§3.1; §4.2: "the average CV of segments in the same VD is 47.7"):
  SEGMENT_CV, the average, over every segment of the major clients (idle ones included) of its
  load over the whole trace. The maximum cannot be held: N loads have a CV of at most
  sqrt(N - 1), and the datapath has 4096 segments (at most 64).
- bursts "typically last ten to hundreds of milliseconds", "the majority of the bursts last less
  than 100ms" (§3.1, §4.2): BURST_MS, each burst's length log-uniform in 10-100 ms.
- the proxy's limit (1.2 GB/s of its mu = 2.13 GB/s) is the "100% load" that bursts cross
  (§3.1, Fig. 5): the scenario's main bucket (`main_share` 0.56 of the 3 GB/s limit), the unit
  of every load below.
- "the 'innocent' users" are the minor clients (§3.1, RQ2): every VD that is not a major
  client's is labelled innocent, and Fig. 14's innocent I/O requests are theirs.
- 4 KiB is "the dominant I/O size in production" (§5.2): every I/O is 4 KiB.

What the paper does not print, and what is chosen here:
- the trace's length (DURATION_MS, 2 s) and VD count (49);
- how the 63 % splits among the three (CLIENT_SPLIT: 85 / 10 / 5 %, the top user 53.5 % of the
  traffic, below the printed "up to 95%"): with N segments CV^2 + 1 = N * sum(load share^2), so
  the printed 47.7 needs a load concentrated on a few segments; split 1/k (34 / 17 / 11 %), 3840
  segments hold at most a CV of 39 (the row `split_1k` runs it at 33);
- the number of the major clients' segments (MAJOR_SEGMENTS, 3840 of the datapath's 4096, the
  rest the innocent VDs') and the law of their loads: Zipf over each client's segments, the
  exponent solved for SEGMENT_CV (3.58: the busiest segment carries 76 % of the major clients'
  I/Os); a client's ranked segments are dealt round robin over its VDs;
- an innocent VD's segments (10, the paper's 320 GiB example VD of 32 GiB segments) and its
  load (weight uniform in 0.5-1.5 of the mean);
- the load: INNOCENT_LOAD, the innocent VDs' demand, 0.10 of the main bucket, so that the steady
  segments' demand during a burst (the innocent VDs plus the major clients' segments below R,
  0.06) is 80 % of the 20 % cheque, which the paper sized "based on field statistics" to let
  "the steady segments overdraw enough tokens" (0.15 is the row `innocent15`); BURST_PEAK, the
  total during a burst, 1.5; DUTY, the time in bursts after the warm-up, 10 %. With MAJOR_SHARE
  they fix the major clients' quiet rate (total quiet load 0.14, average 0.27);
- a burst raises the major clients' rate, each I/O drawing its segment from the same Zipf
  weights, so it lands on their few loaded segments (the paper: bursts "only target a small
  portion of the Logical Block Address (LBA) space"); arrivals are Poisson within each period;
  50 % reads (the production mix is not printed).
"""

import argparse
import bisect
import dataclasses
import math
import random
import shutil
import sys

import numpy

MAJOR_SHARE = 0.63
MAJOR_CLIENTS = 3
VDS = 49
MAJOR_VDS = 25          # 25 / 49 = 51.0 % of the VDs
SEGMENT_CV = 47.7
CLIENT_SPLIT = (0.85, 0.10, 0.05)  # of MAJOR_SHARE
MAJOR_SEGMENTS = 3840
INNOCENT_SEGMENTS = 10  # per innocent VD: 3840 + 24 x 10 = 4080 of the datapath's 4096
BURST_MS = (10.0, 100.0)
BURST_PEAK = 1.5
DUTY = 0.10
INNOCENT_LOAD = 0.10
READ_SHARE = 0.5
IO_BYTES = 4096
DURATION_MS = 2000
SEED = 14
#: Every VD's provisioned base: the scenario's runs without per-tenant contracts
#: (`tenant_contracts: false`, Still Water as printed), so it only has to fit the DPU for 49 VDs.
VD_BASE = {"iops": 2000, "mbps": 8}
SEGMENT_BYTES = 1 << 30  # the simulator's default `segment_size` (1024m)
QS = ("p50", "p99", "p999", "p9999", "p99999")
QV = {"p50": 0.5, "p99": 0.99, "p999": 0.999, "p9999": 0.9999, "p99999": 0.99999}


def zipf_loads(counts, shares, s):
    """Per-segment loads: client c's share spread over its counts[c] segments by weights k^-s."""
    out = []
    for n, share in zip(counts, shares):
        w = numpy.arange(1, n + 1, dtype=float) ** -s
        out.append(share * w / w.sum())
    return numpy.concatenate(out)


def cv_of(loads):
    """Coefficient of variation (population: std / mean) of per-segment loads."""
    loads = numpy.asarray(loads, dtype=float)
    return float(loads.std() / loads.mean())


def solve_zipf(counts, shares, target_cv):
    """The Zipf exponent s (weights k^-s, k = 1..n per client) at which the CV over all the
    clients' segments is `target_cv`; ValueError when no s in [0, 8] reaches it."""
    lo, hi = 0.0, 8.0
    ends = [cv_of(zipf_loads(counts, shares, x)) for x in (lo, hi)]
    if not ends[0] <= target_cv <= ends[1]:
        raise ValueError(f"segment CV {target_cv} is outside what {sum(counts)} segments can have "
                         f"({ends[0]:.2f}..{ends[1]:.2f})")
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cv_of(zipf_loads(counts, shares, mid)) < target_cv else (lo, mid)
    return (lo + hi) / 2


def bursts(duration_ms, duty, seed, warmup_ms):
    """(start ms, length ms) of each burst after `warmup_ms`: lengths log-uniform in BURST_MS
    until they cover `duty` of the time after the warm-up (the last one cut to it exactly), in a
    random order, separated by quiet gaps that split the rest at uniformly random points."""
    rng = random.Random(seed)
    span = duration_ms - warmup_ms
    lengths = []
    while sum(lengths) < duty * span:
        lengths.append(math.exp(rng.uniform(math.log(BURST_MS[0]), math.log(BURST_MS[1]))))
    lengths[-1] -= sum(lengths) - duty * span
    if lengths[-1] < BURST_MS[0]:  # too short a remainder: joined to the burst before it
        last = lengths.pop()
        lengths[-1] += last
    quiet = span - sum(lengths)
    cuts = sorted(rng.uniform(0, quiet) for _ in lengths)
    out, t, prev = [], float(warmup_ms), 0.0
    for cut, length in zip(cuts, lengths):
        t += cut - prev
        out.append((t, length))
        t += length
        prev = cut
    return out


@dataclasses.dataclass
class Fig14Trace:
    """What `write_trace` wrote: per VD (name, product, segments, innocent, file), and the trace's
    statistics as generated (``stats``), each beside the printed number it stands for."""
    vds: list
    stats: dict
    bursts: list


@dataclasses.dataclass(frozen=True)
class TraceParams:
    """The generator's knobs (defaults: the module's constants); `fig14`'s sensitivity rows
    change one at a time."""
    duration_ms: int = DURATION_MS
    seed: int = SEED
    innocent_load: float = INNOCENT_LOAD
    segment_cv: float = SEGMENT_CV
    client_split: tuple = CLIENT_SPLIT
    burst_peak: float = BURST_PEAK


def write_trace(folder, main_mbps, p=TraceParams(), warmup_ms=100, tag="fig14"):
    """Write one fio iolog v3 per VD into `folder` (timestamps in us): the synthetic I/O-intensive
    trace of the module docstring, `main_mbps` being the main bucket's rate (the 100 % load)."""
    duration_ms, seed, innocent_load = p.duration_ms, p.seed, p.innocent_load
    rng = random.Random(seed)
    c_ios = main_mbps * 1e6 / IO_BYTES  # the main bucket in 4 KiB I/Os per second
    shares = [MAJOR_SHARE * x for x in p.client_split]
    vd_per_client = [MAJOR_VDS // MAJOR_CLIENTS + (c < MAJOR_VDS % MAJOR_CLIENTS) for c in range(MAJOR_CLIENTS)]
    seg_per_client = [MAJOR_SEGMENTS // MAJOR_CLIENTS + (c < MAJOR_SEGMENTS % MAJOR_CLIENTS)
                      for c in range(MAJOR_CLIENTS)]
    s = solve_zipf(seg_per_client, shares, p.segment_cv)
    burst_list = bursts(duration_ms, DUTY, seed, warmup_ms)
    duty = sum(length for _, length in burst_list) / duration_ms
    # Rates in I/Os per second: innocent constant; the major clients' quiet rate q and burst
    # rate b = BURST_PEAK x C - innocent, q solved so the major share of all I/Os is MAJOR_SHARE.
    innocent = innocent_load * c_ios
    b = p.burst_peak * c_ios - innocent
    major_avg = innocent * MAJOR_SHARE / (1 - MAJOR_SHARE)
    q = (major_avg - b * duty) / (1 - duty)
    if q < 0:
        raise ValueError(f"the bursts alone ({b * duty:.0f} IOPS on average) exceed the major clients' "
                         f"{MAJOR_SHARE:.0%} share ({major_avg:.0f} IOPS): lower DUTY or BURST_PEAK")
    # Segments: client c's k-th ranked segment lives in VD (k mod its VDs), at local index k // VDs.
    vds, seg_cdf, seg_where = [], [], []
    for c in range(MAJOR_CLIENTS):
        w = numpy.arange(1, seg_per_client[c] + 1, dtype=float) ** -s
        seg_cdf.append(list(numpy.cumsum(w) / w.sum()))
        first = len(vds)
        n = vd_per_client[c]
        for v in range(n):
            vds.append({"name": f"major{c + 1}vd{v + 1}", "client": c, "innocent": False,
                        "segments": (seg_per_client[c] + n - 1 - v) // n})
        seg_where.append([(first + k % n, k // n) for k in range(seg_per_client[c])])
    inn_w = [rng.uniform(0.5, 1.5) for _ in range(VDS - MAJOR_VDS)]
    inn_cdf = [sum(inn_w[:i + 1]) / sum(inn_w) for i in range(len(inn_w))]
    first_inn = len(vds)
    for i in range(VDS - MAJOR_VDS):
        vds.append({"name": f"innocent{i + 1}", "client": None, "innocent": True, "segments": INNOCENT_SEGMENTS})
    for k, vd in enumerate(vds):
        vd["product"] = "AB"[k % 2]
    lines = [[] for _ in vds]
    major_bytes = [[0] * n for n in seg_per_client]
    client_cdf = [sum(shares[:c + 1]) / sum(shares) for c in range(MAJOR_CLIENTS)]
    counts = {"innocent": 0, "major": 0}

    def emit(t_us, v, seg):
        op = "read" if rng.random() < READ_SHARE else "write"
        off = seg * SEGMENT_BYTES + rng.randrange(SEGMENT_BYTES // IO_BYTES) * IO_BYTES
        lines[v].append(f"{t_us} {vds[v]['name']} {op} {off} {IO_BYTES}")

    # Innocent arrivals: one Poisson stream over the whole trace, each I/O to a VD by weight.
    t = 0.0
    while True:
        t += rng.expovariate(innocent)
        if t * 1e3 >= duration_ms:
            break
        v = first_inn + bisect.bisect_left(inn_cdf, rng.random())
        emit(int(t * 1e6), min(v, len(vds) - 1), rng.randrange(INNOCENT_SEGMENTS))
        counts["innocent"] += 1
    # Major arrivals: Poisson at q outside bursts, b inside.
    edges = [0.0]
    for start, length in burst_list:
        edges += [start, start + length]
    edges.append(float(duration_ms))
    for k in range(len(edges) - 1):
        rate = b if k % 2 else q
        t, end = edges[k] / 1e3, edges[k + 1] / 1e3
        while rate > 0:
            t += rng.expovariate(rate)
            if t >= end:
                break
            c = min(bisect.bisect_left(client_cdf, rng.random()), MAJOR_CLIENTS - 1)
            j = min(bisect.bisect_left(seg_cdf[c], rng.random()), seg_per_client[c] - 1)
            v, seg = seg_where[c][j]
            emit(int(t * 1e6), v, seg)
            major_bytes[c][j] += IO_BYTES
            counts["major"] += 1
    for vd, vl in zip(vds, lines):
        if not vl:  # the simulator refuses a trace without a read or write
            raise ValueError(f"VD {vd['name']} got no I/O: a longer trace or a flatter segment law is needed")
        vl.sort(key=lambda x: int(x.split(" ", 1)[0]))
        vd["file"] = str(folder / f"{tag}-{vd['name']}.iolog")
        with open(vd["file"], "w") as f:
            f.write(f"fio version 3 iolog\n0 {vd['name']} add\n0 {vd['name']} open\n")
            f.write("\n".join(vl) + "\n")
            f.write(f"{duration_ms * 1000} {vd['name']} close\n")
    loads = [x for per in major_bytes for x in per]
    cv = cv_of(loads)
    total = counts["innocent"] + counts["major"]
    stats = {"duration_ms": duration_ms, "major_share": counts["major"] / total,
             "major_vd_share": MAJOR_VDS / VDS, "segment_cv": cv,
             "zipf_s": s, "ios": total, "innocent_ios": counts["innocent"], "duty": duty,
             "quiet_load": (q + innocent) / c_ios, "burst_load": p.burst_peak, "innocent_load": innocent_load,
             "avg_load": total / (duration_ms / 1e3) / c_ios, "client_shares": shares,
             "top_segment_share": max(loads) / sum(loads),
             # What the busiest segment sends between bursts (fig14_point sets it against R).
             "top_quiet_bps": q * max(loads) / sum(loads) * IO_BYTES}
    return Fig14Trace(vds, stats, burst_list)


def scenario(load, trace, duration_ms):
    """dualbucket_hot_segments.yaml's DPU and dual-bucket settings (cheque alone: deferral-order
    re-offers), end to end (the scenario's backend on: the trace is replayed on the whole path),
    one tenant per VD replaying its own file."""
    sc = load("dualbucket_hot_segments.yaml")
    sc["name"] = "stillwater-fig14"
    sc["duration_ms"] = duration_ms
    sc["dualbucket"]["reoffer"] = "fifo"
    proto = sc["tenants"][0]
    sc["tenants"] = [{"name": vd["name"], "product": vd["product"], "base": dict(VD_BASE),
                      "burst": dict(proto["burst"]), "queues": 1,
                      "workload": {"mode": "trace", "read_share": READ_SHARE, "segments": vd["segments"],
                                   "trace": {"file": vd["file"], "format": "iolog3", "device": vd["name"]}}}
                     for vd in trace.vds]
    return sc


def pooled(tenants, names):
    """Percentiles (us) of the I/Os of tenants `names` together, from their histograms: the sample
    of rank ceil(q n) reported as its bucket's upper bound (0.4 % wide), and the count."""
    hist = {}
    for n in names:
        for upper, count in tenants[n]["hist_us"]:
            hist[upper] = hist.get(upper, 0) + count
    total = sum(hist.values())
    out, acc, items = {"count": total}, 0, sorted(hist.items())
    ranks = {q: max(1, math.ceil(QV[q] * total)) for q in QS}
    it = iter(items)
    for q in QS:
        while acc < ranks[q]:
            upper, count = next(it)
            acc += count
            last = upper
        out[q] = last
    return out


#: The rows of `fig14`: (key, label, TraceParams changes, dualbucket changes). The first is the
#: headline; each other changes one choice the paper does not print, to measure what the
#: headline depends on (docs/results.md, Still Water).
#: The holds N run beside the scenario's on both seeds (the paper prints no N; issue 20): a hold
#: equal to the scenario's is the `trace` / `seed15` row and is not run twice.
HOLDS = (2, 3, 4, 5)
POINTS = (
    ("trace", "the trace as generated (default dual-bucket)", {}, {}),
    ("seed15", "another seed (15)", {"seed": 15}, {})) + tuple(
    (f"hold{n}", f"hold N = {n} intervals", {}, {"steady_intervals": n}) for n in HOLDS) + tuple(
    (f"seed15_hold{n}", f"seed 15, hold N = {n}", {"seed": 15}, {"steady_intervals": n}) for n in HOLDS) + (
    ("peak13", "bursts at 1.3 x the main bucket", {"burst_peak": 1.3}, {}),
    ("peak17", "bursts at 1.7 x the main bucket", {"burst_peak": 1.7}, {}),
    ("innocent15", "innocent VDs at 0.15 of the main bucket", {"innocent_load": 0.15}, {}),
    ("split_1k", "major clients split 1/k (34.4 / 17.2 / 11.5 % of the traffic), segment CV 33",
     {"client_split": (6 / 11, 3 / 11, 2 / 11), "segment_cv": 33.0}, {}),
    ("cheque_cap", "the cheque at its 20 % cap every interval (alpha 10^7, h_p 0)", {},
     {"alpha": 10_000_000, "headroom_mbps": 0}),
)


@dataclasses.dataclass
class Fig14:
    """``rows``: one dict per POINTS entry with ``key``, ``label``, ``stats`` (the trace as
    generated), ``bursts`` ((start ms, length ms)) and ``runs[config]`` (config "baseline": the
    main bucket alone; "dual": the cheque added) holding ``innocent`` / ``major`` pooled
    percentiles (us), ``innocent_worst_p99999`` (the worst innocent VD's own), ``cheques`` (I/Os
    the cheque admitted; ``cheques_major``: those of the major clients' VDs) and ``deferred``
    (deferrals, re-offers included); ``hold``: the monitor's N it ran with, ``own_hold``: whether
    the row sets it (else the scenario's)."""
    rows: list


def main_mbps(sc):
    """The main bucket's rate in MB/s of a dualbucket_hot_segments.yaml dict: the 100 % load."""
    return sc["dpu"]["swlimit_mbps"] * sc["dualbucket"]["main_share"]


def fig14_point(run, load, p=TraceParams(), dualbucket=None, tag="fig14"):
    """One row: the trace of `p` written into run.tmp, replayed under the main bucket alone and
    with the cheque added (both with `dualbucket` changes applied)."""
    probe = load("dualbucket_hot_segments.yaml")
    trace = write_trace(run.tmp, main_mbps(probe), p, probe.get("warmup_ms", 0), tag)
    # The busiest segment between bursts against R: above it, it stays hot through the quiet
    # periods; at or below it, it turns steady after N intervals (docs/results.md, Fig. 14).
    trace.stats["top_quiet_of_r"] = trace.stats["top_quiet_bps"] / probe["dualbucket"]["hot_threshold_bps"]
    if sum(vd["segments"] for vd in trace.vds) > 4096:
        raise ValueError("more segments than the datapath holds (4096)")
    innocent = [vd["name"] for vd in trace.vds if vd["innocent"]]
    major = [vd["name"] for vd in trace.vds if not vd["innocent"]]
    runs = {}
    for config in ("baseline", "dual"):
        sc = scenario(load, trace, p.duration_ms)
        sc["dualbucket"].update(dualbucket or {})
        if config == "baseline":
            sc["dualbucket"]["cheque_share"] = 0.0
        tenants, _ = run(sc, "dualbucket")
        runs[config] = {"innocent": pooled(tenants, innocent), "major": pooled(tenants, major),
                        "innocent_worst_p99999": max(tenants[n]["lat_us"]["p99999"] for n in innocent),
                        "cheques": sum(t["admitted_reserved"] for t in tenants.values()),
                        "cheques_major": sum(tenants[n]["admitted_reserved"] for n in major),
                        "deferred": sum(t["deferred_ios"] for t in tenants.values())}
    return {"stats": trace.stats, "bursts": trace.bursts, "runs": runs, "hold": sc["dualbucket"]["steady_intervals"]}


def fig14(run, load, points=POINTS, duration_ms=DURATION_MS):
    hold = load("dualbucket_hot_segments.yaml")["dualbucket"]["steady_intervals"]
    rows = []
    for key, label, trace_over, db_over in points:
        if db_over == {"steady_intervals": hold}:
            continue  # the scenario's own hold: the row without it
        p = dataclasses.replace(TraceParams(duration_ms=duration_ms), **trace_over)
        rows.append({"key": key, "label": label, "own_hold": "steady_intervals" in db_over,
                     **fig14_point(run, load, p, db_over, f"fig14-{key}")})
    return Fig14(rows)


def _change(pct, run_d, run_b, who, q):
    return f"{pct(run_d[who][q], run_b[who][q]):+.0f} %"


def fig14_md(r, pct):
    head = r.rows[0]
    s, bl = head["stats"], head["bursts"]
    lines = ["**Still Water Fig. 14, the I/O-intensive trace, synthetic** (`scripts/reproduce.py --only "
             f"stillwater_fig14`; `scripts/reproduce_stillwater_fig14.py`: {s['duration_ms'] / 1000:.0f} s, "
             f"{s['ios']} I/Os of 4 KiB, {VDS} VDs; `scenarios/dualbucket_hot_segments.yaml`'s DPU and default "
             "dual-bucket, end to end; the cheque alone against the main bucket alone, both re-offering in "
             "deferral order). Paper: innocent I/O requests' P99999 -71 %.", "",
             "| statistic | paper | generated |", "|---|---|---|",
             f"| major clients' (top three) share of the traffic | 63 % on average (top user up to 95 %) | "
             f"{s['major_share']:.1%} ({' / '.join(f'{x:.1%}' for x in s['client_shares'])}) |",
             f"| major clients' share of the VDs | 51 % | {s['major_vd_share']:.1%} |",
             f"| CV of the major clients' segment loads | 47.7 on average, up to 553 | {s['segment_cv']:.1f} "
             f"(Zipf exponent {s['zipf_s']:.2f} over {MAJOR_SEGMENTS} segments; the busiest carries "
             f"{s['top_segment_share']:.0%} of the major clients' bytes) |",
             f"| bursts | mostly under 100 ms, tens to hundreds of ms | {len(bl)} bursts of "
             f"{min(x for _, x in bl):.0f}-{max(x for _, x in bl):.0f} ms, {s['duty']:.1%} of the time |",
             f"| load, in units of the main bucket (the paper's 1.2 GB/s limit) | bursts cross 100 % | quiet "
             f"{s['quiet_load']:.2f}, bursts {s['burst_load']:.2f}, average {s['avg_load']:.2f}; innocent VDs "
             f"{s['innocent_load']:.2f} |", "",
             "Innocent VDs' I/Os (all together; latency in us, P50 / P99 / P99.9 / P99.99 / P99999), and the "
             "major clients' VDs' P99999:", "",
             "| row | innocent, baseline | innocent, dual-bucket | P99 change | P99999 change | worst innocent VD's "
             "P99999 | major P99999 (base / dual) | I/Os via cheque (innocent / major) | busiest segment's rate between "
             "bursts / R |", "|---|---|---|---|---|---|---|---|---|"]
    for row in r.rows:
        b, d = row["runs"]["baseline"], row["runs"]["dual"]
        # The scenario's hold, on the rows that do not set their own.
        label = row["label"] + ("" if row.get("own_hold") else f" (hold N = {row['hold']})")
        lines.append(f"| {label} | " + " / ".join(f"{b['innocent'][q]:.0f}" for q in QS) + " | "
                     + " / ".join(f"{d['innocent'][q]:.0f}" for q in QS)
                     + f" | {_change(pct, d, b, 'innocent', 'p99')} | {_change(pct, d, b, 'innocent', 'p99999')} | "
                     f"{b['innocent_worst_p99999']:.0f} / {d['innocent_worst_p99999']:.0f} | "
                     f"{b['major']['p99999']:.0f} / {d['major']['p99999']:.0f} | "
                     f"{d['cheques'] - d['cheques_major']} / {d['cheques_major']} | "
                     f"{row['stats']['top_quiet_of_r']:.2f} |")
    lines.append("")
    return lines


def seeds_md(rows, seeds, holds, pct):
    """Innocent P99 / P99999 change per trace seed and hold N, and their mean over the seeds."""
    lines = ["| seed | " + " | ".join(f"N = {n}" for n in holds) + " |", "|---|" + "---|" * len(holds)]
    mean = {n: [0.0, 0.0, 0.0] for n in holds}
    for seed in seeds:
        cells = []
        for n in holds:
            b, d = rows[(seed, n)]["runs"]["baseline"], rows[(seed, n)]["runs"]["dual"]
            ch = (pct(d["innocent"]["p99"], b["innocent"]["p99"]), pct(d["innocent"]["p99999"], b["innocent"]["p99999"]),
                  pct(d["major"]["p99999"], b["major"]["p99999"]))
            mean[n] = [m + c / len(seeds) for m, c in zip(mean[n], ch)]
            cells.append(f"{ch[0]:+.0f} / {ch[1]:+.0f} % ({ch[2]:+.0f} %)")
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    lines.append("| mean | " + " | ".join(f"{mean[n][0]:+.0f} / {mean[n][1]:+.0f} % ({mean[n][2]:+.0f} %)"
                                           for n in holds) + " |")
    return lines + [""]


def main():
    """The hold N on the headline trace at other seeds of the generator: how far the innocent
    P99999 moves with the trace alone, beside what the hold moves (docs/results.md, Still Water)."""
    ap = argparse.ArgumentParser(description="Still Water Fig. 14's synthetic trace: the monitor's hold N per "
                                             "generator seed (each cell two simulations)")
    ap.add_argument("--seeds", default="14,15,16,17,18", help=f"comma-separated trace seeds ({SEED}: the headline's)")
    ap.add_argument("--holds", default=",".join(map(str, HOLDS)), help="comma-separated N (dualbucket.steady_intervals)")
    args = ap.parse_args()
    import reproduce as rp
    from burstgate.regmap import C
    seeds = rp.int_list("reproduce_stillwater_fig14", "--seeds", args.seeds, 0, 2**64 - 1)
    holds = rp.int_list("reproduce_stillwater_fig14", "--holds", args.holds, 0, C["SEGMON_STEADY_MAX"])
    run = rp.sim_runner("reproduce_stillwater_fig14")
    try:
        rows = {(seed, n): fig14_point(run, rp.load, TraceParams(seed=seed), {"steady_intervals": n}, f"s{seed}n{n}")
                for seed in seeds for n in holds}
    except ValueError as exc:  # a seed whose trace the generator refuses
        sys.exit(f"reproduce_stillwater_fig14: {exc}")
    print(f"**Still Water Fig. 14, the hold N per trace seed** (`scripts/reproduce_stillwater_fig14.py --seeds "
          f"{args.seeds} --holds {args.holds}`; the headline's generator and settings, {DURATION_MS / 1000:g} s). "
          "Each cell: the innocent I/Os' P99 / P99999 change (the major clients' P99999 change), dual-bucket "
          "against the main bucket alone. Paper: innocent P99999 -71 %.\n")
    print("\n".join(seeds_md(rows, seeds, holds, rp.pct)))
    shutil.rmtree(run.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
