"""Fit Still Water's correction factor alpha (Eq. (1), §4.2) to burstgate-sim's measured SA delay.

Eq. (1) predicts the p-th percentile delay at load lambda on a server of capacity mu as
w_p = alpha * L_p / (mu - lambda), with L_p = -ln(1 - p) (Appendix A, Eq. (7); the paper
writes ln(1 - p) and means its magnitude). The firmware inverts it every interval (Eq. (2),
fw/src/dualbucket.c) from the P95 it reads off the datapath's SA-delay histogram, so alpha must
map *that* reading to the residual mu - lambda. Each input is one burstgate-sim run's per-window
CSV (`--csv`) at one steady load: its point is (lambda, w), with
  w      = the mean over measured windows of `sa_p95_us` (the P95 the firmware read at each
           tick; windows with fewer than --min-samples completions are skipped, as the firmware
           skips them), and
  lambda = the mean over the same windows of the SA's throughput, sum over tenants of `mbps`
           (MB/s) * 8, in Mb/s like mu.
alpha is the least-squares fit through the origin of w = alpha * x with x = L_p / (mu - lambda):
alpha = sum(w x) / sum(x^2), w in us and rates in Mb/s, the units dualbucket.alpha has.

    burstgate fit-alpha RUN1.csv RUN2.csv ... --mu-mbps 24000 [--warmup-ms 100]
"""

import math
import pathlib

from burstgate.tools.reports import InputError, csv_rows, non_negative_number, number, positive_number

NEED = ("t_ms", "tenant", "mbps", "sa_p95_us", "sa_n")


def load_point(path, warmup_ms, min_samples):
    """(lambda Mb/s, mean per-window P95 SA delay us, windows used) of one run's CSV."""
    windows = {}  # t_ms -> [sum of mbps, p95 us or None, samples]
    what = "a burstgate-sim series with SA delay (from a dualbucket or cost_adjust run with --csv)"
    for line, row in csv_rows(path, NEED, what):
        t = number(path, line, "t_ms", row["t_ms"], blank=None)
        w = windows.setdefault(t, [0.0, None, 0])
        w[0] += number(path, line, "mbps", row["mbps"], blank=None)
        if row["sa_n"] not in ("", None):
            n = number(path, line, "sa_n", row["sa_n"])
            if n != int(n):
                raise InputError(f"{path}:{line}: sa_n: expected a count, got {row['sa_n']!r}")
            w[2] = int(n)
            w[1] = number(path, line, "sa_p95_us", row["sa_p95_us"], blank=None) if row["sa_p95_us"] != "" else None
    used = [(mbps, p95) for t, (mbps, p95, n) in windows.items()
            if t > warmup_ms and p95 is not None and n >= min_samples]
    if not used:
        raise InputError(f"{path}: no window after {warmup_ms} ms with at least {min_samples} completions")
    lam = 8.0 * sum(m for m, _ in used) / len(used)
    w = sum(p for _, p in used) / len(used)
    return lam, w, len(used)


def eq1_us(alpha, residual_mbps, percentile):
    """Eq. (1): the p-th percentile delay w_p = alpha * L_p / (mu - lambda), in us."""
    return alpha * -math.log(1.0 - percentile) / residual_mbps


def fit(points, mu_mbps, percentile):
    """alpha of w = alpha * L_p / (mu - lambda) over points [(lambda, w_us)], least squares."""
    if not 0 < percentile < 1:  # also refuses nan
        raise InputError(f"--percentile: {percentile} is not in (0, 1)")
    xs = []
    for lam, _ in points:
        if lam >= mu_mbps:
            raise InputError(f"a run's throughput {lam:.0f} Mb/s is not below mu = {mu_mbps} Mb/s: "
                             "Eq. (1) has no residual there (wrong --mu-mbps?)")
        xs.append(eq1_us(1.0, mu_mbps - lam, percentile))
    alpha = sum(w * x for (_, w), x in zip(points, xs)) / sum(x * x for x in xs)
    return alpha, [alpha * x for x in xs]


def add_arguments(p):
    p.add_argument("csvs", nargs="+", help="burstgate-sim --csv series, one run per load")
    p.add_argument("--mu-mbps", type=positive_number, required=True,
                   help="the SA's capacity mu in Mb/s (dualbucket.mu_mbps; default there: swlimit_mbps * 8)")
    p.add_argument("--percentile", type=float, default=0.95, help="p of w_p (default 0.95, the CSV's column)")
    p.add_argument("--warmup-ms", type=non_negative_number, default=0.0, help="skip windows ending at or before this time")
    p.add_argument("--min-samples", type=int, default=16,
                   help="skip windows with fewer completions (the firmware's min_samples, default 16)")
    p.set_defaults(func=run)


def run(args):
    if args.min_samples < 0:
        raise InputError(f"--min-samples: expected 0 or more, got {args.min_samples}")
    points, lines = [], ["| run | lambda Mb/s | mu - lambda | windows | measured P95 us | Eq. (1) us |",
                         "|---|---|---|---|---|---|"]
    rows = []
    for path in args.csvs:
        lam, w, n = load_point(path, args.warmup_ms, args.min_samples)
        points.append((lam, w))
        rows.append((pathlib.Path(path).name, lam, n, w))
    alpha, pred = fit(points, args.mu_mbps, args.percentile)
    for (name, lam, n, w), p in zip(rows, pred):
        lines.append(f"| {name} | {lam:.0f} | {args.mu_mbps - lam:.0f} | {n} | {w:.1f} | {p:.1f} |")
    lines.append(f"alpha = {alpha:.0f}")
    return lines
