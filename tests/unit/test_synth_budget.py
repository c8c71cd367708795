"""Resource budgets (``constraints/budgets.json``) against yosys ``synth_xilinx`` results.

``make synth`` writes ``build/synth/<job>.json`` and itself fails when a job exceeds its budget;
these tests check the committed budgets themselves and the comparison, and synthesize one small
block for real in every ``make test``.
"""

import json
import pathlib
import sys


ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import synth  # noqa: E402

RESOURCES = {"lut", "ff", "bram36", "uram", "dsp", "levels"}


def test_every_job_has_a_complete_budget():
    """Catches a job added to ``make synth`` without a budget, or a budget with a misspelled
    or missing resource (which would never be checked)."""
    budgets = synth.load_budgets()
    for job in synth.DEFAULT_JOBS:
        assert job in budgets, f"{synth.BUDGETS}: no budget for {job!r}"
        assert set(budgets[job]) == RESOURCES, f"{synth.BUDGETS}: {job}: {sorted(budgets[job])}"
        for key, limit in budgets[job].items():
            assert isinstance(limit, (int, float)) and limit >= 0, f"{synth.BUDGETS}: {job}.{key}: {limit!r}"
    for job in budgets:
        synth.parse_job(job)  # a budget for a job that no longer exists is an error


def test_over_budget_names_each_excess_and_nothing_else():
    """Catches a comparison the wrong way round, off by one at the limit, or stopping at the
    first excess."""
    budgets = {"a": {"lut": 100, "ff": 50, "dsp": 0, "levels": 6}}
    at = {"a": {"summary": {"lut": 100, "ff": 50, "dsp": 0, "levels": 6}}}
    assert synth.over_budget(at, budgets, where="b.json") == []
    over = {"a": {"summary": {"lut": 101, "ff": 50, "dsp": 1, "levels": 7}}}
    assert synth.over_budget(over, budgets, where="b.json") == [
        "b.json: a.lut: 101 exceeds the budget 100", "b.json: a.dsp: 1 exceeds the budget 0",
        "b.json: a.levels: 7 exceeds the budget 6"]
    assert synth.over_budget({"c": at["a"]}, budgets, where="b.json") == ["b.json: no budget for 'c'"]


def test_small_block_synthesizes_within_budget(tmp_path):
    """Runs yosys on the smallest block: catches a broken synthesis flow (yosys script, cell
    counting) and a cost estimator grown beyond its budget, in every ``make test``."""
    job = synth.QUICK_JOB
    assert synth.main(["--out", str(tmp_path), job]) == 0
    result = json.loads((tmp_path / f"{job}.json").read_text())
    assert result["summary"]["lut"] > 0 and result["summary"]["ff"] > 0
    assert result["share"]["U250"]["lut"] == round(result["summary"]["lut"] / synth.DEVICES["U250"]["lut"], 6)
    # The LUT levels come from the netlist yosys wrote, and are the ones the budget held.
    timing = result["timing"]
    assert 0 < timing["lut_levels"] == result["summary"]["levels"] <= synth.load_budgets()[job]["levels"]
    assert timing["paths"]["levels"] and timing["fmax_mhz"] == round(1000 / timing["period_ns"], 1)
    # The cost estimator's class compares are registered once per selected group (signals
    # with the attribute bg_replica): catches the flow losing KEEP_REPLICAS, after which
    # yosys folds the nine copies into one (the ECP5 critical path it was made to cut).
    netlist = json.loads((tmp_path / f"{job}.netlist.json").read_text())["modules"][job]
    copies = [net["bits"] for name, net in netlist["netnames"].items() if name.startswith("s1_ge_")]
    assert len(copies) == 9
    for k in range(1, len(copies[0])):
        assert len({bits[k] for bits in copies}) == 9, f"s1_ge_* bit {k}: copies merged"


def test_kernel_clock_above_the_cores_estimate_is_named(tmp_path):
    """Catches a v++ link configuration that claims a kernel clock the core's logic depth does
    not allow (the 300 MHz the configurations had), and a check that looks at a block instead
    of the slowest core job."""
    cfg = tmp_path / "u.cfg"
    cfg.write_text("# comment\nkernel_frequency=150\n[connectivity]\n")
    freqs = synth.kernel_frequencies([cfg])
    assert freqs == {(cfg, 2): 150.0}
    fast = {"timing": {"fmax_mhz": 200.0}}
    slow = {"timing": {"fmax_mhz": 120.5}}
    assert synth.kernel_clock_problems({"bg_core@small": fast, "bg_load_balancer": slow}, freqs) == []
    assert synth.kernel_clock_problems({"bg_core@small": fast, "bg_core@large": slow}, freqs) == [
        f"{cfg}:2: kernel_frequency: 150 MHz is above 120.5 MHz, the clock bg_core@large's logic depth "
        "allows on an xcu250-2 (scripts/xcup_levels.py)"]
    assert synth.kernel_clock_problems({"bg_cost_estimator": slow}, freqs) == []


def test_committed_kernel_clocks_are_set():
    """Catches a link configuration without a kernel clock (v++ would pick the platform's)."""
    freqs = synth.kernel_frequencies()
    assert {p.name for p, _ in freqs} == {p.name for p in synth.KERNEL_CONFIGS} != set()
