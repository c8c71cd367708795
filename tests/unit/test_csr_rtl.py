"""amaranth.sim tests of the CSR block (``burstgate.csr.CsrBlock``) of every register-map block.

The blocks' own tests reach their registers through their datapaths; these check the decode
itself on every block of the map: each flop register element is written and read at its own
address only, ``ro`` registers ignore writes, the strobes of external arrays carry the right
index, unmapped words read 0, and an idle bus changes nothing (the decode sits behind the
strobes, docs/results.md "Verilated kernel throughput").
"""

import pytest
from amaranth.sim import Simulator

from burstgate.csr import CsrBlock
from burstgate.regmap import REGMAP


def _elements(block):
    """(register, element index, word address) of every flop register element."""
    return [(reg, i, offset >> 2) for reg in block.registers if reg.storage == "flop"
            for i, offset in enumerate(reg.element_offsets())]


def _port(dut, reg, i):
    port = getattr(dut, reg.name.lower())
    return port if reg.count == 1 else port[i]


def _pattern(word):
    """A value distinct per word, with high and low bits set."""
    return (0x9E37_79B9 * (word + 1)) & 0xFFFF_FFFF


def _run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


async def _write(ctx, bus, word, value):
    ctx.set(bus.addr, word << 2)
    ctx.set(bus.w_data, value)
    ctx.set(bus.w_en, 1)
    await ctx.tick()
    ctx.set(bus.w_en, 0)


async def _read(ctx, bus, word):
    ctx.set(bus.addr, word << 2)
    ctx.set(bus.r_en, 1)
    await ctx.tick()
    ctx.set(bus.r_en, 0)
    return ctx.get(bus.r_data)


@pytest.mark.parametrize("block", [b for b in REGMAP.blocks if _elements(b)], ids=lambda b: b.name)
def test_flop_registers(block):
    """Catches: a write landing in the wrong element or in two, a write lost or a read
    returning another register (decode), an ``ro`` register taking writes, a write taking
    effect with ``w_en`` low, and ``r_data`` changing between reads while the bus is idle."""
    elements = _elements(block)
    dut = CsrBlock(block=block)

    async def bench(ctx):
        expect = {}
        for reg, i, word in elements:
            if reg.access == "ro":
                ctx.set(_port(dut, reg, i), _pattern(word) & reg.mask)
                expect[word] = _pattern(word) & reg.mask
            else:
                assert ctx.get(_port(dut, reg, i)) == reg.resets[i], f"{reg.name}[{i}] reset"
                expect[word] = reg.resets[i]
        for reg, i, word in elements:
            assert await _read(ctx, dut.bus, word) == expect[word], f"{reg.name}[{i}] before writes"
        for reg, i, word in elements:
            await _write(ctx, dut.bus, word, _pattern(word))
            if reg.access == "rw":
                expect[word] = _pattern(word) & reg.mask
        for reg, i, word in elements:
            assert ctx.get(_port(dut, reg, i)) == expect[word], f"{reg.name}[{i}] after writes"
            assert await _read(ctx, dut.bus, word) == expect[word], f"{reg.name}[{i}] read back"
        # Idle bus, pointed at a register with data ready: nothing changes, r_data holds.
        last = ctx.get(dut.bus.r_data)
        reg, i, word = next((e for e in elements if e[0].access == "rw"), elements[0])
        ctx.set(dut.bus.addr, word << 2)
        ctx.set(dut.bus.w_data, ~_pattern(word) & 0xFFFF_FFFF)
        for _ in range(3):
            await ctx.tick()
            assert ctx.get(dut.bus.r_data) == last
        assert ctx.get(_port(dut, reg, i)) == expect[word]

    _run(dut, bench)


def _unmapped_words(block, limit=8):
    used = {w for reg in block.registers for o in reg.element_offsets() for w in range(o >> 2, (o + 4) >> 2)}
    used |= {w for reg in block.registers if reg.storage == "external"
             for w in range(reg.offset >> 2, (reg.offset + reg.size) >> 2)}
    free = [w for w in range(block.size >> 2) if w not in used]
    return free[:limit // 2] + free[-(limit // 2):]


@pytest.mark.parametrize("block", REGMAP.blocks, ids=lambda b: b.name)
def test_external_strobes_and_unmapped(block):
    """Catches: an external array's strobe raised for another address or with the wrong
    index, a write strobe on an ``ro`` array, its read data not routed to ``r_data`` one cycle
    later, a strobe raised while the bus is idle, and an unmapped word reading non-zero."""
    dut = CsrBlock(block=block)
    externals = [r for r in block.registers if r.storage == "external"]

    def strobes(ctx):
        return {r.name: (ctx.get(getattr(dut, f"ext_{r.name.lower()}").r_en),
                         ctx.get(getattr(dut, f"ext_{r.name.lower()}").w_en)) for r in externals}

    async def bench(ctx):
        for reg in externals:
            ext = getattr(dut, f"ext_{reg.name.lower()}")
            for i in sorted({0, reg.count // 2, reg.count - 1}):
                word = (reg.offset >> 2) + i
                ctx.set(dut.bus.addr, word << 2)
                ctx.set(dut.bus.w_data, _pattern(word))
                assert all(s == (0, 0) for s in strobes(ctx).values()), f"{reg.name} strobe while idle"
                ctx.set(dut.bus.w_en, 1)
                want = {r.name: (0, 0) for r in externals}
                want[reg.name] = (0, int(reg.access == "rw"))
                assert strobes(ctx) == want, f"{reg.name}[{i}] write strobes"
                assert ctx.get(ext.index) == i
                assert ctx.get(ext.w_data) == _pattern(word) & reg.mask
                ctx.set(dut.bus.w_en, 0)
                ctx.set(dut.bus.r_en, 1)
                want[reg.name] = (1, 0)
                assert strobes(ctx) == want, f"{reg.name}[{i}] read strobes"
                assert ctx.get(ext.index) == i
                await ctx.tick()
                ctx.set(dut.bus.r_en, 0)
                ctx.set(ext.r_data, _pattern(word + 1) & reg.mask)
                assert ctx.get(dut.bus.r_data) == _pattern(word + 1) & reg.mask, f"{reg.name}[{i}] read data"
        for word in _unmapped_words(block):
            assert await _read(ctx, dut.bus, word) == 0, f"{block.name} word {word:#x}"

    _run(dut, bench)


def test_lookahead():
    """``<register>_next`` (the load balancer's DEPTH in the core, issue 22) is the value the
    register holds in the next cycle: this cycle's write to it, else its value; a write to
    another word does not reach it. Catches the write's data not selected (``_next`` one
    cycle late, the balancer then deciding on the old depth), the other word's write taken,
    and a name that is not a single rw flop register accepted."""
    block = REGMAP.block("LB")
    depth = block.register("DEPTH")
    other = next(r for r in block.registers if r.storage == "flop" and r.access == "rw" and r is not depth)
    dut = CsrBlock(block=block, lookahead=("DEPTH",))
    at, elsewhere = depth.offset >> 2, other.offset >> 2

    async def bench(ctx):
        assert ctx.get(dut.depth_next) == ctx.get(dut.depth) == depth.resets[0]
        for value in (1, 4095, 7):
            ctx.set(dut.bus.addr, at << 2)
            ctx.set(dut.bus.w_data, value)
            ctx.set(dut.bus.w_en, 1)
            assert ctx.get(dut.depth_next) == value
            await ctx.tick()
            ctx.set(dut.bus.w_en, 0)
            assert ctx.get(dut.depth) == ctx.get(dut.depth_next) == value
        ctx.set(dut.bus.addr, elsewhere << 2)
        ctx.set(dut.bus.w_data, 3)
        ctx.set(dut.bus.w_en, 1)
        assert ctx.get(dut.depth_next) == 7
        await ctx.tick()
        ctx.set(dut.bus.w_en, 0)
        assert ctx.get(dut.depth) == 7

    _run(dut, bench)
    with pytest.raises(ValueError, match="LB.OUT_IOS is not a single read-write flop register"):
        CsrBlock(block=block, lookahead=("OUT_IOS",))
