"""AXI4-Lite slave to the internal register bus (:class:`burstgate.csr.BusSignature`)."""

from amaranth import Module, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import Out

from ..csr import BusSignature
from .axi import axi_lite_slave, ports

__all__ = ["AxiLiteBridge"]


class _State(enum.Enum, shape=3):
    IDLE = 0
    WRITE = 1   # the registered bus write happens in this cycle
    READ = 2    # the registered bus read is issued in this cycle
    READ_DATA = 3  # its data is on bus.r_data (latency 1)
    RESP_R = 4
    RESP_B = 5


class AxiLiteBridge(wiring.Component):
    """Turn AXI4-Lite transactions into register-bus accesses, one at a time.

    A write is taken when its address and data are both valid (AWREADY and WREADY rise
    together), reaches the bus from registers in the next cycle and is answered OKAY on B the
    cycle after. A read is taken on ARVALID, reaches the bus in the next cycle and its data is
    on R two cycles later. The bus is driven from registers only, so no host input reaches the
    register blocks' decode combinationally (timing on the FPGA; a small input-dependent logic
    cone is also what keeps the Verilated kernel fast). Reads and writes alternate when both
    wait, so neither starves. Byte strobes are ignored: every register is a 32-bit word and XRT
    writes whole words. Responses are always OKAY: unmapped addresses read 0 and ignore writes
    (docs/registers.md).

    Parameters
    ----------
    addr_width : int
        Width of AWADDR/ARADDR and of the bus address.

    Members
    -------
    s_axi_control_* : AXI4-Lite slave (In: address/data/valid from the host, Out: ready/resp)
    bus : Out(BusSignature(addr_width=addr_width))
        Register bus initiator, all outputs registered. Latency: a write reaches the bus 1 cycle
        after AW/W acceptance; a read 1 cycle after AR acceptance, its data 3 cycles after.
    """

    def __init__(self, *, addr_width):
        if not isinstance(addr_width, int) or addr_width < 2:
            raise TypeError(f"Address width must be an integer of at least 2, not {addr_width!r}")
        super().__init__(axi_lite_slave("s_axi_control", addr_width=addr_width) | {
            "bus": Out(BusSignature(addr_width=addr_width)),
        })

    def elaborate(self, platform):
        m = Module()
        s = ports(self, "s_axi_control")
        state = Signal(_State)
        prefer_write = Signal()  # toggles so a stream of reads cannot starve a write, nor back
        rdata = Signal(32)
        addr = Signal.like(self.bus.addr)
        wdata = Signal(32)

        take_write = Signal()
        take_read = Signal()
        with m.If(state == _State.IDLE):
            m.d.comb += [
                take_write.eq(s.awvalid & s.wvalid & (prefer_write | ~s.arvalid)),
                take_read.eq(s.arvalid & ~take_write),
            ]
        m.d.comb += [
            s.awready.eq(take_write), s.wready.eq(take_write), s.arready.eq(take_read),
            self.bus.addr.eq(addr), self.bus.w_data.eq(wdata),
            self.bus.w_en.eq(state == _State.WRITE), self.bus.r_en.eq(state == _State.READ),
            s.bresp.eq(0), s.rresp.eq(0), s.rdata.eq(rdata),
            s.bvalid.eq(state == _State.RESP_B), s.rvalid.eq(state == _State.RESP_R),
        ]

        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(take_write):
                    m.d.sync += [state.eq(_State.WRITE), addr.eq(s.awaddr), wdata.eq(s.wdata),
                                 prefer_write.eq(0)]
                with m.Elif(take_read):
                    m.d.sync += [state.eq(_State.READ), addr.eq(s.araddr), prefer_write.eq(1)]
            with m.Case(_State.WRITE):
                m.d.sync += state.eq(_State.RESP_B)
            with m.Case(_State.READ):
                m.d.sync += state.eq(_State.READ_DATA)
            with m.Case(_State.READ_DATA):
                m.d.sync += [rdata.eq(self.bus.r_data), state.eq(_State.RESP_R)]
            with m.Case(_State.RESP_R):
                with m.If(s.rready):
                    m.d.sync += state.eq(_State.IDLE)
            with m.Case(_State.RESP_B):
                with m.If(s.bready):
                    m.d.sync += state.eq(_State.IDLE)
        return m
