#!/usr/bin/env python3
"""burstgate-gateway beside qemu-storage-daemon's throttle groups, one run (make compare-qemu).

The victim/neighbour workload of issue 18: the victim reads 4 KiB at random at iodepth 1,
limited by fio to --victim-iops (default 3000, within its 4000 IOPS base, so its demand is
well defined); the neighbour reads 128 KiB at random at iodepth 64, bursting. Both servers
serve the same prefilled image files (QEMU does not throttle reads of unallocated blocks):

* burstgate-gateway, scheduler bios, scenarios/compare_qemu.yaml with the host profile
  (--profile, make calibrate) in place of its DPU;
* qemu-storage-daemon (Debian), each export behind a throttle group set from the same scenario:
  base IOPS and MB/s as the rates (iops-total, bps-total), burst as QEMU's own burst maximum
  (iops-total-max, bps-total-max) for iops/bps-total-max-length = the run's length.

Then the second case: 56 connections over four tenants (scenarios/compare_qemu_56.yaml, 8 / 24 /
12 / 12 connections for 20000 / 5000 / 2000 / 1000 base IOPS), fio randrw 4-128 KiB, on both.

Prints two markdown tables (victim IOPS, mean and P99 completion latency, neighbour MB/s; per
tenant IOPS and MB/s), then issue 18's criteria, each PASS or MISS (judge()), and writes --json.
Exit status 1 when a criterion is missed, 2 on a missing tool or a server that does not start.

With --replay, case 2's gateway records its arrivals (burstgate-gateway --arrivals) and
burstgate-sim replays them on the same scenario and profile (burstgate-sim --arrivals, open loop
at the recorded times, for the gateway run's duration): a third table puts each tenant's
deferrals, withheld and below-base deferrals (one rule for both: sw/sim withheld.hpp) of the
gateway beside the replay's, to tell Algorithm 1 on clumped arrivals from the real clock's part.

Usage: compare_qemu.py --profile HOST.yaml [--build build/cmake] [--seconds 15] [--victim-iops 3000] [--case 1|2]
       [--replay]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

import yaml

from bench_verdict import Verdicts, load_average
from burstgate.tools.gwbench import ROOT, Server, die, gateway_binary

SCENARIO = ROOT / "scenarios" / "compare_qemu.yaml"
SCENARIO56 = ROOT / "scenarios" / "compare_qemu_56.yaml"
CONNS56 = {"t20k": 8, "t5k": 24, "t2k": 12, "t1k": 12}
IMAGE_BYTES = 256 << 20


def run_pair(uri_v: str, uri_n: str, seconds: float, victim_iops: int, tmp: pathlib.Path, tag: str) -> dict:
    out = tmp / f"{tag}.json"
    cmd = ["fio", "--ioengine=nbd", "--output-format=json", f"--output={out}", "--time_based",
           f"--runtime={seconds}", "--size=256m", "--randrepeat=0",
           "--name=victim", f"--uri={uri_v}", "--rw=randread", "--bs=4k", "--iodepth=1", f"--rate_iops={victim_iops}",
           "--name=bursty", f"--uri={uri_n}", "--rw=randread", "--bs=128k", "--iodepth=64"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    if p.returncode != 0:
        die("compare_qemu", f"fio failed: {p.stderr.strip()}")
    by = {j["jobname"]: j["read"] for j in json.loads(out.read_text())["jobs"]}
    v, n = by["victim"], by["bursty"]
    return {"victim_iops": v["iops"], "victim_mean_us": v["clat_ns"]["mean"] / 1e3,
            "victim_p99_us": v["clat_ns"]["percentile"]["99.000000"] / 1e3, "bursty_mbps": n["bw_bytes"] / 1e6}


def run_56(server, seconds: float, tmp: pathlib.Path, tag: str) -> dict:
    """56 connections over four tenants, randrw 4-128 KiB, iodepth 2 each; per-tenant IOPS, MB/s."""
    out = tmp / f"{tag}.json"
    cmd = ["fio", "--ioengine=nbd", "--output-format=json", f"--output={out}", "--time_based",
           f"--runtime={seconds}", "--size=256m", "--randrepeat=0", "--group_reporting"]
    for name, n in CONNS56.items():
        cmd += [f"--name={name}", f"--uri={server.uri(name)}", "--rw=randrw", "--rwmixread=50",
                "--bssplit=4k/40:16k/30:64k/20:128k/10", "--iodepth=2", f"--numjobs={n}", "--new_group"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 180)
    if p.returncode != 0:
        die("compare_qemu", f"fio failed: {p.stderr.strip()}")
    res = {}
    for j in json.loads(out.read_text())["jobs"]:
        r, w = j["read"], j["write"]
        res[j["jobname"]] = {"iops": r["iops"] + w["iops"], "mbps": (r["bw_bytes"] + w["bw_bytes"]) / 1e6}
    return res


BG, QEMU = "burstgate bios", "qemu-storage-daemon, throttle groups"
# One window's grant and one carry bucket over the run, and fio's own rounding: the margin by
# which a tenant may appear above its burst over a 15 s run without being above it.
BURST_SLACK = 1.01


def judge(res: dict, victim_iops: int, sc56: dict) -> list[tuple[bool, str]]:
    """Issue 18's criteria on one run's figures: (passed, what was checked with the numbers).

    Case 1: the victim (demand within its base) gets >= 97 % of its demand, a mean and a P99 below
    qemu's, and the neighbour >= 90 % of the MB/s qemu gives it.
    Case 2, for burstgate: every tenant gets >= 95 % of its base entitlement at the mean size it
    did (min(base IOPS, base MB/s / size), docs/contracts.md) in IOPS or MB/s; none is above its
    burst IOPS or MB/s; and the capacity left over is not withheld: every tenant the scheduler
    held back while capacity was left (deferrals above 1 % of its I/Os of an I/O both its burst,
    beside all it used in that window, and the capacity no tenant used in that window would have
    covered: the report's deferred_withheld) is at >= 95 % of its burst over the run, or the
    modelled bottleneck (the gateway's utilization report) is >= 95 % busy. A deferral at the
    tenant's burst in its window, or in a window whose capacity is used up, is not withheld
    capacity: a closed loop whose whole queue is about one window's burst grant (t20k: 16 I/Os of
    ~20 kB against 300 kB per 1 ms window) is deferred in the windows where its requests arrive
    together and idle in those where it waits on its clients, below its burst on average, and
    the run's average utilization hides windows that were full (docs/results.md).
    A tenant neither held back nor at its burst is limited by its own clients."""
    out = []
    if BG in res:
        out += judge_case1(res, victim_iops)
    if "56 connections" in res:
        out += judge_case2(res, sc56)
    return out


def judge_case1(res: dict, victim_iops: int) -> list[tuple[bool, str]]:
    out = []
    b, q = res[BG], res[QEMU]
    out.append((b["victim_iops"] >= 0.97 * victim_iops,
                f"case 1: victim IOPS {b['victim_iops']:.0f} >= 97 % of its demand {victim_iops}"))
    out.append((b["victim_mean_us"] < q["victim_mean_us"],
                f"case 1: victim mean {b['victim_mean_us']:.0f} us < qemu's {q['victim_mean_us']:.0f} us"))
    out.append((b["victim_p99_us"] < q["victim_p99_us"],
                f"case 1: victim P99 {b['victim_p99_us']:.0f} us < qemu's {q['victim_p99_us']:.0f} us"))
    out.append((b["bursty_mbps"] >= 0.90 * q["bursty_mbps"],
                f"case 1: neighbour {b['bursty_mbps']:.0f} MB/s >= 90 % of qemu's {q['bursty_mbps']:.0f} MB/s"))
    return out


def judge_case2(res: dict, sc56: dict) -> list[tuple[bool, str]]:
    out = []
    r = res["56 connections"][BG]
    rep = r.get("report") or {}
    util = rep.get("utilization") or {}
    busiest = max(util.items(), key=lambda kv: kv[1]) if util else ("?", 0.0)
    held = {t["name"]: t for t in rep.get("tenants", [])}
    for t in sc56["tenants"]:
        name, base, burst = t["name"], t["base"], t["burst"]
        got = r[name]
        size = got["mbps"] * 1e6 / got["iops"] if got["iops"] > 0 else 4096
        entitled = min(base["iops"], base["mbps"] * 1e6 / size)
        out.append((got["iops"] >= 0.95 * entitled or got["mbps"] >= 0.95 * base["mbps"],
                    f"case 2: {name} {got['iops']:.0f} IOPS ({got['mbps']:.1f} MB/s) >= 95 % of its base entitlement "
                    f"{entitled:.0f} IOPS at its mean size {size / 1e3:.1f} kB"))
        out.append((got["iops"] <= BURST_SLACK * burst["iops"] and got["mbps"] <= BURST_SLACK * burst["mbps"],
                    f"case 2: {name} within its burst {burst['iops']} IOPS / {burst['mbps']} MB/s"))
        h = held.get(name)
        # A report without the count (a gateway before it) is judged on every deferral.
        withheld = h.get("deferred_withheld", h.get("deferred_ios", 0)) if h is not None else 0
        if h is not None and h.get("completed", 0) > 0 and withheld > 0.01 * h["completed"]:
            at_burst = got["iops"] >= 0.95 * burst["iops"] or got["mbps"] >= 0.95 * burst["mbps"]
            out.append((at_burst or busiest[1] >= 0.95,
                        f"case 2: {name} held back while capacity was left ({withheld} deferrals its burst and the "
                        f"window's unused capacity covered, of {h['completed']} I/Os; {h.get('deferred_ios', 0)} "
                        f"deferred in all) only at its burst or on a full host (busiest modelled resource: "
                        f"{busiest[0]} {100 * busiest[1]:.0f} %)"))
    return out


def replay(sim: pathlib.Path, profile: str, arrivals: pathlib.Path, report: dict, tmp: pathlib.Path) -> dict:
    """burstgate-sim on case 2's scenario and profile, every tenant's workload the gateway's recorded
    arrivals, for as long as the gateway ran: its report."""
    out = tmp / "replay56.json"
    cmd = [str(sim), str(SCENARIO56), "--profile", profile, "--scheduler", "bios", "--arrivals", str(arrivals),
           "--duration-ms", str(max(1, round(report["duration_ms"]))), "--out", str(out), "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        die("compare_qemu", f"burstgate-sim --arrivals failed: {p.stderr.strip()}")
    return json.loads(out.read_text())


def recorded(arrivals: pathlib.Path) -> dict:
    """Per tenant, the reads and writes in an arrivals file (iolog v3)."""
    n: dict = {}
    with open(arrivals) as f:
        for line in f:
            v = line.split()
            if len(v) == 5:
                n[v[1]] = n.get(v[1], 0) + 1
    return n


def replay_table(gw: dict, sim: dict, counts: dict) -> list[str]:
    """Markdown: per tenant, the gateway's and the replay's MB/s, deferred I/Os, withheld and
    below-base deferrals; and the busiest modelled resource of each."""
    rows = ["| tenant | arrivals recorded | MB/s gateway / replay | deferred I/Os gateway / replay | "
            "withheld gateway / replay | below base gateway / replay |", "|---|---|---|---|---|---|"]
    st = {t["name"]: t for t in sim["tenants"]}
    for g in gw["tenants"]:
        s = st[g["name"]]
        rows.append(f"| {g['name']} | {counts.get(g['name'], 0)} | {g['mbps']:.1f} / {s['mbps']:.1f} | "
                    f"{g['deferred_ios']} / {s['deferred_ios']} | {g.get('deferred_withheld')} / "
                    f"{s.get('deferred_withheld')} | {g.get('deferred_below_base')} / {s.get('deferred_below_base')} |")
    for name, r in (("gateway", gw), ("replay", sim)):
        u = r.get("utilization") or {}
        rows.append(f"\n{name}: utilization " + ", ".join(f"{k} {100 * v:.0f} %" for k, v in u.items()) +
                    (f"; window overruns {r['window_overruns']}" if r.get("window_overruns") is not None else "") +
                    f"; {r.get('windows')} windows in {r['duration_ms']:.0f} ms")
    return rows


def qemu_cmd(sc: dict, images: pathlib.Path, sock: str, seconds: float) -> list[str]:
    cmd = ["qemu-storage-daemon", "--nbd-server", f"addr.type=unix,addr.path={sock}"]
    for t in sc["tenants"]:
        name, base, burst = t["name"], t["base"], t["burst"]
        tg = [f"throttle-group,id=tg-{name}", f"x-iops-total={int(base['iops'])}",
              f"x-bps-total={int(base['mbps'] * 1e6)}"]
        if burst["iops"] > base["iops"]:
            tg += [f"x-iops-total-max={int(burst['iops'])}", f"x-iops-total-max-length={int(seconds)}"]
        if burst["mbps"] > base["mbps"]:
            tg += [f"x-bps-total-max={int(burst['mbps'] * 1e6)}", f"x-bps-total-max-length={int(seconds)}"]
        cmd += ["--blockdev", f"driver=file,node-name=f-{name},filename={images / (name + '.img')}",
                "--object", ",".join(tg),
                "--blockdev", f"driver=throttle,node-name={name},throttle-group=tg-{name},file=f-{name}",
                "--export", f"type=nbd,id=ex-{name},node-name={name},name={name},writable=on"]
    return cmd


def prefill(images, tenants):
    """One image per tenant, every block allocated and non-zero: QEMU does not throttle reads of
    unallocated blocks, so an empty image would flatter its throttle groups."""
    chunk = bytes(range(256)) * 4096
    for t in tenants:
        with open(images / f"{t['name']}.img", "wb") as f:
            for _ in range(IMAGE_BYTES // len(chunk)):
                f.write(chunk)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", required=True, help="host profile (make calibrate)")
    ap.add_argument("--build", default="build/cmake")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--victim-iops", type=int, default=3000)
    ap.add_argument("--json")
    ap.add_argument("--case", choices=("1", "2"), help="run only this case (default: both)")
    ap.add_argument("--replay", action="store_true",
                    help="case 2: record the gateway's arrivals and replay them in burstgate-sim (a third table)")
    ap.add_argument("--replay-clock", choices=("window", "wall"), default="window",
                    help="the arrivals' clock (burstgate-gateway --arrivals-clock; default window: each arrival "
                         "in the window the gateway's firmware saw it in)")
    a = ap.parse_args()
    gw = gateway_binary(a.build)
    for tool, ok in (("burstgate-gateway (make cpp)", gw.exists()), ("fio", shutil.which("fio")),
                     ("qemu-storage-daemon (scripts/deb-deps.sh)", shutil.which("qemu-storage-daemon"))):
        if not ok:
            die("compare_qemu", f"{tool} not found")
    sc = yaml.safe_load(SCENARIO.read_text())
    load_start = load_average()
    res = {}
    with tempfile.TemporaryDirectory(prefix="bg-cmpqemu-") as d:
        tmp = pathlib.Path(d)
        images = tmp / "images"
        images.mkdir()
        if a.case in (None, "1"):
            prefill(images, sc["tenants"])
            sock = str(tmp / "bg.sock")
            try:
                s = Server("burstgate-gateway",
                           [str(gw), "--config", str(SCENARIO), "--profile", a.profile, "--unix", sock,
                            "--data-dir", str(images), "--export-size", str(IMAGE_BYTES),
                            "--realtime", "--scheduler", "bios", "--out", str(tmp / "bg.json")],
                           sock, "victim", tmp, report=tmp / "bg.json")
            except RuntimeError as e:
                die("compare_qemu", str(e))
            res["burstgate bios"] = run_pair(s.uri("victim"), s.uri("bursty"), a.seconds, a.victim_iops, tmp, "bg")
            rep = s.stop()
            res["burstgate bios"]["window_overruns"] = rep.get("window_overruns") if rep else None
            qsock = str(tmp / "qemu.sock")
            try:
                q = Server("qemu-storage-daemon", qemu_cmd(sc, images, qsock, a.seconds), qsock, "victim", tmp)
            except RuntimeError as e:
                die("compare_qemu", str(e))
            res["qemu-storage-daemon, throttle groups"] = run_pair(q.uri("victim"), q.uri("bursty"), a.seconds,
                                                                   a.victim_iops, tmp, "qemu")
            q.stop()
        if a.case in (None, "2"):
            # The second case: 56 connections over four tenants.
            sc56 = yaml.safe_load(SCENARIO56.read_text())
            prefill(images, sc56["tenants"])
            sock56 = str(tmp / "bg56.sock")
            try:
                s = Server("burstgate-gateway 56",
                           [str(gw), "--config", str(SCENARIO56), "--profile", a.profile, "--unix",
                            sock56, "--data-dir", str(images), "--export-size", str(IMAGE_BYTES),
                            "--realtime", "--scheduler", "bios", "--out", str(tmp / "bg56.json"),
                            # up to 24 connections of one tenant, all 56 connecting at once
                            "--max-conns", "64", "--handshake-slots", "64"]
                           + (["--arrivals", str(tmp / "arrivals56.iolog"), "--arrivals-clock", a.replay_clock]
                              if a.replay else []),
                           sock56, "t20k", tmp, report=tmp / "bg56.json")
            except RuntimeError as e:
                die("compare_qemu", str(e))
            case56 = {"burstgate bios": run_56(s, a.seconds, tmp, "bg56")}
            rep = s.stop()
            case56["burstgate bios"]["window_overruns"] = rep.get("window_overruns") if rep else None
            case56["burstgate bios"]["report"] = rep
            if a.replay and rep is not None:
                sim = gw.parent.parent / "sim" / "burstgate-sim"
                case56["replay"] = replay(sim, a.profile, tmp / "arrivals56.iolog", rep, tmp)
                case56["recorded"] = recorded(tmp / "arrivals56.iolog")
            qsock56 = str(tmp / "qemu56.sock")
            try:
                q = Server("qemu-storage-daemon 56", qemu_cmd(sc56, images, qsock56, a.seconds), qsock56, "t20k", tmp)
            except RuntimeError as e:
                die("compare_qemu", str(e))
            case56["qemu-storage-daemon, throttle groups"] = run_56(q, a.seconds, tmp, "qemu56")
            q.stop()
            res["56 connections"] = case56
    if BG in res:
        print(f"victim demand {a.victim_iops} IOPS (4 KiB randread, iodepth 1); neighbour 128 KiB randread iodepth 64; "
              f"{a.seconds:g} s each\n")
        print("| | victim IOPS | victim mean | victim P99 | neighbour MB/s |")
        print("|---|---|---|---|---|")
        for name, r in res.items():
            if name == "56 connections":
                continue
            print(f"| {name} | {r['victim_iops']:.0f} | {r['victim_mean_us']:.0f} µs | {r['victim_p99_us']:.0f} µs | "
                  f"{r['bursty_mbps']:.0f} |")
    if "56 connections" in res:
        c56 = res["56 connections"]
        print("\n56 connections (" + ", ".join(f"{k}: {n}" for k, n in CONNS56.items()) +
              "), randrw 50 %, 4k/40:16k/30:64k/20:128k/10, iodepth 2 each: IOPS (MB/s)\n")
        base = {t["name"]: t["base"] for t in yaml.safe_load(SCENARIO56.read_text())["tenants"]}
        print("| | " + " | ".join(f"{k} (base {base[k]['iops']} IOPS / {base[k]['mbps']} MB/s)" for k in CONNS56) +
              " | total |")
        print("|---|" + "---|" * (len(CONNS56) + 1))
        for name, r in c56.items():
            if name in ("replay", "recorded"):
                continue
            tot = sum(r[k]["iops"] for k in CONNS56)
            print(f"| {name} | " + " | ".join(f"{r[k]['iops']:.0f} ({r[k]['mbps']:.1f})" for k in CONNS56) +
                  f" | {tot:.0f} |")
        rep = c56[BG].get("report") or {}
        print("\nburstgate deferrals (I/Os deferred; deferrals withheld: of I/Os the tenant's burst and the window's "
              "unused capacity covered): "
              + ", ".join(f"{t['name']} {t.get('deferred_ios')}; {t.get('deferred_withheld')}"
                          for t in rep.get("tenants", [])))
    if "replay" in res.get("56 connections", {}):
        c56 = res["56 connections"]
        print(f"\nThe gateway's arrivals replayed in burstgate-sim (open loop at the recorded times, {a.replay_clock} "
              "clock; deferrals counted by one rule):\n")
        print("\n".join(replay_table(c56[BG]["report"], c56["replay"], c56["recorded"])))
    print(f"\nburstgate window overruns: case 1 {res.get(BG, {}).get('window_overruns')}, "
          f"case 2 {res.get('56 connections', {}).get(BG, {}).get('window_overruns')}\n")
    verdicts = Verdicts()
    verdicts.lines = judge(res, a.victim_iops, yaml.safe_load(SCENARIO56.read_text()))
    res["criteria"] = [{"pass": ok, "what": what} for ok, what in verdicts.lines]
    res["load_average"] = {"start": load_start, "end": load_average()}
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    print(f"load average (1/5/15 min): {load_start} at the start, {res['load_average']['end']} at the end")
    if verdicts.print_all("Issue 18's criteria:"):
        sys.exit(1)


if __name__ == "__main__":
    main()
