"""The BurstCBS scenarios share one DPU CPU profile, and it agrees with the paper's bottleneck.

BurstCBS §5.3: "We only profile I/O sizes from 4KB to 16KB, because the bottleneck is no longer
on CPU beyond 16KB"; §6.4: 3 GB/s "is the maximum that an SA control thread can handle". So one
SA thread serving ProductA reads must be CPU-bound (its CPU alone moves less than the 3 GB/s
software limit) at 16 KiB and below, and not at 32 KiB and above. scenarios/*.yaml derive
`dpu.cpu_ns` from that (docs/results.md, "CPU profile").

Catches: one scenario's profile drifting from the others (an edit to one file, or a new §6
scenario copied from scenario.yaml's example profile, under which one thread moves more than
3 GB/s of 4-16 KiB I/Os and the software limit, not the CPU, is the bottleneck); a profile whose
knee is not at 16 KiB (e.g. the derived 203.8 ns/KiB rounded down to 203, which leaves a 16 KiB
read at 3.007 GB/s); a slope that breaks the paper's order of the I/O types.
"""

import pathlib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BURSTCBS = ["fig19_bps_neighbor.yaml", "fig20_iops_neighbor.yaml", "fig23_burst_utilization.yaml",
            "fig24_sudden_activation.yaml", "table3_misestimation.yaml", "fig18_load_balancing.yaml",
            "lsm_bcbs67_rocksdb.yaml",
            "lsm_bcbs67_burst.yaml"]


def dpu(name):
    return yaml.safe_load((ROOT / "scenarios" / name).read_text())["dpu"]


def cpu_ns(profile, product, op, size):
    """True CPU time of one I/O, as burstgate-sim computes it: base + per_kib * size / 1024."""
    p = profile[product][op]
    return p["base"] + (p["per_kib"] * size >> 10)


def test_every_burstcbs_scenario_has_the_same_cpu_profile():
    profiles = {name: dpu(name)["cpu_ns"] for name in BURSTCBS}
    first = profiles[BURSTCBS[0]]
    for name, profile in profiles.items():
        assert profile == first, f"scenarios/{name}: dpu.cpu_ns {profile} differs from {BURSTCBS[0]}'s {first}"


@pytest.mark.parametrize("name", BURSTCBS)
def test_one_thread_is_cpu_bound_up_to_16k_for_product_a_reads(name):
    d = dpu(name)
    assert d["swlimit_mbps"] == 3000, f"scenarios/{name}: the paper's SA thread handles 3 GB/s (§6.4)"
    for kib in (4, 8, 16, 32, 64, 128):
        size = kib * 1024
        ns = cpu_ns(d["cpu_ns"], "A", "read", size)
        # One thread's CPU moves size / ns bytes per ns (GB/s); CPU-bound below the limit.
        cpu_bound = size * 1000 < d["swlimit_mbps"] * ns
        assert cpu_bound == (kib <= 16), (
            f"scenarios/{name}: a {kib} KiB ProductA read costs {ns} ns, so one thread's CPU moves "
            f"{size / ns:.3f} GB/s against {d['swlimit_mbps'] / 1000:g} GB/s; the paper's CPU bottleneck "
            f"ends beyond 16 KiB")


def test_profile_keeps_the_papers_order_of_io_types():
    """§5.3: ProductA is "further optimized for higher throughput" than ProductB; the example
    profile's writes cost less than its reads. Both at every size the scenarios use."""
    profile = dpu(BURSTCBS[0])["cpu_ns"]
    for kib in (4, 8, 16, 32, 64, 128):
        size = kib * 1024
        for op in ("read", "write"):
            assert cpu_ns(profile, "A", op, size) < cpu_ns(profile, "B", op, size), f"{kib} KiB {op}"
        for product in ("A", "B"):
            assert cpu_ns(profile, product, "write", size) < cpu_ns(profile, product, "read", size), f"{kib} KiB {product}"
