"""The core driven by an on-chip descriptor generator, with completion loopback and a self-check.

The check needs no model: every descriptor gets exactly one decision, in order (the decision's
tag is the descriptor's sequence number), and after every batch, with nothing in flight, the
core's own counters (CTRL.IOS, DEFERRED, DEFERRED_EGRESS, DEFERRED_BUFFER, COMPLETIONS,
BAD_COMPLETIONS) equal what the self-test counted on the decision and completion streams.
"""

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import Out

from ..core import Core
from ..layouts import Completion
from ..lfsr import ZERO_SEED, leap
from ..regmap import C, REGMAP

__all__ = ["SelfTest", "CHECKS"]


def _addr(block, register):
    b = REGMAP.block(block)
    return b.base + b.register(register).offset


#: Registers read back after every batch, in order; ``fail_code`` is 1 + the index of the first
#: one that disagreed (``FAIL_ORDER`` for a decision out of order).
CHECKS = ("IOS", "DEFERRED", "DEFERRED_EGRESS", "DEFERRED_BUFFER", "COMPLETIONS", "BAD_COMPLETIONS")
FAIL_ORDER = len(CHECKS) + 1


class SelfTest(wiring.Component):
    """``Core`` with an LFSR descriptor source, completion loopback and a counter check.

    At reset it writes every ``COST.TABLE_BASE`` entry with ``cost`` (the table resets to 0,
    which would make every I/O free), ``TENANT.GRANT`` of every tenant and dimension with
    ``grant``, and commits a window; then it runs batches of ``batch`` descriptors, one per cycle while the
    core is ready, looping every admitted decision back as a completion (16-entry queue; a
    full queue holds the decision stream). After each batch it waits until nothing is in
    flight (CTRL.WINDOW bit 1 reads 0), reads the counters back, and commits the next window.

    Parameters
    ----------
    tenants, ingress, egress, segment_bits : int
        The core's parameters; ``tenants`` and ``ingress`` powers of two (the generator takes
        LFSR bits for them).
    batch : int
        Descriptors per window.
    cost : int
        Base cost of every I/O in every dimension (the slopes stay 0).
    grant : int
        Per-tenant, per-dimension grant: between one and ``batch / tenants`` times ``cost``,
        so that some descriptors are admitted and some deferred in every window.

    Members
    -------
    passed : Out(1)
        At least one batch checked and nothing disagreed.
    failed : Out(1)
        Sticky: a check disagreed.
    fail_code : Out(4)
        0, or what disagreed first (see ``CHECKS``, ``FAIL_ORDER``).
    batches : Out(32)
        Batches checked.
    decided, admitted : Out(32)
        Decisions received, and of them admitted (source below SRC_DEFER).
    """

    passed: Out(1)
    failed: Out(1)
    fail_code: Out(4)
    batches: Out(32)
    decided: Out(32)
    admitted: Out(32)

    def __init__(self, *, tenants=64, ingress=4, egress=4, segment_bits=12, batch=4096, cost=1000,
                 grant=32_000):
        for name, value in (("Tenants", tenants), ("Ingress", ingress)):
            if not isinstance(value, int) or value < 1 or value & (value - 1):
                raise TypeError(f"{name} must be a power of two, not {value!r}")
        if not isinstance(batch, int) or not 1 <= batch < 1 << 16:
            raise TypeError(f"Batch must be an integer in 1..65535, not {batch!r}")
        for name, value in (("Cost", cost), ("Grant", grant)):
            if not isinstance(value, int) or not 0 <= value < 1 << 32:
                raise TypeError(f"{name} must be a 32-bit integer, not {value!r}")
        self.core = Core(tenants=tenants, ingress=ingress, egress=egress, segment_bits=segment_bits)
        self._tenants, self._ingress, self._batch = tenants, ingress, batch
        self._cost, self._grant = cost, grant
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self.core
        m.submodules.loop = loop = SyncFIFO(width=Completion.size, depth=16)
        bus, dims = core.bus, C["COST_DIMS"]

        # Descriptor source: 32 fresh LFSR bits per descriptor.
        lfsr = Signal(32, init=ZERO_SEED)
        sent = Signal(32)
        in_batch = Signal(range(self._batch + 1))
        r = lfsr
        tb, qb = (self._tenants - 1).bit_length(), (self._ingress - 1).bit_length()
        d = core.i.payload
        m.d.comb += [
            d.tag.eq(sent),
            d.tenant.eq(r[0:tb] if tb else 0),
            d.queue.eq(r[10:10 + qb] if qb else 0),
            d.product.eq(r[14:16]),
            d.write.eq(r[16]),
            d.size.eq((r[17:21] + 1) << 9),  # 512 B .. 8 KiB
            d.segment.eq(r[21:32]),
        ]
        with m.If(core.i.valid & core.i.ready):
            m.d.sync += [lfsr.eq(leap(lfsr, 32)), sent.eq(sent + 1), in_batch.eq(in_batch + 1)]

        # Decisions: in order, counted by source, admitted ones looped back as completions.
        o = core.o.payload
        admit = o.source < C["SRC_DEFER"]
        deferred = [Signal(32, name=f"n_{n.lower()}") for n in CHECKS[1:4]]
        completions = Signal(32)
        failed, fail_code = Signal(), Signal(4)
        m.d.comb += core.o.ready.eq(loop.w_rdy)
        comp = Completion(loop.w_data)
        m.d.comb += [
            comp.tag.eq(o.tag), comp.tenant.eq(o.tenant), comp.queue.eq(o.queue),
            comp.egress.eq(o.egress), comp.charge_ns.eq(o.cost[0]), comp.sa_delay_ns.eq(o.tag[0:12]),
            loop.w_en.eq(core.o.valid & admit),
        ]
        with m.If(core.o.valid & core.o.ready):
            m.d.sync += self.decided.eq(self.decided + 1)
            with m.If(admit):
                m.d.sync += self.admitted.eq(self.admitted + 1)
            for k, src in enumerate(("SRC_DEFER", "SRC_DEFER_EGRESS", "SRC_DEFER_BUFFER")):
                with m.If(o.source == C[src]):
                    m.d.sync += deferred[k].eq(deferred[k] + 1)
            with m.If((o.tag != self.decided[0:C["TAG_BITS"]]) & ~failed):
                m.d.sync += [failed.eq(1), fail_code.eq(FAIL_ORDER)]
        m.d.comb += [core.c.valid.eq(loop.r_rdy), core.c.payload.eq(loop.r_data), loop.r_en.eq(core.c.ready)]
        with m.If(core.c.valid & core.c.ready):
            m.d.sync += completions.eq(completions + 1)

        # Sequencer: grants, COMMIT, batch, drain, read-back.
        expect = [self.decided, *deferred, completions, 0]
        table = REGMAP.block("COST").register("TABLE_BASE").count
        index = Signal(range(max(self._tenants * dims, table, len(CHECKS)) + 1))
        window = _addr("CTRL", "WINDOW")
        with m.FSM():
            with m.State("TABLE"):
                m.d.comb += [bus.addr.eq(_addr("COST", "TABLE_BASE") + index * 4), bus.w_en.eq(1),
                             bus.w_data.eq(self._cost)]
                m.d.sync += index.eq(index + 1)
                with m.If(index == table - 1):
                    m.d.sync += index.eq(0)
                    m.next = "GRANT"
            with m.State("GRANT"):
                m.d.comb += [bus.addr.eq(_addr("TENANT", "GRANT") + index * 4), bus.w_en.eq(1),
                             bus.w_data.eq(self._grant)]
                m.d.sync += index.eq(index + 1)
                with m.If(index == self._tenants * dims - 1):
                    m.next = "COMMIT"
            with m.State("COMMIT"):
                m.d.comb += [bus.addr.eq(window), bus.w_en.eq(1), bus.w_data.eq(C["WINDOW_COMMIT"])]
                m.d.sync += in_batch.eq(0)
                m.next = "RUN"
            with m.State("RUN"):
                m.d.comb += core.i.valid.eq(in_batch != self._batch)
                with m.If((in_batch == self._batch) & (self.decided == sent) & ~loop.r_rdy):
                    m.next = "POLL"
            with m.State("POLL"):
                m.d.comb += [bus.addr.eq(window), bus.r_en.eq(1)]
                m.next = "POLLED"
            with m.State("POLLED"):
                m.d.sync += index.eq(0)
                m.next = "POLL"
                with m.If(~bus.r_data[1]):
                    m.next = "READ"
            with m.State("READ"):
                m.d.comb += bus.r_en.eq(1)
                with m.Switch(index):
                    for k, name in enumerate(CHECKS):
                        with m.Case(k):
                            m.d.comb += bus.addr.eq(_addr("CTRL", name))
                m.next = "CHECK"
            with m.State("CHECK"):
                with m.Switch(index):
                    for k, value in enumerate(expect):
                        with m.Case(k):
                            with m.If((bus.r_data != value) & ~failed):
                                m.d.sync += [failed.eq(1), fail_code.eq(k + 1)]
                m.d.sync += index.eq(index + 1)
                m.next = "READ"
                with m.If(index == len(CHECKS) - 1):
                    m.d.sync += self.batches.eq(self.batches + 1)
                    m.next = "COMMIT"

        m.d.comb += [self.failed.eq(failed), self.fail_code.eq(fail_code),
                     self.passed.eq((self.batches != 0) & ~failed)]
        return m
