"""cocotb testbench: the kernel SHELL (AXI4-Lite bridge, KERNEL block, ring engines) on
Verilator, with cocotbext-axi's AxiLiteMaster as the host and AxiRam as device memory.

The datapath inside is ``burstgate.kernel.passthrough.Passthrough``, a test harness that
echoes each descriptor into a distinguishable decision and hashes completions; it is not the
datapath and makes no admission decision. What is checked is the shell: register access
through AXI4-Lite (INFO.MAGIC, masks, read-only and unmapped addresses), doorbells, ring
wraparound, a full decision ring stalling the descriptor ring, AP_START, the interrupt, and
that no record is lost, duplicated, reordered or corrupted while the memory side inserts idle
cycles and backpressure on every AXI channel. The seed is cocotb's RANDOM_SEED.
"""

import itertools
import os
import pathlib
import random
import warnings

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam

from burstgate.kernel.passthrough import CPL_COUNT, CPL_HASH, completion_hash
from burstgate.regmap import C, REGMAP
from burstgate.regmap.records import COMPLETION, DECISION, DESC

# cocotbext-axi 0.1.28 still calls cocotb 1.x APIs that cocotb 2 deprecates; the tests run
# with warnings as errors, so only those, raised from inside cocotbext.axi, are let through.
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"cocotbext\.axi")

KERNEL = REGMAP.block("KERNEL")
INFO = REGMAP.block("INFO")
MEM_SIZE = 1 << 20


def reg(block, name):
    return block.base + block.register(name).offset


def K(name):
    return reg(KERNEL, name)


def pauses(kind, rng):
    """A pause generator for a cocotbext-axi channel: True means 'hold off this cycle'."""
    if kind == "always":
        return None
    if kind == "random":
        return (rng.random() < 0.5 for _ in itertools.count())

    def bursty():
        while True:
            yield from [False] * rng.randint(1, 8)
            yield from [True] * rng.randint(1, 8)
    return bursty()


class TB:
    def __init__(self, dut, *, memory="always", host="always", seed=None):
        self.dut = dut
        self.log = dut._log
        self.rng = random.Random(cocotb.RANDOM_SEED if seed is None else seed)
        cocotb.start_soon(Clock(dut.ap_clk, 4, unit="ns").start())
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control"), dut.ap_clk,
                                  dut.ap_rst_n, reset_active_level=False)
        self.ram = AxiRam(AxiBus.from_prefix(dut, "m_axi_gmem"), dut.ap_clk, dut.ap_rst_n,
                          reset_active_level=False, size=MEM_SIZE)
        for ch in (self.ram.write_if.aw_channel, self.ram.write_if.w_channel,
                   self.ram.write_if.b_channel, self.ram.read_if.ar_channel,
                   self.ram.read_if.r_channel):
            gen = pauses(memory, self.rng)
            if gen is not None:
                ch.set_pause_generator(gen)
        for ch in (self.axil.write_if.aw_channel, self.axil.write_if.w_channel,
                   self.axil.write_if.b_channel, self.axil.read_if.ar_channel,
                   self.axil.read_if.r_channel):
            gen = pauses(host, self.rng)
            if gen is not None:
                ch.set_pause_generator(gen)

    async def reset(self):
        self.dut.ap_rst_n.value = 0
        await ClockCycles(self.dut.ap_clk, 4)
        self.dut.ap_rst_n.value = 1
        await ClockCycles(self.dut.ap_clk, 2)

    async def write(self, addr, value):
        await self.axil.write_dword(addr, value)

    async def read(self, addr):
        return await self.axil.read_dword(addr)

    async def setup_rings(self, *, desc_log2, decision_log2, completion_log2):
        self.rings = {}
        base = 0x1000
        for name, rec, log2 in (("DESC", DESC, desc_log2), ("DECISION", DECISION, decision_log2),
                                ("COMPLETION", COMPLETION, completion_log2)):
            self.rings[name] = (base, log2, rec)
            await self.write(K(f"{name}_BASE_LO"), base & 0xFFFF_FFFF)
            await self.write(K(f"{name}_BASE_HI"), base >> 32)
            await self.write(K(f"{name}_LOG2"), log2)
            base += rec.size << log2
            base = (base + 0xFFF) & ~0xFFF
        # Poison the decision ring: a slot the kernel never wrote cannot pass for a decision.
        b, log2, rec = self.rings["DECISION"]
        self.ram.write(b, b"\xA5" * (rec.size << log2))

    def slot(self, ring, index):
        base, log2, rec = self.rings[ring]
        return base + (index % (1 << log2)) * rec.size


def random_desc(rng):
    return {"tag": rng.getrandbits(16), "tenant": rng.randrange(C["TENANTS_MAX"]),
            "queue": rng.randrange(C["QUEUES_MAX"]), "product": rng.randrange(C["PRODUCTS"]),
            "write": rng.getrandbits(1), "size": rng.getrandbits(C["SIZE_BITS"]),
            "segment": rng.getrandbits(C["SEGMENT_BITS"]), "reoffer": rng.getrandbits(1)}


def random_completion(rng):
    return {"tag": rng.getrandbits(16), "tenant": rng.randrange(C["TENANTS_MAX"]),
            "queue": rng.randrange(C["QUEUES_MAX"]), "egress": rng.randrange(C["QUEUES_MAX"]),
            "charge_ns": rng.getrandbits(32), "sa_delay_ns": rng.getrandbits(32)}


def echoed(d):
    """The decision the passthrough harness makes of descriptor ``d``."""
    return {"tag": d["tag"], "tenant": d["tenant"], "queue": d["queue"], "source": C["SRC_DEFER"],
            "egress": d["queue"], "hot": d["write"], "prefill": 1 - d["write"],
            "lender": d["tenant"], "cost": [d["size"], d["segment"], d["product"], d["write"] | d["reoffer"] << 1]}


async def produce(tb, ring, records, rec, *, batch):
    """Host side of a host-to-device ring: fill free slots, ring the doorbell."""
    size = 1 << tb.rings[ring][1]
    n = 0
    while n < len(records):
        head = await tb.read(K(f"{ring}_HEAD"))
        assert 0 <= n - head <= size, f"{ring}: HEAD {head} not within a ring of TAIL {n}"
        free = size - (n - head)
        k = min(free, batch(), len(records) - n)
        if k == 0:
            await ClockCycles(tb.dut.ap_clk, 8)
            continue
        for i in range(n, n + k):
            tb.ram.write(tb.slot(ring, i), rec.pack(records[i]))
        n += k
        await tb.write(K(f"{ring}_TAIL"), n)


async def consume(tb, count, *, lazy):
    """Host side of the decision ring: take what is published, give slots back."""
    size = 1 << tb.rings["DECISION"][1]
    got, head, waited = [], 0, 0
    while head < count:
        tail = await tb.read(K("DECISION_TAIL"))
        assert 0 <= tail - head <= size, f"DECISION_TAIL {tail} overran HEAD {head} (ring {size})"
        if tail == head or (lazy and tail - head < size and tb.rng.random() < 0.7):
            # A lost record shows as a decision that never comes: fail, do not hang.
            waited = waited + 1 if tail == head else 0
            assert waited < STALL_POLLS, \
                f"no decision after {head} of {count} for {STALL_POLLS} polls: a record was lost"
            await ClockCycles(tb.dut.ap_clk, tb.rng.randint(1, 30))
            continue
        waited = 0
        take = tb.rng.randint(1, tail - head)
        for i in range(head, head + take):
            got.append(DECISION.unpack(tb.ram.read(tb.slot("DECISION", i), DECISION.size)))
        head += take
        await tb.write(K("DECISION_HEAD"), head)
    return got


@cocotb.test()
@cocotb.parametrize(host=["always", "random"])
async def registers(dut, host):
    """Register access through AXI4-Lite: the datapath's INFO, the KERNEL block's masks,
    read-only and unmapped addresses (bridge decode, read latency, strobes/masks)."""
    tb = TB(dut, host=host)
    await tb.reset()
    assert await tb.read(reg(INFO, "MAGIC")) == C["MAP_MAGIC"]
    assert await tb.read(reg(INFO, "VERSION")) == REGMAP.version
    for r in KERNEL.registers:
        if r.storage == "flop":
            assert await tb.read(KERNEL.base + r.offset) == r.resets[0], r.name
    assert await tb.read(K("CTRL")) == 0b100, "after reset: not started, idle"
    for r in KERNEL.registers:
        if r.storage == "flop" and r.access == "rw":
            value = tb.rng.getrandbits(32) | 1
            await tb.write(KERNEL.base + r.offset, value)
            assert await tb.read(KERNEL.base + r.offset) == value & r.mask, r.name
    await tb.write(K("DESC_HEAD"), 0x1234)
    assert await tb.read(K("DESC_HEAD")) == 0, "a read-only register took a write"
    await tb.write(reg(INFO, "MAGIC"), 0)
    assert await tb.read(reg(INFO, "MAGIC")) == C["MAP_MAGIC"]
    for unmapped in (0x7C, 0xFC, 0x0F08, 0x0E00):
        await tb.write(unmapped, 0xFFFF_FFFF)
        assert await tb.read(unmapped) == 0, hex(unmapped)
    # Back-to-back reads of different blocks: the read mux must follow the address.
    vals = [await tb.read(a) for a in (reg(INFO, "MAGIC"), K("GIER"), reg(INFO, "MAGIC"))]
    assert vals == [C["MAP_MAGIC"], 1, C["MAP_MAGIC"]]


async def run_rings(dut, *, memory, host, count, desc_log2, decision_log2, lazy):
    tb = TB(dut, memory=memory, host=host)
    await tb.reset()
    await tb.setup_rings(desc_log2=desc_log2, decision_log2=decision_log2, completion_log2=4)
    await tb.write(K("CTRL"), 1)
    descs = [random_desc(tb.rng) for _ in range(count)]
    cpls = [random_completion(tb.rng) for _ in range(count // 2)]
    batch = lambda: tb.rng.choice((1, 3, 16, 40))  # noqa: E731
    prod = cocotb.start_soon(produce(tb, "DESC", descs, DESC, batch=batch))
    cprod = cocotb.start_soon(produce(tb, "COMPLETION", cpls, COMPLETION, batch=batch))
    got = await consume(tb, count, lazy=lazy)
    await prod
    await cprod
    for _ in range(200):
        if await tb.read(CPL_COUNT) == len(cpls):
            break
    want = [echoed(d) for d in descs]
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert len(got) == count and not bad, \
        f"decision {bad[0]}: ring has {got[bad[0]]}, descriptor {descs[bad[0]]}" if bad else len(got)
    assert await tb.read(K("DESC_HEAD")) == count
    assert await tb.read(K("DECISION_TAIL")) == count
    assert await tb.read(CPL_COUNT) == len(cpls)
    h = 0
    for c in cpls:
        h = completion_hash(h, c)
    assert await tb.read(CPL_HASH) == h, "a completion was lost, duplicated, reordered or corrupted"
    assert await tb.read(K("COMPLETION_HEAD")) == len(cpls)
    assert await tb.read(K("STATUS")) == 0
    assert await tb.read(K("CTRL")) == 0b101, "started and idle once everything is through"


@cocotb.test()
@cocotb.parametrize(memory=["always", "random", "bursty"], host=["always", "random"])
async def rings(dut, memory, host):
    """Descriptors and completions through small rings (many wraparounds) with idle cycles and
    backpressure on every AXI channel; every decision checked in order."""
    await run_rings(dut, memory=memory, host=host, count=COUNT, desc_log2=4, decision_log2=5,
                    lazy=False)


@cocotb.test()
@cocotb.parametrize(memory=["always", "bursty"])
async def decision_ring_full(dut, memory):
    """A host slow to consume fills the decision ring: the kernel must stall (never write past
    HEAD) and the descriptors wait in their ring, none dropped."""
    await run_rings(dut, memory=memory, host="always", count=COUNT, desc_log2=6, decision_log2=4,
                    lazy=True)


@cocotb.test()
async def stall_exact(dut):
    """With the host consuming nothing, exactly 2**DECISION_LOG2 decisions are published and
    the rest wait; AP_START = 0 fetches nothing."""
    tb = TB(dut)
    await tb.reset()
    await tb.setup_rings(desc_log2=8, decision_log2=4, completion_log2=4)
    descs = [random_desc(tb.rng) for _ in range(200)]
    for i, d in enumerate(descs):
        tb.ram.write(tb.slot("DESC", i), DESC.pack(d))
    await tb.write(K("DESC_TAIL"), len(descs))
    await ClockCycles(dut.ap_clk, 200)
    assert await tb.read(K("DESC_HEAD")) == 0, "fetched while AP_START = 0"
    await tb.write(K("CTRL"), 1)
    await ClockCycles(dut.ap_clk, 2000)
    assert await tb.read(K("DECISION_TAIL")) == 16
    head = await tb.read(K("DESC_HEAD"))
    assert 16 < head < len(descs), f"DESC_HEAD {head}: buffers should hold some, the ring the rest"
    assert await tb.read(K("CTRL")) == 0b001, "not idle while records wait"
    got = await consume(tb, len(descs), lazy=False)
    assert got == [echoed(d) for d in descs]


@cocotb.test()
async def interrupt(dut):
    """ISR bit 0 rises when decisions are published; GIER/IER gate the pin; a write of 1
    toggles it (Vitis TOW)."""
    tb = TB(dut)
    await tb.reset()
    await tb.setup_rings(desc_log2=4, decision_log2=4, completion_log2=4)
    await tb.write(K("CTRL"), 1)
    tb.ram.write(tb.slot("DESC", 0), DESC.pack(random_desc(tb.rng)))
    await tb.write(K("DESC_TAIL"), 1)
    await ClockCycles(dut.ap_clk, 100)
    assert await tb.read(K("ISR")) == 1
    assert dut.interrupt.value == 0, "interrupt without GIER/IER"
    await tb.write(K("IER"), 1)
    await tb.write(K("GIER"), 1)
    await ClockCycles(dut.ap_clk, 2)
    assert dut.interrupt.value == 1
    await tb.write(K("ISR"), 1)
    await ClockCycles(dut.ap_clk, 2)
    assert await tb.read(K("ISR")) == 0
    assert dut.interrupt.value == 0


COUNT = int(os.environ.get("KERNEL_RECORDS", "300"))
STALL_POLLS = 2000  # consecutive empty polls of DECISION_TAIL (tens of thousands of cycles)


def test_kernel_shell():
    """pytest entry: generate the shell around the passthrough harness, build, run."""
    _run(COUNT)


@pytest.mark.long
def test_kernel_shell_long():
    """`make test-long`: 20000 records per ring test."""
    _run(20000)


def _run(count):
    from burstgate.kernel.generate import generate
    from burstgate.testing.verilator import cocotb_build_dir, run_cocotb

    verilog = generate(cocotb_build_dir("kernel") / "generated", datapath="passthrough")
    run_cocotb(top="bg_kernel", verilog=pathlib.Path(verilog).read_text(), test_module="test_kernel_shell",
               test_dir=pathlib.Path(__file__).resolve().parent, build_name="kernel",
               extra_env={"KERNEL_RECORDS": str(count)})
