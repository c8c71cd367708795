"""burstgate-gateway under `--scheduler ddrr` (Libra's DDRR, docs/results.md "Libra") with stock
fio clients: two backlogged tenants of 128 KiB random reads whose bases are 1:3 must move data
about 1:3, where wild splits the same pair evenly. Catches a gateway that parses `ddrr` but runs
another scheduler (the shares would be even), DDRR's spare capacity not following the quanta,
and a DDRR window loop that never re-grants (the tenants would stall)."""

import pathlib

from .gateway import Gateway
from .test_fio import run_fio

SCENARIO = pathlib.Path(__file__).resolve().parent / "ddrr_shares.yaml"


def shares(tmp_path, scheduler):
    run = tmp_path / scheduler
    run.mkdir()
    gw = Gateway(run, "--scheduler", scheduler, scenario=SCENARIO, export_size="256m")
    try:
        rep = run_fio(run, "shares",
                      *[[f"--name={n}", f"--uri={gw.uri(n)}", "--rw=randread", "--bs=128k", "--iodepth=32",
                         "--size=256m"] for n in ("small", "large")],
                      runtime=2)
    finally:
        report = gw.stop()
    assert report["scheduler"] == scheduler
    return {j["jobname"]: j["read"]["bw_bytes"] / 1e6 for j in rep["jobs"]}


def test_ddrr_shares_follow_the_bases(tmp_path):
    ddrr, wild = shares(tmp_path, "ddrr"), shares(tmp_path, "wild")
    print(f"\nMB/s small / large: ddrr {ddrr['small']:.1f} / {ddrr['large']:.1f}, "
          f"wild {wild['small']:.1f} / {wild['large']:.1f}")
    assert ddrr["small"] > 5, ddrr  # scheduled, not shut out
    assert 2.0 <= ddrr["large"] / ddrr["small"] <= 4.5, ddrr
    assert wild["large"] / wild["small"] <= 1.5, wild
