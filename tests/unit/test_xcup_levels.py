"""scripts/xcup_levels.py: LUT levels and the clock estimate of a synth_xilinx netlist, on
hand-made netlists (the real ones are checked by test_synth_budget.py)."""

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

import xcup_levels  # noqa: E402


def _cell(kind, params=None, **ports):
    """ports: name=(direction, [bits])."""
    return {"type": kind, "parameters": params or {},
            "port_directions": {p: d for p, (d, _) in ports.items()},
            "connections": {p: b for p, (_, b) in ports.items()}}


def _ff(d, q):
    return _cell("FDRE", D=("input", [d]), C=("input", [1]), Q=("output", [q]))


def _lut(a, o, kind="LUT6"):
    return _cell(kind, I0=("input", [a]), I1=("input", ["0"]), O=("output", [o]))


def _module(cells, names, ports=None):
    return {"cells": cells, "netnames": {n: {"bits": [b]} for n, b in names.items()},
            "ports": ports or {}}


def test_the_deeper_register_path_counts_and_is_named():
    # a_q -> 3 LUTs -> b (FF) beside c_q -> 1 LUT -> d (FF): 3 levels, named by the registers.
    cells = {"fa": _ff(20, 2), "l1": _lut(2, 3), "l2": _lut(3, 4, "LUT2"), "l3": _lut(4, 5), "fb": _ff(5, 6),
             "fc": _ff(21, 7), "l4": _lut(7, 8), "fd": _ff(8, 9)}
    r = xcup_levels.analyze(_module(cells, {"a_q": 2, "b_q": 6, "c_q": 7, "d_q": 9}))
    assert r["lut_levels"] == 3
    assert r["paths"]["levels"] == ["a_q", "b_q (FDRE.D)"]
    assert r["period_ns"] == pytest.approx(3 * xcup_levels.DELAY_NS["lut"] + xcup_levels.OVERHEAD_NS)
    assert r["fmax_mhz"] == round(1000 / r["period_ns"], 1)


def test_carry_muxf_and_unregistered_dsp_add_delay_but_no_level():
    # FF -> LUT -> CARRY4 -> CARRY4 (CI) -> MUXF7 -> DSP (A -> P) -> FF: one LUT level.
    cells = {"f0": _ff(30, 2), "l": _lut(2, 3),
             "c0": _cell("CARRY4", S=("input", [3]), CI=("input", ["0"]), CO=("output", [4]), O=("output", [40])),
             "c1": _cell("CARRY4", S=("input", ["0"]), CI=("input", [4]), CO=("output", [5]), O=("output", [41])),
             "m": _cell("MUXF7", I0=("input", [5]), I1=("input", ["0"]), S=("input", ["1"]), O=("output", [6])),
             "dsp": _cell("DSP48E2", {"AREG": "0", "BREG": "0", "MREG": "0", "PREG": "0"},
                          A=("input", [6]), P=("output", [7])),
             "f1": _ff(7, 8)}
    r = xcup_levels.analyze(_module(cells, {"q0": 2, "q1": 8}))
    assert r["lut_levels"] == 1
    d = xcup_levels.DELAY_NS
    assert r["period_ns"] == pytest.approx(round(d["lut"] + d["carry_in"] + d["carry"] + d["muxf"] + d["dsp"]
                                                 + xcup_levels.OVERHEAD_NS, 2))
    # A registered DSP48E2 (PREG) ends the path at its input and starts one at P.
    cells["dsp"]["parameters"]["PREG"] = "1"
    r = xcup_levels.analyze(_module(cells, {"q0": 2, "q1": 8}))
    assert r["lut_levels"] == 1 and r["period_ns"] < 2


def test_lutram_read_is_a_level_and_ports_are_io_paths():
    # in (port) -> LUT -> LUT -> FF: an I/O path of 2, no register path through it;
    # FF -> RAM64X1D read (DPRA -> DPO) -> LUT -> FF: 2 levels; D (write data) ends a path.
    cells = {"l1": _lut(2, 3), "l2": _lut(3, 4), "f": _ff(4, 5),
             "ram": _cell("RAM64X1D", DPRA0=("input", [5]), A0=("input", ["0"]), D=("input", [5]),
                          WE=("input", ["1"]), DPO=("output", [6]), SPO=("output", [9])),
             "l3": _lut(6, 7), "g": _ff(7, 8)}
    r = xcup_levels.analyze(_module(cells, {"f_q": 5, "g_q": 8}, ports={"in": {"direction": "input", "bits": [2]}}))
    assert r["lut_levels"] == 2
    assert r["io_lut_levels"] == 2
    assert r["paths"]["levels"] == ["f_q", "g_q (FDRE.D)"]


def test_a_register_on_a_port_still_starts_and_ends_register_paths():
    # s_q (FF, also an output port: a block's state read out) -> 2 LUTs -> n (also an
    # output port) -> FF t: a register path of 2 levels. Catches the register's path being
    # counted as an I/O path only (out of context the load balancer's whole decision, from
    # its outstanding counters and LFSR state to the counters, was 9 levels where it is 25).
    cells = {"s": _ff(9, 2), "l1": _lut(2, 3), "l2": _lut(3, 4), "t": _ff(4, 5)}
    ports = {"state": {"direction": "output", "bits": [2]}, "nxt": {"direction": "output", "bits": [4]}}
    r = xcup_levels.analyze(_module(cells, {"s_q": 2, "n": 4, "t_q": 5}, ports=ports))
    assert r["lut_levels"] == 2
    assert r["paths"]["levels"] == ["s_q", "n", "t_q (FDRE.D)"]


def test_unknown_cell_loop_and_bad_file_are_located_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"n.json: cell x: type FANCY: no timing arcs"):
        xcup_levels.analyze(_module({"x": _cell("FANCY", A=("input", [2]), Y=("output", [3]))}, {}), "n.json")
    with pytest.raises(ValueError, match="combinational loop"):
        xcup_levels.analyze(_module({"a": _lut(2, 3), "b": _lut(3, 2)}, {}))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert xcup_levels.main([str(bad)]) == 2
    assert "bad.json: not a yosys JSON netlist" in capsys.readouterr().err
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"modules": {"a": _module({}, {}), "b": _module({}, {})}}))
    assert xcup_levels.main([str(two)]) == 2
    assert "name one with --top" in capsys.readouterr().err
