"""Libra's mechanisms ("Libra: From application requests to virtual IOPs", EuroSys'14) in
burstgate-sim, beside BIOS on the same scenarios. Imported by scripts/reproduce.py, whose
Runner, load and tenant it takes as arguments so that this file holds no copy of them.

- ``libra_vs_bios``: BurstCBS Fig. 19's scenario (a 4 KiB iodepth-1 victim beside a
  BPS-intensive neighbour) under BIOS and under Libra's DDRR with its §4.1 profiles and §4.2
  floor, at neighbour iodepths 1, 16, 64.
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
