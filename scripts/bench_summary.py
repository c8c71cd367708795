#!/usr/bin/env python3
"""Summarize a `make bench` Google Benchmark JSON and check it against the targets of docs/design.md.

Prints one row per benchmark: CPU time per operation and per item (I/O, tenant), the
repetitions' coefficient of variation, and the benchmark's counters; then PASS/MISS for each
target. Medians of the repetitions are used when the run has them (the machine's 2 cores are
shared, so a mean would carry other jobs' interference). A missed target is reported, not an
error. The exit status is non-zero when the file cannot be read, holds no benchmarks, or a
benchmark reported an error (its workload did not reach the state it claims to measure).

Usage: bench_summary.py BENCH.json
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

# Counters that google benchmark adds itself, or that the rows already show.
_STANDARD_KEYS = {
    "name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
    "iterations", "real_time", "cpu_time", "time_unit", "family_index",
    "per_family_instance_index", "aggregate_name", "aggregate_unit", "items_per_second",
    "bytes_per_second", "label", "error_occurred", "error_message",
}

# What an item of each family is, for the per-item column.
_ITEM = {
    "BM_BiosRunScheduling": "tenant",
    "BM_BiosRunSchedulingIdle": "tenant",
    "BM_ThrottleIo": "I/O",
    "BM_ThrottleIoAgentPath": "I/O",  # the decision plus the agent's datapath: no target of its own
    "BM_LbDispatchComplete": "I/O",
    "BM_CostEstimate": "descr",
    "BM_DualBucketAdmit": "I/O",
    "BM_SegmentMonitorOnIo": "I/O",
    "BM_BufferPoolAcquireRelease": "I/O",
    "BM_AgentIo": "I/O",
    "BM_FwWindowBios": "window",
}


@dataclass
class Row:
    name: str
    cpu_ns: float  # per iteration
    real_ns: float
    item_ns: float | None  # per item, from items_per_second (CPU time)
    cv: float | None = None  # CPU-time coefficient of variation over repetitions
    counters: dict[str, float] = field(default_factory=dict)
    error: str | None = None


def _fail(msg: str) -> None:
    print(f"bench_summary: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path: str) -> list[Row]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        _fail(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        _fail(f"{path}:{e.lineno}: not JSON: {e.msg}")
    runs = doc.get("benchmarks") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        _fail(f"{path}: no 'benchmarks' array")

    medians: dict[str, dict] = {}
    cvs: dict[str, float] = {}
    singles: dict[str, dict] = {}
    errors: dict[str, str] = {}
    order: list[str] = []
    for i, r in enumerate(runs):
        name = r.get("run_name") or r.get("name")
        if not isinstance(name, str):
            _fail(f"{path}: benchmarks[{i}]: no run_name")
        if name not in order:
            order.append(name)
        if r.get("error_occurred"):
            errors[name] = r.get("error_message", "error")
        elif r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == "median":
                medians[name] = r
            elif r.get("aggregate_name") == "cv":
                cvs[name] = float(r.get("cpu_time", 0.0))
        else:
            singles.setdefault(name, r)

    rows = []
    for name in order:
        if name in errors:
            rows.append(Row(name, 0.0, 0.0, None, error=errors[name]))
            continue
        r = medians.get(name) or singles.get(name)
        if r is None:
            continue
        scale = _UNIT_NS.get(r.get("time_unit", "ns"))
        if scale is None:
            _fail(f"{path}: {name}: unknown time_unit {r.get('time_unit')!r}")
        ips = r.get("items_per_second")
        rows.append(Row(
            name=name,
            cpu_ns=float(r["cpu_time"]) * scale,
            real_ns=float(r["real_time"]) * scale,
            item_ns=1e9 / ips if ips else None,
            cv=cvs.get(name),
            counters={k: v for k, v in r.items()
                      if k not in _STANDARD_KEYS and isinstance(v, (int, float))},
        ))
    return rows


def _fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.1f} ns"


def _fmt_counter(v: float) -> str:
    if v == int(v) and abs(v) >= 1:
        return str(int(v))
    return f"{v:.3g}"


def table(rows: list[Row]) -> None:
    width = max(len(r.name) for r in rows)
    print(f"{'benchmark':<{width}}  {'CPU/op':>10}  {'per item':>16}  {'cv':>6}  counters")
    for r in rows:
        if r.error:
            print(f"{r.name:<{width}}  ERROR: {r.error}")
            continue
        item = _ITEM.get(r.name.split("/")[0], "item")
        per = f"{_fmt_ns(r.item_ns)}/{item}" if r.item_ns is not None else "-"
        cv = f"{100 * r.cv:.1f}%" if r.cv is not None else "-"
        ctr = " ".join(f"{k}={_fmt_counter(v)}" for k, v in r.counters.items())
        print(f"{r.name:<{width}}  {_fmt_ns(r.cpu_ns):>10}  {per:>16}  {cv:>6}  {ctr}")


def check(rows: list[Row]) -> list[tuple[str, str, str, str]]:
    """(verdict, what, result, target) per docs/design.md target found in the run."""
    by = {r.name: r for r in rows if not r.error}
    out = []
    bios = by.get("BM_BiosRunScheduling/tenants:1024/active:1024")
    if bios:
        out.append(("PASS" if bios.cpu_ns <= 10e3 else "MISS",
                    "BIOS RUN_SCHEDULING, 1024 tenants all active",
                    _fmt_ns(bios.cpu_ns) + " per window", "<= 10 us"))
    sparse = by.get("BM_BiosRunScheduling/tenants:1024/active:64")
    if bios and sparse:
        # §6.6: dropped idle tenants cost nothing; 64 scheduled should cost about what 64 do.
        out.append(("PASS" if sparse.cpu_ns < bios.cpu_ns else "MISS",
                    "BIOS, 1024 tenants with 64 active, below all active",
                    _fmt_ns(sparse.cpu_ns), f"< {_fmt_ns(bios.cpu_ns)}"))
    for r in rows:
        if r.name.startswith("BM_ThrottleIo/") and not r.error and r.item_ns is not None:
            out.append(("PASS" if r.item_ns <= 30.0 else "MISS",
                        "THROTTLE_IO " + r.name.split("/", 1)[1],
                        _fmt_ns(r.item_ns) + " per I/O", "<= 30 ns"))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    rows = load(argv[1])
    if not rows:
        _fail(f"{argv[1]}: no benchmark results")
    print(f"\n== benchmarks ({argv[1]}; medians of repetitions, CPU time) ==")
    table(rows)
    verdicts = check(rows)
    print("\n== targets (docs/design.md) ==")
    if not verdicts:
        print("no targeted benchmark in this run")
    for verdict, what, result, target in verdicts:
        print(f"{verdict}  {what}: {result} (target {target})")
    missed = sum(v == "MISS" for v, *_ in verdicts)
    errors = sum(r.error is not None for r in rows)
    print(f"{len(verdicts) - missed} met, {missed} missed"
          + (f"; {errors} benchmark(s) reported an error" if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
