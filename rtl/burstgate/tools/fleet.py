"""`burstgate fleet TRACE`: replay a multi-device block trace over K storage-agent (SA) nodes.

1. The trace is read once, as a stream (one line at a time), and split into one file per device
   under OUT/devices/ (written as it is read, through a bounded set of open files); per device it
   keeps only counters and two bounded histograms of its per-second rates (I/Os and bytes).
2. Each device gets a contract: from ``--contracts FILE`` or derived from what it was observed to do,
   as a provider would provision (docs/distributed.md, "Fleet replay"): over every second of the
   trace's span (idle seconds count as zero), base = the P50 rate and burst = the P99 rate, in
   IOPS and MB/s, with a floor of 50 IOPS and 1 MB/s so every disk has a base.
3. Devices are placed on nodes: ``rr`` round robin in device order; ``base`` and ``load`` greedily
   (largest first, onto the node with the least so far) by provisioned base IOPS or by observed
   mean IOPS.
4. One burstgate-sim scenario per node (OUT/nodes/nodeK.yaml): the template's SA (``--template``,
   default the one below) with one ``mode: trace`` tenant per device reading its own file, started at
   the device's first I/O so the devices stay aligned in time.
5. Each node × scheduler is a task on Dask (like `burstgate sweep`); its report is kept
   (OUT/reports/) and its per-window series is read on the worker, as a stream, for the SLO
   violations. The tables OUT/fleet.csv (per tenant) and OUT/nodes.csv (per node, with the
   replay's I/Os per second) are written, with plots.

A base-level SLO violation is a period (``--slo-period-ms``, default 1 s of simulated time) in
which the tenant was deferred (``deferrals`` > 0 in the series) while what it completed stayed
below its base in both IOPS and MB/s: it asked for no more than its base and did not get it.
"""

import csv
import io
import json
import math
import os
import pathlib
import sys
import time
from collections import OrderedDict

import yaml

from burstgate.tools.engine import Failure, run_tasks
from burstgate.tools.reports import InputError, output_folder
from burstgate.tools.sweep import add_engine_arguments, check_engine_args, load_yaml, run_sim

SCHEDULERS = ("bios", "wild", "base", "dualbucket")
MAX_OPEN = 128          # device files open at once while splitting
MAX_TENANTS = 1024      # burstgate-sim's limit per scenario
MAX_NODES = 4096        # a scenario per node is held in memory
FLOOR_IOPS, FLOOR_MBPS = 50.0, 1.0
HIST_STEP = math.log(1.02)  # per-second rate histograms: 2 % buckets, bounded whatever the trace's length

# The SA of a node when no --template is given: the example scenario's (docs/simulator.md).
DEFAULT_DPU = {
    "threads": 2, "lb_policy": "jsq",
    "cpu_ns": {"A": {"read": {"base": 2200, "per_kib": 40}, "write": {"base": 1800, "per_kib": 35}}},
    "ingress_gbps": 100, "egress_gbps": 100, "swlimit_mbps": 3000,
    "backend_us": {"dist": "lognormal", "median": 150, "p99": 600},
    "reserved_share": 0.05, "target_delay_us": 200, "estimate_error": 1.0,
}


# ---- streaming split and per-device statistics ---------------------------------------------

class RateHist:
    """Per-second rates in 2 % log buckets (plus exact zeros): a percentile within 2 %, bounded memory."""

    def __init__(self):
        self.buckets = {}
        self.seconds = 0

    def add(self, value, times=1):
        self.seconds += times
        b = -1 if value <= 0 else int(math.floor(math.log(value) / HIST_STEP))
        self.buckets[b] = self.buckets.get(b, 0) + times

    def percentile(self, q):
        if self.seconds == 0:
            return 0.0
        rank = q * self.seconds
        seen = 0
        for b in sorted(self.buckets):
            seen += self.buckets[b]
            if seen >= rank:
                return 0.0 if b < 0 else math.exp((b + 1) * HIST_STEP)  # the bucket's upper edge
        return 0.0


class Device:
    def __init__(self, first_us):
        self.first_us = self.last_us = first_us
        self.ios = self.reads = self.bytes = self.max_len = 0
        self.sec, self.sec_ios, self.sec_bytes = first_us // 1_000_000, 0, 0
        self.active = 0
        self.iops_hist, self.bps_hist = RateHist(), RateHist()

    def add(self, t_us, length, is_read):
        sec = t_us // 1_000_000
        if sec > self.sec:                 # out-of-order records count in the current second
            self._flush()
            self.sec = sec
        self.ios += 1
        self.reads += is_read
        self.bytes += length
        self.max_len = max(self.max_len, length)
        self.sec_ios += 1
        self.sec_bytes += length
        self.last_us = max(self.last_us, t_us)

    def _flush(self):
        if self.sec_ios:
            self.iops_hist.add(self.sec_ios)
            self.bps_hist.add(self.sec_bytes)
            self.active += 1
        self.sec_ios = self.sec_bytes = 0

    def finish(self, span_seconds):
        self._flush()
        idle = max(span_seconds - self.active, 0)
        if idle:
            self.iops_hist.add(0, idle)
            self.bps_hist.add(0, idle)


MAX_LENGTH = (1 << 24) - 1   # the largest I/O one descriptor carries (burstgate-sim's trace reader)
MAX_LINE = 4096              # bytes of one trace line; a record is far shorter


def _count(text, what):
    """A field as a whole number >= 0, as burstgate-sim's trace reader takes it."""
    text = text.strip()
    if not text.isdigit() or not text.isascii():
        raise ValueError(f"{what}: expected a whole number >= 0, got {text[:40]!r}")
    return int(text)


def _parse(fmt, fields, path, lineno):
    """(device, t_us, length, is_read) of one record; the checks are burstgate-sim's, so a trace
    split here replays there."""
    try:
        if fmt == "alibaba":
            if len(fields) != 5:
                raise ValueError("expected device_id,opcode,offset,length,timestamp")
            op = fields[1].strip()
            if op not in ("R", "W"):
                raise ValueError(f"opcode: unknown '{op}' (expected R or W)")
            dev, length, t_us = str(_count(fields[0], "device_id")), _count(fields[3], "length"), _count(fields[4], "timestamp")
            _count(fields[2], "offset")
        else:
            if len(fields) != 5:
                raise ValueError("expected Timestamp,Offset,Size,IOType,VolumeID")
            op = fields[3].strip()
            if op not in ("0", "1"):
                raise ValueError(f"IOType: unknown '{op}' (expected 0 or 1)")
            t_us, length, dev = _count(fields[0], "Timestamp") * 1_000_000, _count(fields[2], "Size") * 512, str(_count(fields[4], "VolumeID"))
            _count(fields[1], "Offset")
            op = "R" if op == "0" else "W"
        if not 1 <= length <= MAX_LENGTH:
            raise ValueError(f"length {length} bytes: expected 1..{MAX_LENGTH} (the largest I/O a descriptor carries)")
        return dev, t_us, length, op == "R"
    except ValueError as exc:
        raise InputError(f"{path}:{lineno}: {exc}") from None


def _safe_name(device):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in device)


def split_trace(path, fmt, out_dir):
    """Stream the trace into one file per device; the devices' statistics and the span (µs)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    devices = {}
    handles = OrderedDict()   # LRU of open device files
    first = last = None
    names = {}
    try:
        src = open(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    with src:
        if src.peek(2)[:2] == b"\x1f\x8b":
            raise InputError(f"{path}: gzip-compressed; decompress it first (gunzip -k '{path}')")
        lineno = 0
        try:
            # Lines are read at most MAX_LINE bytes at a time: a file without newlines costs no memory.
            for raw in iter(lambda: src.readline(MAX_LINE + 1), b""):
                lineno += 1
                if len(raw) > MAX_LINE:
                    raise InputError(f"{path}:{lineno}: line longer than {MAX_LINE} bytes: not a trace record")
                line = raw.decode("utf-8")
                text = line.rstrip("\r\n")
                if not text.strip() or text.startswith("#"):
                    continue
                rec = _parse(fmt, text.split(","), path, lineno)
                dev, t_us, length, is_read = rec
                d = devices.get(dev)
                if d is not None and t_us < d.last_us:
                    raise InputError(f"{path}:{lineno}: device {dev}: time goes backwards ({t_us} us after {d.last_us})")
                if d is None:
                    d = devices[dev] = Device(t_us)
                    name = _safe_name(dev)
                    if name in names.values():
                        name = f"{name}_{len(devices)}"
                    names[dev] = name
                    (out_dir / f"{name}.csv").write_text("")
                d.add(t_us, length, is_read)
                first = t_us if first is None else min(first, t_us)
                last = t_us if last is None else max(last, t_us)
                f = handles.pop(dev, None)
                if f is None:
                    if len(handles) >= MAX_OPEN:
                        handles.popitem(last=False)[1].close()
                    f = open(out_dir / f"{names[dev]}.csv", "a", encoding="utf-8")
                handles[dev] = f
                f.write(text + "\n")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}:{lineno}: not UTF-8 text ({exc.reason})") from None
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from None
        finally:
            for f in handles.values():
                f.close()
    if not devices:
        raise InputError(f"{path}: no records")
    span_s = max(1, math.ceil((last - first + 1) / 1e6))
    for d in devices.values():
        d.finish(span_s)
    return devices, names, first, last


# ---- contracts and placement ---------------------------------------------------------------

def derive_contract(d, template):
    """base = P50, burst = P99 of the per-second rates (floors: 50 IOPS, 1 MB/s); the burst is
    raised, if needed, until the device's largest I/O fits in one window (1.25x margin), since
    burstgate-sim refuses a tenant whose largest I/O could never be admitted."""
    base_iops = max(d.iops_hist.percentile(0.5), FLOOR_IOPS)
    base_mbps = max(d.bps_hist.percentile(0.5) / 1e6, FLOOR_MBPS)
    windows = 1e6 / float(template.get("window_us", 1000))
    prof = ((template.get("dpu") or {}).get("cpu_ns") or {}).get("A") or DEFAULT_DPU["cpu_ns"]["A"]
    ratio = max((p["base"] + p["per_kib"] * d.max_len / 1024) / (p["base"] + p["per_kib"] * 4) for p in prof.values())
    fit_iops = 1.25 * windows * max(ratio, 1.0)
    fit_mbps = 1.25 * windows * d.max_len / 1e6
    return {"base": {"iops": round(base_iops, 1), "mbps": round(base_mbps, 3)},
            "burst": {"iops": round(max(d.iops_hist.percentile(0.99), base_iops, fit_iops), 1),
                      "mbps": round(max(d.bps_hist.percentile(0.99) / 1e6, base_mbps, fit_mbps), 3)}}


def load_contracts(path, devices):
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}:1: expected a mapping: device -> {{base: {{iops, mbps}}, burst: {{iops, mbps}}}}")
    out = {}
    for dev, c in data.items():
        dev = str(dev)
        where = f"{path}:{lines(dev)}: {dev}"
        if not isinstance(c, dict) or "base" not in c or set(c) - {"base", "burst"}:
            raise InputError(f"{where}: expected {{base: {{iops, mbps}}, burst: {{iops, mbps}}}}")
        for part in c:
            v = c[part]
            if not isinstance(v, dict) or set(v) != {"iops", "mbps"} or not all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= hi
                    for x, hi in ((v["iops"], 1e9), (v["mbps"], 1e7))):
                raise InputError(f"{path}:{lines(dev, part)}: {dev}.{part}: expected {{iops: N, mbps: N}}, "
                                 "IOPS in 0..1e9, MB/s in 0..1e7 (burstgate-sim's ranges)")
        if "burst" in c and (c["burst"]["iops"] < c["base"]["iops"] or c["burst"]["mbps"] < c["base"]["mbps"]):
            raise InputError(f"{path}:{lines(dev, 'burst')}: {dev}.burst: below base")
        out[dev] = {"base": c["base"], "burst": c.get("burst", c["base"])}
    missing = sorted(set(devices) - set(out))
    if missing:
        raise InputError(f"{path}: no contract for device(s) {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    return out


def _device_order(devices):
    return sorted(devices, key=lambda d: (0, int(d), "") if d.isdigit() else (1, 0, d))


def place(devices, contracts, nodes, policy, span_s):
    order = _device_order(devices)
    if policy == "rr":
        return {dev: i % nodes for i, dev in enumerate(order)}
    weight = ({d: contracts[d]["base"]["iops"] for d in order} if policy == "base"
              else {d: devices[d].ios / span_s for d in order})
    load = [0.0] * nodes
    out = {}
    for dev in sorted(order, key=lambda d: -weight[d]):   # stable: ties keep device order
        k = min(range(nodes), key=lambda n: (load[n], n))
        out[dev] = k
        load[k] += weight[dev]
    return out


# ---- scenarios, tasks, tables --------------------------------------------------------------

def node_scenarios(devices, names, contracts, placement, nodes, first_us, last_us, dev_dir, template, time_scale):
    span_ms = (last_us - first_us) / 1000 * time_scale
    scenarios = []
    for k in range(nodes):
        sc = {key: template[key] for key in template if key != "tenants"}
        sc["name"] = f"fleet-node{k}"
        sc["duration_ms"] = round(span_ms + float(template.get("drain_ms", 50)), 3)
        sc.pop("drain_ms", None)
        sc.setdefault("warmup_ms", 0)
        tenants = []
        for dev in _device_order(devices):
            if placement[dev] != k:
                continue
            d, c = devices[dev], contracts[dev]
            tenants.append({
                "name": f"d{names[dev]}", "product": "A",
                "base": dict(c["base"]), "burst": dict(c["burst"]), "queues": 1,
                "workload": {"mode": "trace",
                             "trace": {"file": str((dev_dir / f"{names[dev]}.csv").resolve()),
                                       "format": template.get("_format"), "time_scale": time_scale},
                             "read_share": round(d.reads / d.ios, 4),
                             "segments": 16,
                             "start_ms": round((d.first_us - first_us) / 1000 * time_scale, 6)},
            })
        if len(tenants) > MAX_TENANTS:
            raise InputError(f"--nodes {nodes}: node {k} would hold {len(tenants)} devices (burstgate-sim takes "
                             f"at most {MAX_TENANTS}); use more nodes")
        sc["tenants"] = tenants
        sc.pop("_format", None)
        scenarios.append(sc)
    return scenarios


def fleet_task(scenario, scheduler, seed, sim=None, period_ms=1000.0):
    """One node × scheduler (runs on a worker): the report's text, the tenants' SLO violations
    (computed here from the series as it is read, so neither the series nor its periods are held
    in memory), the wall time."""
    start = time.monotonic()
    tenants = {t["name"]: t for t in scenario["tenants"]}
    window_us = float(scenario.get("window_us", 1000))
    report, viol = run_sim(scenario, "model", scheduler, seed, sim, raw=True,
                           series=lambda path: slo_violations(path, tenants, window_us, period_ms))
    return {"report": report, "violations": viol, "wall_s": time.monotonic() - start}


def slo_violations(series_path, contracts_by_tenant, window_us, period_ms):
    """Per tenant: [periods with a base-level SLO violation, periods with any activity].

    The series' windows are summed into periods of ``period_ms`` of simulated time (a contract's
    rates are per second; one 1 ms window cannot hold a 200 IOPS base's single I/O, so a window
    alone would count every wait as a violation). The series is in time order: each tenant's
    current period is judged when the next one starts, so memory is one period per tenant."""
    out = {name: [0, 0] for name in contracts_by_tenant}
    current = {}   # tenant -> [period, I/Os, MB, deferrals]
    seconds = period_ms / 1000

    def judge(name, ios, mb, deferrals):
        base = contracts_by_tenant[name]["base"]
        if ios > 0 or deferrals > 0:
            out[name][1] += 1
        if deferrals > 0 and ios / seconds < base["iops"] and mb / seconds < base["mbps"]:
            out[name][0] += 1

    with open(series_path, newline="") as f:
        for row in csv.DictReader(f):
            name = row["tenant"]
            if name not in contracts_by_tenant:
                continue
            period = int((float(row["t_ms"]) - 1e-9) // period_ms)
            cur = current.get(name)
            if cur is None or cur[0] != period:
                if cur is not None:
                    judge(name, *cur[1:])
                cur = current[name] = [period, 0.0, 0.0, 0]
            cur[1] += float(row["iops"]) * window_us / 1e6     # I/Os completed in the window
            cur[2] += float(row["mbps"]) * window_us / 1e6     # MB completed in the window
            cur[3] += int(row["deferrals"])
    for name, cur in current.items():
        judge(name, *cur[1:])
    return out


def add_arguments(p):
    p.add_argument("trace", help="a multi-device block trace (uncompressed)")
    p.add_argument("--format", required=True, choices=("alibaba", "tencent"))
    p.add_argument("--nodes", type=int, required=True, help="storage-agent nodes to place the devices on")
    p.add_argument("--placement", choices=("rr", "base", "load"), default="rr",
                   help="rr: round robin; base: by provisioned base IOPS; load: by observed mean IOPS (default rr)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--contracts", help="YAML: device -> {base: {iops, mbps}, burst: {iops, mbps}}")
    g.add_argument("--derive-contracts", action="store_true",
                   help="derive each device's contract from its observed rates (the default without --contracts)")
    p.add_argument("--schedulers", default="bios,wild,base", help="comma-separated (default bios,wild,base)")
    p.add_argument("--template", help="a scenario whose dpu, window_us, seed (and other top-level keys) each node uses")
    p.add_argument("--time-scale", type=float, default=1.0, help="trace time x this = simulated time (default 1)")
    p.add_argument("--seed", type=int, default=1, help="the simulations' seed (default 1)")
    p.add_argument("--slo-period-ms", type=float, default=1000.0,
                   help="simulated time over which a tenant's completions are held to its base (default 1000)")
    p.add_argument("--out", default="build/fleet", help="output folder (default build/fleet)")
    add_engine_arguments(p)


def _template(args):
    if not args.template:
        return {"seed": args.seed, "window_us": 1000, "dpu": json.loads(json.dumps(DEFAULT_DPU))}
    data, lines = load_yaml(args.template)
    if not isinstance(data, dict) or not isinstance(data.get("dpu"), dict):
        raise InputError(f"{args.template}:1: not a scenario with a dpu section")
    return {k: v for k, v in data.items() if k not in ("tenants", "name", "duration_ms", "lsm")}


def run(args):
    check_engine_args(args)
    if not 1 <= args.nodes <= MAX_NODES:
        raise InputError(f"--nodes: expected 1..{MAX_NODES}, got {args.nodes}")
    if not 0 <= args.seed < 2**32:
        raise InputError(f"--seed: expected 0..2^32-1, got {args.seed}")
    if not (math.isfinite(args.slo_period_ms) and args.slo_period_ms > 0):
        raise InputError(f"--slo-period-ms: expected a number above 0, got {args.slo_period_ms}")
    if not (math.isfinite(args.time_scale) and args.time_scale > 0):
        raise InputError(f"--time-scale: expected a number above 0, got {args.time_scale}")
    schedulers = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    bad = [s for s in schedulers if s not in SCHEDULERS]
    if bad or not schedulers or len(set(schedulers)) != len(schedulers):
        raise InputError(f"--schedulers: expected distinct names among {', '.join(SCHEDULERS)}, got {args.schedulers!r}")
    template = _template(args)
    out = output_folder(args.out)
    t0 = time.monotonic()
    devices, names, first, last = split_trace(args.trace, args.format, out / "devices")
    split_s = time.monotonic() - t0
    span_s = max(1, math.ceil((last - first + 1) / 1e6))
    contracts = load_contracts(args.contracts, devices) if args.contracts else {d: derive_contract(devices[d], template) for d in devices}
    placement = place(devices, contracts, args.nodes, args.placement, span_s)
    template["_format"] = args.format
    scenarios = node_scenarios(devices, names, contracts, placement, args.nodes, first, last, out / "devices",
                               template, args.time_scale)
    (out / "nodes").mkdir(exist_ok=True)
    (out / "reports").mkdir(exist_ok=True)
    for k, sc in enumerate(scenarios):
        (out / "nodes" / f"node{k}.yaml").write_text(yaml.safe_dump(sc, sort_keys=False))
    (out / "contracts.yaml").write_text(yaml.safe_dump({d: contracts[d] for d in _device_order(devices)}, sort_keys=False))
    tasks = [(k, s) for k in range(args.nodes) for s in schedulers if scenarios[k]["tenants"]]
    seed = template.get("seed", args.seed) if args.template else args.seed
    # A node's simulation takes time in proportion to its I/Os: the busiest nodes start first, so no
    # long task starts last and runs alone while the other workers idle.
    node_ios = [sum(devices[d].ios for d in devices if placement[d] == k) for k in range(args.nodes)]
    results, info = run_tasks(fleet_task, [(scenarios[k], s, seed, args.sim, args.slo_period_ms) for k, s in tasks],
                              address=args.address, workers=args.workers, progress=not args.quiet,
                              priorities=[node_ios[k] for k, _ in tasks])
    tenant_rows, node_rows, failed = [], [], []
    dev_of = {f"d{names[d]}": d for d in devices}
    total_ios = 0
    for (k, sched), res in zip(tasks, results):
        if isinstance(res, Failure):
            failed.append((k, sched, res.error))
            node_rows.append([sched, k, len(scenarios[k]["tenants"]), "", "", "", "", "", "", "", "failed", res.error])
            continue
        (out / "reports" / f"node{k}-{sched}.json").write_text(res["report"])
        report = json.loads(res["report"])
        viol = res["violations"]
        for t in report["tenants"]:
            c = contracts[dev_of[t["name"]]]
            v, active = viol[t["name"]]
            tenant_rows.append([sched, k, dev_of[t["name"]], c["base"]["iops"], c["base"]["mbps"], c["burst"]["iops"],
                                c["burst"]["mbps"], t["iops"], t["mbps"], t["lat_us"]["p50"], t["lat_us"]["p99"],
                                t["lat_us"]["p999"], t["lat_us"]["max"], t["throttled"], v, active])
        ios = report["ios"]["finished"]
        total_ios += ios
        u = report["utilization"]
        node_rows.append([sched, k, len(report["tenants"]), ios, u["cpu"], u["ingress"], u["egress"], u["swlimit"],
                          round(res["wall_s"], 3), round(ios / max(res["wall_s"], 1e-9)), "ok", ""])
    _write_csv(out / "fleet.csv", ["scheduler", "node", "device", "base_iops", "base_mbps", "burst_iops", "burst_mbps",
                                   "iops", "mbps", "p50_us", "p99_us", "p999_us", "max_us", "throttled",
                                   "slo_violation_periods", "active_periods"], tenant_rows)
    _write_csv(out / "nodes.csv", ["scheduler", "node", "tenants", "ios_finished", "util.cpu", "util.ingress",
                                   "util.egress", "util.swlimit", "wall_s", "ios_per_s", "status", "error"], node_rows)
    workers = max(info["workers"], 1)
    lines = [f"fleet: {len(devices)} devices, {sum(d.ios for d in devices.values())} I/Os over {span_s} s, "
             f"{args.nodes} nodes ({args.placement}), split in {split_s:.1f} s",
             f"{'scheduler':<10}{'tenants w/ violations':>22}{'violation periods':>19}{'median p99 us':>15}"
             + "".join(f"{'node' + str(k) + ' cpu':>11}" for k in range(args.nodes))]
    for s in schedulers:
        rows = [r for r in tenant_rows if r[0] == s]
        if not rows:
            continue
        p99 = sorted(r[10] for r in rows)
        util = {r[1]: r[4] for r in node_rows if r[0] == s and r[10] == "ok"}
        lines.append(f"{s:<10}{sum(1 for r in rows if r[14]):>22}{sum(r[14] for r in rows):>19}"
                     f"{p99[len(p99) // 2]:>15.1f}" + "".join(f"{util.get(k, float('nan')):>11.3f}" for k in range(args.nodes)))
    lines.append(f"replay: {total_ios} I/Os in {info['tasks_s']:.1f} s on {workers} worker(s): "
                 f"{total_ios / info['tasks_s'] / workers:.0f} I/Os replayed per second per worker")
    _plots(out, tenant_rows, node_rows, schedulers, args.nodes)
    for line in lines:
        print(line)
    for k, s, err in failed:
        print(f"burstgate fleet: task failed (node={k}, scheduler={s}): {err}", file=sys.stderr)
    return 1 if failed else 0


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _plots(out, tenant_rows, node_rows, schedulers, nodes):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / max(len(schedulers), 1)
    devs = sorted({(r[1], r[2]) for r in tenant_rows})
    for i, s in enumerate(schedulers):
        by = {(r[1], r[2]): r for r in tenant_rows if r[0] == s}
        xs = [j + i * width for j in range(len(devs))]
        axes[0].bar(xs, [by[d][14] if d in by else 0 for d in devs], width, label=s)
        axes[1].bar([k + i * width for k in range(nodes)],
                    [next((r[4] for r in node_rows if r[0] == s and r[1] == k and r[10] == "ok"), 0) for k in range(nodes)],
                    width, label=s)
    axes[0].set_title("base-level SLO violations (periods) per device")
    axes[0].set_xticks(range(len(devs)), [f"{d}@n{k}" for k, d in devs], rotation=90, fontsize=6)
    axes[1].set_title("CPU utilization per node")
    axes[1].set_xticks(range(nodes), [f"node{k}" for k in range(nodes)])
    for ax in axes:
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(out / "fleet.png", dpi=100)
    plt.close(fig)
