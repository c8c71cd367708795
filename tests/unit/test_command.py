"""The `burstgate` command: one entry point whose help lists every subcommand and whose
subcommands each describe themselves and run the right tool.

Catches a subcommand missing from the top-level help, a subcommand wired to the wrong program
(`trace2iolog --help` printing `replay`'s usage), a C++ program whose --help no longer exits 0,
arguments not reaching the program, and a missing build reported as a traceback."""

import pathlib

import pytest

from burstgate import command

from ..conftest import BUILD, run_burstgate

NAMES = [sc.name for sc in command.SUBCOMMANDS]


def test_top_level_help_lists_every_subcommand():
    result = run_burstgate("--help")
    assert result.returncode == 0, result.stderr
    for sc in command.SUBCOMMANDS:
        assert sc.name in result.stdout, sc.name
    assert len(NAMES) == len(set(NAMES))


def test_no_subcommand_and_an_unknown_one_are_usage_errors():
    for args in ((), ("nope",)):
        result = run_burstgate(*args)
        assert result.returncode == 2
        assert "usage: burstgate" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("name", NAMES)
def test_every_subcommand_has_help(name):
    result = run_burstgate(name, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    sc = next(s for s in command.SUBCOMMANDS if s.name == name)
    if sc.program is not None:
        # The program's own usage, and for a program with several commands only this one's.
        assert sc.program.name in result.stdout
        siblings = [o for o in command.SUBCOMMANDS if o is not sc and o.program is not None
                    and o.program.build_path == sc.program.build_path]
        for other in siblings:
            assert f"{sc.program.name} {other.program.lead[0]}" not in result.stdout, other.name
    else:
        assert f"usage: burstgate {name}" in result.stdout


def test_arguments_reach_the_program(tmp_path):
    """`burstgate sim` runs burstgate-sim with the arguments as given (its own error, exit 2)."""
    result = run_burstgate("sim", tmp_path / "missing.yaml")
    assert result.returncode == 2
    assert "missing.yaml" in result.stderr and "cannot open" in result.stderr


def test_a_program_that_is_not_built_is_named_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("BG_BUILD_DIR", str(tmp_path))
    monkeypatch.setattr(command, "SOURCE_ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(command.NotBuilt, match="burstgate-sim is not built .*make cpp"):
        command.find_program(command.Program("sw/sim/burstgate-sim"))
    monkeypatch.setattr(command, "SOURCE_ROOT", pathlib.Path(BUILD).parents[1])
    monkeypatch.setenv("BG_BUILD_DIR", str(BUILD))
    assert command.find_program(command.Program("sw/sim/burstgate-sim")).name == "burstgate-sim"
