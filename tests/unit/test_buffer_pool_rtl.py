"""amaranth.sim tests of the two-tier buffer pool against the C++ reference model.

Every test drives the RTL cycle by cycle, logs the events in the order the RTL applies them
(acquire, release, tick), replays the log through ``burstgate_model.BufferPool`` and compares
every acquire's outcome (own / borrowed / stall) and the final per-queue state. The long
Verilator run is tests/cocotb/buffer_pool.
"""

import random

import pytest
from amaranth.hdl import Fragment

from burstgate.buffer_pool import BufferPool
from burstgate.testing import StreamPattern, simulate, stream_put

ACQUIRE, RELEASE, TICK = 0, 1, 2
OWN, BORROWED, STALL = 0, 1, 2


def configure(ctx, dut, cfg):
    for q, d in enumerate(cfg["dedicated"]):
        ctx.set(dut.dedicated[q], d)
    ctx.set(dut.shared, cfg["shared"])
    ctx.set(dut.borrow_cap, cfg.get("borrow_cap", 0xFFFF))
    ctx.set(dut.quiet_windows, cfg.get("quiet_windows", 1))


def model_of(bg_model, cfg):
    return bg_model.BufferPool(dedicated=cfg["dedicated"], shared=cfg["shared"],
                               borrow_cap=cfg.get("borrow_cap", 0xFFFF),
                               quiet_windows=cfg.get("quiet_windows", 1))


def drive(dut, cfg, cycles, *, sink=None, rng=None):
    """Run ``cycles`` (dicts with optional ``acquire``, ``release`` queue ids and ``tick``).

    Planned acquires queue up behind one that is not accepted, which is re-presented every
    cycle (the stream rules). Returns (kinds, args, results, state): the ordered event log, what the
    RTL did for each ACQUIRE in it (OWN/BORROWED/STALL), and the final per-queue state.
    """
    log = ([], [])
    results, grants = [], []
    state = {}
    plan = list(cycles)

    def event(kind, arg=0):
        log[0].append(kind)
        log[1].append(arg)

    async def tb(ctx):
        configure(ctx, dut, cfg)
        waiting = []
        n = 0
        while n < len(plan) or waiting or len(grants) < sum(r != STALL for r in results):
            assert n < 10 * len(plan) + 1000, "the pool never served a held acquire"
            # Past the plan, a random plan's buffers keep going back, and windows keep ending
            # (idle borrowed buffers go back only at ticks), so a held acquire ends.
            step = plan[n] if n < len(plan) else ({"release": "any", "tick": n % 8 == 0} if rng else {})
            if "acquire" in step:
                waiting.append(step["acquire"])
            held = waiting[0] if waiting else None
            ctx.set(dut.i.valid, held is not None)
            ctx.set(dut.i.payload.queue, held or 0)
            rel = step.get("release")
            if rel == "any":
                busy = [q for q in range(dut.queues) if ctx.get(dut.inflight[q])]
                rel = rng.choice(busy) if busy else None
            ctx.set(dut.release.valid, rel is not None)
            ctx.set(dut.release.payload.queue, rel or 0)
            ctx.set(dut.tick, step.get("tick", False))
            ctx.set(dut.o.ready, sink() if sink else 1)
            if held is not None:
                if ctx.get(dut.i.ready):
                    event(ACQUIRE, held)
                    results.append(None)  # filled from the grant stream
                    waiting.pop(0)
                elif ctx.get(dut.stall):
                    event(ACQUIRE, held)
                    results.append(STALL)
            if rel is not None:
                event(RELEASE, rel)
            if step.get("tick"):
                event(TICK)
            if ctx.get(dut.o.valid) and ctx.get(dut.o.ready):
                grants.append(ctx.get(dut.o.payload.borrowed))
            await ctx.tick()
            n += 1
        for key in ("extra", "inflight", "peak", "quiet"):
            state[key] = [ctx.get(getattr(dut, key)[q]) for q in range(dut.queues)]
        state["shared_free"] = ctx.get(dut.shared_free)
        state["underflow"] = ctx.get(dut.underflow)

    simulate(dut, tb)
    it = iter(grants)
    results = [r if r is not None else (BORROWED if next(it) else OWN) for r in results]
    return log[0], log[1], results, state


def check_against_model(bg_model, cfg, kinds, args, results, state):
    model = model_of(bg_model, cfg)
    want = model.run(kinds, args)
    assert results == want
    q = range(len(cfg["dedicated"]))
    assert state["extra"] == [model.extra(i) for i in q]
    assert state["inflight"] == [model.inflight(i) for i in q]
    assert state["peak"] == [model.peak(i) for i in q]
    assert state["quiet"] == [model.quiet(i) for i in q]
    assert state["shared_free"] == model.shared_free
    assert model.conserved()
    return model


def test_parameters_are_checked():
    with pytest.raises(TypeError, match="Queues must be an integer, not 2.0"):
        BufferPool(queues=2.0)
    for bad in (0, 17):
        with pytest.raises(ValueError, match=f"Queues must be 1..16, not {bad}"):
            BufferPool(queues=bad)
    with pytest.raises(TypeError):
        BufferPool(4)
    with pytest.raises(TypeError, match="Committed must be a bool, not 1"):
        BufferPool(committed=1)
    dut = BufferPool(queues=1)
    Fragment.get(dut, None)
    assert dut.queues == 1 and not dut.committed


def test_own_borrow_stall_and_cap(bg_model):
    """Dedicated [2, 1], 3 shared, cap 1: q0 gets own, own, borrowed, then waits on the cap
    although the pool has buffers (also in the cycle of its release, which is decided
    after it), then gets its kept buffer as its own; q1 the same. Catches ``>`` for ``>=`` in
    the ownership test, an ignored cap, and a release applied before the same-cycle acquire."""
    cfg = {"dedicated": [2, 1], "shared": 3, "borrow_cap": 1, "quiet_windows": 1}
    dut = BufferPool(queues=2)
    cycles = [{"acquire": 0}] * 4 + [{"release": 0}, {}] + [{"acquire": 1}] * 3 + [{"release": 1}]
    kinds, args, results, state = drive(dut, cfg, cycles)
    assert results == [OWN, OWN, BORROWED, STALL, STALL, OWN] + [OWN, BORROWED, STALL, STALL, OWN]
    assert state["extra"] == [1, 1] and state["shared_free"] == 1
    check_against_model(bg_model, cfg, kinds, args, results, state)


def test_quiet_windows_return(bg_model):
    """quiet_windows = 2: the borrowed buffers go back only after two windows whose peak
    stayed within the dedicated buffers, all at once; a busy window restarts the count.
    quiet_windows = 0: each extra buffer goes back on its release. Catches a return on the
    first quiet window, a count that is not reset by a busy window, and a peak that is not
    reset to the in-flight count at the tick."""
    dut = BufferPool(queues=2)
    cfg = {"dedicated": [1, 1], "shared": 4, "quiet_windows": 2}
    burst = [{"acquire": 0}] * 3
    cycles = (burst + [{"tick": True}]                  # peak 3 > 1: busy
              + [{"release": 0}] * 2 + [{"tick": True}]   # peak 3 (since last tick): busy
              + [{"tick": True}]                          # peak 1: quiet 1
              + [{"acquire": 0}, {"acquire": 0}, {"release": 0}, {"tick": True}]  # busy again
              + [{"release": 0}, {"tick": True}] + [{"tick": True}] + [{"tick": True}])
    kinds, args, results, state = drive(dut, cfg, cycles)
    assert results == [OWN, BORROWED, BORROWED, OWN, OWN]
    assert state["extra"] == [0, 0] and state["shared_free"] == 4
    check_against_model(bg_model, cfg, kinds, args, results, state)

    dut = BufferPool(queues=2)
    cfg = {"dedicated": [1, 1], "shared": 1, "quiet_windows": 0}
    cycles = [{"acquire": 0}, {"acquire": 0}, {"acquire": 1}, {"acquire": 1},  # q1 stalls
              {"release": 0}, {}, {"release": 1}]
    kinds, args, results, state = drive(dut, cfg, cycles)
    assert results == [OWN, BORROWED, OWN, STALL, STALL, BORROWED]
    check_against_model(bg_model, cfg, kinds, args, results, state)


def test_same_cycle_acquire_release_tick(bg_model):
    """One cycle with an acquire, a release and a tick on the same queue applies them in that
    order (the acquire decided on the state before the cycle): a borrow and a return-on-
    release in one cycle, and a tick that sees the peak the acquire made."""
    for qw in (0, 1):
        cfg = {"dedicated": [1, 2, 1], "shared": 2, "quiet_windows": qw}
        cycles = [{"acquire": 0}, {"acquire": 0, "release": 0, "tick": True},
                  {"acquire": 0, "release": 0, "tick": True}, {"acquire": 2, "release": 0},
                  {"acquire": 0, "tick": True}, {"release": 0, "tick": True}, {"tick": True}]
        dut = BufferPool(queues=3)
        kinds, args, results, state = drive(dut, cfg, cycles)
        check_against_model(bg_model, cfg, kinds, args, results, state)


def test_rebuild_and_underflow():
    """A release with nothing in flight changes nothing and is flagged; rebuild clears all."""
    dut = BufferPool(queues=2)
    seen = {}

    async def tb(ctx):
        configure(ctx, dut, {"dedicated": [1, 0], "shared": 3})
        ctx.set(dut.o.ready, 1)
        for q in (1, 1, 0):
            await stream_put(ctx, dut.i, {"queue": q, "tag": q})
        ctx.set(dut.release.valid, 1)
        ctx.set(dut.release.payload.queue, 0)
        await ctx.tick()
        await ctx.tick()   # second release of queue 0: nothing in flight
        ctx.set(dut.release.valid, 0)
        seen["before"] = [ctx.get(dut.inflight[q]) for q in range(2)], ctx.get(dut.shared_free)
        seen["underflow"] = ctx.get(dut.underflow)
        ctx.set(dut.rebuild, 1)
        seen["ready_in_rebuild"] = ctx.get(dut.i.ready)
        await ctx.tick()
        ctx.set(dut.rebuild, 0)
        seen["after"] = ([ctx.get(dut.inflight[q]) for q in range(2)], ctx.get(dut.shared_free),
                         ctx.get(dut.underflow))

    simulate(dut, tb)
    assert seen["before"] == ([0, 2], 1) and seen["underflow"] == 1
    assert seen["ready_in_rebuild"] == 0
    assert seen["after"] == ([0, 0], 3, 0)


def test_query_and_unknown_queue(bg_model):
    """``query_ok`` is the model's can_acquire; a queue id at or above ``queues`` is never
    accepted (the model raises on it), so a bad id cannot corrupt another queue's count."""
    dut = BufferPool(queues=2)
    seen = []

    async def tb(ctx):
        configure(ctx, dut, {"dedicated": [1, 0], "shared": 1})
        ctx.set(dut.o.ready, 1)
        for q in (0, 0, 1, 1):
            for probe in range(3):
                ctx.set(dut.query_queue, probe)
                seen.append((probe, ctx.get(dut.query_ok)))
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload.queue, q)
            seen.append(("ready", ctx.get(dut.i.ready)))
            await ctx.tick()
        ctx.set(dut.i.payload.queue, 3)
        seen.append(("bad", ctx.get(dut.i.ready), ctx.get(dut.stall)))

    simulate(dut, tb)
    model = bg_model.BufferPool(dedicated=[1, 0], shared=1)
    want = []
    for q in (0, 0, 1, 1):
        want += [(p, int(model.can_acquire(p)) if p < 2 else 0) for p in range(3)]
        ok = model.acquire(q) != STALL
        want.append(("ready", int(ok)))
    want.append(("bad", 0, 1))
    assert seen == want


def random_cycles(rng, queues, count):
    """Acquires (half of them to one bursting queue), releases of a random queue that has a
    buffer in flight at that cycle (``"any"``: chosen by ``drive``), and ticks."""
    plan = []
    hot = rng.randrange(queues)
    for _ in range(count):
        step = {}
        if rng.random() < 0.45:
            step["acquire"] = hot if rng.random() < 0.5 else rng.randrange(queues)
        if rng.random() < 0.45:
            step["release"] = "any"
        if rng.random() < 0.04:
            step["tick"] = True
        plan.append(step)
    return plan


@pytest.mark.parametrize("sink", ["always", "random", "bursty"])
@pytest.mark.parametrize("quiet", [0, 1, 3])
def test_random_against_model(bg_model, sink, quiet):
    """Random acquires, releases and ticks with backpressure on the grants; every outcome
    (including every stalled cycle) and the final state equal the model's, and the run
    borrowed, stalled and returned buffers."""
    rng = random.Random(f"bufpool-{sink}-{quiet}")
    queues = 4
    cfg = {"dedicated": [rng.randint(0, 3) for _ in range(queues)], "shared": rng.randint(2, 6),
           "borrow_cap": rng.choice([2, 3, 0xFFFF]), "quiet_windows": quiet}
    dut = BufferPool(queues=queues)
    plan = random_cycles(rng, queues, 700)
    kinds, args, results, state = drive(dut, cfg, plan, sink=StreamPattern(sink, seed=rng.getrandbits(32)),
                                        rng=rng)
    model = check_against_model(bg_model, cfg, kinds, args, results, state)
    stats = model.stats()
    assert stats["borrowed"] > 0 and stats["stalls"] > 0 and stats["returned"] > 0, stats
    assert state["underflow"] == 0


@pytest.mark.parametrize("quiet", [0, 2])
def test_committed_query_ahead(bg_model, quiet):
    """``committed``: ``query_ok`` from registers formed a cycle ahead equals the model's
    can_acquire for every queue in every cycle but the one after a tick (the caller then
    asks nothing); an acquire offered on its answer is taken on ``valid`` with the model's
    outcome, beside releases and backpressure on the grants; ticks come, as the contract
    asks, only after a cycle with no acquire, release or tick, and return what the model's
    do (the final counts and the shared pool)."""
    rng = random.Random(f"bufpool-committed-{quiet}")
    queues = 4
    cfg = {"dedicated": [rng.randint(0, 2) for _ in range(queues)], "shared": 4, "borrow_cap": 2,
           "quiet_windows": quiet}
    dut = BufferPool(queues=queues, committed=True)
    model = model_of(bg_model, cfg)
    sink = StreamPattern("random", seed=7)
    seen = {"checked": 0, "refused": 0, "taken": 0}

    async def tb(ctx):
        configure(ctx, dut, cfg)
        after_tick = True  # the answers of the first cycle are formed before the configuration
        quiet_before = False  # the last cycle had no acquire, release or tick
        borrowed = []
        for _ in range(1500):
            ctx.set(dut.o.ready, sink())
            want = rng.randrange(queues)
            answers = []
            for q in range(queues + 1):
                ctx.set(dut.query_queue, q)
                answers.append(ctx.get(dut.query_ok))
            if not after_tick:
                assert answers == [int(model.can_acquire(q)) for q in range(queues)] + [0]
                seen["checked"] += 1
            offer = not after_tick and answers[want] and rng.random() < 0.6
            ctx.set(dut.i.valid, offer)
            ctx.set(dut.i.payload.queue, want)
            busy = [q for q in range(queues) if model.inflight(q)]
            tick = quiet_before and rng.random() < 0.08
            rel = rng.choice(busy) if busy and rng.random() < 0.45 else None
            if tick:  # nothing in the tick's cycle either (as in the core, where the drain precedes it)
                offer, rel = False, None
                ctx.set(dut.i.valid, 0)
            ctx.set(dut.release.valid, rel is not None)
            ctx.set(dut.release.payload.queue, rel or 0)
            ctx.set(dut.tick, tick)
            taken = offer and ctx.get(dut.i.ready)
            if taken:
                borrowed.append(model.acquire(want) == BORROWED)
                seen["taken"] += 1
            elif not after_tick and not answers[want]:
                seen["refused"] += 1
            if ctx.get(dut.o.valid) and ctx.get(dut.o.ready):
                assert ctx.get(dut.o.payload.borrowed) == borrowed.pop(0)
            if rel is not None:
                model.release(rel)
            if tick:
                model.tick()
            after_tick = tick
            quiet_before = not taken and rel is None and not tick
            # What the tick's sum ahead relies on: a peak is never below its in-flight count.
            assert all(ctx.get(dut.peak[q]) >= ctx.get(dut.inflight[q]) for q in range(queues))
            seen["ticks"] = seen.get("ticks", 0) + tick
            await ctx.tick()
        ctx.set(dut.i.valid, 0)
        seen["extra"] = [ctx.get(dut.extra[q]) for q in range(queues)]
        seen["shared_free"] = ctx.get(dut.shared_free)

    simulate(dut, tb)
    assert seen["extra"] == [model.extra(q) for q in range(queues)]
    assert seen["shared_free"] == model.shared_free and seen["ticks"] > 20, seen
    assert seen["checked"] > 1000 and seen["taken"] > 300 and seen["refused"] > 15, seen
    assert model.stats()["borrowed"] > 0 and model.stats()["returned"] > 0
