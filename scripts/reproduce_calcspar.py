"""Calcspar's LSM side ("Calcspar: A Contract-Aware LSM Store for Cloud Storage", ATC'23) in
burstgate-lsm, the LSM-side simulator built beside burstgate-sim (docs/lsm.md). Imported by
scripts/reproduce.py; each measure function takes reproduce.py's Runner only to find the build
(burstgate-lsm sits in the same build tree as the burstgate-sim it runs) and its temporary folder.

- ``fig18``: Calcspar Fig. 18's Get latency against user threads at the paper's load (mean
  operations = paid IOPS, Mixgraph), with the fluctuation-aware cache, with the static optimum
  of the same cache size (``--cache oracle``: a bound, not a policy) and for the RocksDB-like
  store: at a 4 % cache, where the static optimum reproduces the paper's flat average, and at
  the paper's 2 %, where no cache of that size fits the sine's peaks.
- ``fig20``: Fig. 20's passive-only (P) against prefetch-only (PP) hit ratio under YCSB-B and
  Mixgraph, at 0.7 x paid IOPS (the sine's troughs leave tokens to prefetch with).
"""

import dataclasses
import json
import pathlib
import subprocess
import sys

STORES = {"calcspar": ["--store", "calcspar", "--cache", "fa"],
          "calcspar+oracle": ["--store", "calcspar", "--cache", "oracle"],
          "rocksdb": ["--store", "rocksdb"]}
FIG18 = ((0.04, 1), (0.04, 20), (0.02, 20))  # (cache share, user threads)
FIG20 = (("ycsb-b", "passive"), ("ycsb-b", "prefetch"), ("mixgraph", "passive"), ("mixgraph", "prefetch"))


def lsm_binary(run):
    return pathlib.Path(run.sim).resolve().parents[1] / "lsm" / "tools" / "burstgate-lsm"


def lsm_run(run, *args):
    """One `burstgate-lsm run` (120 s simulated, seed 1); its JSON report's run."""
    out = run.tmp / f"lsm{run.runs}.json"
    run.runs += 1
    cmd = [str(lsm_binary(run)), "run", "--quiet", "--json", str(out), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"reproduce: {' '.join(cmd)} failed: {res.stderr.strip()}")
    return json.loads(out.read_text())["runs"][0]


@dataclasses.dataclass
class Fig18:
    """``rows[(share, threads, store)]`` = (Get avg us, Get p99 us, tokens per operation, hit ratio, overdraft I/Os)."""
    rows: dict


def fig18(run):
    rows = {}
    for share, threads in FIG18:
        for store, args in STORES.items():
            x = lsm_run(run, "--threads", str(threads), "--cache-share", str(share), *args)
            get = x["lat_us"]["read"]
            rows[(share, threads, store)] = (get["avg"], get["p99"], x["volume_iops"] / x["throughput"],
                                             x["hit_ratio"], x["volume_ios"]["overdraft"])
    return Fig18(rows)


def fig18_md(r):
    lines = ["**Calcspar Fig. 18, Get latency vs user threads** (`burstgate-lsm run`, Mixgraph at the paper's "
             "load, io2 1000 IOPS, 2 M keys; `calcspar+oracle` = the static optimum of the same cache size, "
             "a bound and not a policy). Paper: Calcspar's average ~175 us and P99 ~500 us at every thread "
             "count, the others growing.", "",
             "| cache | threads | store | Get avg us | Get p99 us | tokens / op | hit ratio | overdraft I/Os |",
             "|---|---|---|---|---|---|---|---|"]
    for share, threads in FIG18:
        for store in STORES:
            avg, p99, tok, hit, od = r.rows[(share, threads, store)]
            lines.append(f"| {share:.0%} | {threads} | {store} | {avg:.0f} | {p99:.0f} | {tok:.2f} | {hit:.3f} | {od} |")
    lines.append("")
    return lines


@dataclasses.dataclass
class Fig20:
    """``hit[(workload, cache)]`` = (hit ratio, data-block hit ratio, prefetch I/Os)."""
    hit: dict


def fig20(run):
    hit = {}
    for wl, cache in FIG20:
        x = lsm_run(run, "--workload", wl, "--cache", cache, "--intensity", "0.7")
        hit[(wl, cache)] = (x["hit_ratio"], x["data_hit_ratio"], x["prefetch_ios"])
    return Fig20(hit)


def fig20_md(r):
    lines = ["**Calcspar Fig. 20, passive-only (P) vs prefetch-only (PP) cache** (`burstgate-lsm run`, 2 % cache, "
             "0.7 x paid IOPS). Paper: P better under YCSB (scattered hot keys), PP under Mixgraph (clustered).", "",
             "| workload | cache | hit ratio | data blocks | prefetch I/Os |", "|---|---|---|---|---|"]
    for wl, cache in FIG20:
        h, d, pf = r.hit[(wl, cache)]
        lines.append(f"| {wl} | {'P' if cache == 'passive' else 'PP'} | {h:.3f} | {d:.3f} | {pf} |")
    lines.append("")
    return lines
