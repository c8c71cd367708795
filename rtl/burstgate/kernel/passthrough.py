"""A test-only datapath that lets the kernel shell be tested before and without the core.

THIS IS NOT THE DATAPATH. It makes no admission decision: every descriptor comes back as a
decision with ``source = SRC_DEFER`` whose fields echo the descriptor (``cost`` = [size,
segment, product, write | reoffer << 1], ``egress`` = ``queue``, ``lender`` = ``tenant``), so
a testbench can tell every record apart and check that none was lost, duplicated, reordered
or corrupted by the rings. Completions are counted where the core counts them (CTRL.COMPLETIONS, so the
host's completion handshake works unchanged) and folded into a hash the testbench recomputes. It
implements the INFO block (MAGIC, VERSION, sizes) so register access through the shell can be
checked against the map. Used only by ``tests/cocotb/kernel``.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring

from ..csr import CsrBlock
from ..regmap import C, REGMAP
from .top import DatapathSignature

__all__ = ["Passthrough", "CPL_COUNT", "CPL_HASH", "completion_hash"]

_INFO = REGMAP.block("INFO")
_CTRL = REGMAP.block("CTRL")

#: Completions taken: CTRL.COMPLETIONS, the register the core keeps the same count in.
CPL_COUNT = _CTRL.base + _CTRL.register("COMPLETIONS").offset
#: Harness-only register (absolute byte address) in space no block of the map uses.
CPL_HASH = 0x0F04


def completion_hash(h, c):
    """The hash after completion ``c`` (dict of Completion fields); mirrors the gateware."""
    for word in (c["tag"] | c["tenant"] << 16, c["queue"] | c["egress"] << 8,
                 c["charge_ns"], c["sa_delay_ns"]):
        h = (((h << 5) - h) ^ word) & 0xFFFF_FFFF
    return h


class Passthrough(wiring.Component):
    """Echo descriptors as decisions; count and hash completions (a shell test harness).

    Latency 1 cycle from ``i`` to ``o``; ``i.ready`` follows ``o.ready`` (a one-entry pipeline), so backpressure reaches the descriptor ring.
    Completions (``c``) are always accepted.
    """

    def __init__(self):
        super().__init__(DatapathSignature())

    def elaborate(self, platform):
        m = Module()
        i, o = self.i, self.o
        m.d.comb += i.ready.eq(~o.valid | o.ready)
        with m.If(i.ready):
            m.d.sync += [
                o.valid.eq(i.valid),
                o.payload.tag.eq(i.payload.tag),
                o.payload.tenant.eq(i.payload.tenant),
                o.payload.queue.eq(i.payload.queue),
                o.payload.source.eq(C["SRC_DEFER"]),
                o.payload.lender.eq(i.payload.tenant),
                o.payload.egress.eq(i.payload.queue),
                o.payload.hot.eq(i.payload.write),
                o.payload.prefill.eq(~i.payload.write),
                o.payload.cost[0].eq(i.payload.size),
                o.payload.cost[1].eq(i.payload.segment),
                o.payload.cost[2].eq(i.payload.product),
                o.payload.cost[3].eq(Cat(i.payload.write, i.payload.reoffer)),
            ]

        c = self.c
        count = Signal(32)
        h = Signal(32)
        m.d.comb += c.ready.eq(1)
        with m.If(c.valid):
            x = h
            for word in (Cat(c.payload.tag, c.payload.tenant),
                         c.payload.queue | (c.payload.egress << 8),
                         c.payload.charge_ns, c.payload.sa_delay_ns):
                x = (((x << 5) - x) ^ word)[:32]
            m.d.sync += [count.eq(count + 1), h.eq(x)]

        # INFO through a real CSR block; the harness registers beside it.
        m.submodules.info = info = CsrBlock(block=_INFO)
        for reg in _INFO.registers:
            m.d.comb += getattr(info, reg.name.lower()).eq(reg.resets[0])
        bus = self.bus
        in_info = Signal()
        m.d.comb += [
            in_info.eq(bus.addr[8:] == _INFO.base >> 8),
            info.bus.addr.eq(bus.addr[:8]), info.bus.w_data.eq(bus.w_data),
            info.bus.w_en.eq(bus.w_en & in_info), info.bus.r_en.eq(bus.r_en & in_info),
        ]
        r_info = Signal()
        r_local = Signal(32)
        with m.If(bus.r_en):
            m.d.sync += [
                r_info.eq(in_info),
                r_local.eq(Mux(bus.addr == CPL_COUNT, count, Mux(bus.addr == CPL_HASH, h, 0))),
            ]
        m.d.comb += bus.r_data.eq(Mux(r_info, info.bus.r_data, r_local))
        return m
