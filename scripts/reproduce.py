#!/usr/bin/env python3
"""Run burstgate-sim's reproductions of the papers' experiments and print a markdown report.

Each experiment starts from a scenario in scenarios/ and sweeps what the paper's figure sweeps
(neighbour iodepth, victim I/O type, scheduler, ...) by rewriting the loaded YAML, so the files
stay readable and the sweep stays here. The paper's numbers printed next to ours are the ones
its text states (the figures themselves are not in the text we have).

Each experiment measures once into a small record; its markdown table and, with --plots, its
PNG (sw/py/burstgate_tools/repro_plots.py, one file per experiment, named after its key) are
both drawn from that record.

    scripts/reproduce.py [--sim build/cmake/sw/sim/burstgate-sim] [--only fig19,fig23] [--out FILE] [--plots DIR]
"""

import argparse
import copy
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

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCEN = ROOT / "scenarios"
TYPES = [("A", "read"), ("A", "write"), ("B", "read"), ("B", "write")]
SCHEDULERS = {"bios": "BIOS", "wild": "WildCBS", "base": "BaseCBS"}


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
class BurstUtilization:
    """Fig. 23: ``share[workload][scheduler]``, both VMs' throughput / the software limit."""
    limit_mbps: float
    share: dict


def burst_utilization(run):
    """Fig. 23: the bursting VM's throughput, as a share of the 3 GB/s limit, per scheduler."""
    base = load("fig23_burst_utilization.yaml")
    mixes = {"BPS-intensive (4k-128k)": {"4k": 0.25, "16k": 0.25, "64k": 0.25, "128k": 0.25},
             "128k only": {"128k": 1.0}}
    shares = {}
    for label, sizes in mixes.items():
        sc = copy.deepcopy(base)
        tenant(sc, "bursty")["workload"]["sizes"] = sizes
        share = shares[label] = {}
        for s in SCHEDULERS:
            r = run(sc, s)[0]
            share[s] = (r["bursty"]["mbps"] + r["quiet"]["mbps"]) / sc["dpu"]["swlimit_mbps"]
    return BurstUtilization(base["dpu"]["swlimit_mbps"], shares)


def burst_utilization_md(r):
    lines = ["**Fig. 23, burst utilization** (`scenarios/fig23_burst_utilization.yaml`): the bursting VM's "
             "throughput as a share of the 3 GB/s software limit, next to a VM at iodepth 2 below its base. "
             "Paper: BIOS loses about 5-8 % vs WildCBS (the 5 % reserve); BaseCBS about half.", "",
             "| burst workload | BIOS | WildCBS | BaseCBS | BIOS vs WildCBS |", "|---|---|---|---|---|"]
    for label, share in r.share.items():
        lines.append(f"| {label} | {share['bios']:.3f} | {share['wild']:.3f} | {share['base']:.3f} | "
                     f"{pct(share['bios'], share['wild']):+.1f} % |")
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


def sudden_activation(run):
    """Fig. 24: deferrals of a 45k-base tenant resuming from idle at iodepth 1..64."""
    base = load("fig24_sudden_activation.yaml")
    r = SuddenActivation(tenant(base, "resumer")["base"]["iops"], (1, 2, 4, 8, 16, 24, 32, 64), [], [], [], [], [])
    for d in r.depths:
        sc = copy.deepcopy(base)
        tenant(sc, "resumer")["workload"]["iodepth"] = d
        b = run(sc, "bios")[0]["resumer"]
        w = run(sc, "wild")[0]["resumer"]
        r.iops.append(b["iops"])
        r.throttled_bios.append(b["throttled"])
        r.admitted_borrow.append(b["admitted_borrow"])
        r.admitted_reserved.append(b["admitted_reserved"])
        r.throttled_wild.append(w["throttled"])
    return r


def sudden_activation_md(r):
    lines = ["**Fig. 24, responsiveness to sudden activation** (`scenarios/fig24_sudden_activation.yaml`): "
             "a tenant with a 45k IOPS base idles until its allocation has decayed to the floor, then runs "
             "4 KiB writes at iodepth 1..64 (the paper: 1..16) while a neighbour bursts. Paper: no throttled I/Os until the "
             "stream (60k IOPS) makes it a burst tenant.", "",
             "| iodepth | IOPS | throttled (BIOS) | admitted from a lender / the pool | throttled (WildCBS) |",
             "|---|---|---|---|---|"]
    for row in zip(r.depths, r.iops, r.throttled_bios, r.admitted_borrow, r.admitted_reserved, r.throttled_wild):
        d, iops, tb, borrow, reserved, tw = row
        lines.append(f"| {d} | {iops:.0f} | {tb} | {borrow} / {reserved} | {tw} |")
    lines.append("")
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
    """Seed 002 Fig. 10 / 13: one row per (write share, path).

    Each row holds, per configuration ("baseline", "dual", "fifo" = cheque with deferral-order
    re-offers, "prio" = steady first without a cheque, "wild"), the steady segments' latency
    percentiles ``steady[config][q]`` (us, q in p50 / p99 / p99999, the worst tenant), the hot
    segments' P99 ``hot_p99[config]``, and the dual-bucket run's cheque admissions and share of
    new steady I/Os taken as hot (%).
    """
    rows: list


def hot_segments(run):
    """Seed 002 Fig. 10 / 13: steady segments' tail latency with and without the cheque bucket.

    Baseline: the paper's production limiter, the main bucket alone (cheque_share 0) with the
    deferred I/Os re-offered in deferral order, at the same issuance. Dual-bucket: the scenario
    (cheque, steady I/Os re-offered first). Two ablations separate the parts: the cheque with
    deferral-order re-offers, and steady-first re-offers without a cheque. Fig. 10 is the
    proxy's own latency (limiter wait + SA): backend off. Fig. 13 is the whole path: backend
    on. WildCBS at the SA's full capacity for reference."""
    base = load("seed002_hot_segments.yaml")
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
            # The segment monitor counts re-offers: a steady segment with deferred I/Os can look
            # hot, and its new I/Os then get no cheque (docs/results.md, seed 002).
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
    lines = ["**Seed 002 Fig. 10 / 13, hot segments** (`scenarios/seed002_hot_segments.yaml`): 20 % of the "
             "segments carry 80 % of a closed-loop load (4 clients x iodepth 64) that saturates the main "
             "bucket (0.56 of the SA's capacity, the paper's 1.2 of 2.13 GB/s); latency in us of I/Os to "
             "the steady segments. Baseline: the main bucket alone (cheque_share 0, re-offers in deferral "
             "order). Dual-bucket: cheque 20 %, steady I/Os re-offered first (`reoffer: steady_first`). "
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
    """Seed 002 Eq. (1): per main_share (share, lambda Mb/s, windows, measured P95 us, Eq. (1) us)."""
    mu: float
    warmup: float
    scenario_alpha: float
    percentile: float
    alpha: float
    rows: list


def alpha_fit(run):
    """Seed 002 Eq. (1)'s alpha for this SA: the seed 002 scenario with the main bucket alone
    (cheque_share 0) at three loads, the P95 SA delay the firmware reads per window (the CSV's
    sa_p95_us), fitted by `sw/py/burstgate fit-alpha` (burstgate_tools/fit_alpha.py)."""
    sys.path.insert(0, str(ROOT / "sw" / "py"))
    from burstgate_tools import fit_alpha

    base = load("seed002_hot_segments.yaml")
    db = base["dualbucket"]
    mu = db.get("mu_mbps") or base["dpu"]["swlimit_mbps"] * 8
    warmup = base["warmup_ms"]
    points, rows = [], []
    for share in (0.3, 0.56, 0.8):
        sc = copy.deepcopy(base)
        sc["dualbucket"].update(cheque_share=0.0, main_share=share, reoffer="fifo")  # the production limiter
        csv = run.tmp / f"alpha_{share}.csv"
        run(sc, "dualbucket", csv=csv)
        lam, w, n = fit_alpha.load_point(csv, warmup, 16)
        points.append((lam, w))
        rows.append((share, lam, n, w))
    percentile = 0.95  # the CSV's sa_p95_us
    alpha, pred = fit_alpha.fit(points, mu, percentile)
    return AlphaFit(mu, warmup, db["alpha"], percentile, alpha,
                    [(share, lam, n, w, p) for (share, lam, n, w), p in zip(rows, pred)])


def alpha_fit_md(r):
    lines = ["**Seed 002 Eq. (1), alpha fitted to this SA** (`scenarios/seed002_hot_segments.yaml`, "
             "`cheque_share: 0`, `main_share` 0.3 / 0.56 / 0.8; per-window P95 SA delay as the firmware "
             f"reads it, averaged over the windows after {r.warmup} ms; mu = {r.mu} Mb/s). "
             f"The scenario uses alpha = {r.scenario_alpha}. Same fit by hand: "
             f"`sw/py/burstgate fit-alpha R1.csv R2.csv R3.csv --mu-mbps {r.mu} --warmup-ms {r.warmup}`.", ""]
    lines += ["| main_share | lambda Mb/s | mu - lambda | windows | measured P95 us | Eq. (1) at the fit, us |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {share} | {lam:.0f} | {r.mu - lam:.0f} | {n} | {w:.1f} | {p:.1f} |"
              for share, lam, n, w, p in r.rows]
    lines += ["", f"Least-squares alpha = {r.alpha:.0f}.", ""]
    return lines


@dataclasses.dataclass
class Experiment:
    """How to measure one experiment, write its markdown, and which repro_plots function draws it."""
    measure: Callable  # (Runner) -> record
    markdown: Callable  # (record) -> lines
    plot: str  # imported only under --plots



def fifo_sensitivity(fig, measure, *args):
    """`fig` again with the SA serving its queue in arrival order (`sa_discipline: fifo`)."""
    return lambda run: measure(
        run, *args, f"{fig} with the SA serving its queue in arrival order (`sa_discipline: fifo`, sensitivity)",
        f"as {fig}.", f"{fig} with a FIFO SA (sensitivity): paper claims as {fig}", dpu={"sa_discipline": "fifo"})


EXPERIMENTS = {
    "fig19": Experiment(lambda run: victim_latency(
        run, "fig19_bps_neighbor.yaml", (1, 4, 16, 64), "Fig. 19, BPS-intensive neighbour",
        "average latency -68 % to -85 % vs WildCBS, close to BaseCBS.",
        "Fig. 19, BPS-intensive neighbour: BIOS cuts the victim's latency 68-85 % vs WildCBS (paper)"),
        victim_latency_md, "victim_latency"),
    "fig19fifo": Experiment(fifo_sensitivity("Fig. 19", victim_latency, "fig19_bps_neighbor.yaml", (16, 64)),
                            victim_latency_md, "victim_latency"),
    "fig20": Experiment(lambda run: victim_latency(
        run, "fig20_iops_neighbor.yaml", (1, 8, 32, 128), "Fig. 20, IOPS-intensive neighbour",
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
    "table3": Experiment(misestimation, misestimation_md, "misestimation"),
    "seed002": Experiment(hot_segments, hot_segments_md, "hot_segments"),
    "alpha": Experiment(alpha_fit, alpha_fit_md, "alpha_fit"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_sim = pathlib.Path(os.environ.get("BG_BUILD_DIR", ROOT / "build" / "cmake")) / "sw" / "sim" / "burstgate-sim"
    ap.add_argument("--sim", default=str(default_sim), help="the burstgate-sim binary")
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
        sys.path.insert(0, str(ROOT / "sw" / "py"))
        from burstgate_tools import repro_plots as plots
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
        if plots:
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
