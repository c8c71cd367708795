"""Libra's mechanisms ("Libra: From application requests to virtual IOPs", EuroSys'14) in
burstgate-sim, beside BIOS on the same scenarios. Imported by scripts/reproduce.py, whose
Runner, load and tenant it takes as arguments so that this file holds no copy of them.

- ``libra_vs_bios``: BurstCBS Fig. 19's scenario (a 4 KiB iodepth-1 victim beside a
  BPS-intensive neighbour) under BIOS and under Libra's DDRR with its §4.1 profiles and §4.2
  floor, at neighbour iodepths 1, 16, 64.
- ``profiles`` (Libra Fig. 11, closest version): 1 KiB and 128 KiB tenants reserving normalized
  requests, with and without §4.1's profiles, and BIOS.
- ``insulation`` (Libra Fig. 7): 8 backlogged tenants, 4 readers and 4 writers with equal
  allocations, read size fixed per cluster, write size 1 KiB..256 KiB; each tenant's IOP
  throughput ratio x = achieved IOPS / (its IOPS alone x 1/8) and the min-max ratio over the
  tenants, under DDRR and BIOS.
"""

import copy
import dataclasses

DEPTHS = (1, 16, 64)
SCHEDS = {"bios": "BIOS", "ddrr": "Libra DDRR"}


@dataclasses.dataclass
class VsBios:
    """``rows[(sched, depth)]`` = (victim avg us, victim p99 us, victim IOPS, neighbour IOPS, cpu utilization)."""
    depths: tuple
    rows: dict


def libra_vs_bios(run, load, tenant):
    base = load("fig19_bps_neighbor.yaml")
    rows = {}
    for depth in DEPTHS:
        sc = copy.deepcopy(base)
        tenant(sc, "bursty")["workload"]["iodepth"] = depth
        for s in SCHEDS:
            tenants, report = run(sc, s)
            v, b = tenants["victim"], tenants["bursty"]
            rows[(s, depth)] = (v["lat_us"]["avg"], v["lat_us"]["p99"], v["iops"], b["iops"],
                                report["utilization"]["cpu"])
    return VsBios(DEPTHS, rows)


def libra_vs_bios_md(r):
    lines = ["**Libra's DDRR beside BIOS** (`scenarios/fig19_bps_neighbor.yaml`: a ProductB 4 KiB write "
             "victim at iodepth 1, base 20k IOPS, beside a BPS-intensive neighbour, base 20k IOPS / 200 MB/s, "
             "burst unbounded). `ddrr`: one DRR round per window, quanta from §4.1's profiles, the §4.2 floor "
             "(0.48 of the capacity) bounding the allocations; the spare capacity goes to the active tenants "
             "in proportion to their quanta.", "",
             "| neighbour iodepth | scheduler | victim avg us | victim p99 us | victim IOPS | neighbour IOPS | CPU utilization |",
             "|---|---|---|---|---|---|---|"]
    for d in r.depths:
        for s, label in SCHEDS.items():
            avg, p99, viops, biops, cpu = r.rows[(s, d)]
            lines.append(f"| {d} | {label} | {avg:.1f} | {p99:.0f} | {viops:.0f} | {biops:.0f} | {cpu:.3f} |")
    lines.append("")
    return lines


# Libra as printed (one scalar VOP per tenant), the per-dimension variation, and BIOS.
FIG7_RUNS = {"ddrr": ("ddrr", {}), "ddrr_vector": ("ddrr", {"unit": "vector"}), "bios": ("bios", {})}
FIG7_LABELS = {"ddrr": "Libra DDRR (VOP)", "ddrr_vector": "DDRR per dimension (`libra.unit: vector`)", "bios": "BIOS"}
READ_SIZES = ("4k", "64k")
WRITE_SIZES = ("1k", "4k", "16k", "64k", "256k")


@dataclasses.dataclass
class Insulation:
    """Libra Fig. 7: ``ratios[sched][(read size, write size)]`` = (reader x, writer x, MMR over the
    8 tenants), x = achieved IOPS / (the same workload's IOPS alone / 8)."""
    ratios: dict


def _insulation_tenant(name, op, size):
    # Equal allocations: the same contract (so the same envelope vector) for every tenant; the
    # 8 bases take 0.4 of the 3 GB/s limit and 0.3 of the CPU, inside Libra's 0.48 floor.
    return {"name": name, "product": "A",
            "base": {"iops": 20000, "mbps": 150}, "burst": {"iops": 2000000, "mbps": 3000},
            "queues": 1,
            "workload": {"mode": "closed", "iodepth": 32, "sizes": {size: 1.0},
                         "read_share": 1.0 if op == "read" else 0.0, "segments": 8}}


def insulation(run, load, tenant):
    base = load("fig19_bps_neighbor.yaml")
    base.update(duration_ms=100, warmup_ms=20)
    alone = {}

    def alone_iops(sched, op, size):
        # Alone, one tenant takes the whole DPU under every scheduler variant alike.
        if (sched, op, size) not in alone:
            sc = copy.deepcopy(base)
            sc.pop("libra", None)
            # Alone with the 8 tenants' outstanding I/Os (8 x 32), so that it fills the DPU as
            # the mix does: "the tenant's workload ... in isolation" on the whole device.
            sc["tenants"] = [_insulation_tenant("t", op, size)]
            sc["tenants"][0]["workload"]["iodepth"] = 256
            alone[(sched, op, size)] = run(sc, sched)[0]["t"]["iops"]
        return alone[(sched, op, size)]

    ratios = {}
    for key, (sched, libra) in FIG7_RUNS.items():
        base["libra"] = libra
        per = ratios[key] = {}
        for rs in READ_SIZES:
            for ws in WRITE_SIZES:
                sc = copy.deepcopy(base)
                sc["tenants"] = ([_insulation_tenant(f"r{i}", "read", rs) for i in range(4)] +
                                 [_insulation_tenant(f"w{i}", "write", ws) for i in range(4)])
                got = run(sc, sched)[0]
                xr = [got[f"r{i}"]["iops"] / (alone_iops(sched, "read", rs) / 8) for i in range(4)]
                xw = [got[f"w{i}"]["iops"] / (alone_iops(sched, "write", ws) / 8) for i in range(4)]
                per[(rs, ws)] = (sum(xr) / 4, sum(xw) / 4, min(xr + xw) / max(xr + xw))
    return Insulation(ratios)


def insulation_md(r):
    lines = ["**Libra Fig. 7, IOP throughput ratios of 4 readers and 4 writers with equal allocations** "
             "(8 backlogged tenants at iodepth 32, ProductA, Fig. 19's DPU; x = a tenant's IOPS / (its "
             "workload's IOPS alone / 8), MMR = min x / max x over the 8). Paper: mean MMR 0.98 over all IOP "
             "sizes on three SSDs, x < 1 under interference.", "",
             "| read size | write size | DDRR reader x | DDRR writer x | DDRR MMR | BIOS reader x | BIOS writer x | BIOS MMR |",
             "|---|---|---|---|---|---|---|---|"]
    for key in r.ratios["ddrr"]:
        d, b = r.ratios["ddrr"][key], r.ratios["bios"][key]
        lines.append(f"| {key[0]} | {key[1]} | {d[0]:.2f} | {d[1]:.2f} | {d[2]:.3f} | {b[0]:.2f} | {b[1]:.2f} | {b[2]:.3f} |")
    lines += ["", "| scheduler | mean MMR | min MMR |", "|---|---|---|"]
    for s, label in FIG7_LABELS.items():
        mmrs = [v[2] for v in r.ratios[s].values()]
        lines.append(f"| {label} | {sum(mmrs) / len(mmrs):.3f} | {min(mmrs):.3f} |")
    lines.append("")
    return lines


@dataclasses.dataclass
class Profiles:
    """Libra Fig. 11's closest version: ``mbps[run][kind]`` = a tenant's MB/s (the same for every
    tenant of a kind), ``reserved[kind]`` its reservation (base MB/s, normalized 1 KiB requests)."""
    mbps: dict
    reserved: dict


# 3 tenants of 1 KiB reads reserving 60 MB/s (their contract's 20k IOPS buy 20 MB/s of them) and
# 5 of 128 KiB writes reserving 220 MB/s, all backlogged (iodepth 32).
def _backlogged(kinds):
    """Tenants `kind0`, `kind1`, ... for each (kind, count, (sizes, read share, base IOPS, base
    MB/s)): product A, one queue, a closed loop of 32, a burst far above any host."""
    return [{"name": f"{kind}{i}", "product": "A", "base": {"iops": iops, "mbps": mbps},
             "burst": {"iops": 2000000, "mbps": 3000}, "queues": 1,
             "workload": {"mode": "closed", "iodepth": 32, "sizes": sizes, "read_share": rs, "segments": 8}}
            for kind, n, (sizes, rs, iops, mbps) in kinds for i in range(n)]


PROFILE_KINDS = {"small": ({"1k": 1.0}, 1.0, 20000, 60, 3), "large": ({"128k": 1.0}, 0.0, 2000, 220, 5)}
PROFILE_RUNS = {"profiles": ("ddrr", {"policy_ms": 20, "floor_share": 0.9}),
                "no profiles": ("ddrr", {"policy_ms": 0, "floor_share": 0.9}),
                "BIOS": ("bios", None)}


def profiles(run, load, tenant):
    base = load("fig19_bps_neighbor.yaml")
    base.update(duration_ms=400, warmup_ms=100)
    base["tenants"] = _backlogged((kind, n, spec) for kind, (*spec, n) in PROFILE_KINDS.items())
    out = {}
    for key, (sched, libra) in PROFILE_RUNS.items():
        sc = copy.deepcopy(base)
        if libra:
            sc["libra"] = libra
        got = run(sc, sched)[0]
        out[key] = {kind: min(got[f"{kind}{i}"]["mbps"] for i in range(spec[4]))
                    for kind, spec in PROFILE_KINDS.items()}
    return Profiles(out, {kind: spec[3] for kind, spec in PROFILE_KINDS.items()})


def profiles_md(r):
    lines = ["**Libra Fig. 11's closest version, reservations met through §4.1's profiles** (Fig. 19's DPU; "
             "3 tenants of 1 KiB reads reserving 60 MB/s of normalized 1 KiB requests, 5 of 128 KiB writes "
             "reserving 220 MB/s, all backlogged; `ddrr` with a 20 ms policy interval and a 0.9 floor, the DPU "
             "having no interference to underestimate). Without profiles a tenant's allocation is its base's "
             "envelope, which for the 1 KiB tenants is 20k I/Os' worth. Paper: with profiles the reservations "
             "are met, without them only thanks to work conservation, and not after a change.", "",
             "| run | 1 KiB tenant MB/s (reserved 60) | 128 KiB tenant MB/s (reserved 220) |", "|---|---|---|"]
    for key, per in r.mbps.items():
        lines.append(f"| {key} | {per['small']:.1f} | {per['large']:.1f} |")
    lines.append("")
    return lines


# Libra Fig. 8-9: cost models. The device's max-IOPS curve is measured on the simulator's own
# DPU model (one backlogged tenant alone per size and op); a model is a VOP curve programmed into
# the estimator's size classes (`dpu.vop_curve`), or "exact": the estimator's own cost vector,
# whose VOP is the largest share of the capacity it takes (the curve the points sample).
CURVE_SIZES = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
COST_MODELS = {"exact": "Libra exact", "fitted": "Libra fitted", "linear": "linear with intercept",
               "constant": "constant cost per byte", "fixed": "fixed per IOP"}
FIT_POINTS = 7  # the table's 8 size classes hold 7 points above 0 bytes (cost_table.h)


def _interp(points, size, k):
    """The cost the table charges (bg_cost_load_vop): flat below the first point, linear between
    points, the last slope beyond the last; k = 1 read, 2 write."""
    if size <= points[0][0] or len(points) == 1:
        return points[0][k]
    for a, b in zip(points, points[1:]):
        if size <= b[0]:
            return a[k] + (b[k] - a[k]) * (size - a[0]) / (b[0] - a[0])
    a, b = points[-2], points[-1]
    return b[k] + (b[k] - a[k]) * (size - b[0]) / (b[0] - a[0])


def _fit(points, n):
    """Drop the interior point whose loss the piecewise-linear curve misses least (largest relative
    error over every measured point), until n remain: the curve the table can hold."""
    pts = list(points)
    while len(pts) > n:
        best = None
        for i in range(1, len(pts) - 1):
            trial = pts[:i] + pts[i + 1:]
            err = max(abs(_interp(trial, p[0], k) / p[k] - 1) for p in points for k in (1, 2))
            if best is None or err < best[0]:
                best = (err, trial)
        pts = best[1]
    return pts


@dataclasses.dataclass
class CostModels:
    """``curve[model]`` = [(size, read VOPs, write VOPs)] (exact: the measured points);
    ``vop_per_s`` the device's 1 KiB-read IOPS; ``mmr[model][(rs, ws)]`` = (IOP insulation MMR,
    VOP allocation MMR) over Fig. 7's 8 tenants."""
    curve: dict
    vop_per_s: float
    mmr: dict


def cost_models(run, load, tenant):
    base = load("fig19_bps_neighbor.yaml")
    base.update(duration_ms=100, warmup_ms=20)
    base.pop("libra", None)
    alone = {}
    for op in ("read", "write"):
        for size in CURVE_SIZES:
            sc = copy.deepcopy(base)
            sc["tenants"] = [_insulation_tenant("t", op, size)]
            sc["tenants"][0]["workload"]["iodepth"] = 256
            alone[(op, size)] = run(sc, "ddrr")[0]["t"]["iops"]
    top = alone[("read", 1024)]
    exact = [(s, top / alone[("read", s)], top / alone[("write", s)]) for s in CURVE_SIZES]
    r1, w1 = exact[0][1], exact[0][2]
    curve = {"exact": exact, "fitted": _fit(exact, FIT_POINTS), "linear": [exact[0], exact[-1]],
             "constant": [(1024, r1, w1), (262144, 256 * r1, 256 * w1)], "fixed": [(1024, r1, w1)]}
    mmr = {}
    for model in COST_MODELS:
        per = mmr[model] = {}
        for rs in READ_SIZES:
            for ws in WRITE_SIZES:
                sc = copy.deepcopy(base)
                if model != "exact":
                    sc["dpu"]["vop_curve"] = {"per_s": round(top), "points": [
                        [s, round(r, 3), round(w, 3)] for s, r, w in curve[model]]}
                sizes = {"r": _bytes(rs), "w": _bytes(ws)}
                sc["tenants"] = ([_insulation_tenant(f"r{i}", "read", rs) for i in range(4)] +
                                 [_insulation_tenant(f"w{i}", "write", ws) for i in range(4)])
                for t in sc["tenants"]:
                    # A quarter of Fig. 7's bases (still equal allocations): priced by the constant model
                    # (bytes x the 1 KiB cost) Fig. 7's 8 envelopes pass the 0.48 floor of the capacity.
                    t["base"] = {"iops": 5000, "mbps": 30}
                got = run(sc, "ddrr")[0]
                x, vops = [], []
                for name, t in got.items():
                    op, k = ("read", 1) if name[0] == "r" else ("write", 2)
                    x.append(t["iops"] / (alone[(op, sizes[name[0]])] / 8))
                    vops.append(t["iops"] * _interp(curve[model], sizes[name[0]], k))
                per[(rs, ws)] = (min(x) / max(x), min(vops) / max(vops))
    return CostModels(curve, top, mmr)


def _bytes(size):
    return int(size[:-1]) * 1024


def cost_models_md(r):
    lines = ["**Libra Fig. 8, the VOP cost curves** (VOPs per I/O; 1 VOP = one 1 KiB read). *exact*: the "
             f"max-IOPS curve measured on the simulator's DPU (Fig. 19's: 2 SA threads, 3 GB/s software limit; "
             f"one backlogged tenant alone per size, {r.vop_per_s:.0f} 1 KiB reads/s), VOP = 1 KiB-read IOPS / IOPS; "
             f"*fitted*: the {FIT_POINTS} of its points that best keep the curve, piecewise linear in the estimator's "
             "size classes (`dpu.vop_curve`); *linear*: through the 1 KiB and 256 KiB points; *constant*: the 1 KiB "
             "cost per KiB; *fixed*: the 1 KiB cost for every size. Paper: the constant model charges far more per "
             "byte than Libra's, linear and fixed undercut it.", "",
             "| size | " + " | ".join(f"{COST_MODELS[m]} read / write" for m in COST_MODELS) + " |",
             "|---|" + "---|" * len(COST_MODELS)]
    for s in CURVE_SIZES:
        cells = [f"{_interp(r.curve[m], s, 1):.2f} / {_interp(r.curve[m], s, 2):.2f}" for m in COST_MODELS]
        lines.append(f"| {s // 1024}k | " + " | ".join(cells) + " |")
    lines += ["", "**Libra Fig. 9, MMR per cost model over Fig. 7's workloads** (4 readers and 4 writers, "
              f"read {', '.join(READ_SIZES)} x write {', '.join(WRITE_SIZES)}, `ddrr`; IOP insulation: the MMR of "
              "x = IOPS / (IOPS alone / 8); VOP allocation: the MMR of the VOPs each tenant consumed, priced by the "
              "model). Paper (Intel SSD): insulation median > 0.9 for exact and fitted only, linear 0.83 best of "
              "the rest; allocation median > 0.98 (min >= 0.91) for exact and fitted, > 0.94 for linear and fixed, "
              "< 0.9 for constant.", "",
              "| cost model | insulation median | min | max | allocation median | min | max |",
              "|---|---|---|---|---|---|---|"]
    for m, label in COST_MODELS.items():
        ins = sorted(v[0] for v in r.mmr[m].values())
        alloc = sorted(v[1] for v in r.mmr[m].values())
        med = lambda v: (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2 if len(v) % 2 == 0 else v[len(v) // 2]  # noqa: E731
        lines.append(f"| {label} | {med(ins):.3f} | {ins[0]:.3f} | {ins[-1]:.3f} | "
                     f"{med(alloc):.3f} | {alloc[0]:.3f} | {alloc[-1]:.3f} |")
    lines.append("")
    return lines


# Libra Fig. 12: read-heavy, mixed and write-heavy tenants (2 each, backlogged); at 200 ms each
# read-heavy tenant swaps workloads with a write-heavy one (reservations unchanged), at 300 ms they
# swap reservations too (`libra.swap`); the paper's seconds as ms, its 1 s policy interval as 20 ms.
# kind: (sizes, read share, base IOPS, reservation = base MB/s of normalized 1 KiB requests)
SWAP_KINDS = {"read": ({"1k": 1.0}, 1.0, 20000, 60), "mixed": ({"16k": 1.0}, 0.5, 10000, 150),
              "write": ({"128k": 1.0}, 0.0, 2000, 300)}
SWAP_PHASES = {"before (100-200 ms)": (100, 200), "transition (200-250)": (200, 250),
               "swapped (250-300)": (250, 300), "realigned (350-400)": (350, 400)}
SWAP_RUNS = {"profiles": ("ddrr", 20), "no profiles": ("ddrr", 0)}


@dataclasses.dataclass
class Swap:
    """``mbps[run][phase][kind]`` = the mean MB/s of the tenants that started as ``kind`` (tenant 0
    of the kind; the pairs are alike), ``reserved[phase][kind]`` their reservation then."""
    mbps: dict
    reserved: dict


def swap(run, load, tenant):
    import csv
    sc = load("fig19_bps_neighbor.yaml")
    sc.update(duration_ms=400, warmup_ms=0)
    sc["tenants"] = _backlogged((kind, 2, spec) for kind, spec in SWAP_KINDS.items())
    out = {}
    for key, (sched, policy_ms) in SWAP_RUNS.items():
        sc["libra"] = {"policy_ms": policy_ms, "swap": {"workloads_ms": 200, "reservations_ms": 300,
                                                       "pairs": [["read0", "write0"], ["read1", "write1"]]}}
        path = run.tmp / f"swap{run.runs}.csv"
        run(sc, sched, csv=path)
        series = {}
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                series.setdefault(row["tenant"], []).append((float(row["t_ms"]), float(row["mbps"])))
        out[key] = {}
        for phase, (a, b) in SWAP_PHASES.items():
            out[key][phase] = {}
            for kind in SWAP_KINDS:
                v = [m for t, m in series[f"{kind}0"] if a < t <= b]
                out[key][phase][kind] = sum(v) / len(v)
    res = {p: {k: spec[3] for k, spec in SWAP_KINDS.items()} for p in SWAP_PHASES}
    res["realigned (350-400)"].update(read=SWAP_KINDS["write"][3], write=SWAP_KINDS["read"][3])
    return Swap(out, res)


def swap_md(r):
    lines = ["**Libra Fig. 12, tenants swap workloads at 200 ms and reservations at 300 ms** (`libra.swap`; Fig. 19's "
             "DPU, `ddrr`, 20 ms policy interval, default 0.48 floor; 2 tenants of each kind, all backlogged at "
             "iodepth 32: read-heavy 1 KiB reads reserving 60 MB/s of normalized requests, mixed 16 KiB 50/50 "
             "reserving 150, write-heavy 128 KiB writes reserving 300; a kind is named by the workload it starts "
             "with). Paper: reservations met before and after, the swapped tenants ramp over 50 s while the mixed "
             "tenants use the slack.", "",
             "| run | phase | read-heavy MB/s (reserved) | mixed MB/s (reserved) | write-heavy MB/s (reserved) |",
             "|---|---|---|---|---|"]
    for key, per in r.mbps.items():
        for phase, kinds in per.items():
            cells = [f"{kinds[k]:.1f} ({r.reserved[phase][k]})" for k in SWAP_KINDS]
            lines.append(f"| {key} | {phase} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines
