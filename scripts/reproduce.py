#!/usr/bin/env python3
"""Run burstgate-sim's reproductions of the papers' experiments and print a markdown report.

Each experiment starts from a scenario in scenarios/ and sweeps what the paper's figure sweeps
(neighbour iodepth, victim I/O type, scheduler, ...) by rewriting the loaded YAML, so the files
stay readable and the sweep stays here. The paper's numbers printed next to ours are the ones
its text states (the figures themselves are not in the text we have).

Each experiment measures once into a small record; its markdown table and, with --plots, its
PNG (rtl/burstgate/tools/repro_plots.py, one file per experiment, named after its key) are
both drawn from that record.

    scripts/reproduce.py [--sim build/cmake/sw/sim/burstgate-sim] [--only fig19,fig23] [--out FILE] [--plots DIR]
"""

import argparse
import copy
import csv
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import yaml

# Each paper's experiments live in their own module beside this one (loaded by path in the tests too).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reproduce_bcbs68  # noqa: E402  (this folder, not a package)
import reproduce_calcspar  # noqa: E402
import reproduce_libra  # noqa: E402
import reproduce_stillwater  # noqa: E402
import reproduce_stillwater_fig14  # noqa: E402
import reproduce_segmon  # noqa: E402
import reproduce_segunit  # noqa: E402
import reproduce_metered  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCEN = ROOT / "scenarios"
TYPES = [("A", "read"), ("A", "write"), ("B", "read"), ("B", "write")]
SCHEDULERS = {"bios": "BIOS", "wild": "WildCBS", "base": "BaseCBS"}
# `bios` is Algorithm 1 as printed (BurstCBS §5.2); each of the project's variations is a
# `bios:` scenario key (docs/simulator.md), measured beside it by the `variations` experiment.
VARIANTS = {
    "printed": {},
    "floor": {"floor_share": 0.0625},
    "usage_clamp": {"usage_clamp": True},
    "spill_base": {"spill_base": True},
    "reserve_share": {"reserve": "share"},
    "reserve_shortfall": {"reserve_shortfall": True},
    "share_refill": {"share_refill": True},
    "shortfall+refill": {"reserve_shortfall": True, "share_refill": True},
    "project": {"floor_share": 0.0625, "usage_clamp": True, "spill_base": True, "reserve": "share"},
}


#: burstgate-sim under $BG_BUILD_DIR (default build/cmake), as `make cpp` builds it.
DEFAULT_SIM = pathlib.Path(os.environ.get("BG_BUILD_DIR", ROOT / "build" / "cmake")) / "sw" / "sim" / "burstgate-sim"


def sim_runner(prog: str, sim: str | os.PathLike | None = None) -> "Runner":
    """A Runner over `sim` (default DEFAULT_SIM), or exit naming `prog` when it is not built."""
    path = pathlib.Path(sim or DEFAULT_SIM)
    if not path.is_file():
        sys.exit(f"{prog}: {path} does not exist; build it with `make cpp`")
    return Runner(str(path))


def int_list(prog: str, option: str, text: str, lo: int, hi: int) -> list[int]:
    """A comma-separated option of integers in [lo, hi], or exit naming `prog` and `option`."""
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError as exc:
        sys.exit(f"{prog}: {option}: {exc}")
    if bad := [v for v in values if not lo <= v <= hi]:
        sys.exit(f"{prog}: {option}: {bad} outside {lo}..{hi}")
    return values


class Runner:
    def __init__(self, sim):
        self.sim = sim
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="bg-repro-"))
        self.runs = 0

    def __call__(self, scenario, scheduler, csv=None):
        path = self.tmp / f"s{self.runs}.yaml"
        out = self.tmp / f"r{self.runs}.json"
        self.runs += 1
        path.write_text(yaml.safe_dump(scenario, sort_keys=False))
        extra = ["--csv", str(csv)] if csv else []
        res = subprocess.run([self.sim, str(path), "--scheduler", scheduler, "--out", str(out), "--quiet", *extra],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            sys.exit(f"reproduce: burstgate-sim failed on {path}: {res.stderr.strip()}")
        report = json.loads(out.read_text())
        return {t["name"]: t for t in report["tenants"]}, report


def load(name):
    return yaml.safe_load((SCEN / name).read_text())


#: dualbucket_hot_segments.yaml under the variation `t100us` (scripts/reproduce_stillwater.py).
load_t100us = reproduce_stillwater.t100us_load(load)


def tenant(sc, name):
    return next(t for t in sc["tenants"] if t["name"] == name)


def pct(new, old):
    return 100.0 * (new - old) / old if old else float("nan")


@dataclasses.dataclass
class VictimSweep:
    """Fig. 19-22: one number per victim I/O type, x value and scheduler.

    ``values[(product, op)][scheduler]`` lists the victim's average latency (us, Fig. 19/20,
    x = the neighbour's iodepth) or IOPS (Fig. 21/22, x = the victim's iodepth), one per ``xs``;
    ``base_iops`` is the victim's provisioned base.
    """
    file: str
    label: str
    paper: str
    title: str
    base_iops: int
    xs: tuple
    values: dict


def victim_sweep(run, file, xs, who, metric, label, paper, title, dpu=None):
    """The victim's ``metric`` with ``who``'s iodepth at each of ``xs``, for each victim I/O type."""
    base = load(file)
    base["dpu"].update(dpu or {})
    values = {}
    for product, op in TYPES:
        per = values[(product, op)] = {s: [] for s in SCHEDULERS}
        for x in xs:
            sc = copy.deepcopy(base)
            v = tenant(sc, "victim")
            v["product"] = product
            v["workload"]["read_share"] = 1.0 if op == "read" else 0.0
            tenant(sc, who)["workload"]["iodepth"] = x
            for s in SCHEDULERS:
                per[s].append(metric(run(sc, s)[0]["victim"]))
    return VictimSweep(file, label, paper, title, tenant(base, "victim")["base"]["iops"], tuple(xs), values)


def victim_latency(run, file, depths, label, paper, title, dpu=None):
    """Fig. 19 / 20: victim 4 KiB iodepth-1 average latency vs the neighbour's iodepth."""
    return victim_sweep(run, file, depths, "bursty", lambda v: v["lat_us"]["avg"], label, paper, title, dpu)


def victim_latency_md(r):
    lines = [f"**{r.label}** (`scenarios/{r.file}`): victim average latency in us, neighbour iodepth "
             f"{', '.join(map(str, r.xs))}. Paper: {r.paper}", "",
             "| victim I/O | neighbour iodepth | BIOS | WildCBS | BaseCBS | BIOS vs WildCBS |",
             "|---|---|---|---|---|---|"]
    reductions = []
    for (product, op), lat in r.values.items():
        for i, d in enumerate(r.xs):
            red = pct(lat["bios"][i], lat["wild"][i])
            if d > 1:
                reductions.append(red)
            lines.append(f"| {product} {op} | {d} | {lat['bios'][i]:.0f} | {lat['wild'][i]:.0f} | "
                         f"{lat['base'][i]:.0f} | {red:+.0f} % |")
    lines += ["", f"Ours, neighbour iodepth > 1: BIOS changes the victim's average latency by "
              f"{max(reductions):+.0f} % to {min(reductions):+.0f} % vs WildCBS.", ""]
    return lines


def victim_iops(run, file, label, paper, title, dpu=None):
    """Fig. 21 / 22: the victim's IOPS at iodepth 1..8 (base 20k) next to a bursting neighbour."""
    return victim_sweep(run, file, (1, 2, 4, 8), "victim", lambda v: v["iops"], label, paper, title, dpu)


def victim_iops_md(r):
    lines = [f"**{r.label}** (`scenarios/{r.file}`): victim IOPS (base 20k) at iodepth "
             f"{', '.join(map(str, r.xs))}. Paper: {r.paper}", "",
             "| victim I/O | iodepth | BIOS | WildCBS | BaseCBS |", "|---|---|---|---|---|"]
    for (product, op), iops in r.values.items():
        for i, d in enumerate(r.xs):
            lines.append(f"| {product} {op} | {d} | {iops['bios'][i]:.0f} | {iops['wild'][i]:.0f} | "
                         f"{iops['base'][i]:.0f} |")
    lines.append("")
    return lines


@dataclasses.dataclass
class LoadBalancing:
    """Fig. 18: ``scaling[mix][threads]`` = (write IOPS, avg latency us, buffer borrows) of one VM;
    ``balance[policy]`` = max / min I/Os completed over ``balance_threads`` SA threads."""
    scaling: dict
    balance_threads: int
    balance: dict
    per_thread: dict


def load_balancing(run):
    """Fig. 18 (§6.1): a VM's write IOPS and latency with 1 and 2 SA threads behind the load
    balancer, per workload (a), (b); and how evenly the threads are loaded with the balancer
    (jsq) against a user spreading its I/Os over its vCPU queues itself (static) (c)."""
    base = load("fig18_load_balancing.yaml")
    mixes = {"4k": {"4k": 1.0}, "IOPS-intensive (4k-16k)": IOPS_MIX, "BPS-intensive (4k-128k)": BPS_MIX,
             "128k": {"128k": 1.0}}
    scaling = {}
    for label, sizes in mixes.items():
        per = scaling[label] = {}
        for threads in (1, 2):
            sc = copy.deepcopy(base)
            sc["dpu"]["threads"] = threads
            tenant(sc, "vm")["workload"]["sizes"] = sizes
            vm = run(sc, "base")[0]["vm"]
            per[threads] = (vm["iops"], vm["lat_us"]["avg"], vm["buffer_borrows"])
    # (c): the default build has 4 ingress queues, so 4 threads (the paper: 6) and 4 vCPU queues.
    balance, per_thread = {}, {}
    for policy in ("jsq", "static"):
        sc = copy.deepcopy(base)
        sc["dpu"].update(threads=4, lb_policy=policy)
        done = run(sc, "base")[1]["threads_completed"]
        per_thread[policy] = done
        balance[policy] = max(done) / min(done)
    return LoadBalancing(scaling, 4, balance, per_thread)


def load_balancing_md(r):
    lines = ["**Fig. 18, inter-thread load balancing** (`scenarios/fig18_load_balancing.yaml`): one VM, 4 vCPU "
             "queues, 4 KiB-128 KiB writes at iodepth 128, 1 or 2 SA threads, 16 dedicated buffers per queue and "
             "a shared pool of 512. Paper: near-linear scaling for pure 4 KiB and IOPS-intensive (the SA threads "
             "are the bottleneck), limited for BPS-intensive and pure 128 KiB (the NIC is congested first); "
             "latency follows; threads as evenly loaded as when the user spreads its I/Os itself.", "",
             "| workload | IOPS, 1 thread | IOPS, 2 threads | scaling | avg latency us, 1 / 2 threads "
             "| buffers borrowed, 1 / 2 threads |", "|---|---|---|---|---|---|"]
    for label, per in r.scaling.items():
        (i1, l1, b1), (i2, l2, b2) = per[1], per[2]
        lines.append(f"| {label} | {i1:.0f} | {i2:.0f} | {i2 / i1:.2f} x | {l1:.0f} / {l2:.0f} | {b1} / {b2} |")
    lines += ["", f"Fig. 18c, {r.balance_threads} SA threads, 4 KiB: max / min I/Os completed per thread, "
              + ", ".join(f"{p} {b:.3f} ({' / '.join(map(str, r.per_thread[p]))})" for p, b in r.balance.items())
              + " (`jsq`: the load balancer; `static`: each vCPU queue pinned to one thread).", ""]
    return lines


@dataclasses.dataclass
class BurstUtilization:
    """Fig. 23: ``share[workload][scheduler]`` = (the bursting VM's, both VMs') throughput / the
    software limit."""
    limit_mbps: float
    share: dict


BPS_MIX = {"4k": 0.25, "16k": 0.25, "64k": 0.25, "128k": 0.25}
IOPS_MIX = {"4k": 0.4, "8k": 0.3, "16k": 0.3}  # fig20_iops_neighbor.yaml's neighbour


def _product_mix(sc):
    """The bursting VM's I/Os half ProductA, half ProductB (§6.4 "mixing ProductA and ProductB
    I/Os"): a tenant has one product here, so the VM becomes two tenants of half its base,
    burst and iodepth each."""
    a = tenant(sc, "bursty")
    b = copy.deepcopy(a)
    b["name"], b["product"] = "bursty_b", "B"
    for t in (a, b):
        t["base"] = {k: v / 2 for k, v in t["base"].items()}
        t["burst"] = {k: v / 2 for k, v in t["burst"].items()}
        t["workload"]["iodepth"] //= 2
    sc["tenants"].append(b)
    return sc


def burst_utilization(run):
    """Fig. 23: the bursting VM's throughput, as a share of the 3 GB/s limit, per scheduler, for
    the four workloads §6.4 names (BPS-intensive, pure 128 KiB, IOPS-intensive, ProductA/B mix)."""
    base = load("fig23_burst_utilization.yaml")
    mixes = {"BPS-intensive (4k-128k)": (BPS_MIX, False), "128k only": ({"128k": 1.0}, False),
             "IOPS-intensive (4k-16k)": (IOPS_MIX, False), "ProductA/B mix (4k-128k)": (BPS_MIX, True)}
    shares = {}
    for label, (sizes, mixed) in mixes.items():
        sc = copy.deepcopy(base)
        tenant(sc, "bursty")["workload"]["sizes"] = sizes
        if mixed:
            sc = _product_mix(sc)
        share = shares[label] = {}
        for s in SCHEDULERS:
            r = run(sc, s)[0]
            burst = sum(t["mbps"] for name, t in r.items() if name.startswith("bursty"))
            share[s] = (burst / sc["dpu"]["swlimit_mbps"], (burst + r["quiet"]["mbps"]) / sc["dpu"]["swlimit_mbps"])
    return BurstUtilization(base["dpu"]["swlimit_mbps"], shares)


def burst_utilization_md(r):
    lines = ["**Fig. 23, burst utilization** (`scenarios/fig23_burst_utilization.yaml`, the 5 % pool §6.4 states): "
             "the bursting VM's throughput as a share of the 3 GB/s software limit (both VMs' in brackets), next "
             "to a VM at iodepth 2 below its base. Paper: BIOS loses about 5-8 % vs WildCBS (the 5 % reserve); "
             "BaseCBS about half; the IOPS-intensive mix cannot reach the limit; the ProductA/B mix slightly "
             "improves utilization.", "",
             "| burst workload | BIOS | WildCBS | BaseCBS | BIOS vs WildCBS (bursting VM) |", "|---|---|---|---|---|"]
    for label, share in r.share.items():
        lines.append(f"| {label} | " + " | ".join(f"{share[s][0]:.3f} ({share[s][1]:.3f})" for s in SCHEDULERS) +
                     f" | {pct(share['bios'][0], share['wild'][0]):+.1f} % |")
    lines.append("")
    return lines


@dataclasses.dataclass
class SuddenActivation:
    """Fig. 24: per resumer iodepth, its IOPS and deferral counters under BIOS and WildCBS."""
    base_iops: int         # the resumer's base (and cap)
    depths: tuple
    iops: list             # BIOS
    throttled_bios: list
    admitted_borrow: list  # BIOS, from a lender
    admitted_reserved: list  # BIOS, from the pool
    throttled_wild: list
    alloc_at_resume: list = dataclasses.field(default_factory=list)  # BIOS grant when the stream starts (max dim)


def sudden_activation(run, bios=None, depths=(1, 2, 4, 8, 16, 24, 32, 64), dpu=None):
    """Fig. 24: deferrals of a burstable 45k-base tenant resuming from idle at iodepth 1..64
    (``bios``: a variation's `bios:` keys, default Algorithm 1 as printed; ``dpu``: `dpu:` keys,
    e.g. ``{"grant_carry": False}`` for the datapath's plain per-window grants as BurstCBS has
    them, where reclaim and the pool alone carry a resuming tenant)."""
    base = load("fig24_sudden_activation.yaml")
    if bios:
        base.setdefault("bios", {}).update(bios)
    if dpu:
        base.setdefault("dpu", {}).update(dpu)
    r = SuddenActivation(tenant(base, "resumer")["base"]["iops"], tuple(depths), [], [], [], [], [])
    start_ms = tenant(base, "resumer")["workload"]["start_ms"]
    for d in r.depths:
        sc = copy.deepcopy(base)
        tenant(sc, "resumer")["workload"]["iodepth"] = d
        csv_path = run.tmp / f"fig24_{run.runs}.csv"
        b = run(sc, "bios", csv=csv_path)[0]["resumer"]
        r.alloc_at_resume.append(grant_before(csv_path, "resumer", start_ms))
        w = run(sc, "wild")[0]["resumer"]
        r.iops.append(b["iops"])
        r.throttled_bios.append(b["throttled"])
        r.admitted_borrow.append(b["admitted_borrow"])
        r.admitted_reserved.append(b["admitted_reserved"])
        r.throttled_wild.append(w["throttled"])
    return r


def grant_before(csv_path, name, t_ms):
    """The largest dimension of the grant the firmware wrote for `name` in the last window that
    ended before t_ms (the series' alloc_* columns): the window ending at t_ms already counts
    I/Os that arrive at t_ms."""
    last = None
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            if row["tenant"] == name and float(row["t_ms"]) < t_ms:
                last = row
    return max(int(float(last[k])) for k in ("alloc_cpu_ns", "alloc_ingress_B", "alloc_egress_B", "alloc_swlimit_B"))


def below_base(r):
    """Fig. 24's claim on a record: (throttled I/Os, reclaims, pool admissions) summed over the
    streams that stayed below the resumer's base."""
    rows = [i for i, iops in enumerate(r.iops) if iops < r.base_iops]
    return (sum(r.throttled_bios[i] for i in rows), sum(r.admitted_borrow[i] for i in rows),
            sum(r.admitted_reserved[i] for i in rows))


def sudden_activation_md(r):
    lines = ["**Fig. 24, responsiveness to sudden activation** (`scenarios/fig24_sudden_activation.yaml`): "
             "a burstable tenant (base 45k IOPS, burst 100k) idles until Algorithm 1 line 7 has decayed its "
             "allocation to zero, then runs 4 KiB writes at iodepth 1..64 (the paper: 1..16) while a "
             "neighbour bursts. Paper: no throttled I/Os until the stream (60k IOPS) makes it a burst tenant.", "",
             "| iodepth | IOPS | throttled (BIOS) | admitted by reclaim (power of two choices) / from the pool "
             "| throttled (WildCBS) |",
             "|---|---|---|---|---|"]
    for row in zip(r.depths, r.iops, r.throttled_bios, r.admitted_borrow, r.admitted_reserved, r.throttled_wild):
        d, iops, tb, borrow, reserved, tw = row
        lines.append(f"| {d} | {iops:.0f} | {tb} | {borrow} / {reserved} | {tw} |")
    thr, borrow, pool = below_base(r)
    lines += ["", f"Ours, streams below base: {thr} throttled I/Os, {borrow} admitted by reclaim, {pool} from the pool; "
              f"the resumer's grant when each stream starts: {max(r.alloc_at_resume)} (largest dimension, all runs).",
              ""]
    return lines


@dataclasses.dataclass
class Misestimation:
    """Table 3: per column, (read lat us, write lat us, final CPU cost factor) ours, (read, write) the paper's."""
    ours: dict
    paper: dict


def misestimation(run):
    """Table 3: a base-level tenant's latency when the estimator undercosts I/Os by half."""
    base = load("table3_misestimation.yaml")
    cols = [("WildCBS", "wild", False), ("BurstCBS w/o adjustment", "bios", False),
            ("BurstCBS with adjustment", "bios", True)]
    res = {}
    for label, sched, adj in cols:
        sc = copy.deepcopy(base)
        sc["dpu"]["cost_adjust"] = adj
        tenants, report = run(sc, sched)
        res[label] = (tenants["base_read"]["lat_us"]["avg"], tenants["base_write"]["lat_us"]["avg"],
                      report["cost_factor"]["cpu"])
    paper = {"WildCBS": (1096.89, 868.79), "BurstCBS w/o adjustment": (848.57, 749.57),
             "BurstCBS with adjustment": (248.97, 270.49)}
    return Misestimation(res, paper)


def misestimation_md(r):
    cols = list(r.ours)
    lines = ["**Table 3, cost misestimation** (`scenarios/table3_misestimation.yaml`, `estimate_error: 2.0`): "
             "average latency of the base-level tenant's reads and writes, ours (paper).", "",
             "| | " + " | ".join(cols) + " |", "|---|---|---|---|"]
    lines.append("| Read lat (us) | " + " | ".join(f"{r.ours[c][0]:.0f} ({r.paper[c][0]:.0f})" for c in cols) + " |")
    lines.append("| Write lat (us) | " + " | ".join(f"{r.ours[c][1]:.0f} ({r.paper[c][1]:.0f})" for c in cols) + " |")
    lines.append("| final CPU cost factor | " + " | ".join(f"{r.ours[c][2]:.2f}" for c in cols) + " |")
    lines.append("")
    return lines


@dataclasses.dataclass
class HotSegments:
    """Still Water Fig. 10 / 13: one row per (write share, path).

    Each row holds, per configuration ("baseline", "dual", "fifo" = cheque with deferral-order
    re-offers, "prio" = steady first without a cheque, "wild"), the steady segments' latency
    percentiles ``steady[config][q]`` (us, q in p50 / p99 / p99999, the worst tenant), the hot
    segments' P99 ``hot_p99[config]``, and the dual-bucket run's cheque admissions and share of
    new steady I/Os taken as hot (%).
    """
    rows: list


def hot_segments(run):
    """Still Water Fig. 10 / 13: steady segments' tail latency with and without the cheque bucket.

    Baseline: the paper's production limiter, the main bucket alone (cheque_share 0) with the
    deferred I/Os re-offered in deferral order, at the same issuance. Dual-bucket: the scenario
    (cheque, steady I/Os re-offered first). Two ablations separate the parts: the cheque with
    deferral-order re-offers, and steady-first re-offers without a cheque. Fig. 10 is the
    proxy's own latency (limiter wait + SA): backend off. Fig. 13 is the whole path: backend
    on. WildCBS at the SA's full capacity for reference."""
    base = load("dualbucket_hot_segments.yaml")
    rows = []
    for w in (1.0, 0.75, 0.5, 0.25):
        for path, backend in (("proxy (Fig. 10)", {"dist": "lognormal", "median": 0, "p99": 0}), ("end to end (Fig. 13)", None)):
            sc = copy.deepcopy(base)
            for t in sc["tenants"]:
                t["workload"]["read_share"] = round(1.0 - w, 2)
            if backend:
                sc["dpu"]["backend_us"] = backend
            db = sc["dualbucket"]
            runs = {"dual": run(sc, "dualbucket")[0], "wild": run(sc, "wild")[0]}
            db.update(cheque_share=0.0)
            runs["prio"] = run(sc, "dualbucket")[0]
            db.update(reoffer="fifo")
            runs["baseline"] = run(sc, "dualbucket")[0]
            db.update(cheque_share=base["dualbucket"]["cheque_share"])
            runs["fifo"] = run(sc, "dualbucket")[0]
            d = runs["dual"]
            steady_n = sum(t["lat_steady_us"]["count"] for t in d.values() if "lat_steady_us" in t)
            # A steady segment whose new requests clump above R looks hot for N intervals, and
            # its new I/Os then get no cheque (docs/results.md, Still Water).
            as_hot = sum(t["steady_new_as_hot"] for t in d.values() if "steady_new_as_hot" in t)
            rows.append({
                "write_share": w, "path": path,
                "steady": {c: {q: max(t["lat_steady_us"][q] for t in r.values() if "lat_steady_us" in t)
                               for q in ("p50", "p99", "p99999")} for c, r in runs.items()},
                "hot_p99": {c: max(t["lat_hot_us"]["p99"] for t in r.values() if "lat_hot_us" in t)
                            for c, r in runs.items()},
                "cheque": sum(t["admitted_reserved"] for t in d.values()),
                "steady_as_hot_pct": 100.0 * as_hot / steady_n,
            })
    return HotSegments(rows)


def hot_segments_md(r):
    lines = ["**Still Water Fig. 10 / 13, hot segments** (`scenarios/dualbucket_hot_segments.yaml`): 20 % of the "
             "segments carry 80 % of a closed-loop load (4 clients x iodepth 64) that saturates the main "
             "bucket (0.56 of the SA's capacity, the paper's 1.2 of 2.13 GB/s); latency in us of I/Os to "
             "the steady segments. Baseline: the main bucket alone (cheque_share 0, re-offers in deferral "
             "order). Dual-bucket here is the ablation: cheque 20 % with steady I/Os re-offered first "
             "(`reoffer: steady_first`, a host policy the paper does not have; the cheque alone is the "
             "`stillwater_cheque` table). "
             "Paper: steady P99 -96 % at best, P99999 -83 % at best (Fig. 10, proxy latency); P99999 -85 % "
             "end to end (Fig. 13).", "",
             "| write share | path | baseline P50 / P99 / P99999 | dual-bucket P50 / P99 / P99999 | P99 change "
             "| P99999 change | hot P99 (base / dual) | steady via cheque | new steady I/Os taken as hot | "
             "cheque, deferral-order re-offers | steady first, no cheque | wild P99 / P99999 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in r.rows:
        st, hot = row["steady"], row["hot_p99"]

        def trio(c):
            return " / ".join(f"{st[c][q]:.0f}" for q in ("p50", "p99", "p99999"))
        lines.append(f"| {row['write_share']:.0%} | {row['path']} | {trio('baseline')} | {trio('dual')} | "
                     f"{pct(st['dual']['p99'], st['baseline']['p99']):+.0f} % | "
                     f"{pct(st['dual']['p99999'], st['baseline']['p99999']):+.0f} % | "
                     f"{hot['baseline']:.0f} / {hot['dual']:.0f} | "
                     f"{row['cheque']} | {row['steady_as_hot_pct']:.2f} % | {trio('fifo')} | {trio('prio')} | "
                     f"{st['wild']['p99']:.0f} / {st['wild']['p99999']:.0f} |")
    lines.append("")
    return lines


@dataclasses.dataclass
class AlphaFit:
    """Still Water Eq. (1): per main_share (share, lambda Mb/s, windows, measured P95 us, Eq. (1) us)."""
    mu: float
    warmup: float
    scenario_alpha: float
    percentile: float
    alpha: float
    rows: list


def main_bucket_sweep(run, base, shares, tag, percentile=0.95):
    """Eq. (1)'s points and alpha on a dual-bucket scenario: the main bucket alone (cheque_share
    0) at each main_share, the P95 SA delay the firmware reads per window (the CSV's
    sa_p95_us), fitted by `burstgate fit-alpha` (burstgate/tools/fit_alpha.py).
    Returns (mu, [(share, lambda, windows, w_p)], alpha, Eq. (1) at alpha per point)."""
    sys.path.insert(0, str(ROOT / "rtl"))
    from burstgate.tools import fit_alpha

    mu = base["dualbucket"].get("mu_mbps") or base["dpu"]["swlimit_mbps"] * 8
    points = []
    for share in shares:
        sc = copy.deepcopy(base)
        sc["dualbucket"].update(cheque_share=0.0, main_share=share)
        csv = run.tmp / f"{tag}_{share}.csv"
        run(sc, "dualbucket", csv=csv)
        lam, w, n = fit_alpha.load_point(csv, base["warmup_ms"], 16)
        points.append((share, lam, n, w))
    alpha, pred = fit_alpha.fit([(lam, w) for _, lam, _, w in points], mu, percentile)
    return mu, points, alpha, pred


def alpha_fit(run):
    """Still Water Eq. (1)'s alpha for this SA: the Still Water scenario with the main bucket alone
    at three loads (main_bucket_sweep)."""
    base = load("dualbucket_hot_segments.yaml")
    base["dualbucket"]["reoffer"] = "fifo"  # the production limiter
    percentile = 0.95  # the CSV's sa_p95_us
    mu, points, alpha, pred = main_bucket_sweep(run, base, (0.3, 0.56, 0.8), "alpha", percentile)
    return AlphaFit(mu, base["warmup_ms"], base["dualbucket"]["alpha"], percentile, alpha,
                    [(share, lam, n, w, p) for (share, lam, n, w), p in zip(points, pred)])


def alpha_fit_md(r):
    lines = ["**Still Water Eq. (1), alpha fitted to this SA** (`scenarios/dualbucket_hot_segments.yaml`, "
             "`cheque_share: 0`, `main_share` 0.3 / 0.56 / 0.8; per-window P95 SA delay as the firmware "
             f"reads it, averaged over the windows after {r.warmup} ms; mu = {r.mu} Mb/s). "
             f"The scenario uses alpha = {r.scenario_alpha}. Same fit by hand: "
             f"`burstgate fit-alpha R1.csv R2.csv R3.csv --mu-mbps {r.mu} --warmup-ms {r.warmup}`.", ""]
    lines += ["| main_share | lambda Mb/s | mu - lambda | windows | measured P95 us | Eq. (1) at the fit, us |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {share} | {lam:.0f} | {r.mu - lam:.0f} | {n} | {w:.1f} | {p:.1f} |"
              for share, lam, n, w, p in r.rows]
    lines += ["", f"Least-squares alpha = {r.alpha:.0f}.", ""]
    return lines


@dataclasses.dataclass
class Variations:
    """Each `bios:` variation (VARIANTS) beside Algorithm 1 as printed, on Fig. 19-24.

    ``rows[variant]`` maps a column label to our number for that variant; ``wild`` holds
    WildCBS's numbers for the columns where the paper compares against it."""
    columns: tuple
    rows: dict
    wild: dict


def _with_bios(sc, keys):
    sc = copy.deepcopy(sc)
    sc["bios"] = dict(keys)
    return sc


# The host profile `burstgate calibrate --numjobs 56 --iodepth 2` measured on the project's 2-core
# host on 2026-11-28 (docs/results.md, "Case 2 and the host's CPU"): about 40 us of CPU an I/O.
HOST56 = {"threads": 2, "swlimit_mbps": 961,
          "cpu_ns": {"A": {"read": {"base": 39347, "per_kib": 37}, "write": {"base": 38782, "per_kib": 562}}}}


def four_bursting():
    """compare-qemu's second case in the simulator: scenarios/compare_qemu_56.yaml's tenants, each
    a closed loop of its connections x iodepth (compare_qemu.CONNS56, IODEPTH56) doing fio's mix
    (MIX56, 50 % reads), on HOST56, for 2 s. t20k's base alone is 40 % of that host, and the
    printed pool (t20k's and t5k's bases) 44 %."""
    sys.path.insert(0, str(ROOT / "rtl"))
    import compare_qemu as cq

    sc = load("compare_qemu_56.yaml")
    sc["duration_ms"] = 2000
    sc["dpu"].update(copy.deepcopy(HOST56))
    # The scenario's cost_adjust answers the gateway host's lag (its CPU shared with the 56 fio
    # clients), which a simulated SA has none of: here the modelled SA is fully used by design,
    # and BIOS's own allocations are what this row measures.
    for key in ("cost_adjust", "target_delay_us"):
        sc["dpu"].pop(key, None)
    total = sum(cq.MIX56.values())
    for t in sc["tenants"]:
        t["workload"] = {"mode": "closed", "iodepth": cq.CONNS56[t["name"]] * cq.IODEPTH56,
                         "sizes": {k: v / total for k, v in cq.MIX56.items()}, "read_share": 0.5, "segments": 8}
    return sc


def variations(run):
    """Every variation at one point of each figure: Fig. 19 / 20 the victim's average latency
    (ProductB write, the scenario files' point) at the deepest neighbour; Fig. 21 / 22 the
    victim's IOPS at iodepth 8 (ProductB read, the costliest type); Fig. 23 the bursting VM's
    share of the limit (BPS-intensive mix); Fig. 24 the throttles, reclaims and pool admissions
    of the resumer's below-base streams (iodepth 1..16)."""
    points = []
    for label, file, who, depth, product, op, metric in (
            ("Fig. 19 victim avg us (nbr depth 64)", "fig19_bps_neighbor.yaml", "bursty", 64, "B", "write",
             lambda v: v["lat_us"]["avg"]),
            ("Fig. 20 victim avg us (nbr depth 128)", "fig20_iops_neighbor.yaml", "bursty", 128, "B", "write",
             lambda v: v["lat_us"]["avg"]),
            ("Fig. 21 victim IOPS (depth 8)", "fig19_bps_neighbor.yaml", "victim", 8, "B", "read",
             lambda v: v["iops"]),
            ("Fig. 22 victim IOPS (depth 8)", "fig20_iops_neighbor.yaml", "victim", 8, "B", "read",
             lambda v: v["iops"])):
        sc = load(file)
        v = tenant(sc, "victim")
        v["product"] = product
        v["workload"]["read_share"] = 1.0 if op == "read" else 0.0
        tenant(sc, who)["workload"]["iodepth"] = depth
        points.append((label, sc, metric))
    f23 = load("fig23_burst_utilization.yaml")  # BPS-intensive; its file's 5 % pool is replaced
    four = four_bursting()  # compare-qemu's case 2: every tenant bursting at once
    cols = tuple(p[0] for p in points) + ("Fig. 23 bursty share of limit", "Fig. 24 throttled below base",
                                          "Fig. 24 reclaims", "Fig. 24 pool admissions",
                                          "four bursting: share of WildCBS's total")

    def total(r):
        return sum(t["iops"] for t in r.values())
    rows, wild = {}, {}
    for label, sc, metric in points:
        wild[label] = metric(run(sc, "wild")[0]["victim"])
    wild[cols[4]] = run(f23, "wild")[0]["bursty"]["mbps"] / f23["dpu"]["swlimit_mbps"]
    four_wild = total(run(four, "wild")[0])
    for name, keys in VARIANTS.items():
        row = rows[name] = {}
        for label, sc, metric in points:
            row[label] = metric(run(_with_bios(sc, keys), "bios")[0]["victim"])
        row[cols[4]] = run(_with_bios(f23, keys), "bios")[0]["bursty"]["mbps"] / f23["dpu"]["swlimit_mbps"]
        thr, borrow, pool = below_base(sudden_activation(run, keys, (1, 2, 4, 8, 16)))
        row[cols[5]], row[cols[6]], row[cols[7]] = thr, borrow, pool
        row[cols[8]] = total(run(_with_bios(four, keys), "bios")[0]) / four_wild
    return Variations(cols, rows, wild)


def variations_md(r):
    lines = ["**BIOS variations beside Algorithm 1 as printed** (`bios:` keys, docs/simulator.md): `printed` is "
             "the default (line 7 decays to zero, line 4 on throttle only, the pool = the two largest bases); "
             "`floor` keeps 1/16 of base, `usage_clamp` takes max(alloc x alpha, usage) on line 7, `spill_base` "
             "takes line 4 on a spill too, `reserve_share` sizes the pool as 5 % of capacity, `reserve_shortfall` "
             "caps each window's pool at what the tenants' allocations fall short of their bases, `share_refill` "
             "hands line 11's leftover (shares cut at the bursts) again to the tenants below their cap, "
             "`shortfall+refill` both, `project` is "
             "the first four (the project's earlier default). The last column: compare-qemu's second case in "
             "the simulator (four_bursting(): every tenant bursting), its total IOPS against WildCBS's.", "",
             "| variant | " + " | ".join(r.columns) + " |", "|---|" + "---|" * len(r.columns)]

    def cell(c, x):
        return f"{x:.3f}" if "share" in c else f"{x:.0f}"
    for name, row in r.rows.items():
        lines.append(f"| {name} | " + " | ".join(cell(c, row[c]) for c in r.columns) + " |")
    lines.append("| WildCBS | " + " | ".join(cell(c, r.wild[c]) if c in r.wild else "" for c in r.columns) + " |")
    lines.append("")
    return lines


@dataclasses.dataclass
class Experiment:
    """How to measure one experiment, write its markdown, and which repro_plots function draws it."""
    measure: Callable  # (Runner) -> record
    markdown: Callable  # (record) -> lines
    plot: str | None  # imported only under --plots; None: no plot



# §6.2: the background VM runs "with I/O depths from 1 to 64" (Fig. 19); Fig. 20 is the same
# experiment with the IOPS-intensive mix, which the scenario drives up to 128 (one SA thread).
FIG19_DEPTHS = (1, 2, 4, 8, 16, 32, 64)
FIG20_DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128)


def fifo_sensitivity(fig, measure, *args):
    """`fig` again with the SA serving its queue in arrival order (`sa_discipline: fifo`)."""
    return lambda run: measure(
        run, *args, f"{fig} with the SA serving its queue in arrival order (`sa_discipline: fifo`, sensitivity)",
        f"as {fig}.", f"{fig} with a FIFO SA (sensitivity): paper claims as {fig}", dpu={"sa_discipline": "fifo"})


EXPERIMENTS = {
    "fig18": Experiment(load_balancing, load_balancing_md, "load_balancing"),
    "fig19": Experiment(lambda run: victim_latency(
        run, "fig19_bps_neighbor.yaml", FIG19_DEPTHS, "Fig. 19, BPS-intensive neighbour",
        "average latency -68 % to -85 % vs WildCBS, close to BaseCBS.",
        "Fig. 19, BPS-intensive neighbour: BIOS cuts the victim's latency 68-85 % vs WildCBS (paper)"),
        victim_latency_md, "victim_latency"),
    "fig19fifo": Experiment(fifo_sensitivity("Fig. 19", victim_latency, "fig19_bps_neighbor.yaml", (16, 64)),
                            victim_latency_md, "victim_latency"),
    "fig20": Experiment(lambda run: victim_latency(
        run, "fig20_iops_neighbor.yaml", FIG20_DEPTHS, "Fig. 20, IOPS-intensive neighbour",
        "average latency -40 % to -66 % vs WildCBS.",
        "Fig. 20, IOPS-intensive neighbour: BIOS cuts the victim's latency 40-66 % vs WildCBS (paper)"),
        victim_latency_md, "victim_latency"),
    "fig20fifo": Experiment(fifo_sensitivity("Fig. 20", victim_latency, "fig20_iops_neighbor.yaml", (32, 128)),
                            victim_latency_md, "victim_latency"),
    "fig21": Experiment(lambda run: victim_iops(
        run, "fig19_bps_neighbor.yaml",
        "Fig. 21, victim IOPS next to a BPS-intensive neighbour (iodepth 64)",
        "BIOS reaches 20k by iodepth 8 in every case; WildCBS at iodepth 8 misses "
        "it in 7 of the 8 cases of Fig. 21 and 22, as low as 4000.",
        "Fig. 21, BPS-intensive neighbour: BIOS reaches the 20k base by iodepth 8, WildCBS misses (paper)"),
        victim_iops_md, "victim_iops"),
    "fig22": Experiment(lambda run: victim_iops(
        run, "fig20_iops_neighbor.yaml",
        "Fig. 22, victim IOPS next to an IOPS-intensive neighbour (iodepth 128)",
        "BIOS reaches 20k by iodepth 8 in every case, ProductB read (the costliest "
        "type) barely; WildCBS at iodepth 8 misses it in 7 of the 8 cases of "
        "Fig. 21 and 22; the gap between BaseCBS and WildCBS is smaller than in Fig. 21.",
        "Fig. 22, IOPS-intensive neighbour: BIOS reaches the 20k base by iodepth 8, WildCBS misses (paper)"),
        victim_iops_md, "victim_iops"),
    "fig22fifo": Experiment(fifo_sensitivity("Fig. 22", victim_iops, "fig20_iops_neighbor.yaml"),
                            victim_iops_md, "victim_iops"),
    "fig23": Experiment(burst_utilization, burst_utilization_md, "burst_utilization"),
    "fig24": Experiment(sudden_activation, sudden_activation_md, "sudden_activation"),
    "variations": Experiment(variations, variations_md, "variations"),
    "table3": Experiment(misestimation, misestimation_md, "misestimation"),
    "stillwater": Experiment(hot_segments, hot_segments_md, "hot_segments"),
    "alpha": Experiment(alpha_fit, alpha_fit_md, "alpha_fit"),
    # BurstCBS §6.8 (scripts/reproduce_bcbs68.py).
    "bcbs_fig28": Experiment(lambda run: reproduce_bcbs68.fig28(run, load, tenant),
                             lambda r: reproduce_bcbs68.fig28_md(r, pct), "query_latency"),
    "bcbs_fig29": Experiment(lambda run: reproduce_bcbs68.fig29(run, load, tenant), reproduce_bcbs68.fig29_md,
                             "query_timeline"),
    # Libra (scripts/reproduce_libra.py).
    "libra_vs_bios": Experiment(lambda run: reproduce_libra.libra_vs_bios(run, load, tenant),
                                reproduce_libra.libra_vs_bios_md, None),
    "libra_fig7": Experiment(lambda run: reproduce_libra.insulation(run, load, tenant),
                             reproduce_libra.insulation_md, "insulation"),
    "libra_fig8_9": Experiment(lambda run: reproduce_libra.cost_models(run, load, tenant),
                               reproduce_libra.cost_models_md, "cost_models"),
    "libra_fig11": Experiment(lambda run: reproduce_libra.profiles(run, load, tenant),
                              reproduce_libra.profiles_md, "profiles"),
    "libra_fig12": Experiment(lambda run: reproduce_libra.swap(run, load, tenant),
                              reproduce_libra.swap_md, "swap"),
    "stillwater_cheque": Experiment(lambda run: reproduce_stillwater.cheque_gap(run, load),
                                    lambda r: reproduce_stillwater.cheque_gap_md(r, pct), "cheque_gap"),
    # Fig. 14: a synthetic I/O-intensive trace with the paper's printed statistics (scripts/reproduce_stillwater_fig14.py).
    "stillwater_fig14": Experiment(lambda run: reproduce_stillwater_fig14.fig14(run, load),
                                   lambda r: reproduce_stillwater_fig14.fig14_md(r, pct), "trace_tail"),
    "stillwater_sizes": Experiment(lambda run: reproduce_stillwater.cheque_sizes(run, load),
                                   lambda r: reproduce_stillwater.cheque_sizes_md(r, pct), "cheque_gap"),
    # Calcspar (scripts/reproduce_calcspar.py): burstgate-lsm runs.
    "calcspar_fig18": Experiment(reproduce_calcspar.fig18, reproduce_calcspar.fig18_md, "calcspar_latency"),
    "calcspar_fig20": Experiment(reproduce_calcspar.fig20, reproduce_calcspar.fig20_md, "calcspar_hits"),
    "stillwater_sizes_e2e": Experiment(
        lambda run: reproduce_stillwater.cheque_sizes(run, load, end_to_end=True),
        lambda r: reproduce_stillwater.cheque_sizes_md(
            r, pct, "Fig. 20", "end to end (backend on)", "stillwater_sizes_e2e", "tail -77 % to -86 % vs baseline."),
        "cheque_gap"),
    "stillwater_underloaded": Experiment(
        lambda run: reproduce_stillwater.underloaded(run, load),
        lambda r: reproduce_stillwater.underloaded_md(
            r, pct, ("Fig. 12", "Fig. 11", "`scripts/reproduce.py --only stillwater_underloaded`"), "4 KiB, write share swept",
            "write tail up to -63 % vs baseline and -37 % vs the thread split.",
            "overall P99999 -43 % vs baseline, -22 % vs the thread split."), None),
    "stillwater_underloaded_sizes": Experiment(
        lambda run: reproduce_stillwater.underloaded_sizes(run, load),
        lambda r: reproduce_stillwater.underloaded_md(
            r, pct, ("Fig. 19", "Fig. 21", "`scripts/reproduce.py --only stillwater_underloaded_sizes`"),
            "8-64 KiB, 50 % writes", "tail up to -55 % vs the thread split.",
            "tail up to -66 % vs baseline and -37 % vs the thread split."), None),
    # Still Water §4.2's monitor counting requests (scripts/reproduce_segmon.py): R and N, measured
    # on the variation `t100us` (T = 100 us), whose R they chose.
    "stillwater_threshold": Experiment(lambda run: reproduce_segmon.threshold(run, load_t100us),
                                       lambda r: reproduce_segmon.threshold_md(r, pct), None),
    # Still Water §4.2's monitor counting requests or bytes at T = 100 us (scripts/reproduce_segunit.py).
    "stillwater_unit": Experiment(lambda run: reproduce_segunit.units(run, load_t100us),
                                  lambda r: reproduce_segunit.units_md(r, pct), None),
    "stillwater_unit_threshold": Experiment(lambda run: reproduce_segunit.unit_threshold(run, load_t100us),
                                            lambda r: reproduce_segunit.unit_threshold_md(r, pct), None),
    # The monitor's unit, R and N at the default T = 10 ms (scripts/reproduce_metered.py).
    "stillwater_monitor": Experiment(lambda run: reproduce_metered.monitor(run, load),
                                     lambda r: reproduce_metered.monitor_md(r, pct), None),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=str(DEFAULT_SIM), help="the burstgate-sim binary")
    ap.add_argument("--only", default=",".join(EXPERIMENTS), help="comma-separated: " + ", ".join(EXPERIMENTS))
    ap.add_argument("--out", help="write the markdown here as well as to stdout")
    ap.add_argument("--plots", metavar="DIR", help="draw each experiment to DIR/<key>.png (paths on stderr)")
    args = ap.parse_args()
    if not pathlib.Path(args.sim).is_file():
        sys.exit(f"reproduce: {args.sim} does not exist; build it with `make cpp` or pass --sim")
    names = args.only.split(",")
    for name in names:
        if name not in EXPERIMENTS:
            sys.exit(f"reproduce: unknown experiment '{name}' (one of {', '.join(EXPERIMENTS)})")
    plots = None
    if args.plots:
        # Only here: the tables alone need no matplotlib.
        sys.path.insert(0, str(ROOT / "rtl"))
        from burstgate.tools import repro_plots as plots
        plot_dir = pathlib.Path(args.plots)
        try:
            plot_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            sys.exit(f"reproduce: --plots {args.plots}: {exc}")
    run = Runner(args.sim)
    lines = []
    t0 = time.monotonic()
    for name in names:
        exp = EXPERIMENTS[name]
        data = exp.measure(run)
        lines += exp.markdown(data)
        print(f"reproduce: {name} done ({run.runs} simulations, {time.monotonic() - t0:.0f} s)", file=sys.stderr)
        if plots and exp.plot:
            path = getattr(plots, exp.plot)(data, plot_dir / f"{name}.png")
            print(f"reproduce: wrote {path}", file=sys.stderr)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    # Only on success: a failed run exits naming its scenario file in this folder.
    shutil.rmtree(run.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
