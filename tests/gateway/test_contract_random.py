"""Contracts as properties through the gateway: randomized tenant sets, real clients (fio).

tests/unit/test_contract_properties.py guards the contract in the simulator over hundreds of
random scenarios; this file guards the same property on the real clock, where the firmware
window, the pacing of the modelled stages, the per-connection queues and the clients' round
trips all take part. A seeded generator draws 2-4 tenants, each with its own I/O size (4 KiB to
128 KiB), read or write, 1-4 connections at iodepth 1-4 and a contract that binds either by
IOPS or by MB/s at that size; the sum of bases fits the DPU, and every tenant asks for more
than it bought (closed loop, no think time). One tenant may be a bursting neighbour (burst
above base). Over the run, each tenant must receive:

* at least 95 % of min(base IOPS, base MB/s / size) -- the issue-18 criterion for real clients,
  here for any contract the generator can draw, not only the hand-picked ones of
  test_contract_fio.py;
* at most min(burst IOPS, burst MB/s / size) plus one window's worth -- never more than bought.

Catches: a contract whose knee lies above the tenant's I/O size admitting more small I/Os than
the IOPS figure (the envelope's CPU budget; the count gate, TENANT.COUNT_GRANT, holds it);
large I/Os charged more than their share of the contract (issue 18's 1000-of-2288 IOPS); a
grant lost across windows of any length; a connection-count share instead of a per-tenant one;
a bursting neighbour taking a within-base tenant's base.

Each case is a few seconds of wall clock; `make test` runs three seeds, `make test-long` thirty
(RANDOM_SEED shifts them). Every tenant's closed loop can offer at least twice its entitlement
on this machine (the generator sizes the contract from the connections and depth), so a tenant
short of its base was held back by the gateway, not by its client.
"""

import os
import random

import pytest

from .gateway import Gateway
from .host_load import CpuContention
from .test_fio import run_fio

SECONDS = 3
SIZES = {"4k": 4096, "16k": 16384, "64k": 65536, "128k": 131072}
SWLIMIT_MBPS = 400          # the DPU's software limit: the bytes bound of the whole node
BASE = int(os.environ.get("RANDOM_SEED", "0"))


def draw(seed):
    """One random tenant set and its scenario text; every base fits the DPU with room."""
    rng = random.Random(seed)
    window_us = rng.choice([500, 1000, 2000])
    n = rng.randint(2, 4)
    bursty = rng.randrange(n) if rng.random() < 0.5 else None
    tenants = []
    budget_mbps = 0.5 * SWLIMIT_MBPS           # the bases' bytes stay within half the limit
    for i in range(n):
        size_name = rng.choice(list(SIZES))
        size = SIZES[size_name]
        conns, depth = rng.randint(1, 4), rng.randint(1, 4)
        # What a closed loop of conns x depth can certainly offer through the paced gateway on
        # this 2-core machine, with room: ~1500 IOPS per outstanding 4 KiB request, less per
        # large one (the bytes are real copies).
        offer = conns * depth * (1500 if size <= 16384 else 600)
        share = budget_mbps / n * 1e6 / size    # this tenant's share of the bytes bound, in IOPS
        entitled = max(100, int(min(offer / 2, share, 4000) * rng.uniform(0.5, 1.0)))
        if rng.random() < 0.5:   # IOPS binds: MB/s bought above what the IOPS need at this size
            iops = entitled
            mbps = entitled * size * rng.uniform(1.0, 3.0) / 1e6
        else:                    # MB/s binds: IOPS bought above what the bytes allow
            mbps = entitled * size / 1e6
            iops = int(entitled * rng.uniform(1.0, 3.0)) + 1
        burst = 2.0 if i == bursty else 1.0
        tenants.append(dict(name=f"t{i}", size_name=size_name, size=size, conns=conns, depth=depth,
                            write=rng.random() < 0.4, product=rng.choice("AB"),
                            base_iops=iops, base_mbps=round(mbps, 6),
                            burst_iops=int(iops * burst), burst_mbps=round(mbps * burst, 6)))
    lines = [f"name: gateway-random-{seed}", f"seed: {seed}", "duration_ms: 1000", "scheduler: bios",
             f"window_us: {window_us}", "dpu:", "  threads: 2", "  lb_policy: jsq", "  cpu_ns:",
             "    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}",
             "    B: {read: {base: 3000, per_kib: 55}, write: {base: 2500, per_kib: 45}}",
             "  ingress_gbps: 100", "  egress_gbps: 100", f"  swlimit_mbps: {SWLIMIT_MBPS}",
             "  reserved_share: 0.05", "  target_delay_us: 200"]
    # Odd seeds run BIOS with the pool capped at the allocations' shortfall (bios.reserve_shortfall,
    # a variation the docs allow; compare-qemu's case 2 runs it), every other one of them with
    # line 11's leftover handed again too (bios.share_refill), chosen by the seed so the draws
    # above stay as they were.
    if seed % 4 == 1:
        lines.append("bios: {reserve_shortfall: true, share_refill: true}")
    elif seed % 2:
        lines.append("bios: {reserve_shortfall: true}")
    lines.append("tenants:")
    for t in tenants:
        lines += [f"  - name: {t['name']}", f"    product: {t['product']}",
                  f"    base:  {{iops: {t['base_iops']}, mbps: {t['base_mbps']}}}",
                  f"    burst: {{iops: {t['burst_iops']}, mbps: {t['burst_mbps']}}}",
                  f"    queues: {t['conns']}",
                  f"    workload: {{mode: closed, iodepth: {t['depth']}, sizes: {{{t['size_name']}: 1.0}}, "
                  f"read_share: {0.0 if t['write'] else 1.0}, segments: 8}}"]
    return tenants, window_us, "\n".join(lines) + "\n"


def entitlement(t, which):
    return min(t[f"{which}_iops"], t[f"{which}_mbps"] * 1e6 / t["size"])


def run_case(tmp_path, seed):
    tenants, window_us, text = draw(seed)
    scenario = tmp_path / "random.yaml"
    scenario.write_text(text)
    gw = Gateway(tmp_path, "--realtime", "--handshake-slots", "32", scenario=scenario, export_size="256m")
    jobs = []
    for t in tenants:
        jobs.append([f"--name={t['name']}", f"--uri={gw.uri(t['name'])}",
                     f"--rw={'randwrite' if t['write'] else 'randread'}", f"--bs={t['size_name']}",
                     f"--iodepth={t['depth']}", f"--numjobs={t['conns']}", "--size=256m"])
    try:
        with CpuContention() as host:
            rep = run_fio(tmp_path, f"random{seed}", *jobs, runtime=SECONDS)
    finally:
        report = gw.stop()
    writes = {t["name"] for t in tenants if t["write"]}
    got = {}
    for j in rep["jobs"]:
        d = j["write"] if j["jobname"] in writes else j["read"]
        got[j["jobname"]] = got.get(j["jobname"], 0.0) + d["iops"]
    by_name = {t["name"]: t for t in report["tenants"]}
    one_window = 1e6 / window_us           # one window's worth over a one-second rate
    rows, failures = [], []
    for t in tenants:
        base, burst = entitlement(t, "base"), entitlement(t, "burst")
        r = by_name[t["name"]]
        deferred = r["deferred_ios"]
        rows.append(f"{t['name']} {t['size_name']} {'W' if t['write'] else 'R'} {t['conns']}x{t['depth']}: "
                    f"{got[t['name']]:.0f} IOPS, base {base:.0f}, burst {burst:.0f}, deferred {deferred}")
        if got[t["name"]] > burst * 1.02 + one_window / SECONDS:
            failures.append(f"{t['name']} above its burst: {got[t['name']]:.0f} > {burst:.0f}")
        # The run's rate on a host that scheduled the clients when they were runnable; on a
        # contended one (host_load.py) a closed loop sends in bursts and its rate says how the
        # host scheduled it. Per window, on any host: no deferral in a window where the tenant
        # had been admitted less than its base of that window.
        if got[t["name"]] < 0.95 * base and not host.contended:
            failures.append(f"{t['name']} below its base: {got[t['name']]:.0f} < 95 % of {base:.0f}")
        if r["deferred_below_base"] > 0.01 * r["completed"]:
            failures.append(f"{t['name']} deferred below its base in {r['deferred_below_base']} of "
                            f"{r['completed']} I/Os")
    print(f"\nseed {seed}, window {window_us} us, {host}\n  " + "\n  ".join(rows))
    assert not failures, (failures, rows, text)


@pytest.mark.parametrize("k", range(3))
def test_random_contracts_hold_through_the_gateway(tmp_path, k):
    run_case(tmp_path, 1000 + BASE + k)


@pytest.mark.long
@pytest.mark.parametrize("k", range(3, 33))
def test_random_contracts_hold_through_the_gateway_long(tmp_path, k):
    run_case(tmp_path, 1000 + BASE + k)
