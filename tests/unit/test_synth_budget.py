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

RESOURCES = {"lut", "ff", "bram36", "uram", "dsp"}


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
    budgets = {"a": {"lut": 100, "ff": 50, "dsp": 0}}
    at = {"a": {"summary": {"lut": 100, "ff": 50, "dsp": 0}}}
    assert synth.over_budget(at, budgets, where="b.json") == []
    over = {"a": {"summary": {"lut": 101, "ff": 50, "dsp": 1}}}
    assert synth.over_budget(over, budgets, where="b.json") == [
        "b.json: a.lut: 101 exceeds the budget 100", "b.json: a.dsp: 1 exceeds the budget 0"]
    assert synth.over_budget({"c": at["a"]}, budgets, where="b.json") == ["b.json: no budget for 'c'"]


def test_small_block_synthesizes_within_budget(tmp_path):
    """Runs yosys on the smallest block: catches a broken synthesis flow (yosys script, cell
    counting) and a cost estimator grown beyond its budget, in every ``make test``."""
    job = synth.QUICK_JOB
    assert synth.main(["--out", str(tmp_path), job]) == 0
    result = json.loads((tmp_path / f"{job}.json").read_text())
    assert result["summary"]["lut"] > 0 and result["summary"]["ff"] > 0
    assert result["share"]["U250"]["lut"] == round(result["summary"]["lut"] / synth.DEVICES["U250"]["lut"], 6)
