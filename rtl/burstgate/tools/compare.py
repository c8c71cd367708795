"""Side-by-side latency of one tenant across burstgate-sim reports (`make demo` prints this)."""

from burstgate.tools.reports import InputError, load_report

FIELDS = ("avg", "p50", "p99", "p999", "p9999", "p99999")


def add_arguments(p):
    p.add_argument("reports", nargs="+", help="burstgate-sim JSON reports")
    p.add_argument("--tenant", default="victim", help="the tenant to compare (default: victim)")
    p.set_defaults(func=run)


def run(args):
    rows = []
    for path in args.reports:
        report = load_report(path)
        tenant = next((t for t in report["tenants"] if t["name"] == args.tenant), None)
        if tenant is None:
            raise InputError(f"{path}: no tenant named {args.tenant!r}")
        rows.append((report["scheduler"], tenant))
    header = f"{args.tenant} latency (us)".ljust(24) + "".join(f"{f:>10}" for f in FIELDS) + f"{'IOPS':>10}{'throttled':>11}"
    lines = [header]
    for sched, t in rows:
        lines.append(sched.ljust(24) + "".join(f"{t['lat_us'][f]:>10.1f}" for f in FIELDS)
                     + f"{t['iops']:>10.0f}{t['throttled']:>11}")
    if len(rows) == 2 and rows[0][1]["lat_us"]["avg"] > 0:
        a, b = rows[0][1]["lat_us"]["avg"], rows[1][1]["lat_us"]["avg"]
        lines.append(f"{rows[1][0]} vs {rows[0][0]}: average {100 * (b - a) / a:+.0f} %")
    return lines
