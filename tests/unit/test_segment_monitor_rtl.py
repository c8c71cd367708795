"""amaranth.sim tests of the segment monitor against the C++ reference model.

Directed cases from segment_monitor.hpp's rule, then random I/O/tick/register streams with
idle and backpressure patterns, every verdict compared with ``burstgate_model``. The long
Verilator run is tests/cocotb/segment_monitor.
"""

import random

import pytest
from amaranth.hdl import Fragment

from burstgate.segment_monitor import SegmentMonitor
from burstgate.testing import StreamPattern, simulate, stream_get, stream_put

LATENCY = 2


def test_parameters_are_checked():
    with pytest.raises(TypeError, match="Segments must be an integer, not '64'"):
        SegmentMonitor(segments="64")
    for bad in (0, 1, 48, 1 << 17):
        with pytest.raises(ValueError, match=f"power of two .* not {bad}"):
            SegmentMonitor(segments=bad)
    with pytest.raises(TypeError):
        SegmentMonitor(64)  # keyword-only
    dut = SegmentMonitor(segments=2)
    Fragment.get(dut, None)  # elaborates at the smallest size (and marks it used)
    assert dut.segments == 2


async def classify(ctx, dut, segments, count=1, sizes=None):
    """Send I/Os back to back (o.ready high, so the pipeline never stalls); their verdicts.
    ``count`` 0 sends them as re-offers (classified, not counted); ``sizes``, one per I/O, the
    bytes each adds under the sectors unit."""
    got = []
    ctx.set(dut.o.ready, 1)
    for k, s in enumerate(segments):
        ctx.set(dut.i.valid, 1)
        payload = {"segment": s, "tag": s, "count": count}
        if sizes is not None:
            payload["size"] = sizes[k]
        ctx.set(dut.i.payload, payload)
        await ctx.tick()
        if ctx.get(dut.o.valid):
            got.append(ctx.get(dut.o.payload.hot))
    ctx.set(dut.i.valid, 0)
    while len(got) < len(segments):
        await ctx.tick()
        if ctx.get(dut.o.valid):
            got.append(ctx.get(dut.o.payload.hot))
    return got


async def tick(ctx, dut, n=1):
    for _ in range(n):
        ctx.set(dut.tick, 1)
        await ctx.tick()
        ctx.set(dut.tick, 0)


def test_hot_above_r_then_steady_after_n_intervals():
    """R = 2, N = 3: the 3rd I/O of an interval is hot; hot for 3 more intervals; then steady.

    Catches: counting after classifying, ``>=`` for ``>``, a hold of N instead of N + 1, and
    a decay that does not subtract the elapsed intervals.
    """
    dut = SegmentMonitor(segments=64)
    seen = {}

    async def tb(ctx):
        ctx.set(dut.hot_threshold, 2)
        ctx.set(dut.steady_intervals, 3)
        seen["burst"] = await classify(ctx, dut, [7, 7, 7, 7, 9])
        for k in (1, 2, 3, 4):
            await tick(ctx, dut)
            seen[k] = await classify(ctx, dut, [7])
        # Hot again, then 10 idle intervals in one jump: the lazy roll-forward decays it all.
        await tick(ctx, dut)
        seen["again"] = await classify(ctx, dut, [7, 7, 7])
        await tick(ctx, dut, 10)
        seen["late"] = await classify(ctx, dut, [7])
        seen["interval"] = ctx.get(dut.interval)

    simulate(dut, tb)
    assert seen["burst"] == [0, 0, 1, 1, 0]
    assert [seen[k] for k in (1, 2, 3, 4)] == [[1], [1], [1], [0]]
    assert seen["again"] == [0, 0, 1]
    assert seen["late"] == [0]
    assert seen["interval"] == 15


def test_n_zero_and_255_and_threshold_max(bg_model):
    """N = 0: hot only in the interval it exceeded R. N = 255 acts as 254 (hold is 8 bits;
    N + 1 wrapping to 0 would make a hot segment steady at once). R = 65535: never hot."""
    dut = SegmentMonitor(segments=16)
    seen = {}

    async def tb(ctx):
        ctx.set(dut.hot_threshold, 0)
        ctx.set(dut.steady_intervals, 0)
        seen["n0"] = await classify(ctx, dut, [1, 1])
        ctx.set(dut.hot_threshold, 5)
        await tick(ctx, dut)
        seen["n0_next"] = await classify(ctx, dut, [1])
        ctx.set(dut.hot_threshold, 0)
        ctx.set(dut.steady_intervals, 255)
        seen["n255"] = await classify(ctx, dut, [4])
        ctx.set(dut.hot_threshold, 65535)
        await tick(ctx, dut, 254)
        seen["n255_254"] = await classify(ctx, dut, [4])
        await tick(ctx, dut)
        seen["n255_255"] = await classify(ctx, dut, [4])
        seen["rmax"] = await classify(ctx, dut, [5] * 40)

    simulate(dut, tb)
    assert seen["n0"] == [1, 1] and seen["n0_next"] == [0]
    assert seen["n255"] == [1] and seen["n255_254"] == [1] and seen["n255_255"] == [0]
    assert seen["rmax"] == [0] * 40
    model = bg_model.SegmentMonitor(0, 254)  # what N = 255 must equal
    assert model.on_io(4)
    model.hot_threshold = 65535
    for _ in range(254):
        model.tick()
    assert model.on_io(4)
    model.tick()
    assert not model.on_io(4)


def test_reoffer_is_classified_but_not_counted(bg_model):
    """R = 2, N = 1: re-offers (count = 0) never push a segment over R, but they see it hot,
    and they roll its entry forward. Catches a monitor that counts re-offers (the 3rd and
    later I/Os of the first burst would be hot), one that sets the hold on a re-offer, and one
    that skips the roll-forward or the verdict for them."""
    dut = SegmentMonitor(segments=16)
    seen = {}

    async def tb(ctx):
        ctx.set(dut.hot_threshold, 2)
        ctx.set(dut.steady_intervals, 1)
        seen["new"] = await classify(ctx, dut, [3, 3])
        seen["re"] = await classify(ctx, dut, [3] * 6, count=0)
        seen["third"] = await classify(ctx, dut, [3])
        seen["re_hot"] = await classify(ctx, dut, [3], count=0)
        await tick(ctx, dut)
        seen["next"] = await classify(ctx, dut, [3], count=0)   # hold 2 - 1: still hot
        await tick(ctx, dut)
        seen["later"] = await classify(ctx, dut, [3, 3], count=0)  # N intervals passed

    simulate(dut, tb)
    assert seen["new"] == [0, 0] and seen["re"] == [0] * 6
    assert seen["third"] == [1] and seen["re_hot"] == [1]
    assert seen["next"] == [1] and seen["later"] == [0, 0]
    model = bg_model.SegmentMonitor(2, 1)
    want = [model.on_io(3), model.on_io(3)] + [model.on_io(3, counted=False) for _ in range(6)]
    want += [model.on_io(3), model.on_io(3, counted=False)]
    assert [int(w) for w in want] == seen["new"] + seen["re"] + seen["third"] + seen["re_hot"]
    assert model.entry(3)[1] == 3


def test_back_to_back_same_segment_is_forwarded(bg_model):
    """Runs of one segment and A,B,A / A,B,C,A spacings at full rate, through the stream
    helpers: the RAM read misses the write-backs of the previous two I/Os, so without
    forwarding at either distance the counts fall behind the model's. Also II = 1."""
    dut = SegmentMonitor(segments=16)
    segs = [3] * 6 + [1, 2, 1, 2, 1] + [4, 5, 4, 6, 4] + [7, 8, 9, 7, 8, 9, 7] + [3] * 3
    got, cycles = [], {}

    async def producer(ctx):
        ctx.set(dut.hot_threshold, 1)
        ctx.set(dut.steady_intervals, 2)
        for n, s in enumerate(segs):
            await stream_put(ctx, dut.i, {"segment": s, "tag": n, "count": 1})

    async def consumer(ctx):
        for _ in segs:
            got.append(await stream_get(ctx, dut.o))

    async def clock(ctx):
        n = 0
        while len(got) < len(segs):
            await ctx.tick()
            n += 1
        cycles["total"] = n

    simulate(dut, producer, consumer, clock)
    model = bg_model.SegmentMonitor(1, 2)
    assert [int(v.hot) for v in got] == [int(h) for h in model.on_io_many(segs)]
    assert [int(v.tag) for v in got] == list(range(len(segs)))
    assert model.entry(3)[1] == 9
    assert cycles["total"] <= len(segs) + LATENCY, cycles


def test_register_and_tick_timing(bg_model):
    """R and N apply to I/Os accepted from the cycle they change; an I/O accepted in the tick
    cycle belongs to the ending interval (the model's order: I/O, then tick)."""
    dut = SegmentMonitor(segments=16)
    got = []

    async def tb(ctx):
        ctx.set(dut.o.ready, 1)
        ctx.set(dut.hot_threshold, 1)
        ctx.set(dut.steady_intervals, 1)
        ctx.set(dut.i.payload.count, 1)
        plan = [  # (segment, tick, R)
            (2, 0, 1), (2, 1, 1),   # 2nd I/O in the tick cycle: same interval → count 2 > 1
            (2, 0, 1),              # next interval: count 1, hold 2 - 1 = 1 → hot
            (2, 0, 5),              # R raised in this very cycle: count 2 <= 5, still hot (hold)
            (6, 1, 0),              # R = 0 from this cycle: hot
            (6, 0, 0),
        ]
        for seg, t, r in plan:
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload.segment, seg)
            ctx.set(dut.tick, t)
            ctx.set(dut.hot_threshold, r)
            await ctx.tick()
            if ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload.hot))
        ctx.set(dut.i.valid, 0)
        ctx.set(dut.tick, 0)
        for _ in range(LATENCY):
            await ctx.tick()
            if ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload.hot))

    simulate(dut, tb)
    m = bg_model.SegmentMonitor(1, 1)
    want = [m.on_io(2), m.on_io(2)]
    m.tick()
    want.append(m.on_io(2))
    m.hot_threshold = 5
    want.append(m.on_io(2))
    m.hot_threshold = 0
    want.append(m.on_io(6))
    m.tick()
    want.append(m.on_io(6))
    assert got == [int(w) for w in want] == [0, 1, 1, 1, 1, 1]


#: Sizes around the sector boundaries and the SIZE_BITS mask (the top one wraps to 0).
SIZES = (0, 1, 511, 512, 513, 4096, 8192, 16384, 32768, 65536, 131072, (1 << 24) - 1, 1 << 24)


def random_run(dut, rng, count, source, sink, unit=0):
    """Drive ``count`` I/Os cycle by cycle with random sizes, ticks and register changes
    (R, N and the unit); return the event log in the order the RTL applied it, and the
    verdicts."""
    src = StreamPattern(source, seed=rng.getrandbits(32))
    snk = StreamPattern(sink, seed=rng.getrandbits(32))
    hot_segs = [rng.randrange(dut.segments) for _ in range(3)]
    log, verdicts = ([], []), []

    def event(kind, arg):
        log[0].append(kind)
        log[1].append(arg)

    async def tb(ctx):
        sent, holding, r, n, u = 0, False, 2, 1, unit
        ctx.set(dut.hot_threshold, r)
        ctx.set(dut.steady_intervals, n)
        ctx.set(dut.unit, u)
        while len(verdicts) < count:
            if rng.random() < 0.01:
                r = rng.choice([0, 1, 2, 3, 8, 40, 128, 1000, 65534, 65535])
                ctx.set(dut.hot_threshold, r)
                event(SET_THRESHOLD, r)
            if rng.random() < 0.01:
                n = rng.choice([0, 1, 2, 5, 254])
                ctx.set(dut.steady_intervals, n)
                event(SET_STEADY, n)
            if rng.random() < 0.005:
                u = 1 - u
                ctx.set(dut.unit, u)
                event(SET_UNIT, u)
            if not holding:
                offer = sent < count and src()
                if offer:
                    seg = rng.choice(hot_segs) if rng.random() < 0.6 else rng.randrange(dut.segments)
                    counted = int(rng.random() < 0.7)  # 30 % re-offers
                    size = rng.choice(SIZES) if rng.random() < 0.5 else rng.randrange(1 << 17)
                    ctx.set(dut.i.payload, {"segment": seg, "tag": sent & 0xFFFF, "count": counted,
                                            "size": size})
                ctx.set(dut.i.valid, offer)
            t = rng.random() < 0.03
            ctx.set(dut.tick, t)
            ctx.set(dut.o.ready, snk())
            valid = ctx.get(dut.i.valid)
            accepted = valid and ctx.get(dut.i.ready)
            if accepted:
                event(IO if ctx.get(dut.i.payload.count) else REOFFER,
                      ctx.get(dut.i.payload.segment) | ctx.get(dut.i.payload.size) << 16)
                sent += 1
            holding = valid and not accepted
            if t:
                event(TICK, 0)
            if ctx.get(dut.o.valid) and ctx.get(dut.o.ready):
                verdicts.append((ctx.get(dut.o.payload.segment), ctx.get(dut.o.payload.tag),
                                 ctx.get(dut.o.payload.hot)))
            await ctx.tick()

    simulate(dut, tb)
    return log, verdicts


IO, TICK, SET_THRESHOLD, SET_STEADY, REOFFER, SET_UNIT = 0, 1, 2, 3, 4, 5


@pytest.mark.parametrize("source,sink,unit", [("always", "always", 0), ("random", "random", 0),
                                              ("bursty", "always", 1), ("always", "bursty", 1)])
def test_random_against_model(bg_model, source, sink, unit):
    """Random streams over a 16-entry RAM (dense same-segment hazards, 1% register changes,
    0.5% unit flips, random sizes, 3% ticks, 30% re-offers) with idle and backpressure, starting
    in either unit: every verdict equals the model's, in order, with the segment and tag it was
    sent with. Catches forwarding or write-enable errors that only show under stalls (a held
    pipeline that writes twice or forwards a stale entry), and a sector count that differs from
    the model's (rounding, saturation, the SIZE_BITS mask)."""
    SM = bg_model.SegmentMonitor
    assert (SM.IO, SM.TICK, SM.SET_THRESHOLD, SM.SET_STEADY, SM.REOFFER, SM.SET_UNIT) == (
        IO, TICK, SET_THRESHOLD, SET_STEADY, REOFFER, SET_UNIT)
    rng = random.Random(f"segmon-{source}-{sink}-{unit}")
    dut = SegmentMonitor(segments=16)
    count = 1500
    (kinds, args), verdicts = random_run(dut, rng, count, source, sink, unit)
    model = bg_model.SegmentMonitor(2, 1)
    model.unit = unit
    want = model.run(kinds, args)
    ios = [a & 0xFFFF for k, a in zip(kinds, args) if k in (IO, REOFFER)]
    assert len(verdicts) == len(want) == count
    assert [v[0] for v in verdicts] == ios
    assert [v[1] for v in verdicts] == [n & 0xFFFF for n in range(count)]
    mismatches = [n for n, (v, w) in enumerate(zip(verdicts, want)) if v[2] != int(w)]
    assert not mismatches, f"{len(mismatches)} verdicts differ, first at I/O {mismatches[0]}"
    assert any(want) and not all(want)  # the stream exercised both verdicts


def test_sector_unit_counts_bytes(bg_model):
    """UNIT = sectors, R = 40 (20 KiB per interval): five 4 KiB I/Os are not above it, the
    sixth is; one 24 KiB I/O is at once; a 20 KiB + 1 byte I/O is 41 sectors (a partial sector
    counts whole); requests unit on the same stream counts 1 each. Catches counting requests
    under ``bytes``, a floor instead of a ceiling, and ``>=`` for ``>``."""
    dut = SegmentMonitor(segments=16)
    seen = {}

    async def send(ctx, seg, sizes):
        return await classify(ctx, dut, [seg] * len(sizes), sizes=sizes)

    async def tb(ctx):
        ctx.set(dut.hot_threshold, 40)
        ctx.set(dut.steady_intervals, 0)
        ctx.set(dut.unit, 1)
        seen["4k"] = await send(ctx, 1, [4096] * 6)
        seen["24k"] = await send(ctx, 2, [24576])
        seen["20k+1"] = await send(ctx, 3, [20481])
        seen["20k"] = await send(ctx, 4, [20480])
        ctx.set(dut.unit, 0)
        seen["req"] = await send(ctx, 5, [1 << 20] * 3)

    simulate(dut, tb)
    assert seen["4k"] == [0, 0, 0, 0, 0, 1]
    assert seen["24k"] == [1] and seen["20k+1"] == [1] and seen["20k"] == [0]
    assert seen["req"] == [0, 0, 0]
    m = bg_model.SegmentMonitor(40, 0)
    m.unit = bg_model.SegmentMonitor.UNIT_SECTORS
    assert [m.on_io(1, size=4096) for _ in range(6)] == [False] * 5 + [True]
    assert m.on_io(3, size=20481) and not m.on_io(4, size=20480)
    assert bg_model.SegmentMonitor.sectors_of(20481) == 41
    assert bg_model.SegmentMonitor.threshold_from_bytes(5 * 4096) == 40
