"""``bg_kernel``: the datapath inside a Vitis RTL kernel."""

from amaranth import ClockDomain, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..csr import BusSignature
from ..layouts import Completion, Decision, Descriptor
from ..regmap import REGMAP
from ..regmap.records import COMPLETION, DECISION, DESC
from .axi import DATA_WIDTH, axi_lite_slave, axi_master, ports
from .axi_lite import AxiLiteBridge
from .control import KERNEL, KernelControl
from .records import from_record, to_record
from .rings import RingReader, RingWriter

__all__ = ["BgKernel", "DatapathSignature", "MAP_ADDR_WIDTH"]

#: Byte-address width of the whole register map (the s_axi_control address width).
MAP_ADDR_WIDTH = (max(b.base + b.size for b in REGMAP.blocks) - 1).bit_length()

_DESC_ID, _COMPLETION_ID = 0, 1


def DatapathSignature():
    """What the kernel needs of a datapath, from the datapath's side.

    Members
    -------
    i : In(stream.Signature(Descriptor))
        Descriptors from the descriptor ring.
    o : Out(stream.Signature(Decision))
        Exactly one per descriptor, in descriptor order, to the decision ring.
    c : In(stream.Signature(Completion))
        Completions from the completion ring.
    bus : In(BusSignature(addr_width=MAP_ADDR_WIDTH))
        Absolute register addresses; the kernel never forwards the KERNEL block's. Read
        latency 1.
    """
    return wiring.Signature({
        "i": In(stream.Signature(Descriptor)),
        "o": Out(stream.Signature(Decision)),
        "c": In(stream.Signature(Completion)),
        "bus": In(BusSignature(addr_width=MAP_ADDR_WIDTH)),
    })


class BgKernel(wiring.Component):
    """A Vitis RTL kernel around ``datapath``, with flat Vitis port names.

    The host programs the registers through ``s_axi_control`` (AXI4-Lite, the whole map of
    docs/registers.md; the KERNEL block at 0x0000 is the shell's own) and exchanges descriptor,
    decision and completion rings in device memory through ``m_axi_gmem`` (AXI4, 128-bit data,
    64-bit addresses; read ID 0 descriptors, 1 completions). One descriptor or completion
    record is one beat; a decision is two, so the decision ring sustains one decision every
    two cycles. Latency from a descriptor doorbell to its record on the datapath: the memory's
    read latency plus 4 cycles.

    Parameters
    ----------
    datapath : wiring.Component
        Signature :func:`DatapathSignature`, e.g. the core, or the unit-test passthrough.

    Members
    -------
    ap_clk : In(1)
    ap_rst_n : In(1)
        Synchronous, active low; takes effect one cycle after it is sampled.
    interrupt : Out(1)
    s_axi_control_* : AXI4-Lite slave, address width :data:`MAP_ADDR_WIDTH`.
    m_axi_gmem_* : AXI4 master.
    """

    def __init__(self, *, datapath):
        if not isinstance(datapath, wiring.Component) or datapath.signature != DatapathSignature():
            raise TypeError(f"Datapath must be a component with DatapathSignature(), not {datapath!r}")
        self._datapath = datapath
        super().__init__({"ap_clk": In(1), "ap_rst_n": In(1), "interrupt": Out(1)}
                         | axi_lite_slave("s_axi_control", addr_width=MAP_ADDR_WIDTH)
                         | axi_master("m_axi_gmem"))

    def elaborate(self, platform):
        m = Module()
        # ap_rst_n is registered once before it resets anything: a flop, not the input pin,
        # fans out to the design (Vivado replicates it), and no top-level input reaches the
        # datapath's next-state logic combinationally (which also keeps Verilator's
        # input-evaluation region small). Vitis holds ap_rst_n low for many cycles.
        m.domains.sync = cd = ClockDomain("sync")
        m.domains.rst_pipe = rp = ClockDomain("rst_pipe", reset_less=True)
        rst = Signal(init=1)
        m.d.rst_pipe += rst.eq(~self.ap_rst_n)
        m.d.comb += [cd.clk.eq(self.ap_clk), rp.clk.eq(self.ap_clk), cd.rst.eq(rst)]

        m.submodules.datapath = dp = self._datapath
        m.submodules.bridge = bridge = AxiLiteBridge(addr_width=MAP_ADDR_WIDTH)
        m.submodules.control = ctl = KernelControl()
        m.submodules.desc_reader = desc_rd = RingReader(record_bytes=DESC.size)
        m.submodules.completion_reader = cpl_rd = RingReader(record_bytes=COMPLETION.size)
        m.submodules.decision_writer = dec_wr = RingWriter(record_bytes=DECISION.size)

        # AXI4-Lite: pass the flat ports through to the bridge.
        for name, member in axi_lite_slave("s_axi_control", addr_width=MAP_ADDR_WIDTH).items():
            ours, theirs = getattr(self, name), getattr(bridge, name)
            m.d.comb += theirs.eq(ours) if member.flow == wiring.In else ours.eq(theirs)

        # Register decode: the KERNEL block here, everything else to the datapath.
        bus = bridge.bus
        in_kernel = Signal()
        read_kernel = Signal()
        kbits = (KERNEL.size - 1).bit_length()
        m.d.comb += in_kernel.eq(bus.addr[kbits:] == KERNEL.base >> kbits)
        with m.If(bus.r_en):
            m.d.sync += read_kernel.eq(in_kernel)
        m.d.comb += [
            ctl.bus.addr.eq(bus.addr[:kbits]),
            ctl.bus.w_data.eq(bus.w_data),
            ctl.bus.w_en.eq(bus.w_en & in_kernel),
            ctl.bus.r_en.eq(bus.r_en & in_kernel),
            dp.bus.addr.eq(bus.addr),
            dp.bus.w_data.eq(bus.w_data),
            dp.bus.w_en.eq(bus.w_en & ~in_kernel),
            dp.bus.r_en.eq(bus.r_en & ~in_kernel),
        ]
        with m.If(read_kernel):
            m.d.comb += bus.r_data.eq(ctl.bus.r_data)
        with m.Else():
            m.d.comb += bus.r_data.eq(dp.bus.r_data)

        # Ring configuration and indices.
        m.d.comb += [
            desc_rd.base.eq(ctl.desc_base), desc_rd.log2.eq(ctl.desc_log2),
            desc_rd.tail.eq(ctl.desc_tail), desc_rd.run.eq(ctl.start),
            cpl_rd.base.eq(ctl.completion_base), cpl_rd.log2.eq(ctl.completion_log2),
            cpl_rd.tail.eq(ctl.completion_tail), cpl_rd.run.eq(ctl.start),
            dec_wr.base.eq(ctl.decision_base), dec_wr.log2.eq(ctl.decision_log2),
            dec_wr.head.eq(ctl.decision_head),
            ctl.desc_head.eq(desc_rd.head), ctl.completion_head.eq(cpl_rd.head),
            ctl.decision_tail.eq(dec_wr.tail),
            ctl.published.eq(dec_wr.published),
            ctl.read_error.eq(desc_rd.error | cpl_rd.error),
            ctl.write_error.eq(dec_wr.error),
            ctl.idle.eq(desc_rd.idle & cpl_rd.idle & dec_wr.idle),
            self.interrupt.eq(ctl.interrupt),
        ]

        # Records <-> datapath streams.
        desc = from_record(m, DESC, Descriptor, desc_rd.o.payload)
        m.d.comb += [dp.i.valid.eq(desc_rd.o.valid), dp.i.payload.eq(desc),
                     desc_rd.o.ready.eq(dp.i.ready)]
        cpl = from_record(m, COMPLETION, Completion, cpl_rd.o.payload)
        m.d.comb += [dp.c.valid.eq(cpl_rd.o.valid), dp.c.payload.eq(cpl),
                     cpl_rd.o.ready.eq(dp.c.ready)]
        dec = to_record(m, DECISION, Decision, dp.o.payload)
        m.d.comb += [dec_wr.i.valid.eq(dp.o.valid), dec_wr.i.payload.eq(dec),
                     dp.o.ready.eq(dec_wr.i.ready)]

        # AXI4 master.
        g = ports(self, "m_axi_gmem")
        beat_size = (DATA_WIDTH // 8).bit_length() - 1
        m.d.comb += [
            g.awvalid.eq(dec_wr.aw.valid), dec_wr.aw.ready.eq(g.awready),
            g.awaddr.eq(dec_wr.aw.addr), g.awlen.eq(dec_wr.aw.len),
            g.awsize.eq(beat_size), g.awburst.eq(1), g.awid.eq(0),
            g.wvalid.eq(dec_wr.w.valid), dec_wr.w.ready.eq(g.wready),
            g.wdata.eq(dec_wr.w.data), g.wlast.eq(dec_wr.w.last), g.wstrb.eq(-1),
            g.bready.eq(1), dec_wr.b.valid.eq(g.bvalid), dec_wr.b.resp.eq(g.bresp),
            g.arsize.eq(beat_size), g.arburst.eq(1),
            # Both readers reserved FIFO room before asking: R is always accepted.
            g.rready.eq(1),
        ]
        for reader, rid in ((desc_rd, _DESC_ID), (cpl_rd, _COMPLETION_ID)):
            m.d.comb += [reader.r.valid.eq(g.rvalid & (g.rid == rid)),
                         reader.r.data.eq(g.rdata), reader.r.resp.eq(g.rresp)]

        # AR arbiter: the grant moves only when the granted reader is not holding a request,
        # so ARVALID and its payload stay put until ARREADY.
        grant = Signal()
        with m.If(grant == 0):
            self._drive_ar(m, g, desc_rd, _DESC_ID)
        with m.Else():
            self._drive_ar(m, g, cpl_rd, _COMPLETION_ID)
        held = Signal()
        m.d.comb += held.eq(g.arvalid & ~g.arready)
        with m.If(~held):
            m.d.sync += grant.eq(~grant)
        return m

    @staticmethod
    def _drive_ar(m, g, reader, rid):
        m.d.comb += [g.arvalid.eq(reader.ar.valid), reader.ar.ready.eq(g.arready),
                     g.araddr.eq(reader.ar.addr), g.arlen.eq(reader.ar.len), g.arid.eq(rid)]
