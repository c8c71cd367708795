"""Issue 18's contract, held on randomized scenarios run through burstgate-sim (docs/contracts.md).

A tenant provisioned {iops, mbps} is entitled to min(iops, mbps / size) I/Os per second of any
size from 512 B to 1 MiB, read or write. Each case draws 1-64 tenants with mixed sizes and read
shares on either product class, a window length and a scheduler, and gives every tenant one of
three roles:

- steady: an open loop (Poisson) at 10-50 % of its entitlement, which buys 40+ I/Os a window,
  capped so that no window's demand (I/Os, bytes, CPU) comes near the base (`steady_rate_cap`);
- held: a closed loop at a depth that asks more than its base, with burst = base;
- bursting: a closed loop at a random depth 1..64 with burst above base.

Bases are scaled so their sum fits the capacity at every tenant's worst size, as the simulator
requires (a set that does not fit is refused: exit 2, tested below). Properties, per case:

- bios, base: a steady tenant is never deferred and all its I/Os complete; a held tenant gets
  at least 99 % of min(iops, mbps / mean size), i.e. 99 % of its base IOPS or of its base MB/s
  (checked where the run is long enough to hold 100 of its I/Os and 50 of its largest);
- wild: a steady tenant's whole throughput (deferrals allowed: WildCBS's latency is its known
  weakness); a held tenant, which asks more than its base, is not protected there: bursting
  neighbours drain the global budget first at every window (docs/contracts.md);
- every tenant stays within its burst contract: its bytes within burst MB/s, its CPU time within
  the burst cost vector (the envelope; see docs/contracts.md for why that, not the IOPS figure,
  is the cap below the knee size), up to one carry bucket;
- the SA never served more than its capacity (utilization <= 1 per dimension, 1 % for work
  admitted before the measured period and served in it).

The cases are a seeded generator (case i uses random.Random(i)), so a failure names its case
and reruns exactly. `make test` runs CASES of them in pytest, `make test-long` LONG_CASES more as
tasks on the engine (scripts/verify_farm.py); a few run on the verilator engine as well.
"""

import json
import math
import os
import pathlib
import random
import subprocess

import pytest

from ..conftest import run_farm

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
CLI = BUILD / "sw" / "sim" / "burstgate-sim"

CASES = 300
LONG_CASES = 2000
VERILATOR_CASES = 4

HEADER = 128
THREADS = 2
SWLIMIT_MBPS = 3000.0
LINK_GBPS = 100.0
RESERVED = 0.05
# The BurstCBS scenarios' CPU profile (docs/results.md "CPU profile"): ns = base + per_kib x KiB.
CPU = {"A": {"read": (2200, 204), "write": (1800, 178)}, "B": {"read": (3000, 280), "write": (2500, 229)}}
SIZES = [512, 4096, 16384, 65536, 131072, 262144, 1 << 20]
SIZE_NAMES = {512: "512", 4096: "4k", 16384: "16k", 65536: "64k", 131072: "128k", 262144: "256k", 1 << 20: "1m"}
MIN_SIZE, MAX_SIZE = 512, 1 << 20


def io_cost(product, size, write):
    """One I/O's cost vector (cpu ns, ingress B, egress B, swlimit B), as cost_table.h defines it."""
    base, per_kib = CPU[product]["write" if write else "read"]
    return (base + per_kib * size / 1024, HEADER + (0 if write else size), HEADER + (size if write else 0), size)


def entitled(iops, mbps, size):
    return min(iops, mbps * 1e6 / size)


def envelope(product, iops, mbps):
    """The contract's cost vector per second: per dimension, max over sizes and read/write of
    entitlement x cost, which peaks at the knee size mbps / iops (docs/contracts.md)."""
    knee = min(max(mbps * 1e6 / iops, MIN_SIZE), MAX_SIZE)
    env = [0.0] * 4
    for size in (MIN_SIZE, MAX_SIZE, math.floor(knee), math.ceil(knee)):
        for write in (False, True):
            n = entitled(iops, mbps, size)
            env = [max(e, n * c) for e, c in zip(env, io_cost(product, size, write))]
    return env


def mix_cost(t):
    """Mean cost vector of one I/O of the tenant's mix, and its mean size."""
    out, mean = [0.0] * 4, 0.0
    for size, share in t["sizes"].items():
        mean += share * size
        for write, p in ((False, t["read_share"]), (True, 1 - t["read_share"])):
            out = [o + share * p * c for o, c in zip(out, io_cost(t["product"], size, write))]
    return out, mean


# A window's Poisson demand is compound (sizes and read/write mixed), skewed to the right: the
# normal approximation's 1e-15 at 8 standard deviations leaves room for that skew.
SIGMAS = 8


def steady_rate_cap(t, window_us):
    """The highest Poisson rate at which a window's demand stays SIGMAS standard deviations below
    the base's budget for one window: in I/Os (budget: the base IOPS) and in each cost dimension
    (budget: the envelope). For a compound Poisson count N with per-I/O cost c, a window's demand
    has mean r w E[c] and variance r w E[c^2]; mean + k sd <= B w solved for r."""
    w = window_us / 1e6
    moments = [(1.0, 1.0, t["iops"])]
    env = envelope(t["product"], t["iops"], t["mbps"])
    for d in range(4):
        m1 = m2 = 0.0
        for size, share in t["sizes"].items():
            for write, p in ((False, t["read_share"]), (True, 1 - t["read_share"])):
                c = io_cost(t["product"], size, write)[d]
                m1 += share * p * c
                m2 += share * p * c * c
        moments.append((m1, m2, env[d]))
    cap = math.inf
    for m1, m2, budget in moments:
        if m1 <= 0:
            continue
        # m1 x^2 + k sqrt(m2) x - budget w <= 0 with x = sqrt(r w).
        b = SIGMAS * math.sqrt(m2)
        x = (-b + math.sqrt(b * b + 4 * m1 * budget * w)) / (2 * m1)
        cap = min(cap, x * x / w)
    return cap


def capacity_per_s():
    return [1e9 * THREADS, LINK_GBPS * 1e9 / 8, LINK_GBPS * 1e9 / 8, SWLIMIT_MBPS * 1e6]


def draw_case(i, engine="model"):
    rng = random.Random(i)
    n = rng.choice([1, 2, 3, 4, 8, 16, 32, 64]) if engine == "model" else rng.randint(1, 4)
    window_us = rng.choice([250, 500, 1000, 2000, 5000])
    scheduler = rng.choice(["bios", "bios", "base", "wild"])
    tenants = []
    for k in range(n):
        chosen = rng.sample(SIZES, rng.randint(1, 3))
        weights = [rng.random() + 0.1 for _ in chosen]
        sizes = {s: round(w / sum(weights), 3) for s, w in zip(chosen, weights)}
        sizes[chosen[0]] = round(1 - sum(v for s, v in sizes.items() if s != chosen[0]), 3)
        tenants.append({
            "name": f"t{k}",
            "product": rng.choice("AB"),
            "iops": rng.choice([500, 2000, 5000, 10000, 20000, 50000]),
            "mbps": rng.choice([20, 50, 100, 300, 600, 1000]),
            "sizes": sizes,
            "read_share": rng.choice([0.0, 0.3, 0.5, 1.0]),
            "role": rng.choice(["steady", "steady", "held", "bursting"]),
        })
    # Scale every base by one factor so that the sum of envelopes uses at most `fill` of the
    # capacity left after the reserved pool, in the tightest dimension.
    fill = rng.uniform(0.3, 0.85)
    need = [sum(envelope(t["product"], t["iops"], t["mbps"])[d] for t in tenants) for d in range(4)]
    room = [c * (1 - RESERVED) for c in capacity_per_s()]
    scale = fill / max(nd / r for nd, r in zip(need, room))
    for t in tenants:
        t["iops"] = round(t["iops"] * scale, 1)
        t["mbps"] = round(t["mbps"] * scale, 3)
    duration_ms = max(150, 30 * window_us // 1000)
    for t in tenants:
        cost, mean = mix_cost(t)
        t["contract"] = entitled(t["iops"], t["mbps"], mean)
        if t["role"] == "bursting":
            t["burst"] = (t["iops"] * rng.choice([2, 4, 10]), t["mbps"] * rng.choice([2, 4, 10]))
            t["depth"] = rng.randint(1, 64)
        else:
            t["burst"] = (t["iops"], t["mbps"])
        if t["role"] == "held":
            # More than the contract at any latency up to 10 ms (bursting neighbours can keep the
            # SA's shared software limiter busy enough for a few ms of queueing).
            t["depth"] = min(65536, math.ceil(t["contract"] * 0.010) + 4)
        if t["role"] == "steady":
            # Poisson arrivals below the base can still exceed it in one window (and may be
            # deferred: that window is above base). A steady tenant must stay within its base in
            # every window, so its rate is capped where a window's demand reaches the base only
            # SIGMAS standard deviations out, in I/Os and in every cost dimension (a mix of 512 B
            # and 64 KiB I/Os varies far more in bytes than in count); with a base that buys fewer
            # than 40 I/Os a window, the tenant is tested as held instead.
            if t["contract"] * window_us / 1e6 < 40:
                t["role"] = "held"
                t["depth"] = min(65536, math.ceil(t["contract"] * 0.010) + 4)
            else:
                t["rate"] = round(min(t["contract"] * rng.uniform(0.1, 0.5), steady_rate_cap(t, window_us)), 1)
    return {"seed": i, "window_us": window_us, "scheduler": scheduler, "duration_ms": duration_ms,
            "warmup_ms": duration_ms // 5, "tenants": tenants}


def scenario_yaml(case, iops_cap=False):
    lines = [
        f"name: contract-{case['seed']}", f"seed: {case['seed']}", f"duration_ms: {case['duration_ms']}",
        f"warmup_ms: {case['warmup_ms']}", f"scheduler: {case['scheduler']}", f"window_us: {case['window_us']}",
        "dpu:", f"  threads: {THREADS}", "  lb_policy: jsq", "  cpu_ns:",
    ]
    for p, rw in CPU.items():
        lines.append(f"    {p}: {{read: {{base: {rw['read'][0]}, per_kib: {rw['read'][1]}}}, "
                     f"write: {{base: {rw['write'][0]}, per_kib: {rw['write'][1]}}}}}")
    lines += [f"  ingress_gbps: {LINK_GBPS}", f"  egress_gbps: {LINK_GBPS}", f"  swlimit_mbps: {SWLIMIT_MBPS}",
              "  backend_us: {dist: lognormal, median: 30, p99: 120}", f"  reserved_share: {RESERVED}",
              f"  header_bytes: {HEADER}", f"  iops_cap: {str(iops_cap).lower()}", "tenants:"]
    for t in case["tenants"]:
        sizes = ", ".join(f"{SIZE_NAMES[s]}: {v}" for s, v in t["sizes"].items())
        load = f"mode: open, rate_iops: {t['rate']}" if t["role"] == "steady" else f"mode: closed, iodepth: {t['depth']}"
        lines += [
            f"  - name: {t['name']}", f"    product: {t['product']}",
            f"    base: {{iops: {t['iops']}, mbps: {t['mbps']}}}",
            f"    burst: {{iops: {t['burst'][0]}, mbps: {t['burst'][1]}}}",
            f"    workload: {{{load}, sizes: {{{sizes}}}, read_share: {t['read_share']}, segments: 4}}",
        ]
    return "\n".join(lines) + "\n"


def run_sim(path, *args):
    if not CLI.is_file():
        pytest.fail(f"{CLI} does not exist: build it with `make cpp` (or set BG_BUILD_DIR to your build)")
    return subprocess.run([str(CLI), str(path), "--quiet", *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False)


def cpu_per_io(t, mean_size):
    """CPU ns of one I/O of the tenant's read share at a mean size (the cost is affine in size)."""
    r = t["read_share"]
    return r * io_cost(t["product"], mean_size, False)[0] + (1 - r) * io_cost(t["product"], mean_size, True)[0]


def check_case(case, tmp_path, engine="model", iops_cap=False, check_iops=None):
    """``check_iops`` (default: ``iops_cap``) asserts the IOPS bound below."""
    check_iops = iops_cap if check_iops is None else check_iops
    path = tmp_path / "s.yaml"
    path.write_text(scenario_yaml(case, iops_cap))
    result = run_sim(path, "--engine", engine)
    assert result.returncode == 0, f"case {case['seed']}: {result.stderr}\n{path.read_text()}"
    report = json.loads(result.stdout)
    sched = case["scheduler"]
    where = f"case {case['seed']} ({sched}, {case['window_us']} us windows, {len(case['tenants'])} tenants)"
    # Served work over the measured period; what was admitted just before it may finish inside.
    for util in report["utilization"].values():
        assert util <= 1.01, f"{where}: utilization {report['utilization']}"
    measured_s = (case["duration_ms"] - case["warmup_ms"]) / 1e3
    window_s = case["window_us"] / 1e6
    for t, got in zip(case["tenants"], report["tenants"]):
        who = f"{where}: {t['name']} ({t['role']}, {t['product']}, sizes {t['sizes']}, read {t['read_share']})"
        largest = max(t["sizes"])
        if t["role"] == "steady":
            # Its whole demand: every I/O completes except those still in flight at the end
            # (at most its rate times the longest latency it saw, plus a window).
            in_flight_slack = 2 + t["rate"] * (got["lat_us"]["max"] / 1e6 + window_s)
            assert got["generated"] - got["finished"] <= in_flight_slack, f"{who}: {got}"
            if sched != "wild":
                assert got["deferred_ios"] == 0, f"{who}: deferred within its base: {got}"
        elif t["role"] == "held" and sched != "wild" and t["contract"] * measured_s >= 100 and t["mbps"] * 1e6 * measured_s >= 50 * largest:
            # min(iops, mbps / mean size) of what it did: at least 99 % of the IOPS or of the MB/s,
            # less one window's entitlement and one largest I/O of edge effect.
            edge_ios = (t["contract"] * window_s + 1) / measured_s
            edge_mb = (t["mbps"] * 1e6 * window_s + largest) / measured_s / 1e6
            assert got["iops"] >= 0.99 * t["iops"] - edge_ios or got["mbps"] >= 0.99 * t["mbps"] - edge_mb, \
                f"{who}: {got['iops']} IOPS {got['mbps']} MB/s, base {t['iops']} IOPS {t['mbps']} MB/s"
        # Within burst: what it consumed at most the burst envelope, plus one carry bucket and one
        # window's grant of edge effect over the measured period. Bytes are the report's; CPU is
        # its I/Os at the mean size it moved.
        if got["iops"] == 0:
            continue
        # With the count gate on (dpu.iops_cap, docs/contracts.md), within the IOPS it bought at
        # every size: its burst IOPS (its base under BaseCBS), plus one window's grant and an I/O
        # of edge effect. (Off by default: see "the count gate" there for why.)
        cap = t["iops"] if sched == "base" else t["burst"][0]
        assert not check_iops or got["iops"] <= cap * 1.001 + (cap * window_s + 2) / measured_s, \
            f"{who}: {got['iops']} IOPS, cap {cap} IOPS"
        burst = envelope(t["product"], *t["burst"])
        base = envelope(t["product"], t["iops"], t["mbps"])
        worst = [max(io_cost(t["product"], MAX_SIZE, w)[d] for w in (False, True)) for d in range(4)]
        slack = [(max(base[d] * window_s, worst[d]) + burst[d] * window_s) / measured_s for d in range(4)]
        used_cpu = got["iops"] * cpu_per_io(t, got["mbps"] * 1e6 / got["iops"])
        assert used_cpu <= burst[0] * 1.01 + slack[0], f"{who}: {used_cpu:.0f} CPU ns/s, burst {burst[0]:.0f}"
        used_bytes = got["mbps"] * 1e6
        assert used_bytes <= burst[3] * 1.01 + slack[3], f"{who}: {used_bytes:.0f} B/s, burst {burst[3]:.0f}"


@pytest.mark.parametrize("i", range(CASES))
def test_contract_holds(i, tmp_path):
    check_case(draw_case(i), tmp_path)


@pytest.mark.long
def test_contract_holds_long():
    """LONG_CASES more cases as tasks on the engine (scripts/verify_farm.py --contracts, the
    check_case above on each); a failure names its case, its parameters and how to re-run it."""
    run_farm("--contracts", f"{CASES}-{CASES + LONG_CASES - 1}")


@pytest.mark.parametrize("i", range(VERILATOR_CASES))
def test_contract_holds_on_verilator(i, tmp_path):
    check_case(draw_case(10_000 + i, engine="verilator"), tmp_path, engine="verilator")


def small_io_case(sched):
    """Issue 18's 5000 IOPS / 50 MB/s tenant doing 4 KiB, closed loop: its envelope's CPU budget,
    sized for the knee (10 KB), buys ~6000 4 KiB I/Os a second."""
    return {"seed": 1, "window_us": 1000, "scheduler": sched, "duration_ms": 600, "warmup_ms": 100,
            "tenants": [{"name": "t0", "product": "A", "iops": 5000, "mbps": 50, "burst": (5000, 50),
                         "sizes": {4096: 1.0}, "read_share": 1.0, "role": "held", "depth": 32,
                         "contract": 5000}]}


@pytest.mark.parametrize("sched", ["bios", "base", "wild"])
def test_small_ios_get_the_iops_bought_not_more(tmp_path, sched):
    """5000 +- 1 % with the count gate; without it (dpu.iops_cap: false) the envelope alone gives
    ~6000 and check_case's IOPS property fails -- the bug the property is there to catch."""
    case = small_io_case(sched)
    check_case(case, tmp_path, iops_cap=True)
    path = tmp_path / "s.yaml"
    got = json.loads(run_sim(path).stdout)["tenants"][0]
    assert 4950 <= got["iops"] <= 5050, got
    path.write_text(scenario_yaml(case, iops_cap=False))
    assert json.loads(run_sim(path).stdout)["tenants"][0]["iops"] > 6000
    # The property itself catches it: the same check with the gate off, the IOPS bound kept.
    with pytest.raises(AssertionError, match="cap 5000 IOPS"):
        check_case(case, tmp_path, iops_cap=False, check_iops=True)


ISSUE_128K = ROOT / "scenarios" / "contract_128k.yaml"


def issue_scenario(sched="bios", window_us=1000, extra_dpu=""):
    text = ISSUE_128K.read_text().replace("scheduler: bios", f"scheduler: {sched}")
    text = text.replace("window_us: 1000", f"window_us: {window_us}")
    return text.replace("  reserved_share: 0.05\n", "  reserved_share: 0.05\n" + extra_dpu)


# Algorithm 1 as printed decays a steady tenant below base (line 7) until its allocation no longer
# covers a window's arrivals; the reserved pool and reclaim then pay, and at 1 ms windows with
# Poisson arrivals they sometimes do not: 41-51 of about 3,000 I/Os wait one window (measured).
# The project's variations usage_clamp and spill_base (docs/simulator.md, `bios:`) defer none.
BIOS_DELIVERS = "bios: {usage_clamp: true, spill_base: true}\n"


@pytest.mark.parametrize("sched", ["bios", "bios-variations", "base", "wild"])
@pytest.mark.parametrize("window_us", [1000, 2000, 10000])
def test_issue_128k_tenant_gets_its_contract(tmp_path, sched, window_us):
    """The issue's case: 5000 IOPS / 300 MB/s at 128 KiB is 2288.8 IOPS (it got 1000-1500 when
    the CPU budget was priced at 4 KiB, and 2000 at 1 ms windows without the grant carry). The
    two 4 KiB tenants within their base lose no I/O under any scheduler, and are never deferred
    but under Algorithm 1 as printed at 1 ms windows (at most 2 % of their I/Os wait a window)."""
    path = tmp_path / "s.yaml"
    text = issue_scenario(sched.split("-")[0], window_us)
    if sched == "bios-variations":
        text = text.replace("\ntenants:\n", "\n" + BIOS_DELIVERS + "tenants:\n", 1)
    path.write_text(text)
    result = run_sim(path)
    assert result.returncode == 0, result.stderr
    big, *small = json.loads(result.stdout)["tenants"]
    contract = 300e6 / 131072
    assert 0.99 * contract <= big["iops"] <= 1.01 * contract, big
    for t in small:  # Poisson at 3000 of their 5000 IOPS
        assert t["iops"] >= 0.97 * 3000, t
        if sched == "bios" and window_us == 1000:
            assert t["deferred_ios"] <= 0.02 * t["completed"], t
        else:
            assert t["deferred_ios"] == 0, t
    if sched == "bios-variations":
        return
    # The mapping before (4 KiB CPU price, no carry) gave 1000 or 1500: the test can tell.
    path.write_text(issue_scenario(sched, window_us, "  provision: io4k\n  grant_carry: false\n"))  # noqa: E501
    before = json.loads(run_sim(path).stdout)["tenants"][0]
    assert before["iops"] == pytest.approx(1000 if window_us == 1000 else 1500, rel=0.01), before


def test_bases_that_cannot_be_honoured_are_refused(tmp_path):
    """Seven ProductB tenants of 40k IOPS / 400 MB/s on one SA thread: their knee is 10 kB, where a
    read costs 3.54 us, so their bases need 0.99 CPU s/s of the 0.95 left after the reserved pool:
    exit 2 naming file:line and the numbers. Priced at 4 KiB (provision: io4k, the old mapping)
    the same set seemed to fit (0.90 s/s) and was then under-served at 10 kB. The pool is the
    5 % share (bios.reserve: share), which comes off the capacity; Algorithm 1's two-tenant pool
    is at most what the bases leave."""
    text = issue_scenario().replace("threads: 2", "threads: 1").replace("\ntenants:\n", "\nbios: {reserve: share}\ntenants:\n", 1)
    tenants = "".join(f"""  - name: x{k}
    product: B
    base:  {{iops: 40000, mbps: 400}}
    burst: {{iops: 40000, mbps: 400}}
    workload: {{mode: closed, iodepth: 1, sizes: {{4k: 1.0}}, read_share: 1.0}}
""" for k in range(7))
    text = text[:text.index("tenants:\n") + len("tenants:\n")] + tenants
    path = tmp_path / "over.yaml"
    path.write_text(text)
    result = run_sim(path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1, err
    line = text[:text.index("  - name: x0")].count("\n") + 1
    assert err.startswith(f"burstgate-sim: {path}:{line}: tenants: the bases cannot all be honoured"), err
    assert "cpu units per window" in err and "tenants[0] 'x0'" in err, err
    old = tmp_path / "io4k.yaml"
    old.write_text(text.replace("  reserved_share: 0.05", "  reserved_share: 0.05\n  provision: io4k"))
    assert run_sim(old).returncode == 0


DUALBUCKET = """name: dualbucket-contract
seed: 7
duration_ms: 300
warmup_ms: 50
scheduler: dualbucket
window_us: 1000
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}
  backend_us: {dist: lognormal, median: 30, p99: 120}
dualbucket: {hot_threshold_iops: 20000, CONTRACTS}
tenants:
  - name: capped
    base:  {iops: 1000, mbps: 4.096}
    burst: {iops: 1000, mbps: 4.096}
    workload: {mode: closed, iodepth: 16, sizes: {4k: 1.0}, read_share: 1.0, segments: 4}
  - name: other
    base:  {iops: 20000, mbps: 100}
    burst: {iops: 200000, mbps: 2000}
    workload: {mode: closed, iodepth: 8, sizes: {4k: 1.0}, read_share: 1.0, segments: 4}
"""


def test_dualbucket_holds_a_tenant_to_its_contract(tmp_path):
    """Under dualbucket the segment-level buckets sit on top of the tenants' contracts: a tenant
    bought 1000 IOPS of 4 KiB (knee 4096 B, so the cost cap is exactly 1000 IOPS) and asking for
    far more gets 1000, not what the shared main bucket would give it (Still Water as printed,
    tenant_contracts: false: 379k here, 14,674 in the issue's scenario)."""
    path = tmp_path / "db.yaml"
    path.write_text(DUALBUCKET.replace("CONTRACTS", "tenant_contracts: true"))
    result = run_sim(path)
    assert result.returncode == 0, result.stderr
    capped, other = json.loads(result.stdout)["tenants"]
    assert 990 <= capped["iops"] <= 1010, capped
    assert other["iops"] > 20000, other  # the neighbour still bursts from the main bucket
    path.write_text(DUALBUCKET.replace("CONTRACTS", "tenant_contracts: false"))
    result = run_sim(path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["tenants"][0]["iops"] > 5000
