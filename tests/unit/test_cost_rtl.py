"""amaranth.sim tests of the cost estimator against the C++ reference model.

Fast and directed; the 100k-descriptor Verilator run is tests/cocotb/cost.
"""

import random
import re

import pytest
from amaranth.sim import Simulator

from burstgate.cost import CostEstimator
from burstgate.regmap import C, REGMAP
from burstgate.testing import StreamPattern, stream_get, stream_put

COST = REGMAP.block("COST")
BASE = COST.base
FACTOR = COST.register("FACTOR").offset
SIZE_LO = COST.register("SIZE_LO").offset
TABLE_BASE = COST.register("TABLE_BASE").offset
TABLE_SLOPE = COST.register("TABLE_SLOPE").offset
DIMS = C["COST_DIMS"]


def entry(product, write, size_class):
    return (product * 2 + write) * C["SIZE_CLASSES"] + size_class


async def bus_write(ctx, bus, offset, value):
    ctx.set(bus.addr, offset)
    ctx.set(bus.w_data, value)
    ctx.set(bus.w_en, 1)
    await ctx.tick()
    ctx.set(bus.w_en, 0)


async def bus_read(ctx, bus, offset):
    ctx.set(bus.addr, offset)
    ctx.set(bus.r_en, 1)
    await ctx.tick()
    ctx.set(bus.r_en, 0)
    return ctx.get(bus.r_data)


def run(dut, testbenches, vcd=None):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for tb in testbenches:
        sim.add_testbench(tb)
    sim.run()


def test_registers_reset_mask_and_unmapped(bg_model):
    dut = CostEstimator()
    model = bg_model.CostEstimator()
    probes = [FACTOR + 4 * d for d in range(DIMS)] + [SIZE_LO + 4 * j for j in range(C["SIZE_CLASSES"] - 1)]
    probes += [TABLE_BASE, TABLE_BASE + 4 * 255, TABLE_SLOPE + 4 * 17, 0x40, 0x1ffc, 0x1800]

    async def tb(ctx):
        for offset in probes:
            assert await bus_read(ctx, dut.bus, offset) == model.read(BASE + offset), hex(offset)
        # Every register keeps only its implemented bits; unmapped addresses stay 0.
        for offset in probes:
            await bus_write(ctx, dut.bus, offset, 0xFFFF_FFFF)
            model.write(BASE + offset, 0xFFFF_FFFF)
        for offset in probes:
            assert await bus_read(ctx, dut.bus, offset) == model.read(BASE + offset), hex(offset)
        assert await bus_read(ctx, dut.bus, FACTOR) == 0xFFFF
        assert await bus_read(ctx, dut.bus, TABLE_SLOPE + 4 * 17) == 0xFF_FFFF
        assert await bus_read(ctx, dut.bus, 0x40) == 0

    run(dut, [tb])


def test_directed_costs():
    """Hand-computed: entry (product 1, write, class 1 = [4 KiB, 8 KiB))."""
    dut = CostEstimator()
    e = entry(1, 1, 1)
    bases = [1800, 4096 + 64, 64, 4096]
    slopes = [35, 1024, 0, 1024]
    results = []

    async def tb(ctx):
        for d in range(DIMS):
            await bus_write(ctx, dut.bus, TABLE_BASE + 4 * (e * 4 + d), bases[d])
            await bus_write(ctx, dut.bus, TABLE_SLOPE + 4 * (e * 4 + d), slopes[d])
        await bus_write(ctx, dut.bus, FACTOR, 2 << 12)           # cpu × 2.0
        await bus_write(ctx, dut.bus, FACTOR + 12, (3 << 12) // 4)  # swlimit × 0.75
        for size in (4096, 4096 + 1000, 8191):
            await stream_put(ctx, dut.i, {"product": 1, "write": 1, "size": size, "tag": size & 0xFFFF})
            results.append(await stream_get(ctx, dut.o))

    run(dut, [tb])
    # size 5096: delta 1000 → cpu (1800 + 1000*35>>10 = 1800 + 34) × 2 = 3668
    #                         ingress 4160 + 1000 = 5160; egress 64; swlimit (4096 + 1000) × 0.75 = 3822
    costs = [[int(r.cost[d]) for d in range(DIMS)] for r in results]
    assert costs[0] == [3600, 4160, 64, 3072]
    assert costs[1] == [3668, 5160, 64, 3822]
    assert costs[2] == [(1800 + (4095 * 35 >> 10)) * 2, 4160 + 4095, 64, ((4096 + 4095) * 3072) >> 12]
    assert [int(r.desc.tag) for r in results] == [4096, 5096, 8191]


def random_config(rng):
    """Register writes that exercise every class, saturation, and unusual bounds."""
    writes = []
    for d in range(DIMS):
        writes.append((FACTOR + 4 * d, rng.choice([0, 1, 4096, 0xFFFF, rng.getrandbits(16)])))
    bounds = sorted(rng.getrandbits(rng.choice([12, 18, 24])) for _ in range(C["SIZE_CLASSES"] - 1))
    if rng.random() < 0.2:
        rng.shuffle(bounds)   # non-ascending bounds are still well-defined
    writes += [(SIZE_LO + 4 * j, b) for j, b in enumerate(bounds)]
    for i in range(256):
        writes.append((TABLE_BASE + 4 * i, rng.getrandbits(rng.choice([8, 16, 32]))))
        writes.append((TABLE_SLOPE + 4 * i, rng.getrandbits(rng.choice([4, 12, 24]))))
    return writes


def random_descriptor(rng, bounds=()):
    if bounds and rng.random() < 0.3:
        size = min(max(rng.choice(bounds) + rng.choice([-1, 0, 1]), 0), (1 << C["SIZE_BITS"]) - 1)
    else:
        size = rng.getrandbits(rng.choice([9, 13, 17, 24]))
    return {"tag": rng.getrandbits(16), "tenant": rng.getrandbits(10), "queue": rng.getrandbits(4),
            "product": rng.getrandbits(2), "write": rng.getrandbits(1), "size": size,
            "segment": rng.getrandbits(16)}


@pytest.mark.parametrize("source,sink", [("always", "always"), ("random", "random"), ("bursty", "always"),
                                         ("always", "bursty")])
def test_random_against_model(bg_model, source, sink):
    rng = random.Random(f"{source}-{sink}")
    dut = CostEstimator()
    model = bg_model.CostEstimator()
    writes = random_config(rng)
    for offset, value in writes:
        model.write(BASE + offset, value)
    bounds = [model.read(BASE + SIZE_LO + 4 * j) for j in range(C["SIZE_CLASSES"] - 1)]
    descs = [random_descriptor(rng, bounds) for _ in range(600)]
    src, snk = StreamPattern(source, seed=1), StreamPattern(sink, seed=2)
    got = []

    async def producer(ctx):
        for offset, value in writes:
            await bus_write(ctx, dut.bus, offset, value)
        for desc in descs:
            await stream_put(ctx, dut.i, desc, pattern=src)

    async def consumer(ctx):
        for _ in descs:
            got.append(await stream_get(ctx, dut.o, pattern=snk))

    run(dut, [producer, consumer])
    for desc, out in zip(descs, got):
        expected = model.estimate(desc["product"], bool(desc["write"]), desc["size"])
        assert int(out.desc.tag) == desc["tag"] and int(out.desc.size) == desc["size"]
        assert tuple(int(out.cost[d]) for d in range(DIMS)) == tuple(expected), desc


def test_held_output_fills_the_buffer_then_drains_at_one_per_clock():
    """With ``o`` held, exactly LATENCY + 1 descriptors are accepted (the credits: the pipeline
    never stalls, so what it holds must fit the output buffer); released, they leave in order
    at one per clock, and acceptance resumes at one per clock. Catches credits above the
    buffer's depth (descriptors overwritten or lost), below LATENCY + 1 (II > 1), and a buffer
    that reorders or repeats."""
    latency = 9
    dut = CostEstimator()
    sizes = [512 * (n + 1) for n in range(40)]
    accepted_while_held = []
    got = []

    async def tb(ctx):
        ctx.set(dut.o.ready, 0)
        ctx.set(dut.i.valid, 1)
        n = 0
        for _ in range(30):  # o held: the pipeline fills, then the buffer, then ready drops
            ctx.set(dut.i.payload, {"size": sizes[n], "tag": n})
            _, _, ready = await ctx.tick().sample(dut.i.ready)
            n += ready
        accepted_while_held.append(n)
        assert ctx.get(dut.o.valid) and not ctx.get(dut.i.ready)
        ctx.set(dut.o.ready, 1)
        cycles = 0
        while len(got) < len(sizes):
            cycles += 1
            assert cycles < 4 * len(sizes), "descriptors lost"
            if n < len(sizes):
                ctx.set(dut.i.payload, {"size": sizes[n], "tag": n})
            ctx.set(dut.i.valid, n < len(sizes))
            _, _, ready, valid, out = await ctx.tick().sample(dut.i.ready, dut.o.valid, dut.o.payload)
            n += ready and n < len(sizes)
            if valid:
                got.append(int(out.desc.tag))
        # one per clock from the release: the held ones, then the rest behind them
        assert cycles <= len(sizes) + 1, cycles

    run(dut, [tb])
    assert accepted_while_held == [latency + 1]
    assert got == list(range(len(sizes)))


def test_ecp5_multipliers_take_their_operands_in_their_input_registers():
    """Elaborated for an ECP5, every multiply is a MULT18X18D whose A and B input registers
    are clocked (issue 22: with the operands registered in fabric, the routing to the DSP and
    the multiply made the cost estimator's ECP5 critical path), and no ``$mul`` is left for
    yosys to map without them; elsewhere the same products are plain multiplies. Catches the
    ECP5 branch dropped (no DSP instances), an input register left off, or a product still
    formed in fabric."""
    from amaranth.back import rtlil

    class Ecp5:
        device = "LFE5U-85F"

    products = DIMS * (4 + 2)  # delta * slope in four pieces, raw * factor in two, per dimension
    ecp5 = rtlil.convert(CostEstimator(), platform=Ecp5(), emit_src=False)
    dsps = ecp5.split("cell \\MULT18X18D ")[1:]
    assert len(dsps) == products
    for cell in dsps:
        cell = cell[:cell.index("\n  end")]
        for port in ("A", "B"):
            assert f'parameter \\REG_INPUT{port}_CLK "CLK0"' in cell, cell[:400]
        assert 'parameter \\REG_OUTPUT_CLK "NONE"' in cell and "connect \\CLK0 " in cell
    assert variable_products(ecp5) == 0
    generic = rtlil.convert(CostEstimator(), emit_src=False)
    assert "MULT18X18D" not in generic and variable_products(generic) == products


def variable_products(text):
    """``$mul`` cells of an RTLIL text with neither operand a constant (the table address's
    ``product * 2`` is one, and no multiplier)."""
    cells = [c[:c.index("\n  end")] for c in text.split("cell $mul ")[1:]]
    return sum(not re.search(r"connect \\[AB] \d+'", c) for c in cells)
