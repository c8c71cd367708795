"""cocotb testbench: the generated cost estimator on Verilator against the C++ model.

Drives COST_DESCRIPTORS random descriptors (default 100000) through the Verilated RTL with
random register contents, checks every cost vector and every register read-back against
``burstgate_model.CostEstimator`` (the reference), and repeats with idle cycles on the
input, backpressure on the output, and register writes in the middle of traffic. The seed
is cocotb's RANDOM_SEED: a failure prints it; `RANDOM_SEED=n make test` replays it.
"""

import os
import pathlib
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from burstgate.layouts import CostedDescriptor, Descriptor, pack, unpack
from burstgate.regmap import C, REGMAP
from burstgate.testing import StreamPattern

COST = REGMAP.block("COST")
DIMS = C["COST_DIMS"]
REGS = {r.name: r for r in COST.registers}


def register_offsets():
    """Every implemented offset of the block, and some unmapped ones."""
    offsets = [o for r in COST.registers for o in r.element_offsets()]
    return offsets + [0x40, 0x100, 0x1800, 0x1FFC]


def random_register_write(rng, offsets):
    offset = rng.choice(offsets)
    value = rng.choice([0, 0xFFFF_FFFF, rng.getrandbits(32), rng.getrandbits(rng.randint(1, 24))])
    if offset in REGS["FACTOR"].element_offsets() and rng.random() < 0.7:
        value = rng.choice([4096, 2048, 8192, rng.getrandbits(16)])
    return offset, value


def initial_config(rng):
    writes = [(REGS["FACTOR"].offset + 4 * d, rng.choice([4096, 1, 0xFFFF, rng.getrandbits(16)]))
              for d in range(DIMS)]
    bounds = sorted(rng.getrandbits(rng.choice([12, 17, 24])) for _ in range(REGS["SIZE_LO"].count))
    writes += [(o, b) for o, b in zip(REGS["SIZE_LO"].element_offsets(), bounds)]
    for name, widths in (("TABLE_BASE", (10, 20, 32)), ("TABLE_SLOPE", (6, 14, 24))):
        writes += [(o, rng.getrandbits(rng.choice(widths))) for o in REGS[name].element_offsets()]
    return writes, bounds


def random_descriptor(rng, bounds):
    if rng.random() < 0.25:
        size = min(max(rng.choice(bounds) + rng.choice((-1, 0, 1)), 0), (1 << C["SIZE_BITS"]) - 1)
    else:
        size = rng.getrandbits(rng.choice((9, 12, 14, 17, 20, 24)))
    return {"tag": rng.getrandbits(16), "tenant": rng.getrandbits(10), "queue": rng.getrandbits(4),
            "product": rng.getrandbits(2), "write": rng.getrandbits(1), "size": size,
            "segment": rng.getrandbits(16), "reoffer": rng.getrandbits(1)}


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.log = dut._log
        cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())

    async def reset(self):
        dut = self.dut
        for sig in (dut.i__valid, dut.o__ready, dut.bus__w_en, dut.bus__r_en):
            sig.value = 0
        dut.i__payload.value = 0
        dut.bus__addr.value = 0
        dut.bus__w_data.value = 0
        dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)

    async def read_reg(self, offset):
        dut = self.dut
        dut.bus__addr.value = offset
        dut.bus__r_en.value = 1
        await RisingEdge(dut.clk)
        dut.bus__r_en.value = 0
        await ReadOnly()
        value = dut.bus__r_data.value.to_unsigned()
        await RisingEdge(dut.clk)
        return value

    async def table_contents(self):
        """The cost table RAMs, which reset leaves as they were (block RAM)."""
        return [(o, await self.read_reg(o)) for name in ("TABLE_BASE", "TABLE_SLOPE")
                for o in REGS[name].element_offsets()]

    async def run(self, descs, bus_ops, source, sink):
        """Drive and observe cycle by cycle. ``bus_ops`` maps a count of accepted
        descriptors to register accesses issued once that many were accepted. Returns the
        ordered event log the model must replay, the outputs, and the read data."""
        dut = self.dut
        events, outputs, reads = [], [], []
        sent, holding, ops, read_issued = 0, False, [], None
        due = sorted(bus_ops)
        self.cycles = 0
        while len(outputs) < len(descs):
            self.cycles += 1
            # Just after a rising edge: drive this cycle's inputs.
            if not holding:  # a held descriptor keeps valid and payload (the stream rules)
                offer = sent < len(descs) and source()
                if offer:
                    dut.i__payload.value = pack(Descriptor, descs[sent])
                dut.i__valid.value = int(offer)
            while due and due[0] <= sent:
                ops.extend(bus_ops[due.pop(0)])
            op = ops.pop(0) if ops else None
            dut.bus__w_en.value = int(op is not None and op[0] == "w")
            dut.bus__r_en.value = int(op is not None and op[0] == "r")
            if op is not None:
                dut.bus__addr.value = op[1]
                dut.bus__w_data.value = op[2] if op[0] == "w" else 0
            dut.o__ready.value = int(sink())
            await ReadOnly()
            # Settled: record what the coming edge does, in the order the RTL applies it.
            if read_issued is not None:  # data of last cycle's read
                reads.append((read_issued, dut.bus__r_data.value.to_unsigned()))
                read_issued = None
            valid = dut.i__valid.value == 1
            accepted = valid and dut.i__ready.value == 1
            if accepted:
                events.append(("io", descs[sent]))
                sent += 1
            holding = valid and not accepted
            if op is not None:
                if op[0] == "w":
                    events.append(op)
                else:
                    events.append(("r", op[1], len(reads)))
                    read_issued = op[1]
            if dut.o__valid.value == 1 and dut.o__ready.value == 1:
                outputs.append(unpack(CostedDescriptor, dut.o__payload.value.to_unsigned()))
            await RisingEdge(dut.clk)
        return events, outputs, reads


def replay(model, events):
    """The model's costs and read data for the ordered event log."""
    expected, reads = [], {}
    for ev in events:
        if ev[0] == "io":
            d = ev[1]
            expected.append(tuple(model.estimate(d["product"], bool(d["write"]), d["size"])))
        elif ev[0] == "w":
            model.write(COST.base + ev[1], ev[2])
        else:
            reads[ev[2]] = model.read(COST.base + ev[1])
    return expected, reads


async def check(dut, *, source, sink, count, reconfigure):
    import burstgate_model
    rng = random.Random(cocotb.RANDOM_SEED)
    tb = TB(dut)
    await tb.reset()
    model = burstgate_model.CostEstimator()
    for offset, value in await tb.table_contents():  # left by an earlier test
        model.write(COST.base + offset, value)
    writes, bounds = initial_config(rng)
    bus_ops = {0: [("w", o, v) for o, v in writes] + [("r", o) for o in register_offsets()]}
    if reconfigure:
        offsets = register_offsets()
        for at in range(1, count, 97):
            k = rng.randint(1, 4)
            bus_ops[at] = [("w", *random_register_write(rng, offsets)) if rng.random() < 0.7
                           else ("r", rng.choice(offsets)) for _ in range(k)]
    descs = [random_descriptor(rng, bounds) for _ in range(count)]
    events, outputs, reads = await tb.run(descs, bus_ops, StreamPattern(source, seed=rng.getrandbits(32)),
                                          StreamPattern(sink, seed=rng.getrandbits(32)))

    expected, expected_reads = replay(model, events)
    assert len(outputs) == len(expected) == count
    mismatches = 0
    for n, (out, want, desc) in enumerate(zip(outputs, expected, descs)):
        if out["desc"] != desc or tuple(out["cost"]) != want:
            mismatches += 1
            if mismatches <= 5:
                tb.log.error("descriptor %d %s: RTL %s, model %s", n, desc, out["cost"], want)
    for k, (offset, value) in enumerate(reads):
        assert value == expected_reads[k], f"read {offset:#x}: RTL {value:#x}, model {expected_reads[k]:#x}"
    assert mismatches == 0, f"{mismatches} of {count} cost vectors differ from the model"
    tb.log.info("%d descriptors and %d register reads match the model in %d cycles",
                count, len(reads), tb.cycles)
    if source == sink == "always":
        # II = 1: register traffic runs beside the stream, never stalls it.
        assert tb.cycles <= count + LATENCY + 1, f"{count} descriptors took {tb.cycles} cycles"


COUNT = int(os.environ.get("COST_DESCRIPTORS", "100000"))
LATENCY = 9  # cycles, as CostEstimator documents


@cocotb.test()
async def full_rate(dut):
    """COST_DESCRIPTORS descriptors, no idle, no backpressure."""
    await check(dut, source="always", sink="always", count=COUNT, reconfigure=False)


@cocotb.test()
@cocotb.parametrize(source=["random", "bursty", "always"], sink=["random", "bursty", "always"])
async def patterns(dut, source, sink):
    """Idle and backpressure patterns, with register writes and reads amid the traffic."""
    await check(dut, source=source, sink=sink, count=max(COUNT // 20, 1000), reconfigure=True)


def test_cost():
    """pytest entry: generate the Verilog, build it with Verilator, run the cocotb tests."""
    from burstgate.cli import generate
    from burstgate.testing.verilator import cocotb_build_dir, run_cocotb

    generated = cocotb_build_dir("cost_estimator") / "generated"
    generate(generated, ["bg_cost_estimator"])
    run_cocotb(top="bg_cost_estimator", verilog=(generated / "bg_cost_estimator.v").read_text(),
               test_module="test_cost", test_dir=pathlib.Path(__file__).resolve().parent,
               build_name="cost_estimator", extra_env={"COST_DESCRIPTORS": str(COUNT)},
               # Cold, 42 s at -O0 against 52 s at -Os, simulation included (make test's count).
               compile_for_build_time=True)
