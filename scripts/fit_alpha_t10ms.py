"""Still Water Eq. (1)'s alpha fitted the paper's way at its T = 10 ms, on the Fig. 18 proxy scenario.

The paper (Come Hell or Still Water, §4.2, Fig. 6) measures its proxy's P-th percentile delay
w_p against offered load lambda and fits w_p = alpha * L_p / (mu - lambda), L_p = ln(1/(1-p)).
alpha carries the service time's unit (for an M/M/1 server of S-byte requests, alpha = 8 S with
w_p in us), so the paper's alpha = 8000 belongs to its proxy and is not copied here; this
script does the paper's procedure on the simulated SA instead:

* the Fig. 18 scenario (scripts/reproduce_segunit.py's ``_hot_sc``: proxy path, 50 % writes,
  one I/O size) with the main bucket alone (``cheque_share: 0``) and ``window_us: 10000``;
* lambda swept by ``main_share``; w_p is the per-window P95 SA delay the firmware reads
  (the CSV's ``sa_p95_us``, averaged over the windows after warm-up);
* two fits per size: alpha through the origin with mu fixed (the scenario's mu, what the
  firmware uses) with its R^2, and mu left free (1/w_p linear in lambda: 1/w = (mu - lambda) /
  (alpha L_p)), whose fitted mu says whether Eq. (1)'s pole sits at our mu.

Then it prints the scenario settings (``dualbucket.alpha``, ``headroom_mbps`` = 15.5 % of mu,
the paper's 330 / 2130) and, with ``--run``, Fig. 18 (proxy) and Fig. 20 (end to end) at T =
10 ms with them, both monitor units. Output: a markdown table on stdout and build/alpha_t10ms.md, the plot build/alpha_t10ms.png.

    .venv/bin/python scripts/fit_alpha_t10ms.py [--sizes 8k,64k] [--run]
"""

import argparse
import copy
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reproduce as rp  # noqa: E402
import reproduce_segunit as su  # noqa: E402
import reproduce_stillwater as sw  # noqa: E402

from reproduce_metered import HEADROOM_SHARE, R_REQUESTS_T, T_US, r_bytes_t, t10ms_sc  # noqa: E402

R_BYTES_T = r_bytes_t(rp.load)

SHARES = (0.3, 0.45, 0.56, 0.7, 0.8)
P = 0.95  # the CSV's sa_p95_us; the scenario's `percentile`


def _sc(size, end_to_end=False, slices=1):
    return t10ms_sc(rp.load, size, end_to_end, slices)


def r_squared(ys, preds):
    mean = sum(ys) / len(ys)
    return 1 - sum((y - q) ** 2 for y, q in zip(ys, preds)) / (sum((y - mean) ** 2 for y in ys) or 1.0)


def fit_size(run, size, slices=1):
    """{size, slices, mu, points [(share, lambda, windows, w_p)], alpha, r2, alpha_free, mu_free, r2_free}."""
    mu, pts, alpha, pred = rp.main_bucket_sweep(run, _sc(size, slices=slices), SHARES, f"a_{size}_{slices}", P)
    lp = -math.log(1 - P)
    ws = [w for *_, w in pts]
    r2 = r_squared(ws, pred)
    # mu free: 1/w = a + b lambda, b = -1/(alpha L_p), a = mu / (alpha L_p).
    xs, ys = [lam for _, lam, _, _ in pts], [1 / w for w in ws]
    xm, ym = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - xm) ** 2 for x in xs)
    b = sum((x - xm) * (y - ym) for x, y in zip(xs, ys)) / sxx
    a = ym - b * xm
    r2_free = r_squared(ys, [a + b * x for x in xs])
    alpha_free = -1 / (b * lp) if b < 0 else float("nan")
    mu_free = -a / b if b < 0 else float("nan")
    return {"size": size, "slices": slices, "mu": mu, "points": pts, "pred": pred, "alpha": alpha, "r2": r2,
            "alpha_free": alpha_free, "mu_free": mu_free, "r2_free": r2_free}


def fit_md(f):
    lines = [f"**{f['size'][:-1]} KiB** (mu = {f['mu']} Mb/s, T = {T_US / 1000:g} ms, main_slices "
             f"{f['slices']}, P{P * 100:g}):", "",
             "| main_share | lambda Mb/s | mu - lambda | windows | measured w_p us | Eq. (1) at the fit, us |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {s} | {lam:.0f} | {f['mu'] - lam:.0f} | {n} | {w:.1f} | {p:.1f} |"
              for (s, lam, n, w), p in zip(f["points"], f["pred"])]
    lines += ["", f"alpha (mu fixed) = {f['alpha']:.0f}, R^2 = {f['r2']:.3f}; mu free: alpha = "
              f"{f['alpha_free']:.0f}, fitted mu = {f['mu_free']:.0f} Mb/s, R^2 (of 1/w_p) = {f['r2_free']:.3f}. "
              f"Settings: `dualbucket.alpha: {round(f['alpha'])}`, `headroom_mbps: "
              f"{round(HEADROOM_SHARE * f['mu'])}`, `window_us: {T_US}`, `main_slices: {f['slices']}`.", ""]
    return lines


def _chosen_row(run, sc, key, label):
    """su._cheque_row with R_REQUESTS_T / R_BYTES_T per T in each unit."""
    base = copy.deepcopy(sc)
    base["dualbucket"]["cheque_share"] = 0.0
    row = {"key": key, "label": label, "base": sw._steady(run(base, "dualbucket")[0]), "units": {}}
    per_s = 1e6 / sc["window_us"]
    for unit in su.UNITS:
        s = copy.deepcopy(sc)
        su._unit(s, unit)
        if unit == "bytes":
            s["dualbucket"]["hot_threshold_bps"] = R_BYTES_T * per_s
        else:
            s["dualbucket"]["hot_threshold_iops"] = R_REQUESTS_T * per_s
        r = run(s, "dualbucket")[0]
        recall, false_hot = su._monitor(r)
        row["units"][unit] = {"steady": sw._steady(r), "hot_p99": sw._hot_p99(r), "recall": recall,
                              "false_hot": false_hot, "cheques": sum(t["admitted_reserved"] for t in r.values())}
    return row


def cheque_rows(run, f, r="scaled", headroom=None, alpha_fit="fixed", e2e_too=True):
    """Fig. 18 (proxy) and Fig. 20 (end to end) at T = 10 ms with the fitted alpha, both units."""
    rows = []
    alpha = f["alpha"] if alpha_fit == "fixed" else f["alpha_free"]
    h = round(HEADROOM_SHARE * f["mu"]) if headroom is None else headroom
    for e2e in (False, True) if e2e_too else (False,):
        sc = _sc(f["size"], end_to_end=e2e, slices=f["slices"])
        sc["dualbucket"].update(alpha=round(alpha), headroom_mbps=h)
        fig = "Fig. 20" if e2e else "Fig. 18"
        label = (f"{fig}, {f['size'][:-1]} KiB, T = 10 ms, k = {f['slices']}, alpha {round(alpha)} ({alpha_fit}), "
                 f"h_p {h}, R {r}")
        row = _chosen_row if r == "chosen" else su._cheque_row
        rows.append(row(run, sc, f"{fig}_{f['size']}", label))
    return rows


def rows_md(rows):
    lines = ["| row | base steady P99 / P99999 us | unit | P99 / P99999 change | recall / false hot | I/Os via cheque |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        b = r["base"]
        for unit, u in r["units"].items():
            s = u["steady"]
            lines.append(f"| {r['label']} | {b['p99']:.0f} / {b['p99999']:.0f} | {unit} | "
                         f"{rp.pct(s['p99'], b['p99']):+.0f} % / {rp.pct(s['p99999'], b['p99999']):+.0f} % | "
                         f"{u['recall']:.1f} % / {u['false_hot']:.2f} % | {u['cheques']} |")
    return lines + [""]


def plot(fits, dest):
    """w_p against lambda per size, measured (points) and Eq. (1) at the fitted alpha (lines)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for f in fits:
        lams = [lam for _, lam, _, _ in f["points"]]
        line, = ax.plot(lams, f["pred"], "--")
        ax.plot(lams, [w for *_, w in f["points"]], "o-", color=line.get_color(),
                label=f"{f['size'][:-1]} KiB (alpha {f['alpha'] / 1e6:.1f} M, R^2 {f['r2']:.2f})")
    ax.set_xlabel("lambda, Mb/s (main bucket alone)")
    ax.set_ylabel(f"P{P * 100:g} SA delay w_p, us")
    ax.set_title(f"Eq. (1) at T = {T_US / 1000:g} ms: measured (o) vs fitted (--)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(dest)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(su.SIZES), help="comma-separated I/O sizes (8k,16k,32k,64k)")
    ap.add_argument("--slices", type=int, default=1, metavar="K",
                    help="dualbucket.main_slices: a window's main-bucket tokens in K slices across it (default 1: at the tick)")
    ap.add_argument("--r", choices=("scaled", "chosen"), default="scaled",
                    help="the monitor's R with --run: the 100 us scenario's scaled with T, or chosen for T = 10 ms "
                         f"({R_REQUESTS_T} requests / {R_BYTES_T // 1024} KiB per T)")
    ap.add_argument("--headroom-mbps", type=int, default=None,
                    help="h_p with --run (default 15.5 %% of mu, the paper's 330 / 2130)")
    ap.add_argument("--alpha-fit", choices=("fixed", "free"), default="fixed",
                    help="alpha with --run: the fit with mu fixed (default) or with mu free")
    ap.add_argument("--run", action="store_true", help="also run Fig. 18 / 20 at T = 10 ms with the fitted alpha")
    args = ap.parse_args()
    run = rp.sim_runner("fit_alpha_t10ms")
    out, rows, fits = [], [], []
    for size in args.sizes.split(","):
        if size not in su.SIZES:
            sys.exit(f"fit_alpha_t10ms: --sizes: {size!r} is not one of {','.join(su.SIZES)}")
        f = fit_size(run, size, args.slices)
        fits.append(f)
        out += fit_md(f)
        if args.run:
            rows += cheque_rows(run, f, args.r, args.headroom_mbps, args.alpha_fit)
    if rows:
        out += rows_md(rows)
    text = "\n".join(out)
    print(text)
    dest = rp.ROOT / "build" / ("alpha_t10ms.md" if args.slices == 1 else f"alpha_t10ms_k{args.slices}.md")
    dest.parent.mkdir(exist_ok=True)
    dest.write_text(text + "\n")
    plot(fits, dest.with_suffix(".png"))


if __name__ == "__main__":
    main()
