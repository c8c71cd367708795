# amaranth: UnusedElaboratable=no
"""amaranth.sim tests of the admission stage against ``burstgate_model.Agent``, decision by
decision and register by register.

The model runs the whole datapath; the stage under test gets each descriptor with the cost
and segment verdict the model computed, and the load balancer's and buffer pool's answers
from a harness that mirrors the model's configuration: ingress queue 1 has an empty egress
set (every admitted I/O of it is SRC_DEFER_EGRESS) and queue 2 has no buffers
(SRC_DEFER_BUFFER); queues 0 and 3 always have room (LB.DEPTH 4095, 4095 buffers each).
"""

import random

import pytest
from amaranth import Elaboratable, Module
from amaranth.sim import Simulator

from burstgate import lfsr
from burstgate.admission import Admission, AdmissionInput
from burstgate.regmap import C, REGMAP
from burstgate.testing import StreamPattern

DIMS = C["COST_DIMS"]
CPU = C["DIM_CPU"]
CHARGE_MAX = (1 << C["LB_CHARGE_BITS"]) - 1  # the load balancer's clamp of a charge
CTRL = REGMAP.block("CTRL")
TENANT = REGMAP.block("TENANT")
SRC = {C[n]: n[4:] for n in ("SRC_OWN", "SRC_BORROW", "SRC_RESERVED", "SRC_DEFER",
                              "SRC_DEFER_EGRESS", "SRC_DEFER_BUFFER")}
NO_EGRESS, NO_BUFFER = 1, 2


def reg(block, name, index=0):
    b = REGMAP.block(block)
    return b.base + b.register(name).offset + 4 * index


class Harness(Elaboratable):
    """The stage plus the two answers the core's load balancer and buffer pool give."""

    def __init__(self, tenants):
        self.adm = Admission(tenants=tenants)

    def elaborate(self, platform):
        m = Module()
        m.submodules.adm = adm = self.adm
        m.d.comb += [
            adm.egress_ok.eq(adm.query_queue != NO_EGRESS),
            adm.buffer_ok.eq(adm.query_queue != NO_BUFFER),
            adm.drained.eq(1),
        ]
        return m


class Bench:
    def __init__(self, model_mod, tenants, seed=1):
        self.tenants = tenants
        self.h = Harness(tenants)
        self.adm = self.h.adm
        self.model = model_mod.Agent(tenants=tenants, ingress=4, egress=4)
        self.rng = random.Random(seed)
        self.sources = {}
        self.decisions = 0
        self.charges = []
        m = self.model
        m.write(reg("LB", "DEPTH"), 4095)
        m.write(reg("LB", "MAP", NO_EGRESS), 0)
        m.write(reg("BPOOL", "DEDICATED", NO_BUFFER), 0)
        # A cost table with distinct, non-zero costs: base 200..3000 per dimension and class.
        for e in range(C["PRODUCTS"] * 2 * C["SIZE_CLASSES"]):
            for d in range(DIMS):
                m.write(reg("COST", "TABLE_BASE", e * DIMS + d), self.rng.randint(200, 3000))
                m.write(reg("COST", "TABLE_SLOPE", e * DIMS + d), self.rng.randint(0, 64))

    # --- bus -------------------------------------------------------------------------------
    def _bus(self, addr):
        for block, bus in ((CTRL, self.adm.ctrl_bus), (TENANT, self.adm.tenant_bus)):
            if block.base <= addr < block.base + block.size:
                return bus, addr - block.base
        return None, None

    async def write(self, ctx, addr, value):
        self.model.write(addr, value)
        bus, offset = self._bus(addr)
        if bus is None:
            return  # COST, LB, BPOOL, SEGMON: outside this stage; the model's copy feeds it
        ctx.set(bus.addr, offset)
        ctx.set(bus.w_data, value)
        ctx.set(bus.w_en, 1)
        await ctx.tick()
        ctx.set(bus.w_en, 0)

    async def read(self, ctx, addr):
        bus, offset = self._bus(addr)
        ctx.set(bus.addr, offset)
        ctx.set(bus.r_en, 1)
        await ctx.tick()
        ctx.set(bus.r_en, 0)
        return ctx.get(bus.r_data)

    async def check_regs(self, ctx, tenants=None):
        """Every window register of the tenants, and CTRL's counters, against the model.

        First waits out a grant write's materialization (CTRL.WINDOW bit 1, which the model,
        being atomic, always reads as 0)."""
        await ctx.tick()
        addrs = [reg("CTRL", n) for n in ("WINDOW", "WINDOW_INDEX", "SEED", "BURST_N", "POOL_DRAWN",
                                          "IOS", "DEFERRED", "DEFERRED_EGRESS", "DEFERRED_BUFFER")]
        addrs += [reg("CTRL", "POOL", d) for d in range(DIMS)] + [reg("CTRL", "GLOBAL", d) for d in range(DIMS)]
        addrs += [reg("CTRL", "ACTIVE", w) for w in range((self.tenants + 31) // 32 + 1)]
        for t in (range(self.tenants) if tenants is None else tenants):
            for name in ("RES_BASE", "GRANT", "LEND_GRANT", "REMAINING", "LENDABLE", "USAGE", "THROTTLE"):
                addrs += [reg("TENANT", name, t * DIMS + d) for d in range(DIMS)]
            addrs += [reg("TENANT", "THROTTLE_N", t), reg("TENANT", "SPILL_N", t), reg("TENANT", "COUNT_GRANT", t)]
        for a in addrs:
            got, want = await self.read(ctx, a), self.model.read(a)
            assert got == want, f"register {a:#x}: RTL {got:#x}, model {want:#x}"

    # --- descriptors -----------------------------------------------------------------------
    def desc(self, tenant, *, queue=None, segment=None, size=None):
        rng = self.rng
        return dict(tag=rng.getrandbits(16), tenant=tenant,
                    queue=rng.choice((0, 3, 0, 3, NO_EGRESS, NO_BUFFER)) if queue is None else queue,
                    product=rng.getrandbits(2), write=bool(rng.getrandbits(1)),
                    size=rng.getrandbits(rng.choice((9, 12, 16))) if size is None else size,
                    segment=rng.getrandbits(16) if segment is None else segment)

    async def stream(self, ctx, descs, *, source="always", sink="always", commit=False):
        """Decide ``descs`` on the stage and in the model; compare every decision. With
        ``commit``, COMMIT is written in the cycle the last descriptor is taken, so that it
        applies in the cycle after the window's last decision."""
        expected = [self.model.io(**d) for d in descs]
        inputs = [{"desc": d, "cost": list(e["cost"]), "hot": int(e["hot"])} for d, e in zip(descs, expected)]
        src, snk = StreamPattern(source, seed=self.rng.getrandbits(32)), StreamPattern(sink, seed=self.rng.getrandbits(32))
        adm = self.adm
        got, charges, sent, offer = [], [], 0, False
        while len(got) < len(descs):
            if not offer and sent < len(descs) and src():
                ctx.set(adm.i.payload, AdmissionInput.const(inputs[sent]))
                offer = True
            ctx.set(adm.i.valid, offer)
            ctx.set(adm.o.ready, snk())
            bus, offset = self._bus(reg("CTRL", "WINDOW"))
            committing = commit and sent == len(descs)
            if committing:
                self.model.write(reg("CTRL", "WINDOW"), C["WINDOW_COMMIT"])
                ctx.set(bus.addr, offset)
                ctx.set(bus.w_data, C["WINDOW_COMMIT"])
                ctx.set(bus.w_en, 1)
                commit = False
            _, _, i_ready, o_valid, o_ready, o_payload, dispatch, charge = await ctx.tick().sample(
                adm.i.ready, adm.o.valid, adm.o.ready, adm.o.payload, adm.dispatch, adm.dispatch_charge)
            ctx.set(bus.w_en, 0)
            if dispatch:
                charges.append(charge)
            if offer and i_ready:
                sent, offer = sent + 1, False
            if o_valid and o_ready:
                got.append(o_payload)
        ctx.set(adm.i.valid, 0)
        for n, (out, want, d) in enumerate(zip(got, expected, descs)):
            fields = {k: out[k] for k in ("tag", "tenant", "queue", "source", "lender", "hot")}
            fields["cost"] = tuple(out["cost"][j] for j in range(DIMS))
            ref = {k: int(want[k]) for k in fields if k != "cost"}
            ref["cost"] = tuple(want["cost"])
            assert fields == ref, f"descriptor {n} {d}: RTL {fields}, model {ref}"
            self.sources[SRC[ref["source"]]] = self.sources.get(SRC[ref["source"]], 0) + 1
        # Each admitted descriptor is dispatched once, in order, charged its clamped CPU cost
        # (registered with A4: a charge taken from A3 while A4 waits would be the next one's).
        want_charges = [min(e["cost"][CPU], CHARGE_MAX) for e in expected if e["source"] < C["SRC_DEFER"]]
        assert charges == want_charges, f"dispatch charges: RTL {charges}, model's clamped costs {want_charges}"
        self.charges += want_charges
        self.decisions += len(descs)
        return expected

    async def commit(self, ctx, tick=True):
        """TICK (unless ``tick`` is false) and COMMIT, then wait until the COMMIT has applied
        (CTRL.WINDOW bit 0 low): it waits for the drain and for the last window's bits to be
        cleared, and this harness does not hold the input while it waits as the core does."""
        if tick:
            await self.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_TICK"])
        await self.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_COMMIT"])
        await self.wait_window(ctx)

    async def wait_window(self, ctx):
        while (await self.read(ctx, reg("CTRL", "WINDOW"))) & 1:
            pass

    async def configure(self, ctx, scheduler, *, base, grant, lend, burst=(), pool=(0,) * 4, glob=(0,) * 4):
        """A TICK/COMMIT window with these levels (vectors: per tenant, or one for all)."""
        await self.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_TICK"])
        await self.write(ctx, reg("CTRL", "SCHEDULER"), scheduler)
        for t in range(self.tenants):
            for name, v in (("RES_BASE", base), ("GRANT", grant), ("LEND_GRANT", lend)):
                vec = v[t] if isinstance(v[0], (tuple, list)) else v
                for d in range(DIMS):
                    await self.write(ctx, reg("TENANT", name, t * DIMS + d), vec[d])
        for j, b in enumerate(burst):
            await self.write(ctx, reg("TENANT", "BURST_LIST", j), b)
        await self.write(ctx, reg("CTRL", "BURST_N"), len(burst))
        for d in range(DIMS):
            await self.write(ctx, reg("CTRL", "POOL", d), pool[d])
            await self.write(ctx, reg("CTRL", "GLOBAL", d), glob[d])
        await self.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_COMMIT"])
        for _ in range(2):
            await ctx.tick()


def run(bench, body):
    sim = Simulator(bench.h)
    sim.add_clock(1e-8)

    async def tb(ctx):
        await body(ctx)
    sim.add_testbench(tb)
    sim.run()


def vec(x):
    return (x,) * DIMS


@pytest.mark.parametrize("source,sink", [("always", "always"), ("random", "bursty"), ("bursty", "random")])
def test_bios_every_source(bg_model, source, sink):
    """OWN, BORROW, RESERVED, DEFER and the two late deferrals in one BIOS window, with idle
    and backpressure: catches a wrong source order, a lender charged in the wrong
    dimension, a deferral that charges, or a decision lost or repeated under a stall."""
    b = Bench(bg_model, 8, seed=2)

    async def body(ctx):
        grant = [vec(4000 * (t % 3)) for t in range(8)]
        lend = [vec(30000 if t in (5, 6) else 0) for t in range(8)]
        base = [vec(12000) for _ in range(8)]
        await b.configure(ctx, C["SCHED_BIOS"], base=base, grant=grant, lend=lend, burst=(5, 6, 7),
                          pool=vec(20000))
        await b.stream(ctx, [b.desc(b.rng.randrange(8)) for _ in range(160)], source=source, sink=sink)
        await b.check_regs(ctx)
    run(b, body)
    for s in ("OWN", "BORROW", "RESERVED", "DEFER", "DEFER_EGRESS", "DEFER_BUFFER"):
        assert b.sources.get(s, 0) > 0, (s, b.sources)


def test_back_to_back_same_tenant_and_lender(bg_model):
    """One tenant, then every tenant borrowing from one lender, at one descriptor per clock:
    a missing forward of the previous cycle's write would let the budget be spent twice."""
    b = Bench(bg_model, 4, seed=3)

    async def body(ctx):
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(10**6), grant=[vec(90000), vec(0), vec(0), vec(0)],
                          lend=[vec(60000), vec(0), vec(0), vec(0)], burst=(0,))
        await b.stream(ctx, [b.desc(0, queue=0, size=100) for _ in range(20)])
        await b.check_regs(ctx)
        await b.stream(ctx, [b.desc(b.rng.choice((1, 2, 3)), queue=3, size=100) for _ in range(40)])
        await b.check_regs(ctx)
        # The lender is also the next descriptor's tenant, alternating.
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(10**6), grant=[vec(30000), vec(0), vec(0), vec(0)],
                          lend=[vec(30000), vec(0), vec(0), vec(0)], burst=(0,))
        await b.stream(ctx, [b.desc(t % 2, queue=0, size=100) for t in range(40)])
        await b.check_regs(ctx)
    run(b, body)
    assert b.sources.get("BORROW", 0) >= 15 and b.sources.get("OWN", 0) >= 15
    assert b.sources.get("DEFER", 0) > 0


@pytest.mark.parametrize("source,sink", [("always", "random"), ("bursty", "bursty")])
def test_back_to_back_under_backpressure(bg_model, source, sink):
    """One tenant, then one lender that is also every other descriptor's tenant, back to back
    while the output is held at random: catches a decision waiting in A4 (the stage after
    the RAM read) that loses the write of the decision just before it -- after the stall
    the budget would be spent twice."""
    b = Bench(bg_model, 4, seed=5)

    async def body(ctx):
        # Tenant 0's budget lasts; its lendable part runs out half-way through the second run.
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(10**6), grant=[vec(200000), vec(0), vec(0), vec(0)],
                          lend=[vec(40000), vec(0), vec(0), vec(0)], burst=(0,))
        await b.stream(ctx, [b.desc(0, queue=0, size=100) for _ in range(30)], source=source, sink=sink)
        await b.check_regs(ctx)
        await b.stream(ctx, [b.desc(t % 2, queue=0, size=100) for t in range(60)], source=source, sink=sink)
        await b.check_regs(ctx)
    run(b, body)
    assert b.sources.get("BORROW", 0) > 0 and b.sources.get("OWN", 0) > 0
    assert b.sources.get("DEFER", 0) > 0


def test_dispatch_charge_clamped_and_held(bg_model):
    """CPU costs around the load balancer's clamp (2**LB_CHARGE_BITS - 1), the output held at
    random: each dispatch carries its own descriptor's clamped cost. Catches the charge
    registered a stage ahead (issue 22, round 11) without the clamp (truncated), or taken
    from A3 while A4 waits (the next descriptor's)."""
    b = Bench(bg_model, 4, seed=8)
    for e in range(C["PRODUCTS"] * 2 * C["SIZE_CLASSES"]):
        b.model.write(reg("COST", "TABLE_BASE", e * DIMS + CPU), b.rng.randint(CHARGE_MAX // 2, CHARGE_MAX * 2))

    async def body(ctx):
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(2**31), grant=vec(2**31), lend=vec(0))
        await b.stream(ctx, [b.desc(b.rng.randrange(4)) for _ in range(80)], source="random", sink="bursty")
    run(b, body)
    assert CHARGE_MAX in b.charges and any(c < CHARGE_MAX for c in b.charges)


def test_p2c_tie_and_richer_lender(bg_model):
    """Two lenders: equal lendable CPU (tie: the first draw), then one richer. Catches a
    swapped comparison or a tie broken toward the second draw."""
    b = Bench(bg_model, 4, seed=4)
    ties = richer = 0

    async def body(ctx):
        nonlocal ties, richer
        for lend2 in (50000, 90000):
            lend = [vec(0), vec(0), vec(50000), vec(lend2)]
            await b.configure(ctx, C["SCHED_BIOS"], base=vec(10**6), grant=[vec(0), vec(0), vec(10**6), vec(10**6)],
                              lend=lend, burst=(2, 3))
            state = await b.read(ctx, reg("CTRL", "SEED"))
            descs = [b.desc(b.rng.choice((0, 1)), queue=0) for _ in range(30)]
            out = await b.stream(ctx, descs)
            for d in out:
                picks = []
                for _ in range(2):
                    for _ in range(32):
                        state = lfsr.step(state)
                    picks.append((2, 3)[(state * 2) >> 32])
                if d["source"] == C["SRC_BORROW"] and picks[0] != picks[1]:
                    if lend2 == 50000:
                        ties += 1
                    else:
                        richer += 1
            await b.check_regs(ctx)
    run(b, body)
    assert ties > 0 and richer > 0


def test_within_base_and_hot_segment(bg_model):
    """usage + cost above RES_BASE defers even with lenders and pool; a hot segment may not
    draw the pool. Catches the within-base rule applied to REMAINING or skipped, and the
    hot bit ignored."""
    b = Bench(bg_model, 4, seed=5)

    async def body(ctx):
        await b.write(ctx, reg("SEGMON", "HOT_THRESHOLD"), 0)  # hot from its first I/O on
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(9000), grant=vec(0), lend=[vec(0), vec(0), vec(0), vec(0)],
                          pool=vec(10**6))
        out = await b.stream(ctx, [b.desc(0, queue=0, segment=7, size=100) for _ in range(12)])
        assert all(d["hot"] and d["source"] == C["SRC_DEFER"] for d in out)
        await b.write(ctx, reg("SEGMON", "HOT_THRESHOLD"), 0xFFFF)
        out = await b.stream(ctx, [b.desc(1, queue=0, size=100) for _ in range(12)])
        kinds = {d["source"] for d in out}
        assert C["SRC_RESERVED"] in kinds and C["SRC_DEFER"] in kinds  # base runs out
        await b.check_regs(ctx)
    run(b, body)


@pytest.mark.parametrize("scheduler", ["SCHED_BASE", "SCHED_WILD", "SCHED_DUALBUCKET"])
def test_schedulers(bg_model, scheduler):
    """BaseCBS, WildCBS (the global budget too), dual-bucket (main bucket, then cheque)."""
    b = Bench(bg_model, 6, seed=6)

    async def body(ctx):
        await b.configure(ctx, C[scheduler], base=vec(5000), grant=[vec(3000 * t) for t in range(6)],
                          lend=vec(10**6), burst=(1, 2), pool=vec(15000), glob=vec(40000))
        await b.stream(ctx, [b.desc(b.rng.randrange(6)) for _ in range(120)], source="random", sink="random")
        await b.check_regs(ctx)
    run(b, body)
    assert b.sources.get("OWN", 0) > 0 and b.sources.get("DEFER", 0) > 0
    if scheduler == "SCHED_DUALBUCKET":
        assert b.sources.get("RESERVED", 0) > 0
    assert "BORROW" not in b.sources


def test_window_tick_commit_refill(bg_model):
    """COMMIT refills every tenant from its grant, clears the counters and active bits in
    one cycle; a GRANT write while the window runs does not change the window in progress,
    and grants persist to later windows. Catches a lazy refill from a grant written after
    the COMMIT, and stale counters after it."""
    b = Bench(bg_model, 36, seed=7)

    async def body(ctx):
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(10**5), grant=[vec(2000 * (t % 5)) for t in range(36)],
                          lend=[vec(5000) for _ in range(36)], burst=(3, 8, 13, 35), pool=vec(8000))
        for window in range(3):
            await b.stream(ctx, [b.desc(b.rng.randrange(36)) for _ in range(80)])
            # Rewrite some grants mid-window (touched and untouched tenants alike).
            rewritten = b.rng.sample(range(36), 6)
            for t in rewritten:
                for name in ("GRANT", "LEND_GRANT"):
                    await b.write(ctx, reg("TENANT", name, t * DIMS + b.rng.randrange(DIMS)), b.rng.randrange(9000))
            await b.check_regs(ctx, tenants=rewritten + [3, 8, 13, 35])
            await b.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_TICK"])
            await b.check_regs(ctx, tenants=range(0, 36, 7))
            await b.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_COMMIT"])
            await ctx.tick()
            await b.check_regs(ctx, tenants=rewritten + list(range(1, 36, 5)))
        await b.check_regs(ctx)
    run(b, body)
    assert b.sources.get("OWN", 0) > 0 and b.sources.get("BORROW", 0) > 0


def test_out_of_range_burst_entries_lend_nothing(bg_model):
    """Burst-list entries naming tenants this build lacks, and BURST_N = 1024."""
    b = Bench(bg_model, 5, seed=8)

    async def body(ctx):
        burst = [b.rng.choice((1, 4, 7, 1000, 1023)) for _ in range(1024)]
        grant = [vec(10**6 if t in (1, 4) else 0) for t in range(5)]
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(10**6), grant=grant, lend=vec(10**6), burst=burst,
                          pool=vec(3000))
        await b.stream(ctx, [b.desc(b.rng.choice((0, 2, 3)), queue=0) for _ in range(60)])
        await b.check_regs(ctx)
    run(b, body)
    assert b.sources.get("BORROW", 0) > 0


@pytest.mark.parametrize("scheduler", ["SCHED_BIOS", "SCHED_BASE", "SCHED_WILD", "SCHED_DUALBUCKET"])
def test_count_gate(bg_model, scheduler):
    """TENANT.COUNT_GRANT, the exact IOPS cap: a tenant is admitted at most COUNT_GRANT I/Os
    a window whatever would pay (its own grant, a lender, the pool, the shared buckets), the
    rest are deferred and counted (THROTTLE_N, DEFERRED), and COMMIT starts the count again.
    Back to back and under backpressure, against the model. Catches the gate missing from a
    source (a borrowed or pooled I/O past the cap), an off-by-one (<= for <), a count that
    is not cleared at COMMIT, or one that misses the forward of the previous cycle's I/O."""
    b = Bench(bg_model, 4, seed=9)
    grants = (3, 0, 7, 0xFFFFFFFF)  # tenant 1 has no grant of its own either: it borrows
    admitted = []

    async def body(ctx):
        big = vec(10**6)
        await b.configure(ctx, C[scheduler], base=big, grant=[big, vec(0), big, big],
                          lend=[vec(0), vec(0), big, big], burst=(2, 3), pool=big, glob=vec(10**7))
        for t, g in enumerate(grants):
            await b.write(ctx, reg("TENANT", "COUNT_GRANT", t), g)
        for _ in range(2):
            descs = [b.desc(t % 4 if n < 40 else b.rng.randrange(4), queue=b.rng.choice((0, 3)), size=100)
                     for n, t in enumerate(range(100))]
            out = await b.stream(ctx, descs, source="bursty", sink="random")
            n = [0] * 4
            for d in out:
                n[d["tenant"]] += d["source"] < C["SRC_DEFER"]
            admitted.append(n)
            await b.check_regs(ctx)
            await b.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_TICK"])
            await b.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_COMMIT"])
            await ctx.tick()
    run(b, body)
    for n in admitted:
        assert n[0] == 3 and n[2] == 7 and n[3] > 7, n
        # Without the gate BIOS lends to tenant 1 and dual-bucket pays it from the buckets.
        assert n[1] == 0, n
    assert b.sources.get("DEFER", 0) > 0


# Each case exhausts one budget with descriptors of one tenant (or a few) on consecutive
# cycles, so the decision in A4 and the one behind it in A3 meet the same word or register.
_EXHAUST = {
    # usage + cost <= RES_BASE: tenant 0 borrows from 1 until its usage reaches its base.
    "base": dict(sched="SCHED_BIOS", base=[vec(40000), vec(10**6), vec(10**6), vec(10**6)],
                 grant=[vec(0), vec(10**6), vec(0), vec(0)], lend=[vec(0), vec(10**6), vec(0), vec(0)],
                 burst=(1,), tenants=(0,)),
    # Two lenders, one short of REMAINING (its own I/Os spend it), one of LENDABLE: the
    # richer-lender compare and both covers, with the borrowers and the lenders interleaved.
    "lenders": dict(sched="SCHED_BIOS", base=vec(10**6),
                    grant=[vec(25000), vec(10**6), vec(0), vec(0)], lend=[vec(10**6), vec(25000), vec(0), vec(0)],
                    burst=(0, 1), tenants=(0, 1, 2, 3, 2, 3)),
    "pool": dict(sched="SCHED_BIOS", base=vec(10**6), grant=vec(0), lend=vec(0), burst=(), pool=vec(40000),
                 tenants=(0, 1, 2, 3)),
    "global": dict(sched="SCHED_WILD", base=vec(10**6), grant=vec(10**6), lend=vec(0), burst=(), glob=vec(40000),
                   tenants=(0, 0, 1)),
    "dualbucket": dict(sched="SCHED_DUALBUCKET", base=vec(10**6), grant=vec(0), lend=vec(0), burst=(),
                       glob=vec(25000), pool=vec(25000), tenants=(0, 1, 1)),
    "count": dict(sched="SCHED_BIOS", base=vec(10**6), grant=vec(10**6), lend=vec(0), burst=(), count=5,
                  tenants=(0,)),
}


@pytest.mark.parametrize("sink", ["always", "random"])
@pytest.mark.parametrize("case", sorted(_EXHAUST))
def test_exhaustion_back_to_back(bg_model, case, sink):
    """A budget runs out under descriptors on consecutive cycles (RES_BASE through the
    usage, a lender's REMAINING and LENDABLE, the reserved pool, the global budget, the
    count gate), with costs of three sizes so that after the first deferral a smaller cost
    may still fit: every decision at the edge is one whose compare must see the charge of
    the decision one cycle ahead of it. Catches a compare made a cycle early that misses
    that charge (or applies it when the decision ahead paid from another word), and with
    the output held at random, one that a waiting A4 loses."""
    p = _EXHAUST[case]
    b = Bench(bg_model, 4, seed=11)

    async def body(ctx):
        await b.configure(ctx, C[p["sched"]], base=p["base"], grant=p["grant"], lend=p["lend"], burst=p["burst"],
                          pool=p.get("pool", vec(0)), glob=p.get("glob", vec(0)))
        if "count" in p:
            await b.write(ctx, reg("TENANT", "COUNT_GRANT", 0), p["count"])
        for _ in range(2):
            descs = [b.desc(p["tenants"][n % len(p["tenants"])], queue=b.rng.choice((0, 3)),
                            size=b.rng.choice((100, 4096, 65536))) for n in range(60)]
            await b.stream(ctx, descs, sink=sink)
            await b.check_regs(ctx)
            await b.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_TICK"])
            await b.write(ctx, reg("CTRL", "WINDOW"), C["WINDOW_COMMIT"])
            await ctx.tick()
    run(b, body)
    admitted = sum(b.sources.get(s, 0) for s in ("OWN", "BORROW", "RESERVED"))
    print("SRC", case, b.sources)
    assert admitted >= 10 and b.sources.get("DEFER", 0) >= 10, b.sources


def test_window_bits_hazards(bg_model):
    """Whether a tenant's word is of this window (its window bit, issue 22 rounds 12 and 14)
    at the edges where the bit and the word part: the first I/Os of a tenant or lender in a
    window (every word stale) at distances 1 to 4 on consecutive cycles, with the output
    held at random; a COMMIT that applies in the cycle after the window's last decision
    (whose bit is set in that cycle); windows shorter than the bits' clear after a COMMIT
    (an empty window, tenants in the bank's last words); and a GRANT write, which
    materializes a stale word, while a descriptor of that tenant waits in A3. Every
    tenant's grant is spent in two or three I/Os, so a word taken as refilled when it was
    charged (or the reverse) changes a decision. Catches the bit's read missing the write
    of the cycle before, a waiting A3 not taking the write its forward flag took, the set
    of a COMMIT's cycle landing in the new window's bank, and a COMMIT that does not wait
    for the clear."""
    T = 64
    b = Bench(bg_model, T, seed=13)
    lenders = (61, 63)
    pick = (0, 1, 2, 33, 61, 62, 63)  # 62, 63: the last word the clear reaches
    grant = vec(6000)

    async def held_grant_write(ctx, x, y):
        """x, x, y, z with the output held: y waits in A3 while its GRANT is rewritten."""
        adm = b.adm
        descs = [b.desc(x, queue=0, size=100), b.desc(x, queue=0, size=100), b.desc(y, queue=0, size=100),
                 b.desc(0, queue=0, size=100)]
        expected = [b.model.io(**d) for d in descs]
        ctx.set(adm.o.ready, 0)
        for d, e in zip(descs, expected):
            ctx.set(adm.i.payload, AdmissionInput.const({"desc": d, "cost": list(e["cost"]), "hot": int(e["hot"])}))
            ctx.set(adm.i.valid, 1)
            while not (await ctx.tick().sample(adm.i.ready))[2]:
                pass
        ctx.set(adm.i.valid, 0)
        for _ in range(6):
            await ctx.tick()
        for d in range(DIMS):
            await b.write(ctx, reg("TENANT", "GRANT", y * DIMS + d), 0 if d % 2 else 10**6)
        for _ in range(3):
            await ctx.tick()
        got = []
        ctx.set(adm.o.ready, 1)
        while len(got) < len(descs):
            _, _, o_valid, o_payload = await ctx.tick().sample(adm.o.valid, adm.o.payload)
            if o_valid:
                got.append(o_payload)
        for n, (out, want) in enumerate(zip(got, expected)):
            assert (out["tenant"], out["source"]) == (want["tenant"], want["source"]), \
                f"held descriptor {n}: RTL tenant {out['tenant']} source {out['source']}, model {want}"
        for d in range(DIMS):  # back to the grant every other window starts from
            await b.write(ctx, reg("TENANT", "GRANT", y * DIMS + d), grant[d])

    async def body(ctx):
        # RES_BASE 9000: a tenant past its grant borrows about once, so its usage decides too.
        await b.configure(ctx, C["SCHED_BIOS"], base=vec(9000), grant=grant,
                          lend=[vec(8000) if t in lenders else vec(0) for t in range(T)], burst=lenders)
        for window in range(20):
            some = b.rng.sample(pick, 3)
            descs = [b.desc(b.rng.choice(some), queue=b.rng.choice((0, 3)), size=100) for _ in range(14)]
            commit = window % 3 != 2
            if commit:  # the last COMMIT's clear done, so this one applies right after the stream
                for _ in range(40):
                    await ctx.tick()
            await b.stream(ctx, descs, sink=("always", "random")[window % 2], commit=commit)
            if commit:
                await b.wait_window(ctx)
            else:
                await b.check_regs(ctx, tenants=pick)  # the words as the window leaves them
                await b.commit(ctx)
            if window % 4 == 1:  # an empty window, committed before the clear is through
                await b.commit(ctx, tick=False)
            if window % 6 == 3:
                await held_grant_write(ctx, b.rng.choice((0, 1)), b.rng.choice((2, 33, 62)))
                await b.commit(ctx)
        await b.check_regs(ctx, tenants=pick)
    run(b, body)
    assert b.sources.get("OWN", 0) > 0 and b.sources.get("BORROW", 0) > 0 and b.sources.get("DEFER", 0) > 0


def test_constructor_checks():
    with pytest.raises(TypeError, match="Tenants must be an integer"):
        Admission(tenants="8")
    with pytest.raises(ValueError, match="1..1024"):
        Admission(tenants=1025)
