"""Figures of scripts/reproduce.py's experiments (`make reproduce` writes them to out/reproduce/).

Each function draws one experiment's record (the dataclasses in scripts/reproduce.py, the same
numbers its markdown table prints) to one PNG and returns the path. Titles state what the paper
claims, so a figure reads as "claim, then our numbers"; the tables in docs/results.md say how
far each claim is reproduced.
"""

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from burstgate.tools import fit_alpha  # noqa: E402

DPI = 100
# One colour and marker per scheduler across every figure; BIOS on top, BaseCBS hollow and
# dashed, so a line hidden under another (BIOS at BaseCBS's numbers) still shows.
SCHED = {"bios": ("BIOS", "tab:blue", "o"), "wild": ("WildCBS", "tab:red", "s"),
         "base": ("BaseCBS", "tab:gray", "^")}
LINE = {"bios": {"zorder": 4, "markersize": 7}, "wild": {"zorder": 3},
        "base": {"zorder": 2, "linestyle": "--", "markerfacecolor": "none", "markersize": 9}}
PRODUCT = {"A": "ProductA", "B": "ProductB"}


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _log2_x(ax, xs, label):
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([str(x) for x in xs]))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    pad = 2 ** 0.3
    ax.set_xlim(min(xs) / pad, max(xs) * pad)
    ax.set_xlabel(label)


def _victim_panels(r, ylabel, xlabel, scale=1.0):
    """2 x 2 panels, one per victim I/O type, one line per scheduler."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True, sharey=True)
    for ax, ((product, op), per) in zip(axes.flat, r.values.items()):
        for s, ys in per.items():
            name, colour, marker = SCHED[s]
            ax.plot(r.xs, [y / scale for y in ys], marker=marker, color=colour, label=name, **LINE[s])
        _log2_x(ax, r.xs, xlabel)
        ax.set_title(f"victim: {PRODUCT[product]} 4 KiB {op}s", fontsize=10)
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    for ax in axes[0]:
        ax.tick_params(labelbottom=True)  # sharex hides them on the top row
    axes[0][0].set_ylim(bottom=0)
    axes[0][0].legend(fontsize=9)
    fig.suptitle(r.title, fontsize=11)
    return fig, axes


def victim_latency(r, path):
    """Fig. 19 / 20: the victim's average latency vs the neighbour's iodepth."""
    fig, _ = _victim_panels(r, "victim average latency (\u00b5s)", "neighbour iodepth")
    return _save(fig, path)


def victim_iops(r, path):
    """Fig. 21 / 22: the victim's IOPS vs its own iodepth, its base dashed."""
    fig, axes = _victim_panels(r, "victim IOPS (thousands)", "victim iodepth", scale=1000.0)
    for ax in axes.flat:
        ax.axhline(r.base_iops / 1000.0, color="black", linestyle="--", linewidth=1,
                   label=f"base {r.base_iops / 1000.0:g}k")
    axes[0][0].set_ylim(0, r.base_iops / 1000.0 * 1.15)
    axes[0][0].legend(fontsize=9, loc="lower right")
    return _save(fig, path)


def _grouped_bars(ax, groups, series, width=0.8, fmt="%.0f", fontsize=8, inside=False):
    """Bars of ``series`` [(label, [value per group], bar kwargs)] side by side in each group,
    each labelled with its value (``inside``: in the bar, clear of lines drawn above it)."""
    n = len(series)
    w = width / n
    for i, (label, values, kw) in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * w for g in range(len(groups))]
        bars = ax.bar(xs, values, w, label=label, **kw)
        if inside:
            ax.bar_label(bars, fmt=fmt, fontsize=fontsize, label_type="center", color="white")
        else:
            ax.bar_label(bars, fmt=fmt, fontsize=fontsize, padding=1)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)


def burst_utilization(r, path):
    """Fig. 23: the bursting VM's throughput as a share of the software limit, per workload and scheduler."""
    fig, ax = plt.subplots(figsize=(10, 5))
    groups = list(r.share)
    _grouped_bars(ax, groups, [(SCHED[s][0], [r.share[g][s][0] for g in groups], {"color": SCHED[s][1]})
                               for s in SCHED], fmt="%.3f", fontsize=9, inside=True)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label=f"limit ({r.limit_mbps / 1000:g} GB/s)")
    ax.set_ylim(0, 1.15)
    ax.set_xlabel("bursting VM's workload")
    ax.set_ylabel(f"bursting VM's throughput / {r.limit_mbps / 1000:g} GB/s limit")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=9, loc="upper center", ncol=4)
    ax.set_title("Fig. 23, burst utilization: BIOS gives up 5-8 % vs WildCBS (its reserve), "
                 "BaseCBS about half (paper)", fontsize=10)
    return _save(fig, path)


def sudden_activation(r, path):
    """Fig. 24: the resuming tenant's throttled I/Os and admissions per iodepth, its IOPS beside."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.8))
    lines = [("throttled, BIOS", r.throttled_bios, {"color": SCHED["bios"][1], "marker": "o"}),
             ("throttled, WildCBS", r.throttled_wild, {"color": SCHED["wild"][1], "marker": "s"}),
             ("BIOS: admitted by reclaim (power of two choices)", r.admitted_borrow,
              {"color": SCHED["bios"][1], "marker": "v", "linestyle": ":"}),
             ("BIOS: admitted from the pool", r.admitted_reserved,
              {"color": SCHED["bios"][1], "marker": "^", "linestyle": "--"})]
    for label, ys, kw in lines:
        ax.plot(r.depths, ys, label=label, **kw)
    # Zero is the claim (no throttling below base): symlog keeps it on the axis.
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(bottom=-0.3)
    ax.set_ylabel("I/Os in the run (symlog: 0 shown)")
    ax.legend(fontsize=8)
    ax.set_title("deferrals and admissions of the resuming tenant", fontsize=10)
    ax2.plot(r.depths, [i / 1000.0 for i in r.iops], marker="o", color=SCHED["bios"][1], label="BIOS")
    ax2.axhline(r.base_iops / 1000.0, color="black", linestyle="--", linewidth=1,
                label=f"base, {r.base_iops / 1000.0:g}k")
    ax2.set_ylim(bottom=0)
    ax2.set_ylabel("resuming tenant's IOPS (thousands)")
    ax2.legend(fontsize=8, loc="lower right")
    ax2.set_title("its throughput under BIOS", fontsize=10)
    for a in (ax, ax2):
        _log2_x(a, r.depths, "resuming tenant's iodepth (4 KiB writes)")
        a.grid(True, which="both", alpha=0.3)
    fig.suptitle("Fig. 24, sudden activation: a tenant resuming from idle sees no throttled I/Os "
                 "until it exceeds its base (paper)", fontsize=11)
    return _save(fig, path)


def misestimation(r, path):
    """Table 3: the base-level tenant's read and write latency, ours beside the paper's."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
    cols = list(r.ours)
    groups = [f"{c}\n(CPU cost factor {r.ours[c][2]:.2f})".replace(" w", "\nw", 1) for c in cols]
    for i, (ax, op) in enumerate(zip(axes, ("read", "write"))):
        _grouped_bars(ax, groups, [("ours", [r.ours[c][i] for c in cols], {"color": "tab:blue"}),
                                   ("paper", [r.paper[c][i] for c in cols],
                                    {"color": "white", "edgecolor": "black", "hatch": "//"})])
        ax.set_title(f"{op}s", fontsize=10)
        ax.set_xlabel("scheduler (our final CPU cost factor)", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("base-level tenant's average latency (\u00b5s)")
    axes[0].legend(fontsize=9)
    fig.suptitle("Table 3, cost misestimated by 2x: the cost adjustment restores the base-level "
                 "tenant's latency (paper)", fontsize=11)
    return _save(fig, path)


def hot_segments(r, path):
    """Still Water Fig. 10 / 13: steady segments' P99 and P99999 per write share, proxy and end to end."""
    configs = [("baseline", "baseline (main bucket, deferral order)", {"color": "tab:red"}),
               ("dual", "dual-bucket (cheque, steady first)", {"color": "tab:blue"}),
               ("fifo", "cheque, deferral-order re-offers", {"color": "tab:cyan", "hatch": ".."}),
               ("prio", "steady first, no cheque", {"color": "tab:purple", "hatch": "//", "alpha": 0.6})]
    paths = list(dict.fromkeys(row["path"] for row in r.rows))
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharey=True)
    for axrow, p in zip(axes, paths):
        rows = [row for row in r.rows if row["path"] == p]
        groups = [f"{row['write_share']:.0%}" for row in rows]
        for ax, q in zip(axrow, ("p99", "p99999")):
            _grouped_bars(ax, groups, [(label, [row["steady"][c][q] for row in rows], kw)
                                       for c, label, kw in configs], fontsize=7)
            ax.set_yscale("log")
            ax.set_title(f"{p}: steady segments' {q.upper()}", fontsize=10)
            ax.set_xlabel("write share")
            ax.grid(True, axis="y", which="both", alpha=0.3)
        axrow[0].set_ylabel("latency (\u00b5s, log)")
    axes[0][0].set_ylim(10, 3000)
    axes[0][0].legend(fontsize=8, loc="upper left", ncol=2)
    fig.suptitle("Still Water Fig. 10 / 13, hot segments: the cheque bucket cuts steady P99 by up to 96 %, "
                 "P99999 by up to 83 % (proxy) and 85 % (end to end) (paper)", fontsize=11)
    return _save(fig, path)


def alpha_fit(r, path):
    """Still Water Eq. (1): measured P95 SA delay vs the residual mu - lambda, and Eq. (1) at the fit."""
    fig, ax = plt.subplots(figsize=(8, 5))
    resid = [r.mu - lam for _, lam, _, _, _ in r.rows]
    ax.plot(resid, [w for _, _, _, w, _ in r.rows], "o", color="tab:blue", markersize=8,
            label="measured P95 (mean of the firmware's per-window reads)")
    for (share, _, _, w, _), x in zip(r.rows, resid):
        ax.annotate(f"main_share {share}", (x, w), textcoords="offset points", xytext=(8, 6), fontsize=8)
    lo, hi = 0.8 * min(resid), 1.1 * max(resid)
    xs = [lo + (hi - lo) * i / 200 for i in range(201)]
    ax.plot(xs, [fit_alpha.eq1_us(r.alpha, x, r.percentile) for x in xs], color="tab:red",
            label=f"Eq. (1) at the least-squares alpha = {r.alpha:.0f}")
    ax.plot(resid, [p for _, _, _, _, p in r.rows], "x", color="tab:red", markersize=8)
    ax.set_xlabel(r"residual capacity $\mu - \lambda$ (Mb/s)")
    ax.set_ylabel("P95 SA delay (\u00b5s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=9)
    ax.set_title(rf"Still Water Eq. (1), $w_{{95}} = \alpha L_{{95}} / (\mu - \lambda)$: fitted "
                 rf"$\alpha$ = {r.alpha:.0f} (the scenario uses {r.scenario_alpha}), $\mu$ = {r.mu} Mb/s",
                 fontsize=10)
    return _save(fig, path)


def variations(r, path):
    """BIOS's variations beside Algorithm 1 as printed: one panel per figure's number."""
    names = list(r.rows)
    fig, axes = plt.subplots(2, 4, figsize=(15, 7))
    for ax, col in zip(axes.flat, r.columns):
        ys = [r.rows[n][col] for n in names]
        ax.bar(range(len(names)), ys, color=["tab:blue"] + ["tab:orange"] * (len(names) - 1))
        ax.set_ylim(0, max(ys + [1]) * 1.15)  # an all-zero panel (the claim) still shows its axis
        if col in r.wild:
            ax.axhline(r.wild[col], color=SCHED["wild"][1], linestyle="--", linewidth=1, label="WildCBS")
            ax.legend(fontsize=7)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
        ax.set_title(col, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("BIOS: Algorithm 1 as printed (blue) and the project's variations (orange)", fontsize=11)
    return _save(fig, path)


def load_balancing(r, path):
    """Fig. 18: IOPS with 1 and 2 SA threads per workload, and the per-thread balance."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    groups = list(r.scaling)
    _grouped_bars(ax, [g.replace(" (", "\n(") for g in groups], [(f"{n} thread{'s' if n > 1 else ''}", [r.scaling[g][n][0] / 1000.0 for g in groups],
                                {"color": c}) for n, c in ((1, "tab:gray"), (2, SCHED["bios"][1]))],
                  fmt="%.0f", fontsize=8, inside=False)
    ax.set_ylabel("write IOPS (thousands)")
    ax.set_title("(a) one VM's write IOPS vs SA threads", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    pols = list(r.per_thread)
    _grouped_bars(ax2, [f"thread {i}" for i in range(r.balance_threads)],
                  [(f"{p} (max/min {r.balance[p]:.3f})", r.per_thread[p], {"color": c})
                   for p, c in zip(pols, (SCHED["bios"][1], "tab:gray"))], fmt="%.0f", fontsize=7, inside=False)
    ax2.set_ylabel("I/Os completed in the measured period")
    ax2.set_title(f"(c) load over {r.balance_threads} SA threads", fontsize=10)
    ax2.legend(fontsize=8)
    fig.suptitle("Fig. 18, load balancing: near-linear scaling where the threads are the bottleneck; "
                 "the balancer spreads as evenly as the user can (paper)", fontsize=11)
    return _save(fig, path)


def cheque_gap(r, path):
    """Still Water Fig. 10, the cheque bucket alone: steady P99 / P99999 per condition, baseline and cheque."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    groups = [row["key"] for row in r.rows]
    for ax, q in zip(axes, ("p99", "p99999")):
        _grouped_bars(ax, groups, [("baseline (main bucket alone)", [row["base"][q] for row in r.rows],
                                    {"color": "tab:red"}),
                                   ("cheque bucket", [row["cheque"][q] for row in r.rows], {"color": "tab:blue"})],
                      fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"steady segments' {q.upper()}", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.tick_params(axis="x", labelsize=8, rotation=20)
    axes[0].set_ylabel("latency (\u00b5s, log)")
    axes[0].legend(fontsize=8, loc="upper left")
    sizes = type(r).__name__ == "ChequeSizes"  # the same plot for Fig. 10's conditions and Fig. 18's sizes
    fig.suptitle("Still Water Fig. 18, 8-64 KiB, cheque alone: steady P99999 -92 % to -97 % (paper)" if sizes else
                 "Still Water Fig. 10, cheque alone: steady P99 -96 %, P99999 -83 % at best (paper)", fontsize=11)
    return _save(fig, path)


# Libra's cost models, one colour each across its figures: its own curves (exact, fitted) in
# blue, the models the paper shows to be worse in warm and grey tones.
LIBRA_MODEL = {"exact": ("Libra exact", "tab:blue", "o"), "fitted": ("Libra fitted", "tab:cyan", "D"),
               "linear": ("linear", "tab:orange", "s"), "constant": ("constant", "tab:red", "^"),
               "fixed": ("fixed", "tab:gray", "v")}


def cost_models(r, path):
    """Libra Fig. 8 (VOPs per I/O over the I/O size, per cost model) and Fig. 9 (the MMR of IOP
    insulation and of VOP allocation over Fig. 7's workloads, per cost model)."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    for m, pts in r.curve.items():
        name, colour, marker = LIBRA_MODEL[m]
        sizes = [s // 1024 for s, _, _ in pts]
        ax.plot(sizes, [rd for _, rd, _ in pts], marker=marker, color=colour, label=f"{name}, read")
        ax.plot(sizes, [wr for _, _, wr in pts], marker=marker, color=colour, linestyle="--",
                markerfacecolor="none", label=f"{name}, write")
    ax.set_yscale("log")
    _log2_x(ax, sorted({s // 1024 for pts in r.curve.values() for s, _, _ in pts}), "I/O size (KiB)")
    ax.set_ylabel(f"VOPs per I/O (1 VOP = one 1 KiB read; {r.vop_per_s / 1000:.0f}k VOP/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Fig. 8: cost curves", fontsize=10)
    models = list(r.mmr)
    for k, (label, hatch) in enumerate((("IOP insulation", None), ("VOP allocation", "//"))):
        for i, m in enumerate(models):
            ys = sorted(v[k] for v in r.mmr[m].values())
            x = i + (k - 0.5) * 0.36
            ax2.scatter([x] * len(ys), ys, s=14, color=LIBRA_MODEL[m][1], alpha=0.6, zorder=3)
            med = ys[len(ys) // 2] if len(ys) % 2 else (ys[len(ys) // 2 - 1] + ys[len(ys) // 2]) / 2
            ax2.bar(x, med, 0.34, color="white", edgecolor=LIBRA_MODEL[m][1], hatch=hatch,
                    label=label if i == 0 else None, zorder=2)
            ax2.annotate(f"{med:.2f}", (x, med), ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                         textcoords="offset points")
    ax2.set_xticks(range(len(models)))
    ax2.set_xticklabels([LIBRA_MODEL[m][0] for m in models], fontsize=8)
    ax2.set_ylim(0, 1.08)
    ax2.set_ylabel("min / max ratio over the 8 tenants")
    ax2.grid(True, axis="y", alpha=0.3)
    ax2.legend(fontsize=8, loc="lower left")
    ax2.set_title("Fig. 9: MMR per cost model (bar: median; dots: Fig. 7's workloads)", fontsize=10)
    fig.suptitle("Libra Fig. 8-9: only the measured curves (exact, fitted) keep insulation > 0.9; "
                 "linear 0.83 best of the rest (paper)", fontsize=11)
    return _save(fig, path)


def insulation(r, path):
    """Libra Fig. 7: the MMR of the 8 tenants' IOP throughput ratios per (read, write) size pair."""
    fig, ax = plt.subplots(figsize=(12, 4.8))
    scheds = list(r.ratios)
    pairs = list(r.ratios[scheds[0]])
    colours = ("tab:blue", "tab:orange", "tab:red", "tab:gray")
    _grouped_bars(ax, [f"r {a}\nw {b}" for a, b in pairs],
                  [(s, [r.ratios[s][p][2] for p in pairs], {"color": c}) for s, c in zip(scheds, colours)],
                  fmt="%.2f", fontsize=6)
    ax.set_ylim(0, 1.12)
    ax.set_xlabel("readers' size, writers' size")
    ax.set_ylabel("MMR of x = IOPS / (IOPS alone / 8)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(scheds), loc="upper center")
    ax.set_title("Libra Fig. 7: 4 readers and 4 writers with equal allocations, insulated "
                 "(mean MMR 0.98, paper)", fontsize=11)
    return _save(fig, path)


def _reservation_bars(ax, groups, kinds, got, reserved):
    """Per group, a bar per tenant kind (its MB/s) with its reservation marked on the bar."""
    colours = ("tab:blue", "tab:purple", "tab:orange")
    n = len(kinds)
    for i, (kind, c) in enumerate(zip(kinds, colours)):
        xs = [g + (i - (n - 1) / 2) * 0.8 / n for g in range(len(groups))]
        bars = ax.bar(xs, [got[g][kind] for g in groups], 0.8 / n, color=c, label=kind)
        ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
        ax.scatter(xs, [reserved[g][kind] for g in groups], marker="_", s=300, color="black", zorder=4,
                   label="reservation" if i == 0 else None)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)


def profiles(r, path):
    """Libra Fig. 11's closest version: each kind's MB/s against its reservation, per run."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    runs, kinds = list(r.mbps), list(r.reserved)
    _reservation_bars(ax, runs, kinds, r.mbps, {run: r.reserved for run in runs})
    ax.set_ylabel("a tenant's MB/s (normalized 1 KiB requests for the small kind)")
    ax.legend(fontsize=8)
    ax.set_title("Libra Fig. 11: with app-request profiles the reservations are met (paper)", fontsize=11)
    return _save(fig, path)


def swap(r, path):
    """Libra Fig. 12: the MB/s of the tenants that started as each kind, per phase, with and
    without profiles, their reservation then marked."""
    runs = list(r.mbps)
    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4.8), sharey=True)
    for ax, run in zip(axes if len(runs) > 1 else [axes], runs):
        phases = list(r.mbps[run])
        _reservation_bars(ax, phases, list(r.reserved[phases[0]]), r.mbps[run], r.reserved)
        ax.set_title(run, fontsize=10)
        ax.tick_params(axis="x", labelsize=7)
    (axes[0] if len(runs) > 1 else axes).set_ylabel("MB/s of the tenants that started as the kind")
    (axes[0] if len(runs) > 1 else axes).legend(fontsize=8)
    fig.suptitle("Libra Fig. 12: workloads swap at 200 ms, reservations at 300 ms; reservations met "
                 "before and after (paper)", fontsize=11)
    return _save(fig, path)


CALCSPAR_STORE = {"calcspar": ("Calcspar (FA cache)", "tab:blue"),
                  "calcspar+oracle": ("Calcspar, static optimum of the cache (a bound)", "tab:cyan"),
                  "rocksdb": ("RocksDB-like", "tab:red")}


def calcspar_latency(r, path):
    """Calcspar Fig. 18: Get average and P99 per (cache share, user threads), per store."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    groups = sorted({(share, threads) for share, threads, _ in r.rows}, key=lambda g: (-g[0], g[1]))
    stores = [s for s in CALCSPAR_STORE if any(k[2] == s for k in r.rows)]
    for k, (ax, what) in enumerate(zip(axes, ("average", "P99"))):
        _grouped_bars(ax, [f"cache {share:.0%}\n{threads} thread{'s' if threads > 1 else ''}" for share, threads in groups],
                      [(CALCSPAR_STORE[s][0], [r.rows[(*g, s)][k] for g in groups], {"color": CALCSPAR_STORE[s][1]})
                       for s in stores], fontsize=7)
        ax.set_yscale("log")
        ax.axhline((175, 500)[k], color="black", linestyle="--", linewidth=1, label=f"paper's Calcspar, {(175, 500)[k]} \u00b5s")
        ax.set_title(f"Get {what}", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("latency (\u00b5s, log)")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Calcspar Fig. 18: Get average ~175 \u00b5s and P99 ~500 \u00b5s at every thread count, "
                 "the others growing (paper)", fontsize=11)
    return _save(fig, path)


def calcspar_hits(r, path):
    """Calcspar Fig. 20: hit ratio and data-block hit ratio per workload and cache policy."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    workloads = list(dict.fromkeys(wl for wl, _ in r.hit))
    caches = list(dict.fromkeys(c for _, c in r.hit))
    colours = {"fa": "tab:blue", "passive": "tab:gray", "prefetch": "tab:orange"}
    _grouped_bars(ax, workloads, [(f"{c}: all blocks", [r.hit[(wl, c)][0] for wl in workloads],
                                   {"color": colours.get(c, "tab:green")}) for c in caches]
                  + [(f"{c}: data blocks", [r.hit[(wl, c)][1] for wl in workloads],
                      {"color": colours.get(c, "tab:green"), "hatch": "//", "alpha": 0.6}) for c in caches],
                  fmt="%.2f", fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("hit ratio")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Calcspar Fig. 20: passive-only (P) better under YCSB, prefetch-only (PP) under Mixgraph (paper)",
                 fontsize=10)
    return _save(fig, path)


def query_latency(r, path):
    """BurstCBS Fig. 28: the database's average and P99 query latency per neighbour count and scheduler."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
    ns = sorted({n for n, _ in r.rows})
    scheds = [s for s in SCHED if (ns[0], s) in r.rows]
    for k, (ax, what) in enumerate(zip(axes, ("average", "P99"))):
        _grouped_bars(ax, [f"{n} burst tenants" for n in ns],
                      [(SCHED[s][0], [r.rows[(n, s)][k] for n in ns], {"color": SCHED[s][1]}) for s in scheds],
                      fontsize=8)
        ax.set_yscale("log")
        ax.set_title(f"query {what}", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("latency (\u00b5s, log)")
    axes[0].legend(fontsize=9)
    fig.suptitle("BurstCBS Fig. 28: a single-threaded database beside 8 or 16 burst tenants (iodepth 32): "
                 "average query latency down by up to 83 % (paper)", fontsize=10)
    return _save(fig, path)


def query_timeline(r, path):
    """BurstCBS Fig. 29: the database's per-second average query latency over time, BIOS vs
    WildCBS, over what the replayed burst disk offers each second. A second in which no query
    completed (a stall) is drawn as a cross at the top."""
    fig, ax = plt.subplots(figsize=(10, 4.8))
    secs = range(len(r.history_mbps))
    top = max((a for s in r.timeline for _, a, _ in r.timeline[s] if a is not None), default=1000) * 2
    for s, tl in r.timeline.items():
        name, colour, marker = SCHED[s]
        ax.plot(secs, [a / 1000 if a is not None else float("nan") for _, a, _ in tl], marker=marker, color=colour,
                label=f"{name}, per-second average", **LINE[s])
        stalls = [k for k, (_, a, _) in enumerate(tl) if a is None]
        if stalls:
            ax.plot(stalls, [top / 1000] * len(stalls), "x", color=colour, markersize=10,
                    label=f"{name}: no query completed")
    ax.axhline(10, color="black", linestyle="--", linewidth=0.8, label="paper: BurstCBS under 10 ms")
    ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("query latency (ms, log)")
    ax.grid(True, which="both", alpha=0.3)
    disk = ax.twinx()
    disk.fill_between(secs, [m / 1000 for m in r.history_mbps], step="mid", color="tab:orange", alpha=0.15,
                      label="burst disk offers (GB/s)")
    disk.axhline(r.limit_mbps / 1000, color="tab:orange", linestyle=":", label="DPU limit (GB/s)")
    disk.set_ylabel("GB/s offered by the burst disk")
    disk.set_ylim(0, max(r.history_mbps) / 1000 * 1.1)
    lines, labels = ax.get_legend_handles_labels()
    more, more_labels = disk.get_legend_handles_labels()
    ax.legend(lines + more, labels + more_labels, fontsize=8, loc="upper left")
    ax.set_zorder(disk.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax.set_title("BurstCBS Fig. 29: with a replayed burst-disk history, WildCBS spikes 20-50 ms, BurstCBS stays "
                 "under 10 ms (paper)", fontsize=10)
    return _save(fig, path)


def trace_tail(r, path):
    """Still Water Fig. 14, the synthetic I/O-intensive trace (scripts/reproduce_stillwater_fig14.py):
    the innocent VDs' and the major clients' latency percentiles, main bucket alone vs the cheque
    added, on the headline trace; and the innocent P99999 of every sensitivity row."""
    head = r.rows[0]
    qs = ("p50", "p99", "p999", "p9999", "p99999")
    names = ("P50", "P99", "P99.9", "P99.99", "P99999")
    configs = (("baseline", "baseline (main bucket alone)", {"color": "tab:red"}),
               ("dual", "dual-bucket (cheque alone)", {"color": "tab:blue"}))
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), gridspec_kw={"width_ratios": [1, 1, 1.3]})
    for ax, who, title in ((axes[0], "innocent", "innocent VDs' I/Os"), (axes[1], "major", "major clients' VDs' I/Os")):
        _grouped_bars(ax, names, [(label, [head["runs"][c][who][q] for q in qs], kw) for c, label, kw in configs],
                      fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"{title} (headline trace)", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("latency (\u00b5s, log)")
    axes[0].legend(fontsize=8, loc="center left")  # above the P50 bars, clear of the tall tail bars
    _grouped_bars(axes[2], [row["key"] for row in r.rows],
                  [(label, [row["runs"][c]["innocent"]["p99999"] for row in r.rows], kw) for c, label, kw in configs],
                  fontsize=7)
    axes[2].set_yscale("log")
    axes[2].set_title("innocent P99999 per row (sensitivity)", fontsize=10)
    axes[2].grid(True, axis="y", which="both", alpha=0.3)
    axes[2].tick_params(axis="x", labelsize=8, rotation=15)
    fig.suptitle("Still Water Fig. 14, the I/O-intensive trace (synthetic here): dual-bucket throttling cuts the "
                 "innocent I/O requests' P99999 by 71 % (paper)", fontsize=11)
    return _save(fig, path)
