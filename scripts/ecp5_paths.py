#!/usr/bin/env python3
"""The longest register-to-register paths of a ``synth_ecp5`` netlist, in seconds, not hours.

    python scripts/ecp5_paths.py build/pnr/ulx3s.netlist.json [--top ulx3s] [--paths 3]

nextpnr reports the critical path only after placement (46 minutes for the core on the
shared machine). This walks the JSON netlist yosys wrote (``<job>.netlist.json`` of
``scripts/pnr_ecp5.py``) instead: a path starts at a flip-flop, block RAM or the module's
inputs and ends at one of them or an output; each cell adds a rough ECP5 delay (speed
grade 6, from nextpnr's timing model, plus a flat 0.9 ns of routing per LUT level). The
absolute numbers are an estimate; the order of the paths and the named nets on them are
what it is for. It prints the worst paths, one start each, with every net on the way.
"""

import argparse
import collections
import json
import pathlib
import sys

ROUTE_NS = 0.9
#: A CCU2C's carry input to each output: along the chain, not through a LUT.
_CARRY_IN = {"COUT": 0.05, "S0": 0.3, "S1": 0.3}
SEQUENTIAL = {"TRELLIS_FF", "DP16KD"}


def cell_delay(kind, inp, out):
    """Delay in ns from input port ``inp`` to output port ``out`` of a cell; None: no arc."""
    if kind == "LUT4":
        return 0.4 + ROUTE_NS
    if kind in ("PFUMX", "L6MUX21"):
        return 0.2  # inside the slice
    if kind == "CCU2C":
        return _CARRY_IN[out] if inp == "CIN" else 0.5 + ROUTE_NS
    if kind == "TRELLIS_DPR16X4":
        return 1.0 + ROUTE_NS if inp.startswith("RAD") else None  # asynchronous read
    if kind == "MULT18X18D":
        return 3.9 + ROUTE_NS  # unregistered, as synth_ecp5 maps it
    return None


def registered_inputs(cell):
    """A MULT18X18D whose A and B go through its own input registers (``rtl/burstgate/cost.py``
    instantiates it so on the ECP5): its inputs end paths and its product starts them."""
    params = cell.get("parameters", {})
    return cell["type"] == "MULT18X18D" and all(
        str(params.get(f"REG_INPUT{x}_CLK", "NONE")).strip() not in ("NONE", "") for x in "AB")


def load(path, top):
    try:
        netlist = json.loads(pathlib.Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        sys.exit(f"{path}: {exc}")
    modules = netlist.get("modules", {})
    if top is None:
        tops = [n for n, mod in modules.items() if int(mod.get("attributes", {}).get("top", "0") or 0)]
        if len(tops) != 1:
            sys.exit(f"{path}: cannot tell the top module ({', '.join(tops) or 'none marked'}); use --top")
        top = tops[0]
    if top not in modules:
        sys.exit(f"{path}: no module {top!r} (modules: {', '.join(sorted(modules))})")
    return modules[top]


def net_names(module):
    """Bit -> a readable name, preferring names yosys did not make up."""
    names = {}
    for name, net in module.get("netnames", {}).items():
        for i, bit in enumerate(net["bits"]):
            if isinstance(bit, int) and (bit not in names or (names[bit].startswith("$") and not name.startswith("$"))):
                names[bit] = f"{name}[{i}]"
    return names


def longest_paths(module, count):
    """The ``count`` worst paths, each (ns, [(arrival ns, bit, cell type)]), distinct starts."""
    arcs = collections.defaultdict(list)
    for cname, cell in module.get("cells", {}).items():
        kind, dirs, conns = cell["type"], cell.get("port_directions", {}), cell["connections"]
        if kind in SEQUENTIAL:
            continue
        ins = [(p, b) for p, bits in conns.items() if dirs.get(p) == "input" for b in bits if isinstance(b, int)]
        outs = [(p, b) for p, bits in conns.items() if dirs.get(p) == "output" for b in bits if isinstance(b, int)]
        if registered_inputs(cell):
            # The input registers' clock to the product: a start of its own, named after the cell.
            arcs[f"{cname} (input registers)"] += [(ob, cell_delay(kind, "A0", op), kind) for op, ob in outs]
            continue
        for ip, ib in ins:
            for op, ob in outs:
                d = cell_delay(kind, ip, op)
                if d is not None:
                    arcs[ib].append((ob, d, kind))
    indegree = collections.Counter(ob for targets in arcs.values() for ob, _, _ in targets)
    nodes = set(arcs) | set(indegree)
    arrival = dict.fromkeys(nodes, 0.0)
    via = {}
    ready = collections.deque(n for n in nodes if indegree[n] == 0)
    done = 0
    while ready:
        n = ready.popleft()
        done += 1
        for ob, d, kind in arcs.get(n, ()):
            if arrival[n] + d > arrival[ob]:
                arrival[ob], via[ob] = arrival[n] + d, (n, kind)
            indegree[ob] -= 1
            if indegree[ob] == 0:
                ready.append(ob)
    if done != len(nodes):
        sys.exit(f"combinational loop: {len(nodes) - done} nets are on or behind one")
    paths, starts = [], set()
    for end in sorted(nodes, key=lambda n: -arrival[n]):
        hops = [(arrival[end], end, via[end][1] if end in via else "start")]
        while hops[-1][1] in via:
            prev = via[hops[-1][1]][0]
            hops.append((arrival[prev], prev, via[prev][1] if prev in via else "start"))
        if hops[-1][1] in starts:
            continue
        starts.add(hops[-1][1])
        paths.append((arrival[end], hops[::-1]))
        if len(paths) == count:
            break
    return paths


#: A LUT5..7 is LUT4s joined by these slice multiplexers: no level of its own.
_WIDE_MUX = ("PFUMX", "L6MUX21")


def lut_levels(module):
    """``(levels, cells)``: the most LUT4s in series between any two cells that are not LUT4,
    PFUMX or L6MUX21 (flip-flops, carry chains, RAMs, DSPs, ports) -- the depth classic abc
    mapped the netlist to -- and the count of each of those three cell types.

    abc maps for the least depth first and then recovers area only where a path stays within
    the deepest one, so the LUT count moves with this depth: an RTL change that removes the
    deepest path makes every other path be mapped shallower, with wider LUTs (more PFUMX /
    L6MUX21). Recorded per job by ``pnr_ecp5.py``, so a change in LUTs can be read against it.
    """
    cells = module.get("cells", {})
    logic = {n: c for n, c in cells.items() if c["type"] == "LUT4" or c["type"] in _WIDE_MUX}
    driver = {}
    for name, cell in logic.items():
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) == "output":
                driver.update((b, name) for b in bits if isinstance(b, int))
    fanin = {name: {driver[b] for port, bits in cell["connections"].items()
                    if cell.get("port_directions", {}).get(port) == "input"
                    for b in bits if isinstance(b, int) and b in driver}
             for name, cell in logic.items()}
    fanout = collections.defaultdict(list)
    for name, ins in fanin.items():
        for d in ins:
            fanout[d].append(name)
    waiting = {name: len(ins) for name, ins in fanin.items()}
    ready = collections.deque(n for n, k in waiting.items() if k == 0)
    level, done = {}, 0
    while ready:
        n = ready.popleft()
        done += 1
        own = 1 if logic[n]["type"] == "LUT4" else 0
        level[n] = own + max((level[d] for d in fanin[n]), default=0)
        for o in fanout[n]:
            waiting[o] -= 1
            if waiting[o] == 0:
                ready.append(o)
    if done != len(logic):
        sys.exit(f"combinational loop: {len(logic) - done} LUT cells are on or behind one")
    counts = collections.Counter(c["type"] for c in logic.values())
    return max(level.values(), default=0), {k: counts[k] for k in ("LUT4", *_WIDE_MUX)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("netlist", help="JSON netlist written by yosys (synth_ecp5 ... -json)")
    parser.add_argument("--top", help="module (default: the one yosys marked top)")
    parser.add_argument("--paths", type=int, default=3, help="how many paths, one per start (default: 3)")
    parser.add_argument("--brief", action="store_true", help="only the first and last net of each path")
    args = parser.parse_args(argv)
    module = load(args.netlist, args.top)
    names = net_names(module)
    for ns, hops in longest_paths(module, args.paths):
        print(f"{ns:.1f} ns, {len(hops) - 1} cells: {names.get(hops[0][1], hops[0][1])} -> "
              f"{names.get(hops[-1][1], hops[-1][1])}")
        if not args.brief:
            for at, bit, kind in hops:
                print(f"  {at:6.1f}  {kind:15} {names.get(bit, bit)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
