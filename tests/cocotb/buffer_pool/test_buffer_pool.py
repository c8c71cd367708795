"""cocotb testbench: the generated buffer pool (16 queues) on Verilator against the C++ model.

Drives BPOOL_IOS random acquires (default 20000; the ``long`` run 1000000), releases of
buffers in flight and window ticks, every one of them possibly in the same cycle; logs each
applied event in the order the RTL applies it (acquire or stalled cycle, release, tick),
replays the log through ``burstgate_model.BufferPool`` and checks every outcome (own,
borrowed, stall) and the final per-queue state, for quiet_windows 0, 1 and 3, with idle cycles
on the input and backpressure on the grants. The seed is cocotb's RANDOM_SEED:
`RANDOM_SEED=n make test` replays it.
"""

import os
import pathlib
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from burstgate.buffer_pool import BufferGrant, BufferPool, BufferRelease, BufferRequest
from burstgate.layouts import pack, unpack
from burstgate.regmap import C
from burstgate.testing import StreamPattern
from burstgate.testing.verilator import run_cocotb

ACQUIRE, RELEASE, TICK = 0, 1, 2
OWN, BORROWED, STALL = 0, 1, 2
NQ = C["QUEUES_MAX"]
COUNT_BITS = C["BP_COUNT_BITS"]


def array(value, width):
    return [(value >> (width * q)) & ((1 << width) - 1) for q in range(NQ)]


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.log = dut._log
        cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())

    async def reset(self, cfg):
        dut = self.dut
        for sig in (dut.i__valid, dut.i__payload, dut.o__ready, dut.release__valid, dut.release__payload,
                    dut.tick, dut.rebuild, dut.query_queue):
            sig.value = 0
        dut.dedicated.value = sum(d << (COUNT_BITS * q) for q, d in enumerate(cfg["dedicated"]))
        dut.shared.value = cfg["shared"]
        dut.borrow_cap.value = cfg["borrow_cap"]
        dut.quiet_windows.value = cfg["quiet_windows"]
        dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)

    async def run(self, requests, *, source, sink, release_p, tick_p, rng):
        """Drive cycle by cycle; return the event log and, per ACQUIRE in it, the outcome."""
        dut = self.dut
        kinds, args, results, grants = [], [], [], []
        in_flight = [0] * NQ   # the RTL's count at the start of this cycle
        sent, holding = 0, False
        self.cycles = 0
        while len(grants) < len(requests):
            self.cycles += 1
            assert self.cycles < 40 * len(requests) + 10000, "requests are not being served"
            # Just after a rising edge: drive this cycle's inputs.
            if not holding:  # a held request keeps valid and payload (the stream rules)
                offer = sent < len(requests) and source()
                if offer:
                    dut.i__payload.value = pack(BufferRequest, {"queue": requests[sent], "tag": sent & 0xFFFF})
                dut.i__valid.value = int(offer)
            busy = [q for q in range(NQ) if in_flight[q]]
            rel = rng.choice(busy) if busy and rng.random() < release_p else None
            dut.release__valid.value = int(rel is not None)
            if rel is not None:
                dut.release__payload.value = pack(BufferRelease, {"queue": rel})
            tick = rng.random() < tick_p
            dut.tick.value = int(tick)
            dut.o__ready.value = int(sink())
            await ReadOnly()
            # Settled: record what the coming edge does, in the order the RTL applies it.
            valid = dut.i__valid.value == 1
            accepted = valid and dut.i__ready.value == 1
            if accepted:
                kinds.append(ACQUIRE)
                args.append(requests[sent])
                results.append(None)
                in_flight[requests[sent]] += 1
                sent += 1
            elif valid and dut.stall.value == 1:
                kinds.append(ACQUIRE)
                args.append(requests[sent])
                results.append(STALL)
            holding = valid and not accepted
            if rel is not None:
                kinds.append(RELEASE)
                args.append(rel)
                in_flight[rel] -= 1
            if tick:
                kinds.append(TICK)
                args.append(0)
            if dut.o__valid.value == 1 and dut.o__ready.value == 1:
                grants.append(unpack(BufferGrant, dut.o__payload.value.to_unsigned()))
            await RisingEdge(dut.clk)
        dut.i__valid.value = 0
        dut.release__valid.value = 0
        dut.tick.value = 0
        it = iter(grants)
        self.grants = grants
        results = [r if r is not None else (BORROWED if next(it)["borrowed"] else OWN) for r in results]
        return kinds, args, results


def random_config(rng, quiet):
    return {"dedicated": [rng.choice([0, 1, 2, 4, 8]) for _ in range(NQ)], "shared": rng.choice([4, 16, 40]),
            "borrow_cap": rng.choice([2, 8, (1 << COUNT_BITS) - 1]), "quiet_windows": quiet}


def random_requests(rng, count):
    """Bursts of one queue over a background of all queues."""
    out = []
    while len(out) < count:
        if rng.random() < 0.5:
            out += [rng.randrange(NQ)] * rng.randint(4, 40)
        else:
            out += [rng.randrange(NQ) for _ in range(rng.randint(4, 40))]
    return out[:count]


async def check(dut, *, quiet, source, sink, count):
    import burstgate_model
    rng = random.Random(cocotb.RANDOM_SEED + count + 11 * quiet + 7 * len(source) + len(sink))
    cfg = random_config(rng, quiet)
    tb = TB(dut)
    await tb.reset(cfg)
    requests = random_requests(rng, count)
    kinds, args, got = await tb.run(requests, source=StreamPattern(source, seed=rng.getrandbits(32)),
                                    sink=StreamPattern(sink, seed=rng.getrandbits(32)), release_p=0.8,
                                    tick_p=0.01, rng=rng)
    model = burstgate_model.BufferPool(**cfg)
    want = model.run(kinds, args)
    assert len(got) == len(want)
    bad = 0
    for n, (g, w) in enumerate(zip(got, want)):
        if g != w:
            bad += 1
            if bad <= 5:
                tb.log.error("acquire %d: RTL %d, model %d", n, g, w)
    assert bad == 0, f"{bad} of {len(got)} acquire outcomes differ from the model"
    assert [g["queue"] for g in tb.grants] == requests
    await ReadOnly()  # the last edge's register updates
    for name in ("extra", "inflight", "peak"):
        assert array(getattr(dut, name).value.to_unsigned(), COUNT_BITS) == [getattr(model, name)(q) for q in range(NQ)], name
    assert array(dut.quiet.value.to_unsigned(), C["BP_QUIET_BITS"]) == [model.quiet(q) for q in range(NQ)]
    assert dut.shared_free.value.to_unsigned() == model.shared_free
    assert dut.underflow.value == 0 and model.conserved()
    await RisingEdge(dut.clk)  # leave the read-only phase before the next test drives
    s = model.stats()
    tb.log.info("quiet %d: %d acquires (%d borrowed, %d returned, %d stall episodes, %d stalled cycles) match "
                "the model in %d cycles", quiet, count, s["borrowed"], s["returned"], s["stalls"], got.count(STALL),
                tb.cycles)
    return s


COUNT = int(os.environ.get("BPOOL_IOS", "20000"))


@cocotb.test()
@cocotb.parametrize(quiet=[0, 1, 3])
async def full_rate(dut, quiet):
    """BPOOL_IOS / 3 acquires per quiet-window setting, no idle, no backpressure."""
    s = await check(dut, quiet=quiet, source="always", sink="always", count=max(COUNT // 3, 1000))
    assert s["borrowed"] and s["returned"] and s["stalls"], s


@cocotb.test()
@cocotb.parametrize(source=["random", "bursty", "always"], sink=["random", "bursty", "always"])
async def patterns(dut, source, sink):
    """Idle and backpressure patterns (quiet_windows 1)."""
    await check(dut, quiet=1, source=source, sink=sink, count=max(COUNT // 20, 1000))


def _run(count):
    run_cocotb(top="bg_buffer_pool", elaboratable=BufferPool(), test_module="test_buffer_pool",
               test_dir=pathlib.Path(__file__).resolve().parent, build_name="bufpool",
               extra_env={"BPOOL_IOS": str(count)})


def test_buffer_pool():
    """pytest entry for `make test`: BPOOL_IOS (default 20000) acquires at full rate."""
    _run(COUNT)


@pytest.mark.long
def test_buffer_pool_long():
    """`make test-long`: 1,000,000 acquires (BPOOL_IOS_LONG)."""
    _run(int(os.environ.get("BPOOL_IOS_LONG", "1000000")))
