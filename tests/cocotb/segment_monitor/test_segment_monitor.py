"""cocotb testbench: the generated segment monitor on Verilator against the C++ model.

Drives SEGMON_IOS random I/Os (default 20000; the ``long`` run 1000000) with interval ticks
and R/N changes in the middle of traffic, logs every applied event in the order the RTL
applies it, replays the log through ``burstgate_model.SegmentMonitor`` and checks every
verdict. 30 % of the random I/Os are re-offers (``count`` 0: classified, not counted), logged
as the model's REOFFER events; sizes are random (sector boundaries, the SIZE_BITS mask, up to
16 MiB) and the unit (requests or 512-byte sectors) flips amid traffic, starting in each. Most I/Os go to a few segments so back-to-back and 1-2-cycle-apart accesses to one
segment (the forwarding paths) are the common case. Repeats with idle cycles on the input and
backpressure on the output, and saturates one segment's counter (65535). The seed is cocotb's
RANDOM_SEED: a failure prints it; `RANDOM_SEED=n make test` replays it.
"""

import os
import pathlib
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from burstgate.layouts import pack, unpack
from burstgate.segment_monitor import SegmentIo, SegmentMonitor, SegmentVerdict
from burstgate.testing import StreamPattern
from burstgate.testing.verilator import run_cocotb

IO, TICK, SET_THRESHOLD, SET_STEADY, REOFFER, SET_UNIT = 0, 1, 2, 3, 4, 5
#: Sizes around the sector boundaries, up to the largest the SIZE_BITS port carries.
SIZES = (0, 1, 511, 512, 513, 4096, 8192, 16384, 32768, 65536, 131072, (1 << 24) - 1)
LATENCY = 2  # cycles, as SegmentMonitor documents


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.log = dut._log
        cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())

    async def reset(self):
        dut = self.dut
        for sig in (dut.i__valid, dut.o__ready, dut.tick, dut.i__payload, dut.hot_threshold,
                    dut.steady_intervals, dut.unit):
            sig.value = 0
        dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)

    async def run(self, segments, counts, sizes, *, r, n, unit, source, sink, tick_p=0.0, reg_p=0.0, rng):
        """Set R, N and the unit, then drive cycle by cycle (I/O k counted iff ``counts[k]``, of
        ``sizes[k]`` bytes); return the event log (kinds, args) and the verdicts."""
        dut = self.dut
        dut.hot_threshold.value = r
        dut.steady_intervals.value = n
        dut.unit.value = unit
        kinds, args, verdicts = [SET_THRESHOLD, SET_STEADY, SET_UNIT], [r, n, unit], []
        sent, holding = 0, False
        self.cycles = 0
        while len(verdicts) < len(segments):
            self.cycles += 1
            # Just after a rising edge: drive this cycle's inputs.
            if reg_p and rng.random() < reg_p:
                p = rng.random()
                if p < 0.45:
                    r = rng.choice([0, 1, 2, 4, 16, 40, 256, 4000, 65534, 65535])
                    dut.hot_threshold.value = r
                    kinds.append(SET_THRESHOLD)
                    args.append(r)
                elif p < 0.55:
                    unit = 1 - unit
                    dut.unit.value = unit
                    kinds.append(SET_UNIT)
                    args.append(unit)
                else:
                    n = rng.choice([0, 1, 3, 254])
                    dut.steady_intervals.value = n
                    kinds.append(SET_STEADY)
                    args.append(n)
            if not holding:  # a held I/O keeps valid and payload (the stream rules)
                offer = sent < len(segments) and source()
                if offer:
                    dut.i__payload.value = pack(SegmentIo, {"segment": segments[sent], "tag": sent & 0xFFFF,
                                                            "count": counts[sent], "size": sizes[sent]})
                dut.i__valid.value = int(offer)
            tick = bool(tick_p) and rng.random() < tick_p
            dut.tick.value = int(tick)
            dut.o__ready.value = int(sink())
            await ReadOnly()
            # Settled: record what the coming edge does, in the order the RTL applies it.
            valid = dut.i__valid.value == 1
            accepted = valid and dut.i__ready.value == 1
            if accepted:
                kinds.append(IO if counts[sent] else REOFFER)
                args.append(segments[sent] | sizes[sent] << 16)
                sent += 1
            holding = valid and not accepted
            if tick:
                kinds.append(TICK)
                args.append(0)
            if dut.o__valid.value == 1 and dut.o__ready.value == 1:
                verdicts.append(unpack(SegmentVerdict, dut.o__payload.value.to_unsigned()))
            await RisingEdge(dut.clk)
        dut.i__valid.value = 0
        dut.tick.value = 0
        return kinds, args, verdicts


def random_segments(rng, count):
    """Mostly a handful of hot segments (runs and short reuse distances), some scattered."""
    hot = [rng.randrange(SEGMENTS) for _ in range(4)]
    out, cur = [], hot[0]
    while len(out) < count:
        p = rng.random()
        if p < 0.35:
            pass                          # the same segment again: distance 1
        elif p < 0.85:
            cur = rng.choice(hot)         # distance 1, 2 or more within the hot set
        else:
            cur = rng.randrange(SEGMENTS)
        out.append(cur)
    return out


# The entry RAM has no reset and the interval counter restarts at reset, so a reset between
# tests would leave the RTL in a state the model cannot reach. The DUT is reset once, and one
# model follows it through every test of the run.
_MODEL = {}


async def check(dut, *, source, sink, count, r=3, n=2, unit=0, tick_p=0.002, reg_p=0.0005, segments=None):
    import burstgate_model
    rng = random.Random(cocotb.RANDOM_SEED + count + len(source) * 7 + len(sink))
    tb = TB(dut)
    if "model" not in _MODEL:
        await tb.reset()
        _MODEL["model"] = burstgate_model.SegmentMonitor(0, 0)
    model = _MODEL["model"]
    assert (model.REOFFER, model.SET_UNIT) == (REOFFER, SET_UNIT)
    segs = segments if segments is not None else random_segments(rng, count)
    counts = [int(rng.random() < 0.7) for _ in segs]
    sizes = [rng.choice(SIZES) if rng.random() < 0.3 else 4096 * rng.randrange(1, 17) for _ in segs]
    kinds, args, verdicts = await tb.run(segs, counts, sizes, r=r, n=n, unit=unit, source=StreamPattern(source, seed=rng.getrandbits(32)),
                                         sink=StreamPattern(sink, seed=rng.getrandbits(32)),
                                         tick_p=tick_p, reg_p=reg_p, rng=rng)
    want = model.run(kinds, args)
    assert len(verdicts) == len(want) == len(segs)
    bad = 0
    for k, (v, w, s) in enumerate(zip(verdicts, want, segs)):
        if v["segment"] != s or v["tag"] != k & 0xFFFF or v["hot"] != int(w):
            bad += 1
            if bad <= 5:
                tb.log.error("I/O %d segment %d: RTL %s, model hot=%d", k, s, v, int(w))
    assert bad == 0, f"{bad} of {len(segs)} verdicts differ from the model"
    await ReadOnly()  # the last edge's register updates
    assert dut.interval.value.to_unsigned() == model.interval
    await RisingEdge(dut.clk)  # leave the read-only phase before the next test drives
    tb.log.info("%d verdicts (%d hot, %d re-offers) and %d ticks match the model in %d cycles", len(segs),
                sum(want), kinds.count(REOFFER), kinds.count(TICK), tb.cycles)
    if source == sink == "always":
        # II = 1: back-to-back I/Os to one segment are forwarded, never stalled.
        assert tb.cycles <= len(segs) + LATENCY + 1, f"{len(segs)} I/Os took {tb.cycles} cycles"
    return want


COUNT = int(os.environ.get("SEGMON_IOS", "20000"))
#: RAM depth of the build under test. `make test` uses 4096: the full 64K-entry RAM's zero
#: init makes a 3.7 MB C++ file whose compile dominates the run; the logic is the same but
#: for the address width, which the long run covers at 65536.
SEGMENTS = int(os.environ.get("SEGMON_SEGMENTS", "4096"))


@cocotb.test()
async def full_rate(dut):
    """SEGMON_IOS I/Os, no idle, no backpressure, ticks and R/N changes amid traffic."""
    want = await check(dut, source="always", sink="always", count=COUNT)
    assert any(want) and not all(want)


@cocotb.test()
async def full_rate_sectors(dut):
    """As full_rate, starting in the sector unit with R = 40 (20 KiB per interval)."""
    want = await check(dut, source="always", sink="always", count=COUNT // 2, r=40, unit=1)
    assert any(want) and not all(want)


@cocotb.test()
@cocotb.parametrize(source=["random", "bursty", "always"], sink=["random", "bursty", "always"])
async def patterns(dut, source, sink):
    """Idle and backpressure patterns: a held pipeline must neither write twice nor forward
    a stale entry."""
    await check(dut, source=source, sink=sink, count=max(COUNT // 20, 1000), tick_p=0.01, reg_p=0.002,
                unit=int(source == "bursty"), r=40 if source == "bursty" else 3)


async def run_constant(dut, segment, count, samples):
    """``count`` I/Os to ``segment`` on consecutive clocks (o.ready high), driven without
    per-cycle Python; the verdicts of the I/O indices in ``samples``."""
    dut.o__ready.value = 1
    dut.i__payload.value = pack(SegmentIo, {"segment": segment, "tag": 0, "count": 1})
    dut.i__valid.value = 1
    # In cycle c (after edge c) the output holds the verdict of I/O c - LATENCY; I/O k is
    # accepted at edge k + 1, so valid drops in cycle ``count``.
    got, cycle = {}, 0
    for k in sorted(samples):
        assert k + LATENCY <= count
        if k + LATENCY > cycle:
            await ClockCycles(dut.clk, k + LATENCY - cycle)
            cycle = k + LATENCY
        if cycle == count:
            dut.i__valid.value = 0
        await ReadOnly()
        assert dut.o__valid.value == 1
        got[k] = int(dut.o__payload.value.to_unsigned() >> (SegmentVerdict.size - 1))
        await RisingEdge(dut.clk)
        cycle += 1
    if cycle <= count:
        await ClockCycles(dut.clk, count - cycle)
        dut.i__valid.value = 0
    await ClockCycles(dut.clk, LATENCY + 1)
    return got


async def ticks(dut, model, n):
    dut.tick.value = 1
    await ClockCycles(dut.clk, n)
    dut.tick.value = 0
    for _ in range(n):
        model.tick()


async def phase(dut, model, segment, count, samples, *, r, n, tick=0):
    """``tick`` ticks, then R and N, then ``count`` I/Os to one segment, on the RTL and the
    model; the RTL's and the model's verdicts at ``samples``."""
    if tick:
        await ticks(dut, model, tick)
    dut.hot_threshold.value = r
    dut.steady_intervals.value = n
    dut.unit.value = 0  # requests: the payload's size is 0
    model.hot_threshold, model.steady_intervals, model.unit = r, n, 0
    want = model.on_io_many([segment] * count)
    got = await run_constant(dut, segment, count, samples)
    return got, {k: int(want[k]) for k in samples}


@cocotb.test()
async def saturation(dut):
    """65537 I/Os to one segment in one interval: the count saturates at 65535. With R =
    65534 the 65535th I/O is the first hot one. A wrapped count would still look hot for the
    rest of the interval (hold is only ever set within it), so N is then raised: a count
    kept at 65535 still exceeds R and re-arms hold = N + 1, a wrapped one would not, and
    three intervals later only the saturated segment is still hot. Then, with R = 65535,
    another segment's 65537 I/Os are never hot. 256 ticks first decay every hold left by
    earlier tests."""
    import burstgate_model
    tb = TB(dut)
    if "model" not in _MODEL:
        await tb.reset()
        _MODEL["model"] = burstgate_model.SegmentMonitor(0, 0)
    model = _MODEL["model"]
    big = 65537
    seg = SEGMENTS - 1
    samples = [0, 1000, 65532, 65533, 65534, 65535]
    got, want = await phase(dut, model, seg, big, samples, r=65534, n=0, tick=256)
    assert got == want and [k for k in samples if want[k]][:1] == [65534], (got, want)
    got, want = await phase(dut, model, seg, 2, [0], r=65534, n=5)
    assert got == want == {0: 1}
    got, want = await phase(dut, model, seg, 2, [0], r=65535, n=5, tick=3)
    assert got == want == {0: 1}, "hold was not re-armed: the count wrapped"
    assert model.entry(seg)[1] == 2
    got, want = await phase(dut, model, SEGMENTS // 3, big, samples, r=65535, n=1, tick=256)
    assert got == want and not any(want.values()), (got, want)
    await ReadOnly()
    assert dut.interval.value.to_unsigned() == model.interval
    await RisingEdge(dut.clk)
    tb.log.info("saturation: 2 x %d I/Os to one segment match the model", big)


def _run(count, segments):
    run_cocotb(top="bg_segment_monitor", elaboratable=SegmentMonitor(segments=segments),
               test_module="test_segment_monitor", test_dir=pathlib.Path(__file__).resolve().parent,
               build_name=f"segmon/segments{segments}",
               extra_env={"SEGMON_IOS": str(count), "SEGMON_SEGMENTS": str(segments)})


def test_segment_monitor():
    """pytest entry for `make test`: SEGMON_IOS (default 20000) I/Os at full rate, 4096 segments."""
    _run(COUNT, SEGMENTS)


@pytest.mark.long
def test_segment_monitor_long():
    """`make test-long`: 1,000,000 I/Os (SEGMON_IOS_LONG) through the full 64K-segment RAM."""
    _run(int(os.environ.get("SEGMON_IOS_LONG", "1000000")), 1 << 16)
