"""Plots of burstgate-sim output: each tenant's latency CDF from the report's full histogram
(every I/O counted; plotted as the complementary CDF on log axes so P99 ... P99999 are visible),
and, from the per-window CSV, each tenant's IOPS, allocation, deferrals and latency over time.

Several reports (e.g. one scenario under wild and bios) go on the same CDF axes, one line style
per report, so schedulers compare at a glance.
"""

import math
import pathlib
import re

from burstgate.tools.reports import InputError, csv_rows, load_report, number, output_folder


def _pyplot():
    """matplotlib, imported when a figure is drawn: every `burstgate` command imports this module
    for its arguments, and matplotlib would add a second to each one's start."""
    import matplotlib
    matplotlib.use("Agg")  # files only; no display needed
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    return matplotlib, plt


def ccdf(hist):
    """(latency us, fraction of I/Os slower) at each bucket's upper edge."""
    total = sum(c for _, c in hist)
    xs, ys, seen = [], [], 0
    for upper, count in hist:
        seen += count
        if seen < total:
            xs.append(upper)
            ys.append((total - seen) / total)
    return xs, ys


def run_title(report):
    """What a figure shows: scenario, engine and scheduler of a report."""
    return f"{report['scenario']} (engine {report.get('engine', '?')}, scheduler {report['scheduler']})"


def check_same_scenario(reports, paths):
    """Reports drawn on shared axes must be of one scenario with the same tenants."""
    first = reports[0]
    names = [t["name"] for t in first["tenants"]]
    for report, path in zip(reports[1:], paths[1:]):
        if report["scenario"] != first["scenario"]:
            raise InputError(f"{path}: scenario {report['scenario']!r}, but {paths[0]} is of "
                             f"{first['scenario']!r}: plot one scenario's reports together")
        other = [t["name"] for t in report["tenants"]]
        if other != names:
            raise InputError(f"{path}: tenants {other}, but {paths[0]} has {names}")


def plot_cdfs(reports, out_dir):
    matplotlib, plt = _pyplot()
    names = [t["name"] for t in reports[0]["tenants"]]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    styles = ["-", "--", ":", "-."]
    for ax, name in zip(axes[0], names):
        drawn = False
        for i, report in enumerate(reports):
            tenant = next(t for t in report["tenants"] if t["name"] == name)
            if not tenant["hist_us"]:
                continue
            xs, ys = ccdf(tenant["hist_us"])
            lat = tenant["lat_us"]
            ax.step(xs, ys, where="post", linestyle=styles[i % len(styles)],
                    label=f"{report['scheduler']}: avg {lat['avg']:.0f} µs, P99 {lat['p99']:.0f} µs")
            drawn = True
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_yscale("log")
        ax.set_ylim(1e-5, 1)
        ax.set_title(name)
        ax.set_xlabel("latency (µs)")
        ax.grid(True, which="both", alpha=0.3)
        if drawn:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no I/O completed", transform=ax.transAxes, ha="center")
    axes[0][0].set_ylabel("fraction of I/Os slower")
    engines = sorted({r.get("engine", "?") for r in reports})
    fig.suptitle(f"{reports[0]['scenario']} (engine {', '.join(engines)}): latency, complementary CDF")
    fig.tight_layout()
    # A scenario's name may hold any character but quotes: the file name keeps it inside out_dir.
    path = pathlib.Path(out_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', reports[0]['scenario']).lstrip('.')}-cdf.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


NEED = ("t_ms", "tenant", "iops", "mbps", "alloc_cpu_ns", "alloc_swlimit_B", "deferrals", "lat_avg_us",
        "sa_p95_us")


def load_series(path):
    """{tenant: {column: [values]}} of a burstgate-sim --csv series; a blank cell is NaN."""
    series = {}
    for line, row in csv_rows(path, NEED, "a burstgate-sim series"):
        s = series.setdefault(row["tenant"], {k: [] for k in NEED if k != "tenant"})
        for k in s:
            s[k].append(number(path, line, k, row[k]))
    if not series:
        raise InputError(f"{path}: no rows")
    return series


def _panels(scheduler):
    """(label, function of a tenant's columns) per panel. Under dualbucket the firmware grants
    no per-tenant allocation (the buckets are per segment), so its panels show the SA delay
    the cheque refill reads instead of allocations that would all be zero."""
    panels = [("IOPS", lambda s: s["iops"]),
              ("throughput (MB/s)", lambda s: s["mbps"])]
    if scheduler == "dualbucket":
        panels.append(("SA delay P95 (µs)", lambda s: s["sa_p95_us"]))
    else:
        panels += [("allocation: CPU (ms / window)", lambda s: [v / 1e6 for v in s["alloc_cpu_ns"]]),
                   ("allocation: sw limit (MB / window)", lambda s: [v / 1e6 for v in s["alloc_swlimit_B"]])]
    # A window with no completion has no latency: NaN leaves a gap instead of a drawn zero.
    panels += [("deferrals / window", lambda s: s["deferrals"]),
               ("avg latency (µs)", lambda s: [lat if n > 0 else math.nan for lat, n in zip(s["lat_avg_us"], s["iops"])])]
    return panels


def plot_series(series, title, scheduler, out_path):
    _, plt = _pyplot()
    panels = _panels(scheduler)
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 1.9 * len(panels)), sharex=True)
    for ax, (label, values) in zip(axes, panels):
        for name, s in series.items():
            ax.plot(s["t_ms"], values(s), label=name, linewidth=0.8)
        ax.set_ylabel(label, fontsize=8)
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, ncol=min(len(series), 4), loc="upper right")
    axes[-1].set_xlabel("simulated time (ms)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    plt.close(fig)
    return out_path


def add_arguments(p):
    p.add_argument("reports", nargs="+", help="burstgate-sim JSON reports of one scenario (CDFs share axes)")
    p.add_argument("--csv", action="append", default=[],
                   help="a per-window series (burstgate-sim --csv), repeatable; the i-th belongs to the i-th report")
    p.add_argument("--out", default="out", help="folder for the PNGs (default: out/)")
    p.set_defaults(func=run)


def run(args):
    out = output_folder(args.out)
    if args.csv and len(args.csv) > len(args.reports):
        raise InputError(f"{len(args.csv)} --csv series but {len(args.reports)} reports: "
                         "give the report of each series, in the same order")
    reports = [load_report(r) for r in args.reports]
    check_same_scenario(reports, args.reports)
    written = [plot_cdfs(reports, out)]
    for path, report in zip(args.csv, reports):
        stem = pathlib.Path(path).stem
        written.append(plot_series(load_series(path), f"{run_title(report)}: per window",
                                   report["scheduler"], out / f"{stem}-series.png"))
    return written
