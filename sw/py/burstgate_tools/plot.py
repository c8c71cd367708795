"""Plots of burstgate-sim output: each tenant's latency CDF from the report's full histogram
(every I/O counted; plotted as the complementary CDF on log axes so P99 ... P99999 are visible),
and, from the per-window CSV, each tenant's IOPS, allocation, deferrals and latency over time.

Several reports (e.g. one scenario under wild and bios) go on the same CDF axes, one line style
per report, so schedulers compare at a glance.
"""

import csv
import pathlib

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from burstgate_tools.reports import InputError, load_report  # noqa: E402


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


def plot_cdfs(reports, out_dir):
    names = [t["name"] for t in reports[0]["tenants"]]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    styles = ["-", "--", ":", "-."]
    for ax, name in zip(axes[0], names):
        for i, report in enumerate(reports):
            tenant = next((t for t in report["tenants"] if t["name"] == name), None)
            if tenant is None or not tenant["hist_us"]:
                continue
            xs, ys = ccdf(tenant["hist_us"])
            lat = tenant["lat_us"]
            ax.step(xs, ys, where="post", linestyle=styles[i % len(styles)],
                    label=f"{report['scheduler']}: avg {lat['avg']:.0f}, P99 {lat['p99']:.0f} us")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_yscale("log")
        ax.set_ylim(1e-5, 1)
        ax.set_title(name)
        ax.set_xlabel("latency (us)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("fraction of I/Os slower")
    fig.suptitle(f"{reports[0]['scenario']}: latency (complementary CDF)")
    fig.tight_layout()
    path = pathlib.Path(out_dir) / f"{reports[0]['scenario']}-cdf.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def load_series(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise InputError(f"{path}: {exc}") from exc
    need = {"t_ms", "tenant", "iops", "alloc_cpu_ns", "alloc_swlimit_B", "deferrals", "lat_avg_us"}
    if not rows or not need <= set(rows[0]):
        raise InputError(f"{path}: not a burstgate-sim series (needs columns {', '.join(sorted(need))})")
    series = {}
    for line, row in enumerate(rows, start=2):
        try:
            s = series.setdefault(row["tenant"], {k: [] for k in need - {"tenant"}})
            for k in s:
                s[k].append(float(row[k]))
        except ValueError as exc:
            raise InputError(f"{path}:{line}: {exc}") from exc
    return series


def plot_series(series, title, out_path):
    panels = [("iops", "IOPS"), ("alloc_swlimit_B", "allocation: swlimit B / window"),
              ("alloc_cpu_ns", "allocation: CPU ns / window"), ("deferrals", "deferrals / window"),
              ("lat_avg_us", "avg latency (us)")]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.0 * len(panels)), sharex=True)
    for ax, (key, label) in zip(axes, panels):
        for name, s in series.items():
            ax.plot(s["t_ms"], s[key], label=name, linewidth=0.8)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7, ncol=len(series))
    axes[-1].set_xlabel("simulated time (ms)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    plt.close(fig)
    return out_path


def add_arguments(p):
    p.add_argument("reports", nargs="+", help="burstgate-sim JSON reports of one scenario (CDFs share axes)")
    p.add_argument("--csv", action="append", default=[], help="a per-window series (burstgate-sim --csv); repeatable")
    p.add_argument("--out", default="out", help="folder for the PNGs (default: out/)")
    p.set_defaults(func=run)


def run(args):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reports = [load_report(r) for r in args.reports]
    written = [plot_cdfs(reports, out)]
    for path in args.csv:
        stem = pathlib.Path(path).stem
        written.append(plot_series(load_series(path), stem, out / f"{stem}-series.png"))
    return written
