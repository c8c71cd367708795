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

Both cases run on both servers --rounds times (each server started afresh every round); every
figure is the median of its rounds (the host is noisy), and the load average is printed at the
start and the end. Prints two markdown tables (victim IOPS, mean and P99 completion latency,
neighbour MB/s; per tenant IOPS and MB/s), then issue 18's criteria, each PASS or MISS with its
figures (`judge`):

* case 1: the victim gets >= 97 % of its demand, its mean and P99 latency are below qemu's, and
  the neighbour keeps >= 90 % of the MB/s qemu gives it;
* case 2: every tenant gets >= 95 % of min(demand, entitlement) (its closed loops ask more than
  its base, so: of its base entitlement, min(base IOPS, base MB/s / its mean I/O size)), no
  tenant is above its burst IOPS or MB/s, and the total is within 5 % of what the machine can
  serve these tenants: the least of the calibrated profile's CPU model and its bandwidth limit at
  the I/Os' mean size, and of the sum of the tenants' burst entitlements (`servable_iops`). A
  tenant whose own closed loops cannot ask for its share (latency x depth) shows as a MISS of
  the total: fio reports no demand of a closed loop to tell the two apart.

--json writes every round, the medians and the load averages. Exit status 2 on a missing tool,
an unreadable profile or a server that does not start; a MISS does not change it (a benchmark on
a shared host reports; the reader judges the host).

Usage: compare_qemu.py --profile HOST.yaml [--build build/cmake] [--seconds 15] [--rounds 3] [--victim-iops 3000]
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

from bench_verdict import Verdicts, load_average, median_of
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


def prefill(images: pathlib.Path, names) -> None:
    """Every block allocated and non-zero: QEMU does not throttle reads of unallocated blocks."""
    chunk = bytes(range(256)) * 4096
    for name in names:
        with open(images / f"{name}.img", "wb") as f:
            for _ in range(IMAGE_BYTES // len(chunk)):
                f.write(chunk)


def one_round(a, gw: pathlib.Path, sc: dict, sc56: dict, tmp: pathlib.Path, images: pathlib.Path, rnd: int) -> dict:
    """Both cases on both servers, each server started afresh (QEMU's burst buckets full)."""
    res: dict = {}
    sock = str(tmp / f"bg{rnd}.sock")
    try:
        s = Server("burstgate-gateway", [str(gw), "--config", str(SCENARIO), "--profile", a.profile, "--unix", sock,
                                         "--data-dir", str(images), "--export-size", str(IMAGE_BYTES),
                                         "--realtime", "--scheduler", "bios", "--out", str(tmp / f"bg{rnd}.json")],
                   sock, "victim", tmp, report=tmp / f"bg{rnd}.json")
    except RuntimeError as e:
        die("compare_qemu", str(e))
    res["burstgate bios"] = run_pair(s.uri("victim"), s.uri("bursty"), a.seconds, a.victim_iops, tmp, "bg")
    rep = s.stop()
    res["burstgate bios"]["window_overruns"] = rep.get("window_overruns") if rep else None
    qsock = str(tmp / f"qemu{rnd}.sock")
    try:
        q = Server("qemu-storage-daemon", qemu_cmd(sc, images, qsock, a.seconds), qsock, "victim", tmp)
    except RuntimeError as e:
        die("compare_qemu", str(e))
    res["qemu-storage-daemon, throttle groups"] = run_pair(q.uri("victim"), q.uri("bursty"), a.seconds,
                                                           a.victim_iops, tmp, "qemu")
    q.stop()
    # The second case: 56 connections over four tenants.
    sock56 = str(tmp / f"bg56_{rnd}.sock")
    try:
        s = Server("burstgate-gateway 56", [str(gw), "--config", str(SCENARIO56), "--profile", a.profile, "--unix",
                                            sock56, "--data-dir", str(images), "--export-size", str(IMAGE_BYTES),
                                            "--realtime", "--scheduler", "bios", "--out", str(tmp / f"bg56_{rnd}.json"),
                                            # up to 24 connections of one tenant, all 56 connecting at once
                                            "--max-conns", "64", "--handshake-slots", "64"],
                   sock56, "t20k", tmp, report=tmp / f"bg56_{rnd}.json")
    except RuntimeError as e:
        die("compare_qemu", str(e))
    case56 = {"burstgate bios": run_56(s, a.seconds, tmp, "bg56")}
    rep = s.stop()
    case56["burstgate bios"]["window_overruns"] = rep.get("window_overruns") if rep else None
    qsock56 = str(tmp / f"qemu56_{rnd}.sock")
    try:
        q = Server("qemu-storage-daemon 56", qemu_cmd(sc56, images, qsock56, a.seconds), qsock56, "t20k", tmp)
    except RuntimeError as e:
        die("compare_qemu", str(e))
    case56["qemu-storage-daemon, throttle groups"] = run_56(q, a.seconds, tmp, "qemu56")
    q.stop()
    res["56 connections"] = case56
    return res


def servable_iops(profile: dict, sc56: dict, r: dict) -> tuple[float, str]:
    """What the machine can serve case 2's tenants, in IOPS, and how it was found: the least of
    (a) the calibrated CPU model at the I/Os' mean size, T x 1e9 / c(s) with c(s) the mean of the
    read and write lines (fio's rwmixread 50; the model is linear in s, so the mean cost is the
    cost at the mean size), (b) the calibrated bandwidth limit over the mean size, and (c) the sum
    of the tenants' burst entitlements, min(burst IOPS, burst MB/s / the tenant's mean size)."""
    iops = sum(r[k]["iops"] for k in CONNS56)
    mean = sum(r[k]["mbps"] for k in CONNS56) * 1e6 / iops
    cpu = profile["cpu_ns"]
    c = sum(cpu[op]["base"] + cpu[op]["per_kib"] * mean / 1024 for op in ("read", "write")) / 2
    by_cpu = profile["threads"] * 1e9 / c
    by_bw = profile["swlimit_mbps"] * 1e6 / mean
    by_burst = 0.0
    for t in sc56["tenants"]:
        size = r[t["name"]]["mbps"] * 1e6 / r[t["name"]]["iops"]
        by_burst += min(t["burst"]["iops"], t["burst"]["mbps"] * 1e6 / size)
    how = (f"min(CPU {by_cpu:.0f}, bandwidth {by_bw:.0f}, sum of bursts {by_burst:.0f}) IOPS at the mean "
           f"size {mean / 1e3:.1f} kB")
    return min(by_cpu, by_bw, by_burst), how


def judge(a, res: dict, sc56: dict) -> int:
    """Issue 18's criteria for the two cases, PASS or MISS each; returns the number missed."""
    v = Verdicts()
    bg, qe = res["burstgate bios"], res["qemu-storage-daemon, throttle groups"]
    v.check(bg["victim_iops"] >= 0.97 * a.victim_iops, "case 1: victim >= 97 % of its demand",
            f"{bg['victim_iops']:.0f} of {a.victim_iops} IOPS ({100 * bg['victim_iops'] / a.victim_iops:.1f} %)")
    v.check(bg["victim_mean_us"] < qe["victim_mean_us"], "case 1: victim mean latency below qemu's",
            f"{bg['victim_mean_us']:.0f} vs {qe['victim_mean_us']:.0f} µs")
    v.check(bg["victim_p99_us"] < qe["victim_p99_us"], "case 1: victim P99 latency below qemu's",
            f"{bg['victim_p99_us']:.0f} vs {qe['victim_p99_us']:.0f} µs")
    share = bg["bursty_mbps"] / qe["bursty_mbps"] if qe["bursty_mbps"] else float("inf")
    v.check(share >= 0.90, "case 1: neighbour >= 90 % of qemu's MB/s",
            f"{bg['bursty_mbps']:.0f} vs {qe['bursty_mbps']:.0f} MB/s ({100 * share:.0f} %)")
    r = res["56 connections"]["burstgate bios"]
    for t in sc56["tenants"]:
        got = r[t["name"]]
        size = got["mbps"] * 1e6 / got["iops"] if got["iops"] else 4096
        # Each tenant's closed loops (2 x its connections outstanding) ask more than its base at
        # any latency this host gives, so min(demand, entitlement) is the entitlement.
        ent = min(t["base"]["iops"], t["base"]["mbps"] * 1e6 / size)
        v.check(got["iops"] >= 0.95 * ent, f"case 2: {t['name']} >= 95 % of its entitlement",
                f"{got['iops']:.0f} of {ent:.0f} IOPS (min({t['base']['iops']} IOPS, {t['base']['mbps']} MB/s "
                f"at its mean {size / 1e3:.1f} kB))")
        v.check(got["iops"] <= t["burst"]["iops"] and got["mbps"] <= t["burst"]["mbps"],
                f"case 2: {t['name']} within its burst",
                f"{got['iops']:.0f} IOPS / {got['mbps']:.1f} MB/s, burst {t['burst']['iops']} / {t['burst']['mbps']}")
    profile = yaml.safe_load(pathlib.Path(a.profile).read_text())
    can, how = servable_iops(profile, sc56, r)
    total = sum(r[k]["iops"] for k in CONNS56)
    v.check(abs(total - can) <= 0.05 * can, "case 2: total within 5 % of what the machine can serve",
            f"{total:.0f} IOPS of {can:.0f} ({100 * total / can:.0f} %); {how}")
    return v.print_all(f"Issue 18's criteria (medians of {a.rounds} rounds)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", required=True, help="host profile (make calibrate)")
    ap.add_argument("--build", default="build/cmake")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of both cases on both servers; medians count")
    ap.add_argument("--victim-iops", type=int, default=3000)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not 1 <= a.rounds <= 99:
        die("compare_qemu", f"--rounds {a.rounds}: must be 1..99")
    gw = gateway_binary(a.build)
    for tool, ok in (("burstgate-gateway (make cpp)", gw.exists()), ("fio", shutil.which("fio")),
                     ("qemu-storage-daemon (scripts/deb-deps.sh)", shutil.which("qemu-storage-daemon"))):
        if not ok:
            die("compare_qemu", f"{tool} not found")
    try:
        profile = yaml.safe_load(pathlib.Path(a.profile).read_text())
        assert profile["threads"] > 0 and profile["swlimit_mbps"] > 0 and profile["cpu_ns"]["read"]["base"] > 0
    except (OSError, yaml.YAMLError, KeyError, TypeError, AssertionError) as e:
        die("compare_qemu", f"{a.profile}: not a host profile (make calibrate): {e!r}")
    sc = yaml.safe_load(SCENARIO.read_text())
    sc56 = yaml.safe_load(SCENARIO56.read_text())
    load_start = load_average()
    print(f"load average at start: {load_start}")
    rounds = []
    with tempfile.TemporaryDirectory(prefix="bg-cmpqemu-") as d:
        tmp = pathlib.Path(d)
        images = tmp / "images"
        images.mkdir()
        prefill(images, [t["name"] for t in sc["tenants"] + sc56["tenants"]])
        for rnd in range(a.rounds):
            rounds.append(one_round(a, gw, sc, sc56, tmp, images, rnd))
            bg = rounds[-1]["burstgate bios"]
            print(f"  round {rnd + 1}: burstgate victim {bg['victim_iops']:.0f} IOPS, neighbour "
                  f"{bg['bursty_mbps']:.0f} MB/s; load average {load_average()}", file=sys.stderr)
    res = median_of(rounds)
    print(f"victim demand {a.victim_iops} IOPS (4 KiB randread, iodepth 1); neighbour 128 KiB randread iodepth 64; "
          f"{a.seconds:g} s each; median of {a.rounds} rounds\n")
    print("| | victim IOPS | victim mean | victim P99 | neighbour MB/s |")
    print("|---|---|---|---|---|")
    for name, r in res.items():
        if name == "56 connections":
            continue
        print(f"| {name} | {r['victim_iops']:.0f} | {r['victim_mean_us']:.0f} µs | {r['victim_p99_us']:.0f} µs | "
              f"{r['bursty_mbps']:.0f} |")
    c56 = res["56 connections"]
    print("\n56 connections (" + ", ".join(f"{k}: {n}" for k, n in CONNS56.items()) +
          "), randrw 50 %, 4k/40:16k/30:64k/20:128k/10, iodepth 2 each: IOPS (MB/s)\n")
    base = {t["name"]: t["base"] for t in sc56["tenants"]}
    print("| | " + " | ".join(f"{k} (base {base[k]['iops']} IOPS / {base[k]['mbps']} MB/s)" for k in CONNS56) +
          " | total |")
    print("|---|" + "---|" * (len(CONNS56) + 1))
    for name, r in c56.items():
        tot = sum(r[k]["iops"] for k in CONNS56)
        print(f"| {name} | " + " | ".join(f"{r[k]['iops']:.0f} ({r[k]['mbps']:.1f})" for k in CONNS56) +
              f" | {tot:.0f} |")
    judge(a, res, sc56)
    load_end = load_average()
    print(f"\nload average at start: {load_start}; at end: {load_end}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"rounds": rounds, "median": res, "load_average":
                                                    {"start": load_start, "end": load_end}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
