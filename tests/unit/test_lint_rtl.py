"""``make lint`` (scripts/lint/lint_rtl.py): what fails it and what does not."""

import importlib.util
import pathlib

from amaranth import Module
from amaranth.back import verilog
from amaranth.hdl import Elaboratable
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("lint_rtl", ROOT / "scripts" / "lint" / "lint_rtl.py")
lint_rtl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lint_rtl)


class _Forgotten(Elaboratable):
    def elaborate(self, platform):
        return Module()


class _Leaky(wiring.Component):
    """Creates a submodule and never adds it: Amaranth warns when it is collected."""
    a: In(1)
    y: Out(1)

    def elaborate(self, platform):
        m = Module()
        _Forgotten()
        m.d.comb += self.y.eq(self.a)
        return m


def test_unused_elaboratable_fails():
    # Bug caught: elaboration run without recording the warning Amaranth raises from __del__.
    text, problems = lint_rtl.elaborate_checked(lambda: verilog.convert(_Leaky(), name="leaky"))
    assert "module leaky" in text
    assert len(problems) == 1 and "UnusedElaboratable" in problems[0], problems
    assert "test_lint_rtl.py:" in problems[0]  # the warning names where the object was made


def test_unwaived_verilator_warning_fails(tmp_path):
    # Bug caught: a waiver file that switches off more than Amaranth's code-generation classes.
    path = tmp_path / "undriven.v"
    path.write_text("module undriven(input wire a, output wire y, output wire z);\n"
                    "  assign y = a;\nendmodule\n")
    found = lint_rtl.lint_verilog(path)
    assert any(line.startswith("%Warning-UNDRIVEN") and "'z'" in line for line in found), found


def test_waived_classes_only_amaranth_artifacts():
    # Bug caught: a waiver added without a reason, or a blanket lint_off.
    text = lint_rtl.WAIVERS.read_text()
    rules = [line.split()[-1] for line in text.splitlines() if line.startswith("lint_off")]
    assert all(line.startswith("lint_off -rule ") for line in text.splitlines() if line.startswith("lint_off"))
    for rule in rules:
        assert f"//   {rule}" in text or f", {rule}" in text, f"waiver {rule} has no reason"
    assert sorted(rules) == sorted(["WIDTHEXPAND", "WIDTHTRUNC", "PROCASSINIT", "CASEINCOMPLETE",
                                    "UNSIGNED", "ASCRANGE", "UNUSEDSIGNAL", "DECLFILENAME"])


def test_load_balancer_is_clean(tmp_path):
    # Bug caught: a warning in the load balancer's Verilog that is not a code-generation artifact.
    assert lint_rtl.main(["--out", str(tmp_path), "bg_load_balancer"]) == 0
    assert (tmp_path / "bg_load_balancer.v").exists()


def test_unknown_block_is_an_error(tmp_path, capsys):
    try:
        lint_rtl.main(["--out", str(tmp_path), "bg_nonesuch"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("an unknown block name must exit non-zero")
    assert "unknown block(s) bg_nonesuch" in capsys.readouterr().err
