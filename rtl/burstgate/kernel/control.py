"""The KERNEL register block: XRT control/interrupt registers and the rings' configuration."""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..csr import BusSignature, CsrBlock
from ..regmap import C, REGMAP

__all__ = ["KernelControl", "RINGS"]

KERNEL = REGMAP.block("KERNEL")
#: Ring name in the members -> register-name prefix of the KERNEL block.
RINGS = {"desc": "DESC", "decision": "DECISION", "completion": "COMPLETION"}


def _clamp(value):
    lo, hi = C["RING_LOG2_MIN"], C["RING_LOG2_MAX"]
    return Mux(value < lo, lo, Mux(value > hi, hi, value))


class KernelControl(wiring.Component):
    """Registers of the KERNEL block (docs/registers.md) and the interrupt.

    Members
    -------
    bus : In(BusSignature(addr_width=8))
        Block-relative byte addresses. Read latency: 1 cycle.
    start : Out(1)
        CTRL.AP_START.
    idle : In(1)
        CTRL.AP_IDLE as the ring engines report it.
    <ring>_base : Out(64), <ring>_log2 : Out(5)
        For ``desc``, ``decision``, ``completion``: base address and clamped log2 size.
    desc_tail, completion_tail, decision_head : Out(32)
        The host's doorbells.
    desc_head, completion_head, decision_tail : In(32)
        The engines' indices, for reads.
    published : In(1)
        Pulse: decisions were published (sets ISR bit 0).
    read_error, write_error : In(1)
        Sticky AXI errors (STATUS; a rising error sets ISR bit 1).
    interrupt : Out(1)
        GIER and any (IER and ISR), registered.
    """

    def __init__(self):
        members = {"bus": In(BusSignature(addr_width=(KERNEL.size - 1).bit_length())),
                   "start": Out(1), "idle": In(1), "published": In(1),
                   "read_error": In(1), "write_error": In(1), "interrupt": Out(1)}
        for ring in RINGS:
            members |= {f"{ring}_base": Out(64), f"{ring}_log2": Out(5)}
        members |= {"desc_tail": Out(32), "completion_tail": Out(32), "decision_head": Out(32),
                    "desc_head": In(32), "completion_head": In(32), "decision_tail": In(32)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.csr = csr = CsrBlock(block=KERNEL)
        wiring.connect(m, wiring.flipped(self.bus), csr.bus)

        for ring, reg in RINGS.items():
            lo, hi = getattr(csr, f"{reg.lower()}_base_lo"), getattr(csr, f"{reg.lower()}_base_hi")
            m.d.comb += [
                getattr(self, f"{ring}_base").eq(Cat(lo, hi)),
                getattr(self, f"{ring}_log2").eq(_clamp(getattr(csr, f"{reg.lower()}_log2"))),
            ]
        m.d.comb += [
            self.desc_tail.eq(csr.desc_tail),
            self.completion_tail.eq(csr.completion_tail),
            self.decision_head.eq(csr.decision_head),
            csr.desc_head.eq(self.desc_head),
            csr.completion_head.eq(self.completion_head),
            csr.decision_tail.eq(self.decision_tail),
            csr.status.eq(Cat(self.read_error, self.write_error)),
        ]

        # CTRL: bit 0 AP_START (rw), bit 2 AP_IDLE (ro).
        start = Signal()
        with m.If(csr.ext_ctrl.w_en):
            m.d.sync += start.eq(csr.ext_ctrl.w_data[0])
        ctrl_r = Signal(8)
        with m.If(csr.ext_ctrl.r_en):
            m.d.sync += ctrl_r.eq(Cat(start, 0, self.idle))
        m.d.comb += [self.start.eq(start), csr.ext_ctrl.r_data.eq(ctrl_r)]

        # ISR: set by events, toggled by a write of 1 (Vitis "TOW").
        isr = Signal(2)
        error = self.read_error | self.write_error
        error_seen = Signal()
        m.d.sync += error_seen.eq(error)
        events = Cat(self.published, error & ~error_seen)
        toggles = Mux(csr.ext_isr.w_en, csr.ext_isr.w_data[:2], 0)
        m.d.sync += isr.eq((isr ^ toggles) | events)
        isr_r = Signal(2)
        with m.If(csr.ext_isr.r_en):
            m.d.sync += isr_r.eq(isr)
        m.d.comb += csr.ext_isr.r_data.eq(isr_r)

        m.d.sync += self.interrupt.eq(csr.gier & (csr.ier & isr).any())
        return m
