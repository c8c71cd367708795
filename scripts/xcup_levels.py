#!/usr/bin/env python3
"""Logic depth of a ``synth_xilinx -family xcup`` netlist: LUT levels and a clock estimate.

    python scripts/xcup_levels.py build/synth/bg_core-small.netlist.json [--top bg_core]

No vendor timer is available, so the timing of an UltraScale+ build is estimated from the
structure yosys mapped (``scripts/synth.py`` writes ``<job>.netlist.json``). A path starts at
a flip-flop, a block RAM, a shift register's output, a distributed RAM's stored word or a
registered DSP48E2 and ends at one of their inputs; the module's ports start and end
*I/O paths*, reported apart (out of context, the logic on the other side is not known).

Two numbers per netlist:

- **LUT levels**: the most LUTs (LUT1..LUT6, a distributed-RAM read) in series on a
  register-to-register path. A CARRY4/CARRY8 chain, a MUXF7/F8/F9 and an unregistered DSP48E2
  add no level (they are not LUTs) but add delay below. This is the number ``make synth``
  holds to a budget (``constraints/budgets.json``, ``levels``).
- **Estimated period** on an xcu250-2 (Virtex UltraScale+, -2, 0.85 V): the most delay on a
  register-to-register path, with the per-cell figures of ``DELAY_NS`` (a LUT with its
  routed net, a carry step, a wide mux, a DSP used as a combinational multiplier) plus the
  clock-to-out, set-up and a margin for clock skew and uncertainty (``OVERHEAD_NS``). The
  figures are round numbers of the order Vivado reports for -2 parts (a routed LUT level
  about 0.5 ns), not a sign-off: placement and congestion can move the real clock either way.

Exit status 2 (a located error) on a file that is not such a netlist.
"""

import argparse
import collections
import json
import pathlib
import sys

#: Cells that end and start paths (every output is a start, every input an end).
SEQUENTIAL = {"FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE", "RAMB18E2", "RAMB36E2", "URAM288"}
#: Cells passed through with no delay (no I/O buffers out of context; a clock buffer).
TRANSPARENT = {"BUFG", "BUFGCE", "IBUF", "OBUF", "$scopeinfo"}
#: Distributed RAMs: which output each read-address port drives (asynchronous read).
_LUTRAM_READS = {
    "RAM32M": {"ADDRA": "DOA", "ADDRB": "DOB", "ADDRC": "DOC", "ADDRD": "DOD"},
    "RAM64M": {"ADDRA": "DOA", "ADDRB": "DOB", "ADDRC": "DOC", "ADDRD": "DOD"},
    "RAM32M16": {f"ADDR{x}": f"DO{x}" for x in "ABCDEFGH"},
    "RAM64M8": {f"ADDR{x}": f"DO{x}" for x in "ABCDEFGH"},
    **{k: {"A": "SPO", "DPRA": "DPO"} for k in ("RAM32X1D", "RAM64X1D", "RAM128X1D", "RAM256X1D")},
    **{k: {"A": "O"} for k in ("RAM32X1S", "RAM64X1S", "RAM128X1S", "RAM256X1S", "RAM512X1S")},
    "SRL16E": {"A": "Q"},
    "SRLC32E": {"A": "Q"},
}

#: Per-cell delay in ns on an xcu250-2 (see the module docstring: round figures, not a data sheet).
DELAY_NS = {
    "lut": 0.50,      # a LUT and the routed net after it
    "lutram": 0.60,   # a distributed-RAM read (a LUT with a slower path) and its net
    "muxf": 0.10,     # MUXF7/F8/F9, inside the slice
    "carry_in": 0.30,  # into a carry chain (S/DI to the first carry out)
    "carry": 0.05,    # one CARRY step along the chain (CI to CO/O of the next cell)
    "dsp": 2.60,      # an unregistered DSP48E2 multiply-add, A/B to P
}
#: Clock-to-out (0.1) + set-up (0.1) + clock skew and jitter margin (0.3), ns.
OVERHEAD_NS = 0.5


def _port_bits(conns, dirs, want):
    return [(p, b) for p, bits in conns.items() if dirs.get(p) == want for b in bits if isinstance(b, int)]


def _arcs(kind, params, ins, outs):
    """Combinational arcs (in_bit, out_bit, levels, ns) of one cell; ``None``: unknown cell."""
    if kind in SEQUENTIAL:
        return []
    if kind in TRANSPARENT:
        return [(ib, ob, 0, 0.0) for _, ib in ins for _, ob in outs]
    if kind.startswith("LUT") and kind[3:].isdigit() or kind == "INV":
        return [(ib, ob, 1, DELAY_NS["lut"]) for _, ib in ins for _, ob in outs]
    if kind in ("MUXF7", "MUXF8", "MUXF9"):
        return [(ib, ob, 0, DELAY_NS["muxf"]) for _, ib in ins for _, ob in outs]
    if kind in ("CARRY4", "CARRY8"):
        arcs = []
        for ip, ib in ins:
            chained = ip in ("CI", "CI_TOP", "CYINIT")
            for _, ob in outs:
                arcs.append((ib, ob, 0, DELAY_NS["carry"] if chained else DELAY_NS["carry_in"]))
        return arcs
    if kind in _LUTRAM_READS:
        reads = _LUTRAM_READS[kind]
        return [(ib, ob, 1, DELAY_NS["lutram"]) for ip, ib in ins for op, ob in outs
                if reads.get(ip.rstrip("0123456789")) == op]
    if kind == "DSP48E2":
        registered = any(int(str(params.get(r, "0")), 2) for r in ("AREG", "BREG", "MREG", "PREG"))
        if registered:
            return []
        return [(ib, ob, 0, DELAY_NS["dsp"]) for ip, ib in ins if ip in ("A", "B", "C", "D", "PCIN")
                for op, ob in outs if op == "P"]
    return None


def analyze(module, where="netlist"):
    """``{"lut_levels", "period_ns", "fmax_mhz", "io_lut_levels", "paths"}`` of one module.

    ``paths``: the register-to-register path with the most LUT levels and the one with the
    most delay, each as readable net names (start first)."""
    names = _net_names(module)
    arcs = collections.defaultdict(list)
    starts, ends, end_label = set(), set(), {}
    for cname, cell in module.get("cells", {}).items():
        kind, dirs, conns = cell["type"], cell.get("port_directions", {}), cell["connections"]
        ins, outs = _port_bits(conns, dirs, "input"), _port_bits(conns, dirs, "output")
        cell_arcs = _arcs(kind, cell.get("parameters", {}), ins, outs)
        if cell_arcs is None:
            raise ValueError(f"{where}: cell {cname}: type {kind}: no timing arcs known for it")
        driven = {ob for _, ob, _, _ in cell_arcs}
        fed = {ib for ib, _, _, _ in cell_arcs}
        # An output with no combinational arc is a register (or a RAM's stored word);
        # an input that reaches no output through an arc is where a path ends.
        starts.update(ob for _, ob in outs if ob not in driven)
        ends.update(ib for _, ib in ins if ib not in fed)
        q = [b for p, b in outs if p == "Q"]
        for ip, ib in ins:
            if ib not in fed:  # name an end by the register it loads (a D pin's net is a LUT's)
                end_label[ib] = f"{names.get(q[0], q[0])} ({kind}.{ip})" if q else f"{kind}.{ip}"
        for ib, ob, lv, ns in cell_arcs:
            arcs[ib].append((ob, lv, ns))
    ports = set()
    for port in module.get("ports", {}).values():
        ports.update(b for b in port["bits"] if isinstance(b, int))
    nodes = set(arcs) | {ob for t in arcs.values() for ob, _, _ in t} | starts | ends | ports
    indegree = collections.Counter(ob for t in arcs.values() for ob, _, _ in t)
    # Longest paths by LUT levels and by delay, separately for register starts and port
    # starts (a port-started path is an I/O path wherever it ends).
    NEG = float("-inf")
    best = {key: dict.fromkeys(nodes, NEG) for key in ("lv", "ns", "io")}
    via = {"lv": {}, "ns": {}}
    for n in nodes:
        if n in ports:
            best["io"][n] = 0
        # A register whose output is also a port (a block's state, exposed for reads) still
        # starts register-to-register paths: counted as an I/O path only, the load
        # balancer's decision path from its counters and LFSR was not seen out of context.
        if indegree[n] == 0 and (n not in ports or n in starts):
            best["lv"][n] = 0
            best["ns"][n] = 0.0
    ready = collections.deque(n for n in nodes if indegree[n] == 0)
    done = 0
    while ready:
        n = ready.popleft()
        done += 1
        for ob, lv, ns in arcs.get(n, ()):
            if best["lv"][n] + lv > best["lv"][ob]:
                best["lv"][ob], via["lv"][ob] = best["lv"][n] + lv, n
            if best["ns"][n] + ns > best["ns"][ob]:
                best["ns"][ob], via["ns"][ob] = best["ns"][n] + ns, n
            best["io"][ob] = max(best["io"][ob], best["io"][n] + lv)
            indegree[ob] -= 1
            if indegree[ob] == 0:
                ready.append(ob)
    if done != len(nodes):
        raise ValueError(f"{where}: combinational loop: {len(nodes) - done} nets are on or behind one")
    reg_ends = [n for n in ends if n not in ports or n in end_label]
    io_ends = list(ends | ports)
    lv_end = max(reg_ends, key=lambda n: best["lv"][n], default=None)
    ns_end = max(reg_ends, key=lambda n: best["ns"][n], default=None)
    levels = max(best["lv"][lv_end], 0) if lv_end is not None else 0
    period = (max(best["ns"][ns_end], 0.0) if ns_end is not None else 0.0) + OVERHEAD_NS
    io_levels = max((best["io"][n] for n in io_ends), default=0)

    def trace(end, key):
        bits = [end]
        while bits[-1] in via[key]:
            bits.append(via[key][bits[-1]])
        # The nets the RTL named (yosys's own names say nothing), and both ends.
        labels = [names.get(b, f"${b}") for b in reversed(bits)]
        if end in end_label:
            labels.append(end_label[end])
        return [x for i, x in enumerate(labels) if i in (0, len(labels) - 1) or "$" not in x]

    return {"lut_levels": levels, "period_ns": round(period, 2), "fmax_mhz": round(1000 / period, 1),
            "io_lut_levels": max(io_levels, 0),
            "paths": {"levels": trace(lv_end, "lv") if lv_end is not None else [],
                      "delay": trace(ns_end, "ns") if ns_end is not None else []}}


def _net_names(module):
    """Bit -> a readable name: the RTL's own names first (no ``$``: not made up by yosys),
    then the shortest."""
    def rank(name):
        return (name.count("$") > 0, name.startswith("$"), len(name))
    names = {}
    for name, net in module.get("netnames", {}).items():
        for i, bit in enumerate(net["bits"]):
            label = f"{name}[{i}]" if len(net["bits"]) > 1 else name
            if isinstance(bit, int) and (bit not in names or rank(label) < rank(names[bit])):
                names[bit] = label
    return names


def load(path, top=None):
    """The module ``top`` (default: the only one) of a yosys JSON netlist; ``ValueError`` says where."""
    try:
        netlist = json.loads(pathlib.Path(path).read_text())
        modules = netlist["modules"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a yosys JSON netlist: {exc}") from None
    if top is None:
        if len(modules) != 1:
            raise ValueError(f"{path}: {len(modules)} modules ({', '.join(sorted(modules))}); name one with --top")
        top = next(iter(modules))
    if top not in modules:
        raise ValueError(f"{path}: no module {top!r} (modules: {', '.join(sorted(modules))})")
    return modules[top]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("netlist", help="JSON netlist of synth_xilinx (scripts/synth.py writes <job>.netlist.json)")
    parser.add_argument("--top", help="module (default: the only one in the file)")
    args = parser.parse_args(argv)
    try:
        r = analyze(load(args.netlist, args.top), where=args.netlist)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{r['lut_levels']} LUT levels (register to register; I/O paths {r['io_lut_levels']}); "
          f"estimated {r['period_ns']} ns = {r['fmax_mhz']} MHz on an xcu250-2")
    print("  most levels: " + " -> ".join(r["paths"]["levels"]))
    print("  most delay:  " + " -> ".join(r["paths"]["delay"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
