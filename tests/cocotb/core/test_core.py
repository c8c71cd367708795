"""cocotb differential testbench: the generated bg_core on Verilator against bg::Agent.

Every cycle the bench may offer a descriptor, a completion (of any earlier admitted
decision, out of order, now and then a host-bug one) and a register access; it records what
the DUT accepts in the core's event order (completion, descriptor, register write of one
cycle) and replays that stream into ``burstgate_model.Agent`` as it goes. Every decision
and every register read must equal the model's. Phases: mixed traffic, every tenant
bursting, one tenant hammering one segment (30 % of descriptors carry the reoffer bit, which
the segment monitor must not count), back-to-back runs of one tenant, windows
(TICK in the middle of a burst, drain, firmware reads and writes, COMMIT), idle and
backpressure patterns; then a throughput measurement. The seed is cocotb's RANDOM_SEED;
CORE_EVENTS sets the number of events (descriptors + completions + register accesses).
"""

import collections
import math
import os
import pathlib
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from burstgate.layouts import Completion, Decision, Descriptor, pack, unpack
from burstgate.regmap import C, REGMAP
from burstgate.testing import StreamPattern

PARAMS = {"tenants": 64, "ingress": 4, "egress": 4, "segment_bits": 8}
T, NI, NE = PARAMS["tenants"], PARAMS["ingress"], PARAMS["egress"]
DIMS = C["COST_DIMS"]
SRC = {C[n]: n[4:] for n in ("SRC_OWN", "SRC_BORROW", "SRC_RESERVED", "SRC_DEFER",
                              "SRC_DEFER_EGRESS", "SRC_DEFER_BUFFER")}
SCHED = {C[n]: n[6:] for n in ("SCHED_BIOS", "SCHED_BASE", "SCHED_WILD", "SCHED_DUALBUCKET")}
EVENTS = int(os.environ.get("CORE_EVENTS", "30000"))
THROUGHPUT_DESCRIPTORS = int(os.environ.get("CORE_THROUGHPUT_DESCRIPTORS", "100000"))


def reg(block, name, index=0):
    b = REGMAP.block(block)
    return b.base + b.register(name).offset + 4 * index


WINDOW = reg("CTRL", "WINDOW")
SCHEDULER = reg("CTRL", "SCHEDULER")
POLICY = reg("LB", "POLICY")
LB_SEED = reg("LB", "SEED")
BP_SHARED = reg("BPOOL", "SHARED")
LB_DEPTH = reg("LB", "DEPTH")


class TB:
    def __init__(self, dut, seed):
        import burstgate_model
        self.dut = dut
        self.log = dut._log
        self.rng = random.Random(seed)
        self.model = burstgate_model.Agent(**PARAMS)
        cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
        self.expected = collections.deque()  # model decisions not yet out of the DUT
        self.outstanding = []                # admitted decisions the host has not completed
        self.bus_q = collections.deque()
        self.read_issued = None
        self.last_window = 0
        self.d_gen = None
        self.d_pending = None
        self.paused = False
        self.accepted = 0
        self.c_rate = 0.0
        self.c_pending = None
        self.c_seq = None        # the last completion's sequence number (for the coverage)
        self.bad_rate = 0.01
        # Descriptors offered again after a deferral: the segment monitor must not count them.
        # Their own generator, so a seed's traffic (and what it covers) is what it was before
        # descriptors had the bit.
        self.reoffer_p = 0.3
        self.reoffer_rng = random.Random(f"reoffer-{seed}")
        self.source = self.sink = StreamPattern("always")
        self.events = self.cycles = self.decisions = self.reads = 0
        self.scheduler = C["SCHED_BIOS"]
        self.policy = 0
        self.configs = 0
        self.cov = collections.Counter()
        self.prev = None
        # Lazy replay (the tests of writes amid traffic): accepted events wait in ``held`` and
        # reach the model only as the DUT's decisions need them, so that a write the RTL
        # applies between two decisions (an address in ``between``) can be placed there in
        # the model's stream: after the descriptors decided by the end of its cycle, before
        # the rest. (The model has no pipeline; firmware makes other writes once drained.)
        self.lazy = False
        self.between = frozenset()
        self.held = collections.deque()
        self.replayed = 0        # descriptors the model has decided
        self.between_op = None   # such a write issued last cycle, to be placed now
        self.seed_marks = collections.deque()  # (descriptors decided before it, cycle) per placed write

    async def reset(self):
        dut = self.dut
        for sig in (dut.i__valid, dut.o__ready, dut.c__valid, dut.bus__w_en, dut.bus__r_en):
            sig.value = 0
        dut.i__payload.value = 0
        dut.c__payload.value = 0
        dut.bus__addr.value = 0
        dut.bus__w_data.value = 0
        dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)

    # ---- the model's event stream ----------------------------------------------------------
    def event(self, ev):
        """An event the DUT accepted, in the core's order: replayed now, or held (lazy)."""
        if self.lazy:
            self.held.append(ev)
        else:
            self.replay(ev)

    def replay(self, ev):
        kind = ev[0]
        if kind == "c":
            self.model.complete(**ev[1])
        elif kind == "d":
            self.expected.append((self.model.io(**ev[1]), ev[1]["reoffer"]))
            self.replayed += 1
        else:
            self.model.write(ev[1], ev[2])

    def catch_up(self, one_decision=False):
        """Replay held events: all of them, or up to and including the next descriptor."""
        while self.held:
            ev = self.held.popleft()
            self.replay(ev)
            if one_decision and ev[0] == "d":
                return

    def place_between(self, addr, data, decided):
        """Put a write just before descriptor ``decided`` (counting from 0) in the stream:
        after every descriptor decided before it, and after any write placed there earlier.

        Completions and COST writes it passes commute with a seed write (it touches only the
        balancer's LFSR); the descriptors do not, which is the point. A BPOOL write does not
        commute with a completion (a release may leave the pool idle): its test has none
        pending when it writes."""
        k = decided - self.replayed
        assert k >= 0, f"a write between decisions {decided - 1} and {decided}, but the model decided {self.replayed}"
        pos = 0
        while pos < len(self.held) and (k or self.held[pos][0] != "d"):
            k -= self.held[pos][0] == "d"
            pos += 1
        assert k == 0, f"{k} descriptors decided that the bench never saw accepted"
        self.held.insert(pos, ("w", addr, data))
        self.seed_marks.append((decided, self.cycles))
        if os.environ.get("CORE_TRACE"):
            self.log.info("write %#x = %#x placed after decision %d (cycle %d)", addr, data, decided, self.cycles)

    # ---- one clock ----------------------------------------------------------------------
    async def step(self):
        dut, rng = self.dut, self.rng
        if self.d_pending is None and self.d_gen is not None and not self.paused and self.source():
            self.d_pending = next(self.d_gen, None)
            if self.d_pending is not None:
                dut.i__payload.value = pack(Descriptor, self.d_pending)
        dut.i__valid.value = int(self.d_pending is not None)
        if self.c_pending is None and self.c_rate and rng.random() < self.c_rate:
            self.c_pending = self.completion()
            if self.c_pending is not None:
                dut.c__payload.value = pack(Completion, self.c_pending)
        dut.c__valid.value = int(self.c_pending is not None)
        op = self.bus_q.popleft() if self.bus_q else None
        dut.bus__w_en.value = int(op is not None and op[0] == "w")
        dut.bus__r_en.value = int(op is not None and op[0] == "r")
        if op is not None:
            dut.bus__addr.value = op[1]
            dut.bus__w_data.value = op[2] if op[0] == "w" else 0
        ready = self.sink()
        dut.o__ready.value = int(ready)
        await ReadOnly()
        self.cycles += 1
        if self.between_op is not None:
            # Decided by the end of last cycle: those taken from ``o`` so far and the one on it.
            self.place_between(*self.between_op, self.decisions + int(dut.o__valid.value))
            self.between_op = None
        if self.cycles % 50000 == 0:
            self.log.info("cycle %d: %d events, %d decisions compared", self.cycles, self.events, self.decisions)
        if self.read_issued is not None:
            addr, want = self.read_issued
            got = dut.bus__r_data.value.to_unsigned()
            self.read_issued = None
            if addr == WINDOW:
                self.last_window = got
                if got & 2:  # busy: the model, being atomic, has no such state
                    got, want = got & 1, None
            if want is not None:
                self.reads += 1
                assert got == want, f"read {addr:#x}: RTL {got:#x}, model {want:#x} (cycle {self.cycles})"
        # The core's order of one cycle: completion, descriptor, register access.
        if self.c_pending is not None and dut.c__ready.value == 1:
            c = self.c_pending
            if os.environ.get("CORE_TRACE"):
                self.log.info("completion cycle %d: %s", self.cycles, c)
            self.event(("c", c))
            self.c_pending = None
            # Its sequence number in the core: the descriptors accepted before it.
            seq = self.accepted
            if seq == self.c_seq:
                self.cov["consecutive completions of one sequence number"] += 1
            if seq > self.decisions + int(dut.o__valid.value):
                self.cov["completion behind a descriptor in flight"] += 1
            if (1 << 16) <= seq < (1 << 16) + 2 and seq > self.decisions + int(dut.o__valid.value) + 1:
                self.cov["completion just past the wrap, two descriptors before it in flight"] += 1
            self.c_seq = seq
            self.events += 1
            self.cov["completions"] += 1
        if self.d_pending is not None and dut.i__ready.value == 1:
            self.event(("d", self.d_pending))
            self.d_pending = None
            self.accepted += 1
            self.events += 1
            if self.c_pending is None and dut.c__valid.value == 1:
                self.cov["completion and descriptor in one cycle"] += 1
        if op is not None:
            self.events += 1
            if op[0] == "w":
                if self.lazy and op[1] in self.between:
                    assert self.between_op is None
                    self.between_op = (op[1], op[2])
                else:
                    self.event(("w", op[1], op[2]))
                if op[1] == SCHEDULER:  # for the coverage of the decisions that follow
                    self.scheduler = op[2]
                elif op[1] == POLICY:
                    self.policy = op[2]
            else:
                self.catch_up()  # reads are compared only once drained, when the RTL has it all
                self.read_issued = (op[1], self.model.read(op[1]))
        if not ready and dut.o__valid.value == 1:
            self.cov["backpressure cycles"] += 1
        if dut.o__valid.value == 1 and ready:
            self.check(unpack(Decision, dut.o__payload.value.to_unsigned()))
        await RisingEdge(dut.clk)

    def check(self, out):
        if not self.expected:
            self.catch_up(one_decision=True)
        want, reoffer = self.expected.popleft()
        if self.seed_marks and self.seed_marks[0][0] == self.decisions:
            # The first decision after a seed write, admitted in the cycle after the write (the
            # balancer's settle cycle: out one cycle later) or held to the one after it.
            _, cycle = self.seed_marks.popleft()
            if want["source"] < C["SRC_DEFER"] and self.cycles - cycle <= 2:
                self.cov["seed write, next decision admitted at once"] += 1
        while self.seed_marks and self.seed_marks[0][0] < self.decisions:
            self.seed_marks.popleft()
        ref = {k: int(want[k]) for k in ("tag", "tenant", "queue", "source", "lender", "egress", "hot", "prefill")}
        ref["cost"] = list(want["cost"])
        if os.environ.get("CORE_TRACE"):
            self.log.info("decision %d cycle %d: %s", self.decisions, self.cycles, out)
        assert out == ref, f"decision {self.decisions}: RTL {out}, model {ref}"
        self.decisions += 1
        src = SRC[out["source"]]
        self.cov[f"source {src}"] += 1
        self.cov[f"scheduler {SCHED[self.scheduler]}"] += 1
        if out["source"] < C["SRC_DEFER"]:
            self.cov[f"lb policy {self.policy}"] += 1
            self.outstanding.append(out)
        self.cov["hot"] += out["hot"]
        self.cov["re-offer"] += reoffer
        self.cov["hot re-offer"] += reoffer & out["hot"]
        self.cov["prefill"] += out["prefill"]
        prev = self.prev
        if prev is not None:
            if prev["tenant"] == out["tenant"]:
                self.cov["back-to-back same tenant"] += 1
            if src == "BORROW" and prev["source"] == C["SRC_BORROW"] and prev["lender"] == out["lender"]:
                self.cov["back-to-back same lender"] += 1
            if src == "BORROW" and prev["tenant"] == out["lender"]:
                self.cov["lender was the previous tenant"] += 1
        self.prev = out

    def completion(self):
        rng = self.rng
        if rng.random() < self.bad_rate:  # a host bug: the model counts it bad, nothing may change
            self.cov["bad completions offered"] += 1
            return dict(tag=rng.getrandbits(16), tenant=rng.randrange(1 << C["TENANT_BITS"]),
                        queue=rng.randrange(16), egress=rng.randrange(16), charge_ns=rng.getrandbits(21),
                        sa_delay_ns=rng.getrandbits(20))
        if not self.outstanding:
            return None
        k = rng.randrange(len(self.outstanding)) if rng.random() < 0.8 else 0
        self.outstanding[k], self.outstanding[-1] = self.outstanding[-1], self.outstanding[k]
        d = self.outstanding.pop()
        if k != len(self.outstanding):
            self.cov["out-of-order completions"] += 1
        delay = int(math.exp(rng.uniform(math.log(200), math.log(5e7))))
        return dict(tag=d["tag"], tenant=d["tenant"], queue=d["queue"], egress=d["egress"],
                    charge_ns=d["cost"][C["DIM_CPU"]], sa_delay_ns=delay)

    # ---- phases -------------------------------------------------------------------------
    async def cycles_until(self, done, limit=100_000):
        for _ in range(limit):
            if done():
                return
            await self.step()
        raise AssertionError(f"no progress in {limit} cycles (a stall that never clears): "
                             f"{len(self.expected)} decisions due, WINDOW {self.last_window:#x}")

    async def drain(self):
        """Offer nothing new; wait until CTRL.WINDOW bit 1 (busy) reads 0 and every decision
        is out. A descriptor already offered stays offered (the stream rules): while
        admission is held it is simply not accepted until the COMMIT. Completions stay off
        until the caller resumes them: a register access while one is queued in the core
        would race with it (the rule the Core docstring states)."""
        self.paused, self.c_rate = True, 0.0
        await self.cycles_until(lambda: self.c_pending is None)
        for _ in range(10_000):
            self.last_window = 2
            self.bus_q.append(("r", WINDOW))
            await self.cycles_until(lambda: not self.bus_q and self.read_issued is None)
            if not self.last_window & 2:
                break
        else:
            raise AssertionError(f"CTRL.WINDOW stays busy ({self.last_window:#x}) with {len(self.expected)} "
                                 f"decisions due and {self.accepted} descriptors accepted")
        await self.cycles_until(lambda: not self.expected)

    async def traffic(self, descs, *, c_rate=0.7, tick_at=None, firmware=list, cost_writes=False, seed_writes=0.0):
        """Offer ``descs`` with completions at ``c_rate``; after ``tick_at`` of them are
        accepted, TICK in the middle of the burst and run a window with ``firmware()``. With
        ``seed_writes``, that share of the cycles writes LB.SEED amid the traffic (one in four
        twice in a row)."""
        self.d_gen, self.c_rate, self.paused = iter(descs), c_rate, False
        start_events, start = self.events, self.accepted
        idle = 0
        while self.accepted - start < len(descs):
            before = self.accepted
            await self.step()
            idle = 0 if self.accepted != before else idle + 1
            assert idle < 100_000, f"no descriptor accepted in {idle} cycles"
            if tick_at is not None and self.accepted - start >= tick_at:
                tick_at = None
                if self.expected:
                    self.cov["TICK with descriptors in flight"] += 1
                await self.window(firmware())
                self.paused = False
            if cost_writes and self.rng.random() < 0.003 and not self.bus_q:
                self.bus_q.append(("w", reg("COST", "FACTOR", self.rng.randrange(DIMS)),
                                   self.rng.choice((4096, 3000, 6000))))
            if seed_writes and not self.bus_q and self.rng.random() < seed_writes:
                self.bus_q.extend(("w", LB_SEED, self.rng.getrandbits(32))
                                  for _ in range(2 if self.rng.random() < 0.25 else 1))
                self.cov["LB.SEED writes amid traffic"] += len(self.bus_q)
        self.d_gen = None
        return self.events - start_events

    async def window(self, firmware):
        """TICK (if not already), drain, the firmware's reads and writes, COMMIT."""
        c_rate = self.c_rate
        self.bus_q.append(("w", WINDOW, C["WINDOW_TICK"]))
        await self.drain()
        for name in ("IOS", "DEFERRED", "DEFERRED_EGRESS", "DEFERRED_BUFFER", "COMPLETIONS",
                     "BAD_COMPLETIONS", "POOL_DRAWN", "SEED", "WINDOW_INDEX"):
            self.bus_q.append(("r", reg("CTRL", name)))
        for t in self.rng.sample(range(T), 4):
            for name in ("REMAINING", "LENDABLE", "USAGE", "THROTTLE"):
                self.bus_q.extend(("r", reg("TENANT", name, t * DIMS + d)) for d in range(DIMS))
            self.bus_q.extend([("r", reg("TENANT", "THROTTLE_N", t)), ("r", reg("TENANT", "SPILL_N", t)),
                               ("r", reg("TENANT", "COUNT_GRANT", t))])
            self.bus_q.extend(("r", reg("TENANT", "HIST", t * 32 + b)) for b in range(32))
        self.bus_q.extend(("r", reg("CTRL", "ACTIVE", w)) for w in range(3))
        self.bus_q.extend(("r", reg("CTRL", "HIST_ALL", b)) for b in range(32))
        self.bus_q.extend(("r", reg("LB", n, e)) for n in ("OUT_IOS", "OUT_NS") for e in range(NE + 1))
        self.bus_q.extend(("r", reg("BPOOL", "HELD", k)) for k in range(NI + 1))
        self.bus_q.extend(firmware)
        self.bus_q.append(("w", WINDOW, C["WINDOW_COMMIT"]))
        await self.cycles_until(lambda: not self.bus_q)
        self.c_rate = c_rate
        self.cov["windows"] += 1

    # ---- configurations ------------------------------------------------------------------
    def vec_writes(self, name, t, values):
        return [("w", reg("TENANT", name, t * DIMS + d), v) for d, v in enumerate(values)]

    def provisioning(self, scheduler, lenders=None):
        """A firmware window's writes: grants, lenders, pools (scaled to the cost table)."""
        rng, w = self.rng, []
        w.append(("w", SCHEDULER, scheduler))
        unit = 3000
        for t in range(T):
            # A third of the tenants have no grant of their own (they borrow or draw the
            # pool); half lend. Every dimension of a vector is set, with some jitter.
            def vec(lo, hi):
                k = rng.randrange(lo, hi)
                return [k * unit + rng.randrange(unit) for _ in range(DIMS)]
            base = vec(5, 80)
            grant = vec(0, 1) if rng.random() < 0.33 else vec(2, 60)
            lend = vec(5, 80) if rng.random() < 0.5 else vec(0, 1)
            w += self.vec_writes("RES_BASE", t, base) + self.vec_writes("GRANT", t, grant)
            w += self.vec_writes("LEND_GRANT", t, lend)
            # The count gate: a quarter of the tenants capped at a few I/Os a window.
            count = rng.randrange(0, 12) if rng.random() < 0.25 else 0xFFFFFFFF
            w.append(("w", reg("TENANT", "COUNT_GRANT", t), count))
        n = rng.choice((0, 1, 2, 8, 30, 64)) if lenders is None else lenders
        for j in range(n):
            w.append(("w", reg("TENANT", "BURST_LIST", j), rng.choice((rng.randrange(T), rng.randrange(1024)))))
        w.append(("w", reg("CTRL", "BURST_N"), n))
        for d in range(DIMS):
            w.append(("w", reg("CTRL", "POOL", d), rng.randrange(0, 400 * unit)))
            w.append(("w", reg("CTRL", "GLOBAL", d), rng.randrange(0, 800 * unit)))
        return w

    def random_config(self):
        """Register writes the firmware may make between windows, some of them ignored ones."""
        rng, w = self.rng, []
        self.configs += 1  # the load balancer's policies in turn
        w.append(("w", POLICY, self.configs % 4))
        w.append(("w", reg("LB", "DEPTH"), rng.choice((0, 1, 3, 16, 64, 4095))))
        w.append(("w", reg("LB", "SEED"), rng.getrandbits(32)))
        for i in range(NI + 1):
            w.append(("w", reg("LB", "MAP", i), rng.choice((1 << (i % NE), 0xF, rng.getrandbits(16)))))
        for k in range(NI + 1):
            if k != 3:  # queue 3 keeps its one buffer: some DEFER_BUFFER in every run
                w.append(("w", reg("BPOOL", "DEDICATED", k), rng.choice((0, 2, 8, 64, 4095))))
        w.append(("w", reg("BPOOL", "SHARED"), rng.choice((0, 4, 32, 1000))))
        w.append(("w", reg("BPOOL", "BORROW_CAP"), rng.choice((0, 2, 16, 0xFFFF))))
        w.append(("w", reg("BPOOL", "QUIET"), rng.choice((0, 1, 3))))
        w.append(("w", reg("SEGMON", "HOT_THRESHOLD"), rng.choice((0, 3, 20, 60, 500))))
        w.append(("w", reg("SEGMON", "STEADY_WINDOWS"), rng.choice((0, 2, 5, 254, 255))))
        # The unit: requests, or 512-byte sectors (descriptor sizes up to 128 KiB add up to 256).
        w.append(("w", reg("SEGMON", "UNIT"), rng.choice((0, 1))))
        w.append(("w", reg("CTRL", "SEED"), rng.getrandbits(32)))
        w += [("r", a) for a in (reg("LB", "DEPTH"), reg("LB", "SEED"), reg("BPOOL", "SHARED"),
                                 reg("BPOOL", "BORROW_CAP"), reg("BPOOL", "QUIET"), reg("SEGMON", "STEADY_WINDOWS"), reg("SEGMON", "UNIT"),
                                 reg("INFO", "MAGIC"), reg("INFO", "TENANTS"), reg("INFO", "SEGMENT_BITS"),
                                 0x0, 0x7FFFC, 0x9000)]
        w += [("r", reg("LB", "MAP", i)) for i in range(NI + 1)]
        w += [("r", reg("BPOOL", "DEDICATED", k)) for k in range(NI + 1)]
        return w

    def cost_table(self):
        rng, w = self.rng, []
        for e in range(C["PRODUCTS"] * 2 * C["SIZE_CLASSES"]):
            for d in range(DIMS):
                w.append(("w", reg("COST", "TABLE_BASE", e * DIMS + d), rng.randrange(500, 6000)))
                w.append(("w", reg("COST", "TABLE_SLOPE", e * DIMS + d), rng.randrange(0, 200)))
        return w

    # ---- descriptor streams --------------------------------------------------------------
    def desc(self, tenant, queue=None, segment=None, size=None):
        rng = self.rng
        return dict(tag=rng.getrandbits(16), tenant=tenant, queue=rng.randrange(NI) if queue is None else queue,
                    product=rng.getrandbits(2), write=bool(rng.getrandbits(1)),
                    size=rng.getrandbits(rng.choice((9, 12, 14, 17))) if size is None else size,
                    segment=rng.getrandbits(16) if segment is None else segment,
                    reoffer=self.reoffer_rng.random() < self.reoffer_p)

    def stream(self, kind, n):
        rng = self.rng
        if kind == "mixed":
            return [self.desc(rng.randrange(T)) for _ in range(n)]
        if kind == "all bursting":
            return [self.desc(k % T, size=rng.getrandbits(rng.choice((16, 18)))) for k in range(n)]
        if kind == "hammer":
            t, s = rng.randrange(T), rng.getrandbits(16)
            return [self.desc(t, segment=s) if rng.random() < 0.8 else self.desc(rng.randrange(T)) for _ in range(n)]
        out = []  # back-to-back runs of one tenant
        while len(out) < n:
            t = rng.randrange(T)
            out += [self.desc(t) for _ in range(rng.randint(3, 20))]
        return out[:n]

    def summary(self):
        lines = [f"{k:40s} {v}" for k, v in sorted(self.cov.items())]
        self.log.info("functional coverage (%d decisions, %d reads compared, %d events, %d cycles):\n%s",
                      self.decisions, self.reads, self.events, self.cycles, "\n".join(lines))


async def differential(dut, events, source, sink):
    tb = TB(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    tb.bus_q.extend(tb.cost_table())
    await tb.window(tb.provisioning(C["SCHED_BIOS"], lenders=30) + tb.random_config() + [
        # Something of everything from the start: a small buffer pool on queue 3, hot
        # segments, an egress set that is sometimes full, and one that is empty.
        ("w", reg("BPOOL", "DEDICATED", 3), 1), ("w", reg("BPOOL", "SHARED"), 2),
        ("w", reg("BPOOL", "BORROW_CAP"), 1), ("w", reg("BPOOL", "QUIET"), 1),
        ("w", reg("BPOOL", "DEDICATED", 0), 4095), ("w", reg("LB", "MAP", 0), 1),
        ("w", reg("LB", "MAP", 3), 0xF), ("w", reg("LB", "MAP", 1), 0), ("w", reg("LB", "DEPTH"), 16),
        # R = 42, not 60: 30 % of descriptors are re-offers the monitor does not count, so the
        # first hammer burst crosses R after as many descriptors as 60 took when all counted.
        ("w", reg("SEGMON", "HOT_THRESHOLD"), 42), ("w", reg("SEGMON", "STEADY_WINDOWS"), 2)])
    kinds = ("hammer", "back-to-back", "all bursting", "mixed")
    schedulers = (C["SCHED_BIOS"], C["SCHED_BIOS"], C["SCHED_BASE"], C["SCHED_WILD"], C["SCHED_DUALBUCKET"])
    phase = 0
    while tb.events < events:
        # Every kind of stream and a TICK mid-burst early on, then at random.
        mixes = ("random", "bursty") if phase == 0 else ("always", "random", "bursty")
        tb.source = StreamPattern(source if source != "mix" else tb.rng.choice(mixes), duty=0.6,
                                  seed=tb.rng.getrandbits(32))
        tb.sink = StreamPattern(sink if sink != "mix" else tb.rng.choice(mixes), duty=0.6, seed=tb.rng.getrandbits(32))
        kind = kinds[phase % len(kinds)] if phase < len(kinds) else tb.rng.choice(kinds)
        n = tb.rng.randint(200, 1500)
        tb.cov[f"stream {kind}"] += 1
        tick_at = n // 2 if phase == 0 else tb.rng.randrange(1, n) if tb.rng.random() < 0.5 else None
        phase += 1

        def firmware(phase=phase):
            # Every other window re-provisions, cycling through the schedulers.
            w = tb.provisioning(schedulers[phase // 2 % len(schedulers)]) if phase % 2 else []
            if phase % 3 == 2:
                w += tb.random_config()
            return w
        await tb.traffic(tb.stream(kind, n), c_rate=tb.rng.choice((0.3, 0.7, 1.0)),
                         tick_at=tick_at, firmware=firmware, cost_writes=True)
        # Grant rewrites while the window runs (drained): they must not touch this window.
        await tb.drain()
        for t in tb.rng.sample(range(T), 3):
            tb.bus_q.extend(tb.vec_writes("GRANT", t, [tb.rng.randrange(100000) for _ in range(DIMS)]))
            tb.bus_q.extend(("r", reg("TENANT", "REMAINING", t * DIMS + d)) for d in range(DIMS))
        await tb.window(firmware())
    await tb.drain()
    tb.c_rate = 1.0
    await tb.cycles_until(lambda: not tb.outstanding or tb.rng.random() < 0.001)
    await tb.window([])  # every counter once more, after the last completions
    tb.summary()
    if events < 5000:
        return  # too short a run to promise every case
    for case in ("source OWN", "source BORROW", "source RESERVED", "source DEFER", "source DEFER_EGRESS",
                 "source DEFER_BUFFER", "scheduler BIOS", "back-to-back same tenant",
                 "bad completions offered", "TICK with descriptors in flight", "completion and descriptor in one cycle",
                 "hot", "prefill", "re-offer", "hot re-offer"):
        assert tb.cov[case] > 0, f"the stream never hit {case!r}: {dict(tb.cov)}"
    if events >= 20000:
        # Out-of-order completions need two admitted descriptors outstanding at a completion;
        # make test's 7500 events at RANDOM_SEED 1795983481 (source=mix, sink=always) never had
        # them (673 completions, each alone). make test covers them on purpose in
        # completion_order_hazards (at least 50); the long runs must still hit them here.
        for case in ("scheduler BASE", "scheduler WILD", "scheduler DUALBUCKET", "back-to-back same lender",
                     "lb policy 0", "lb policy 3", "out-of-order completions"):
            assert tb.cov[case] > 0, f"the stream never hit {case!r}: {dict(tb.cov)}"
    if sink != "always":
        assert tb.cov["backpressure cycles"] > 0


@cocotb.test()
@cocotb.parametrize(source=["mix", "always"], sink=["mix", "always"])
async def decisions_equal_the_model(dut, source, sink):
    """CORE_EVENTS events of adversarial traffic; every decision and read equals the model's."""
    await differential(dut, max(EVENTS // 4, 2000), source, sink)


@cocotb.test()
async def throughput(dut):
    """Descriptors per clock with random tenants, no egress backpressure, no window tick."""
    tb = TB(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    tb.bus_q.extend(tb.cost_table())
    await tb.window(tb.provisioning(C["SCHED_BIOS"]) + [("w", reg("LB", "DEPTH"), 4095)])
    n = THROUGHPUT_DESCRIPTORS
    first = None
    tb.bad_rate = 0.0  # each host-bug completion costs a cycle by design (see Core)
    tb.d_gen, tb.c_rate, tb.paused = iter(tb.stream("mixed", n)), 1.0, False
    while tb.decisions < n:
        assert tb.cycles < 3 * n + 10_000, f"{tb.decisions} of {n} decisions in {tb.cycles} cycles"
        if first is None and tb.expected:
            first = tb.cycles
        await tb.step()
    cycles = tb.cycles - first
    rate = n / cycles
    tb.summary()
    tb.log.info("throughput: %d descriptors decided in %d cycles: %.4f per clock", n, cycles, rate)
    assert rate >= 0.99, f"{rate:.4f} descriptors per clock"


@cocotb.test()
async def seed_writes_amid_traffic(dut):
    """LB.SEED written while descriptors flow under P2C, in any cycle (the balancer's tables
    settle for a cycle after one): every decision, its egress included, and the balancer's
    outstanding counts after each burst equal the model's, with each seed write placed in the
    model's stream between the decisions the RTL made before and after it."""
    tb = TB(dut, cocotb.RANDOM_SEED)
    tb.lazy, tb.between = True, frozenset((LB_SEED,))
    await tb.reset()
    tb.bus_q.extend(tb.cost_table())
    # P2C over all four egress queues from every ingress, deep enough that most decisions
    # admit, shallow enough that an egress is sometimes full; buffers plentiful.
    lb = [("w", POLICY, C["LB_P2C"]), ("w", reg("LB", "DEPTH"), 12)]
    lb += [("w", reg("LB", "MAP", i), 0xF if i else 0x6) for i in range(NI)]
    bp = [("w", reg("BPOOL", "DEDICATED", k), 4095) for k in range(NI)]
    await tb.window(tb.provisioning(C["SCHED_BIOS"], lenders=8) + lb + bp)
    tb.policy = C["LB_P2C"]
    bursts = max(2, min(EVENTS // 2500, 8))
    for burst in range(bursts):
        pattern = ("always", "random", "bursty")[burst % 3]
        tb.source = StreamPattern(pattern, duty=0.7, seed=tb.rng.getrandbits(32))
        tb.sink = StreamPattern(("always", "bursty")[burst % 2], duty=0.8, seed=tb.rng.getrandbits(32))
        await tb.traffic(tb.stream(("mixed", "back-to-back")[burst % 2], 600), c_rate=(0.7, 1.0)[burst % 2],
                         cost_writes=True, seed_writes=0.03)
        await tb.drain()
        # The balancer's counts (OUT_IOS, OUT_NS), the buffer pool's, every counter, the LFSR.
        await tb.window([("r", LB_SEED)])
    await tb.drain()
    tb.c_rate = 1.0
    await tb.cycles_until(lambda: not tb.outstanding)
    await tb.window([("r", LB_SEED)])
    tb.summary()
    assert tb.cov["seed write, next decision admitted at once"] >= 5, dict(tb.cov)


@cocotb.test()
async def bpool_write_beside_a_decision(dut):
    """A BPOOL write in each cycle around an admitted descriptor's decision, the pool idle
    before it, so the write rebuilds the pool (or, once the descriptor holds a buffer, only
    stores the configuration): the descriptor keeps its buffer and its balancer charge, so
    its completion is good and every count equals the model's, with the write placed in the
    model's stream between the decisions the RTL made before and after it. (A rebuild in
    the cycle of an acquire drops it: the I/O's completion then counts as bad and its
    egress slot is never given back.) Then the same with a pool that can serve queue 0 only
    once the write is in force: a decision in the cycle after a rebuild, on the pool's
    answer formed before it, would be deferred where the model admits."""
    tb = await one_tenant_tb(dut, BP_SHARED, [("w", reg("LB", "DEPTH"), 16), ("w", reg("LB", "MAP", 0), 0xF),
                                              ("w", reg("BPOOL", "DEDICATED", 0), 1), ("w", BP_SHARED, 4)])
    admitted = 0
    for offset in range(8, 20):  # the decision is some cycles after acceptance (the core's latency)
        await one_descriptor_then_write(tb, offset, 4 + offset % 2)
        admitted += len(tb.outstanding)
        tb.c_rate = 1.0  # give every buffer back, so the pool is idle for the next write
        await tb.cycles_until(lambda: not tb.outstanding and tb.c_pending is None)
        await tb.window([])  # COMPLETIONS, BAD_COMPLETIONS, LB.OUT_IOS, BPOOL.HELD
    assert admitted == 12, f"{admitted} of 12 descriptors admitted: the test exercises nothing"
    # Then a pool that refuses queue 0 (nothing dedicated, nothing shared) until the write
    # gives it a shared buffer: the decision after the rebuild must see the new pool, not
    # the answer the pool formed the cycle before (the core holds that decision a cycle;
    # without the hold it is deferred for want of a buffer where the model admits it).
    late = admitted = 0
    for offset in range(8, 20):
        await tb.window([("w", reg("BPOOL", "DEDICATED", 0), 0), ("w", BP_SHARED, 0)])
        await one_descriptor_then_write(tb, offset, 1)
        admitted += len(tb.outstanding)
        late += not tb.outstanding
        tb.c_rate = 1.0
        await tb.cycles_until(lambda: not tb.outstanding and tb.c_pending is None)
    tb.summary()
    assert admitted and late, f"{admitted} admitted, {late} deferred: the writes never met the decision"


@cocotb.test()
async def depth_write_beside_a_decision(dut):
    """LB.DEPTH 1 -> 2 written in each cycle around the decision of a descriptor whose only
    egress holds one I/O (full at depth 1): a decision in the cycle after the write must see
    depth 2 and admit, as the model does with the write placed between the decisions the RTL
    made before and after it. Catches the balancer's registered "not full" formed with the
    depth in force (the core's register) instead of its next value (issue 22, round 10):
    the decision right after the write is then deferred where the model admits."""
    tb = await one_tenant_tb(dut, LB_DEPTH, [("w", LB_DEPTH, 1), ("w", reg("LB", "MAP", 0), 0x1),
                                             ("w", reg("BPOOL", "DEDICATED", 0), 4), ("w", BP_SHARED, 4)])
    admitted = deferred = 0
    for offset in range(8, 20):
        await one_descriptor_then_write(tb, offset, None)  # egress 0 now full at depth 1
        assert len(tb.outstanding) == 1, "the first descriptor was not admitted"
        await one_descriptor_then_write(tb, offset, 2, addr=LB_DEPTH)
        admitted += len(tb.outstanding) == 2
        deferred += len(tb.outstanding) == 1
        tb.c_rate = 1.0
        await tb.cycles_until(lambda: not tb.outstanding and tb.c_pending is None)
        await tb.window([("w", LB_DEPTH, 1)])
    tb.summary()
    assert admitted and deferred, f"{admitted} admitted, {deferred} deferred: the write never met the decision"


#: Descriptors of the completion-order test (about 1.8 cycles each); ``test_core_order_wrap``
#: (make test-long) runs it past the 16-bit sequence numbers' wrap, 2 minutes of simulation.
ORDER_DESCRIPTORS = int(os.environ.get("CORE_ORDER_DESCRIPTORS", "4000"))
ORDER_WRAP_DESCRIPTORS = (1 << 16) + 2000


@cocotb.test()
async def completion_order_hazards(dut):
    """Each completion applied between exactly the decisions the model puts it between, in
    the cases where the core's registered order compares (``decided == seq`` and
    ``decided + 1 == seq``, formed a cycle ahead: issue 22, round 13) would be stale: a
    decision retiring in the cycle the head is applied and the next entry becomes the head,
    consecutive completions of one sequence number (host bugs among them, which are applied
    alone), a completion whose last descriptor is still in flight, backpressure on ``o`` (no
    decision retires), and the sequence numbers' wrap (past 2**16 descriptors: in
    ``test_core_order_wrap``, make test-long). Tenant 0 alone, queue q on egress q at
    LB.DEPTH 1: whether a descriptor is admitted or deferred for its egress says whether the
    completion before it was applied before its decision, so a completion applied one
    decision early or late changes a decision (or waits for ever)."""
    tb = await one_tenant_tb(dut, None, [("w", LB_DEPTH, 1)]
                             + [("w", reg("LB", "MAP", q), 1 << q) for q in range(NI)]
                             + [("w", reg("BPOOL", "DEDICATED", q), 4095) for q in range(NI)])
    tb.bad_rate = 0.1  # host bugs, applied alone: among the consecutive completions of one number
    n = ORDER_DESCRIPTORS
    tb.d_gen, tb.paused = (tb.desc(0, queue=tb.rng.randrange(NI)) for _ in range(n)), False
    wrap_waits = collections.Counter()
    while tb.accepted < n:
        # Phases of a few hundred cycles: descriptors and completions dense or sparse, the
        # sink always ready or not (decisions held).
        if tb.cycles % 300 == 0:
            tb.source = StreamPattern(tb.rng.choice(("always", "random", "bursty")), duty=0.5,
                                      seed=tb.rng.getrandbits(32))
            tb.sink = StreamPattern(tb.rng.choice(("always", "always", "random", "bursty")), duty=0.7,
                                    seed=tb.rng.getrandbits(32))
            tb.c_rate = tb.rng.choice((0.3, 0.7, 1.0))
        past = tb.accepted - (1 << 16)
        if abs(past) < 8:
            # At the wrap a completion in every cycle (half of them host bugs, which need no
            # I/O outstanding), and no descriptor for 8 cycles at each of the first two
            # numbers past it, so that several completions carry them while the descriptors
            # before them are still in flight: the head's compares then cross the wrap
            # (decided + 1 and + 2 must wrap with decided).
            tb.source = tb.sink = StreamPattern("always")
            tb.c_rate, tb.bad_rate = 1.0, 0.5
            tb.paused = past in (0, 1) and wrap_waits[past] < 8
            wrap_waits[past] += 1
        elif tb.bad_rate == 0.5:
            tb.paused = False
            tb.bad_rate = 0.1
        await tb.step()
    tb.d_gen = None
    await tb.drain()
    tb.c_rate = 1.0
    await tb.cycles_until(lambda: not tb.outstanding and tb.c_pending is None)
    await tb.window([])  # COMPLETIONS, BAD_COMPLETIONS, LB.OUT_IOS, BPOOL.HELD
    tb.summary()
    for case in ("source OWN", "source DEFER_EGRESS", "completion behind a descriptor in flight",
                 "consecutive completions of one sequence number", "backpressure cycles", "out-of-order completions"):
        assert tb.cov[case] >= 50, f"{case!r} only {tb.cov[case]} times: {dict(tb.cov)}"
    if n > 1 << 16:
        assert tb.cov["completion just past the wrap, two descriptors before it in flight"] >= 4, dict(tb.cov)


async def one_tenant_tb(dut, between, writes):
    """A TB whose writes to ``between`` are placed between decisions, with tenant 0 alone able
    to admit anything (base and grant far above any I/O, no count cap, static balancing) and
    the balancer and pool ``writes`` applied: the set-up of the register-beside-a-decision
    tests."""
    tb = TB(dut, cocotb.RANDOM_SEED)
    tb.lazy, tb.between, tb.bad_rate = True, frozenset((between,)), 0.0
    await tb.reset()
    tb.bus_q.extend(tb.cost_table())
    big = [1 << 30] * DIMS
    await tb.window(tb.provisioning(C["SCHED_BIOS"], lenders=0)
                    + tb.vec_writes("RES_BASE", 0, big) + tb.vec_writes("GRANT", 0, big)
                    + [("w", reg("TENANT", "COUNT_GRANT", 0), 0xFFFFFFFF), ("w", POLICY, C["LB_STATIC"])] + writes)
    return tb


async def one_descriptor_then_write(tb, offset, shared, addr=BP_SHARED):
    """One descriptor of tenant 0 on queue 0, then the register at ``addr`` (BPOOL.SHARED)
    := shared `offset` cycles after it was accepted (no write: ``shared`` None); drains,
    completions held (the caller gives the buffers back)."""
    before = tb.accepted
    tb.d_gen, tb.paused, tb.c_rate = iter([tb.desc(0, queue=0)]), False, 0.0
    await tb.cycles_until(lambda: tb.accepted != before)
    tb.d_gen = None
    for _ in range(offset - 1):
        await tb.step()
    if shared is not None:
        tb.bus_q.append(("w", addr, shared))
    await tb.drain()


def run_core(seed=None, events=EVENTS, test_filter=None, generate_verilog=True, env=None):
    """One cocotb run; ``generate_verilog=False`` reuses the Verilog an earlier call of this
    process wrote (elaborating the core takes seconds, once per run is enough); ``env``: more
    of the bench's variables."""
    from burstgate.cli import generate
    from burstgate.testing.verilator import cocotb_build_dir, run_cocotb

    # `make rtl`'s generator, so the testbench runs exactly the Verilog users get.
    generated = cocotb_build_dir("core") / "generated"
    if generate_verilog:
        generate(generated, ["bg_core"], PARAMS)
    run_cocotb(top="bg_core", verilog=(generated / "bg_core.v").read_text(), test_module="test_core",
               test_dir=pathlib.Path(__file__).resolve().parent, build_name="core", seed=seed,
               test_filter=test_filter, extra_env={"CORE_EVENTS": str(events), **(env or {})})


#: The cocotb tests, each run in its own simulator: block RAM keeps its contents across a
#: reset (as on the FPGA), while every test starts from a fresh model.
TESTS = [f"decisions_equal_the_model/source={a}/sink={b}" for a in ("mix", "always") for b in ("mix", "always")]
TESTS += ["seed_writes_amid_traffic", "bpool_write_beside_a_decision", "depth_write_beside_a_decision",
          "completion_order_hazards"]


def test_core():
    """pytest entry: generate the Verilog, build it with Verilator, run the cocotb tests."""
    for name in TESTS + ["throughput"]:
        run_core(test_filter=f"^test_core\\.{name}$", generate_verilog=name == TESTS[0])


@pytest.mark.long
def test_core_order_wrap():
    """The completion-order test past the sequence numbers' wrap (make test-long)."""
    run_core(test_filter=r"^test_core\.completion_order_hazards$",
             env={"CORE_ORDER_DESCRIPTORS": str(ORDER_WRAP_DESCRIPTORS)})


LONG_SEEDS = (1, 4)      # make test-long: seeds 1..4, each pattern LONG_EVENTS events
LONG_EVENTS = 300_000


@pytest.mark.long
def test_core_long():
    """LONG_EVENTS events per pattern and seed (make test-long), each seed × pattern a task on the
    engine (scripts/verify_farm.py --core); a failure names its seed and pattern."""
    from tests.conftest import run_farm   # here: cocotb imports this module inside the simulator too
    run_farm("--core", f"{LONG_SEEDS[0]}-{LONG_SEEDS[1]}", "--events", str(LONG_EVENTS))
