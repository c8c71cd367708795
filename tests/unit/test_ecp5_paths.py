"""scripts/ecp5_paths.py: the longest paths of a synth_ecp5 netlist, on hand-made netlists."""

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

import ecp5_paths  # noqa: E402


def _cell(kind, **ports):
    """ports: name=(direction, [bits])."""
    return {"type": kind, "port_directions": {p: d for p, (d, _) in ports.items()},
            "connections": {p: b for p, (_, b) in ports.items()}}


def _lut(a, z):
    return _cell("LUT4", A=("input", [a]), B=("input", ["0"]), Z=("output", [z]))


def _netlist(tmp_path, cells, names):
    path = tmp_path / "n.json"
    module = {"attributes": {"top": "00000000000000000000000000000001"}, "cells": cells,
              "netnames": {n: {"bits": [b]} for n, b in names.items()}}
    path.write_text(json.dumps({"modules": {"top": module}}))
    return path


def test_the_deeper_path_wins_and_is_named(tmp_path, capsys):
    # slow_q -> 3 LUTs -> slow_d beside fast_q -> 1 LUT -> fast_d: two paths, worst first.
    cells = {"ff1": _cell("TRELLIS_FF", Q=("output", [2]), DI=("input", [5])),
             "l1": _lut(2, 3), "l2": _lut(3, 4), "l3": _lut(4, 5),
             "ff2": _cell("TRELLIS_FF", Q=("output", [6]), DI=("input", [7])),
             "l4": _lut(6, 7)}
    path = _netlist(tmp_path, cells, {"slow_q": 2, "slow_d": 5, "fast_q": 6, "fast_d": 7})
    paths = ecp5_paths.longest_paths(ecp5_paths.load(path, None), 2)
    assert [len(h) - 1 for _, h in paths] == [3, 1]
    assert paths[0][0] == pytest.approx(3 * 1.3)
    ecp5_paths.main([str(path), "--paths", "1", "--brief"])
    assert capsys.readouterr().out.strip() == "3.9 ns, 3 cells: slow_q[0] -> slow_d[0]"


def test_carry_chain_is_cheap_along_the_chain(tmp_path):
    # A0 -> COUT of the first CCU2C (a LUT level), then CIN -> COUT twice, then CIN -> S0.
    cells = {f"c{k}": _cell("CCU2C", A0=("input", [2] if k == 0 else ["0"]), CIN=("input", [] if k == 0 else [2 + k]),
                           COUT=("output", [3 + k]), S0=("output", [10 + k])) for k in range(4)}
    path = _netlist(tmp_path, cells, {"a": 2, "sum": 13})
    (ns, hops), = ecp5_paths.longest_paths(ecp5_paths.load(path, "top"), 1)
    assert ns == pytest.approx(1.4 + 0.05 + 0.05 + 0.3)  # not 4 LUT levels


def test_loop_and_bad_input_are_errors(tmp_path):
    loop = _netlist(tmp_path, {"a": _lut(2, 3), "b": _lut(3, 2)}, {"x": 2})
    with pytest.raises(SystemExit, match="combinational loop"):
        ecp5_paths.longest_paths(ecp5_paths.load(loop, None), 1)
    with pytest.raises(SystemExit, match="no module 'nope'"):
        ecp5_paths.load(loop, "nope")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SystemExit, match="bad.json"):
        ecp5_paths.load(bad, None)


def _mult(reg, a, p):
    cell = _cell("MULT18X18D", A0=("input", [a]), B0=("input", ["0"]), P0=("output", [p]))
    cell["parameters"] = {"REG_INPUTA_CLK": reg, "REG_INPUTB_CLK": reg}
    return cell


def test_a_dsp_with_input_registers_ends_and_starts_paths(tmp_path):
    # q -> LUT -> the DSP's A -> P -> LUT -> d: one path through an unregistered DSP, two
    # shorter ones (q to the DSP's input registers; the registers' product to d) through a
    # DSP with REG_INPUTA/B_CLK set, the second the worse (the multiply is in it).
    for reg, worst, cells in (("NONE", 1.3 + 4.8 + 1.3, 3), ("CLK0", 4.8 + 1.3, 2)):
        net = {"ff1": _cell("TRELLIS_FF", Q=("output", [2]), DI=("input", [9])),
               "l1": _lut(2, 3), "m": _mult(reg, 3, 4), "l2": _lut(4, 5),
               "ff2": _cell("TRELLIS_FF", Q=("output", [6]), DI=("input", [5]))}
        path = _netlist(tmp_path, net, {"q": 2, "a": 3, "p": 4, "d": 5})
        paths = ecp5_paths.longest_paths(ecp5_paths.load(path, None), 3)
        assert paths[0][0] == pytest.approx(worst) and len(paths[0][1]) - 1 == cells, (reg, paths)
        if reg == "CLK0":
            assert paths[0][1][0][1] == "m (input registers)"
            assert [round(ns, 2) for ns, _ in paths] == [6.1, 1.3]  # and q -> the registers


def test_lut_levels_count_lut4s_in_series_between_other_cells(tmp_path):
    # ff -> LUT4 -> (LUT4, LUT4 -> PFUMX: one LUT5) -> LUT4 -> carry chain -> LUT4 -> ff:
    # three LUT levels before the carry chain (the PFUMX adds none), one after it.
    cells = {"ff1": _cell("TRELLIS_FF", Q=("output", [2]), DI=("input", [20])),
             "l1": _lut(2, 3),
             "l2a": _lut(3, 4), "l2b": _lut(3, 5),
             "mux": _cell("PFUMX", ALUT=("input", [4]), BLUT=("input", [5]), C0=("input", [2]),
                          Z=("output", [6])),
             "l3": _lut(6, 7),
             "cc": _cell("CCU2C", A0=("input", [7]), S0=("output", [8])),
             "l4": _lut(8, 20)}
    module = ecp5_paths.load(_netlist(tmp_path, cells, {"q": 2}), None)
    assert ecp5_paths.lut_levels(module) == (3, {"LUT4": 5, "PFUMX": 1, "L6MUX21": 0})


def test_lut_levels_loop_is_an_error(tmp_path):
    module = ecp5_paths.load(_netlist(tmp_path, {"a": _lut(2, 3), "b": _lut(3, 2)}, {}), None)
    with pytest.raises(SystemExit, match="combinational loop"):
        ecp5_paths.lut_levels(module)
