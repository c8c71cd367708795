"""amaranth.sim tests of the load balancer against the C++ reference model.

The testbench drives the RTL cycle by cycle and logs what it applied in the order the RTL
applies it (configuration, decision, completion, seed load); ``burstgate_model.LoadBalancer``
replays the log and every decision (egress, or stall) is compared. The long Verilator run and
the throughput check are tests/cocotb/load_balancer.
"""

import random

import pytest
from amaranth.hdl import Fragment

from burstgate import lfsr
from burstgate.load_balancer import LbPolicy, LoadBalancer
from burstgate.testing import StreamPattern, simulate, stream_put

DISPATCH, COMPLETE, SET_MAP, SET_POLICY, SET_DEPTH, SET_SEED = range(6)
STATIC, RR, JSQ, P2C, LEAST_IOS = 0, 1, 2, 3, 4


def test_parameters_are_checked():
    with pytest.raises(TypeError, match="Ingress queues must be an integer, not '4'"):
        LoadBalancer(ingress_queues="4")
    with pytest.raises(ValueError, match="Egress queues must be 1..16, not 0"):
        LoadBalancer(egress_queues=0)
    with pytest.raises(ValueError, match="Ingress queues must be 1..16, not 17"):
        LoadBalancer(ingress_queues=17)
    with pytest.raises(TypeError):
        LoadBalancer(4, 4)
    with pytest.raises(TypeError, match="Committed must be a bool, not 'yes'"):
        LoadBalancer(committed="yes")
    with pytest.raises(TypeError, match="Load pairs must be a bool"):
        LoadBalancer(committed=True, load_pairs=1)
    with pytest.raises(ValueError, match="Load pairs needs committed"):
        LoadBalancer(load_pairs=True)
    dut = LoadBalancer(ingress_queues=1, egress_queues=1)
    Fragment.get(dut, None)
    assert (dut.ingress_queues, dut.egress_queues, dut.committed) == (1, 1, False)


def test_event_kinds_match_binding(bg_model):
    lb = bg_model.LoadBalancer
    assert (lb.DISPATCH, lb.COMPLETE, lb.SET_MAP, lb.SET_POLICY, lb.SET_DEPTH, lb.SET_SEED) == tuple(range(6))
    assert [p.value for p in LbPolicy] == [bg_model.LbPolicy.STATIC.value, bg_model.LbPolicy.ROUND_ROBIN.value,
                                          bg_model.LbPolicy.JSQ.value, bg_model.LbPolicy.P2C.value,
                                          bg_model.LbPolicy.LEAST_IOS.value]
    assert [p.value for p in LbPolicy] == [STATIC, RR, JSQ, P2C, LEAST_IOS]


def test_lfsr_leap_is_the_models_draw(bg_model):
    """The gateware's leap columns come from the map's LFSR_TAPS (lfsr.h's BG_LFSR_TAPS); stepping them
    must equal the model's 32-step draw for any state, and a zero seed maps as bg_lfsr_seed.
    Catches a misread tap mask, a left-shifting variant, and an off-by-one step count."""
    rng = random.Random(4)
    for steps in (32, 64):
        columns = lfsr.leap_columns(steps)
        for _ in range(200):
            s = rng.getrandbits(32) or 1
            via_matrix = 0
            for i in range(32):
                if s >> i & 1:
                    via_matrix ^= columns[i]
            want = bg_model.LoadBalancer.lfsr_draw(s)
            if steps == 64:
                want = bg_model.LoadBalancer.lfsr_draw(want)
            assert via_matrix == want, (steps, hex(s))
    model = bg_model.LoadBalancer(lfsr_seed=0)
    assert model.lfsr_state == lfsr.ZERO_SEED
    with pytest.raises(ValueError):
        lfsr.leap_columns(-1)


def drive(dut, steps, *, sink="always", rng=None, seed=0, committed=False):
    """Run ``steps`` (one dict per cycle) and return (kinds, a, b, decisions).

    Keys of a step: ``req`` (ingress, cpu_ns) queued behind any held request; ``complete``
    (egress, cpu_ns) or ``"any"`` (a random earlier decision not yet completed); ``policy``,
    ``depth``, ``map`` (ingress, mask), ``seed``. ``decisions`` has, per DISPATCH event of
    the log, the RTL's egress or -1 for a stalled cycle. ``committed``: drive as the core's
    admission does a ``committed`` balancer, offering a request only while
    ``query_eligible`` has a member for it (a cycle without one is the model's stall), and
    check that ``ready`` does not depend on the request; ``depth`` is then presented a cycle
    ahead, as the core's DEPTH register's next value is.
    """
    log = ([], [], [])
    decisions, outputs, done = [], [], []
    snk = StreamPattern(sink, seed=seed)

    def event(kind, a=0, b=0):
        for lst, v in zip(log, (kind, a, b)):
            lst.append(v)

    async def tb(ctx):
        waiting, n = [], 0
        depth = None
        while n < len(steps) or waiting or len(outputs) < sum(d != -1 for d in decisions):
            assert n < 10 * len(steps) + 1000, "a request was never decided"
            step = steps[n] if n < len(steps) else ({"complete": "any"} if rng else {})
            if "policy" in step:
                ctx.set(dut.policy, step["policy"])
                event(SET_POLICY, step["policy"])
            if "depth" in step:
                depth = step["depth"]
                event(SET_DEPTH, depth)
            if committed:
                ahead = steps[n + 1] if n + 1 < len(steps) else {}
                ctx.set(dut.depth, ahead.get("depth", depth if depth is not None else ctx.get(dut.depth)))
            elif depth is not None:
                ctx.set(dut.depth, depth)
            if "map" in step:
                ctx.set(dut.map[step["map"][0]], step["map"][1])
                event(SET_MAP, *step["map"])
            if "req" in step:
                waiting.append(step["req"])
            held = waiting[0] if waiting else None
            ctx.set(dut.i.valid, held is not None)
            if held is not None:
                ctx.set(dut.i.payload, {"ingress": held[0], "cpu_ns": held[1], "tag": n & 0xFFFF})
            ineligible = False
            if committed and held is not None:
                ctx.set(dut.query_ingress, held[0])
                ineligible = ctx.get(dut.query_eligible) == 0
                ctx.set(dut.i.valid, not ineligible)
            comp = step.get("complete")
            if comp == "any":
                comp = done.pop(rng.randrange(len(done))) if done else None
            ctx.set(dut.complete.valid, comp is not None)
            if comp is not None:
                ctx.set(dut.complete.payload, {"egress": comp[0], "cpu_ns": comp[1]})
            ctx.set(dut.seed_load, "seed" in step)
            ctx.set(dut.seed, step.get("seed", 0))
            ctx.set(dut.o.ready, snk())
            if committed:
                room = not ctx.get(dut.o.valid) or ctx.get(dut.o.ready)
                assert ctx.get(dut.i.ready) == int(room and not ctx.get(dut.p2c_wait))
            if ineligible:
                event(DISPATCH, *held)
                decisions.append(-1)
            elif held is not None:
                if ctx.get(dut.i.ready):
                    event(DISPATCH, *held)
                    decisions.append(None)
                    waiting.pop(0)
                elif ctx.get(dut.stall):
                    event(DISPATCH, *held)
                    decisions.append(-1)
            if comp is not None:
                event(COMPLETE, *comp)
            if "seed" in step:
                event(SET_SEED, step["seed"])
            if ctx.get(dut.o.valid) and ctx.get(dut.o.ready):
                out = (ctx.get(dut.o.payload.egress), ctx.get(dut.o.payload.charge))
                outputs.append(out)
                done.append(out)
            await ctx.tick()
            n += 1

    simulate(dut, tb)
    it = iter(outputs)
    decisions = [d if d is not None else next(it)[0] for d in decisions]
    return log[0], log[1], log[2], decisions


def model_run(bg_model, dut, kinds, a, b, **cfg):
    model = bg_model.LoadBalancer(ingress_queues=dut.ingress_queues, egress_queues=dut.egress_queues,
                                  **cfg)
    return model, model.run(kinds, a, b)


def setup(policy, depth, maps):
    """First-cycle configuration steps (the RTL's inputs start at 0)."""
    steps = [{"policy": policy, "depth": depth}]
    steps += [{"map": (i, m)} for i, m in enumerate(maps)]
    return steps


def test_static_full_egress_stalls_until_completion(bg_model):
    """Static: lowest eligible member; a full member is skipped; with every member full the
    I/O waits (ready low, stall high, nothing charged) until a completion frees one. Catches
    ``<=`` for ``<`` against the depth, a stall that still charges, and a completion that
    is not applied in the cycle it arrives."""
    dut = LoadBalancer(ingress_queues=2, egress_queues=3)
    steps = setup(STATIC, 2, [0b110, 0b011])
    steps += [{"req": (0, 100)}] * 5 + [{}] * 3 + [{"complete": (1, 100)}, {}, {"complete": (2, 99)}]
    steps += [{"req": (1, 5)}] * 2
    kinds, a, b, got = drive(dut, steps)
    assert got == [1, 1, 2, 2] + [-1] * 5 + [1, 0, 0]
    model, want = model_run(bg_model, dut, kinds, a, b)
    assert got == want
    assert model.ingress_stats(0)["stalled_ios"] == 1


def test_round_robin_wraps_at_egress_count(bg_model):
    """Round robin over a set {0, 2, 4} of 5 egress queues (not a power of two): the pointer
    moves past the chosen member and wraps at 5, skipping full members; one pointer per
    ingress. Catches a scan that wraps at 16, a pointer shared between ingresses, and a
    pointer set to the member instead of past it."""
    dut = LoadBalancer(ingress_queues=2, egress_queues=5)
    steps = setup(RR, 3, [0b10101, 0b11111])
    steps += [{"req": (0, 10)}, {"req": (0, 10)}, {"req": (1, 10)}, {"req": (0, 10)},
              {"req": (1, 10)}, {"req": (1, 10)}, {"req": (0, 10)}, {"req": (0, 10)}]
    kinds, a, b, got = drive(dut, steps)
    _, want = model_run(bg_model, dut, kinds, a, b)
    assert got == want
    assert got[:4] == [0, 2, 0, 4]


def test_jsq_least_ns_lowest_index_on_ties(bg_model):
    """JSQ by outstanding CPU ns (clamped at 2**20 - 1): equal loads go to the lowest index,
    a clamped charge counts as 1048575. Catches ``<=`` (highest index on ties), charging the
    raw cpu_ns, and comparing I/O counts instead of ns."""
    dut = LoadBalancer(ingress_queues=1, egress_queues=4)
    steps = setup(JSQ, 100, [0b1111])
    steps += [{"req": (0, c)} for c in (5, 5, 0xFFFFFFFF, 1 << 20, 3, 3, 3, 7, 0)]
    kinds, a, b, got = drive(dut, steps)
    _, want = model_run(bg_model, dut, kinds, a, b)
    assert got == want
    assert got[:4] == [0, 1, 2, 3] and got[4:6] == [0, 1]


def test_least_ios_fewest_outstanding_lowest_index_on_ties(bg_model):
    """LEAST_IOS (docs/extending.md) by outstanding I/O count: equal counts go to the lowest
    index whatever their ns, a completion makes its egress the least loaded. Catches
    comparing ns instead of counts (the fifth I/O would go to egress 1), ``<=`` (highest
    index on ties), and a policy encoding that differs between the RTL and the model."""
    dut = LoadBalancer(ingress_queues=1, egress_queues=4)
    steps = setup(LEAST_IOS, 100, [0b1111])
    steps += [{"req": (0, c)} for c in (1000, 1, 1, 1, 1)]
    steps += [{}, {"complete": (2, 1)}, {}, {"req": (0, 1)}, {"req": (0, 1)}]
    kinds, a, b, got = drive(dut, steps)
    _, want = model_run(bg_model, dut, kinds, a, b)
    assert got == want
    assert got == [0, 1, 2, 3, 0, 2, 1]


def test_p2c_and_seed(bg_model):
    """P2C: two draws per decision (the state moves by 64 steps), none on a stall; a seed load
    in the cycle of a decision applies after it; seed 0 maps to 0xACE1. Catches one draw per
    decision, draws on stalls, and a seed applied before the decision."""
    dut = LoadBalancer(ingress_queues=2, egress_queues=7)
    steps = setup(P2C, 3, [0b1111111, 0b0000001])
    steps += [{"req": (0, i * 37 % 1000)} for i in range(12)]
    steps += [{"req": (1, 1)}] * 4                           # egress 0 fills up: stalls
    steps += [{"complete": "any", "seed": 0}, {"complete": "any", "req": (0, 9), "seed": 12345}]
    steps += [{"req": (0, i)} for i in range(6)]
    kinds, a, b, got = drive(dut, steps, rng=random.Random(1))
    assert -1 in got
    model, want = model_run(bg_model, dut, kinds, a, b)
    assert got == want
    assert len(set(got) - {-1}) >= 4


def test_query_eligible_and_unknown_ids(bg_model):
    """``query_eligible`` is the model's eligible(); an ingress id at or above the count has
    an empty set (stalls), and a completion for an unknown egress only raises ``underflow``."""
    dut = LoadBalancer(ingress_queues=3, egress_queues=4)
    seen = []
    maps = [0b0011, 0b1110, 0b1000]

    async def tb(ctx):
        for i, mask in enumerate(maps):
            ctx.set(dut.map[i], mask)
        ctx.set(dut.depth, 1)
        ctx.set(dut.o.ready, 1)
        for ingress in (0, 0, 1, 2):
            seen.append([ctx.set(dut.query_ingress, q) or ctx.get(dut.query_eligible) for q in range(3)])
            await stream_put(ctx, dut.i, {"ingress": ingress, "cpu_ns": 1})
        seen.append([ctx.set(dut.query_ingress, q) or ctx.get(dut.query_eligible) for q in range(3)])
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.i.payload.ingress, 3)
        seen.append((ctx.get(dut.i.ready), ctx.get(dut.stall)))
        ctx.set(dut.i.valid, 0)
        ctx.set(dut.complete.valid, 1)
        ctx.set(dut.complete.payload.egress, 9)
        await ctx.tick()
        ctx.set(dut.complete.valid, 0)
        seen.append(ctx.get(dut.underflow))

    simulate(dut, tb)
    model = bg_model.LoadBalancer(ingress_queues=3, egress_queues=4, egress_depth=1)
    want = []
    for i, mask in enumerate(maps):
        model.set_map(i, mask)
    for ingress in (0, 0, 1, 2):
        want.append([model.eligible(q) for q in range(3)])
        model.dispatch(ingress, 1)
    want.append([model.eligible(q) for q in range(3)])
    assert seen[:-2] == want
    assert seen[-2:] == [(0, 1), 1]


def test_decision_and_completion_same_cycle(bg_model):
    """A completion in the cycle of a decision to the same full egress does not make it
    eligible for that decision (the decision sees the state before the cycle), and the
    counts end right. Catches a completion bypassed into the eligibility."""
    dut = LoadBalancer(ingress_queues=1, egress_queues=2)
    steps = setup(STATIC, 1, [0b01])
    steps += [{"req": (0, 50)}, {"req": (0, 60)}, {"complete": (0, 50)}, {}]
    kinds, a, b, got = drive(dut, steps)
    _, want = model_run(bg_model, dut, kinds, a, b)
    assert got == want == [0, -1, -1, 0]


def random_steps(rng, nin, nout, count, policies):
    steps = setup(rng.choice(policies), rng.choice([1, 2, 4, 64]),
                  [rng.getrandbits(nout) for _ in range(nin)])
    for _ in range(count):
        step = {}
        if rng.random() < 0.7:
            step["req"] = (rng.randrange(nin), rng.choice([0, 1, 100, rng.getrandbits(20),
                                                          rng.getrandbits(32)]))
        if rng.random() < 0.5:
            step["complete"] = "any"
        r = rng.random()
        if r < 0.01:
            step["policy"] = rng.choice(policies)
        elif r < 0.02:
            step["depth"] = rng.choice([1, 2, 3, 8])
        elif r < 0.04:
            step["map"] = (rng.randrange(nin), rng.getrandbits(nout) | (rng.random() < 0.8))
        elif r < 0.045:
            step["seed"] = rng.getrandbits(32) if rng.random() < 0.9 else 0
        steps.append(step)
    return steps


@pytest.mark.parametrize("policy,sink", [("static", "always"), ("rr", "bursty"), ("jsq", "random"),
                                         ("p2c", "always"), ("p2c", "bursty"), ("least_ios", "random"),
                                         ("mixed", "random")])
def test_random_against_model(bg_model, policy, sink):
    """Random requests, completions, map/depth/policy/seed changes and backpressure; every
    decision and every stalled cycle equals the model's."""
    policies = {"static": [STATIC], "rr": [RR], "jsq": [JSQ], "p2c": [P2C], "least_ios": [LEAST_IOS],
                "mixed": [STATIC, RR, JSQ, P2C, LEAST_IOS]}[policy]
    rng = random.Random(f"lb-{policy}-{sink}")
    nin, nout = 3, 6
    dut = LoadBalancer(ingress_queues=nin, egress_queues=nout)
    steps = random_steps(rng, nin, nout, 350, policies)
    kinds, a, b, got = drive(dut, steps, sink=sink, rng=rng, seed=rng.getrandbits(32))
    model, want = model_run(bg_model, dut, kinds, a, b)
    assert len(got) == len(want)
    bad = [n for n, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, f"{len(bad)} of {len(got)} decisions differ, first {bad[0]}: RTL {got[bad[0]]}, model {want[bad[0]]}"
    assert -1 in got and len(set(got)) >= 4


@pytest.mark.parametrize("policy,sink,pairs", [("p2c", "bursty", True), ("jsq", "always", True),
                                               ("least_ios", "random", True), ("mixed", "random", True),
                                               ("mixed", "bursty", False)])
def test_committed_against_model(bg_model, policy, sink, pairs):
    """``committed`` (the core's balancer): requests offered only while ``query_eligible``
    has a member, taken on ``valid`` with ``ready`` independent of the request; every
    decision and every cycle without an eligible member equals the model's. The loads'
    compares are registers there (issue 22): each policy that reads them is run alone."""
    policies = {"p2c": [P2C], "jsq": [JSQ], "least_ios": [LEAST_IOS],
                "mixed": [STATIC, RR, JSQ, P2C, LEAST_IOS]}[policy]
    rng = random.Random(f"lb-committed-{policy}-{sink}" + ("" if pairs else "-no-pairs"))
    nin, nout = 3, 6
    dut = LoadBalancer(ingress_queues=nin, egress_queues=nout, committed=True, load_pairs=pairs)
    steps = random_steps(rng, nin, nout, 350, policies)
    kinds, a, b, got = drive(dut, steps, sink=sink, rng=rng, seed=rng.getrandbits(32), committed=True)
    model, want = model_run(bg_model, dut, kinds, a, b)
    assert len(got) == len(want)
    bad = [n for n, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, f"{len(bad)} of {len(got)} decisions differ, first {bad[0]}: RTL {got[bad[0]]}, model {want[bad[0]]}"
    assert -1 in got and len(set(got)) >= 4
