"""The register bus and the CSR block generated from a :class:`~burstgate.regmap.Block`.

The bus is deliberately simple (one access per cycle, read data one cycle later); the kernel
wrapper bridges AXI4-Lite to it and a decoder fans it out to each block's CSR block.
"""

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["BusSignature", "ExternalSignature", "CsrBlock"]


class BusSignature(wiring.Signature):
    """Register bus, from the initiator's side.

    Members
    -------
    addr : Out(addr_width)
        Byte address within the target; bits 1..0 are ignored.
    w_en : Out(1)
        Write ``w_data`` to ``addr`` at the end of this cycle.
    w_data : Out(32)
    r_en : Out(1)
        Read ``addr``; the value is on ``r_data`` in the next cycle (latency 1).
    r_data : In(32)
    """

    def __init__(self, *, addr_width):
        if not isinstance(addr_width, int) or addr_width < 2:
            raise TypeError(f"Address width must be an integer of at least 2, not {addr_width!r}")
        self._addr_width = addr_width
        super().__init__({
            "addr":   Out(addr_width),
            "w_en":   Out(1),
            "w_data": Out(32),
            "r_en":   Out(1),
            "r_data": In(32),
        })

    @property
    def addr_width(self):
        return self._addr_width

    def __eq__(self, other):
        return isinstance(other, BusSignature) and self.addr_width == other.addr_width

    def __repr__(self):
        return f"BusSignature(addr_width={self.addr_width})"


class ExternalSignature(wiring.Signature):
    """Access to a register array whose storage lives in the block that owns it.

    From the CSR block's side: ``index`` and ``w_data`` are valid with ``w_en``/``r_en``;
    the owner returns ``r_data`` one cycle after ``r_en`` (a synchronous RAM read port).
    """

    def __init__(self, *, count, width):
        if not isinstance(count, int) or count < 1:
            raise TypeError(f"Count must be a positive integer, not {count!r}")
        if not isinstance(width, int) or not 1 <= width <= 32:
            raise TypeError(f"Width must be an integer in 1..32, not {width!r}")
        super().__init__({
            "index":  Out(range(count)),
            "w_en":   Out(1),
            "w_data": Out(width),
            "r_en":   Out(1),
            "r_data": In(width),
        })


def _port_name(reg):
    return reg.name.lower()


class CsrBlock(wiring.Component):
    """The registers of one register-map block.

    Built from the description at elaboration time, so the gateware cannot drift from the
    C header and the documentation generated from the same objects.

    Parameters
    ----------
    block : :class:`burstgate.regmap.Block`

    Members
    -------
    bus : In(BusSignature(addr_width=log2(block.size)))
        Block-relative byte addresses. Read latency: 1 cycle.
    <register> : Out(width) or Out(ArrayLayout(width, count))
        For each ``rw`` flop register: its current value. A write takes effect at the end of
        the cycle in which ``w_en`` is high.
    <register> : In(width) or In(ArrayLayout(width, count))
        For each ``ro`` flop register: the value the owner presents for reads.
    ext_<register> : Out(ExternalSignature(...))
        For each ``external`` register array.
    <register>_next : Out(width)
        For each register named in ``lookahead``: the value it holds from the next cycle on
        (this cycle's write, else its current value), for an owner that registers what it
        derives from the register (the load balancer's DEPTH, issue 22).
    """

    def __new__(cls, *, block, lookahead=()):
        # Checked before the object exists: a rejected one would warn "created but never used".
        from .regmap import Block
        if isinstance(block, Block):
            known = sorted(r.name for r in block.registers
                           if r.storage == "flop" and r.access == "rw" and r.count == 1)
            for name in lookahead:
                if name not in known:
                    raise ValueError(f"{block.name}.{name} is not a single read-write flop register; "
                                     f"lookahead takes one of {known}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, *, block, lookahead=()):
        from .regmap import Block
        if not isinstance(block, Block):
            raise TypeError(f"Block must be a burstgate.regmap.Block, not {block!r}")
        self._block = block
        self._lookahead = tuple(lookahead)
        members = {"bus": In(BusSignature(addr_width=(block.size - 1).bit_length()))}
        for reg in block.registers:
            shape = unsigned(reg.width) if reg.count == 1 else data.ArrayLayout(reg.width, reg.count)
            if reg.storage == "external":
                members[f"ext_{_port_name(reg)}"] = Out(ExternalSignature(count=reg.count, width=reg.width))
            elif reg.access == "rw":
                init = reg.resets[0] if reg.count == 1 else list(reg.resets)
                members[_port_name(reg)] = Out(shape, init=init)
                if reg.name in lookahead:
                    members[f"{_port_name(reg)}_next"] = Out(shape, init=init)
            else:
                members[_port_name(reg)] = In(shape)
        super().__init__(members)

    @property
    def block(self):
        return self._block

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        word = bus.addr[2:]
        r_data = Signal(32)
        r_ext = Signal(range(len(self._block.registers) + 1))  # 0: flop read, k: external k-1
        ext_regs = [r for r in self._block.registers if r.storage == "external"]

        # The owners' strobes are combinational and stay outside the bus strobes below.
        ext_hits = []
        for reg in ext_regs:
            ext = getattr(self, f"ext_{_port_name(reg)}")
            lo, hi = reg.offset >> 2, (reg.offset + reg.size) >> 2
            hit = (word >= lo) & (word < hi)
            ext_hits.append(hit)
            m.d.comb += [
                ext.index.eq(word - lo),
                ext.w_data.eq(bus.w_data),
                ext.w_en.eq(bus.w_en & hit if reg.access == "rw" else 0),
                ext.r_en.eq(bus.r_en & hit),
            ]

        # The flop registers' address compares sit behind the strobes: the bus is idle in
        # almost every cycle, and a simulator (Verilator) then skips the whole decode
        # instead of comparing every address every cycle. Same logic, same priority.
        flops = []
        for reg in self._block.registers:
            if reg.storage != "flop":
                continue
            port = getattr(self, _port_name(reg))
            for i, offset in enumerate(reg.element_offsets()):
                flops.append((reg, port if reg.count == 1 else port[i], offset >> 2))
        for reg, element, at in flops:
            if reg.name in self._lookahead:
                nxt = getattr(self, f"{_port_name(reg)}_next")
                m.d.comb += nxt.eq(Mux(bus.w_en & (word == at), bus.w_data[:reg.width], element))
        with m.If(bus.w_en):
            for reg, element, at in flops:
                if reg.access == "rw":
                    with m.If(word == at):
                        m.d.sync += element.eq(bus.w_data[:reg.width])
        with m.If(bus.r_en):
            m.d.sync += [r_data.eq(0), r_ext.eq(0)]
            for k, hit in enumerate(ext_hits):
                with m.If(hit):
                    m.d.sync += r_ext.eq(k + 1)
            for reg, element, at in flops:
                with m.If(word == at):
                    m.d.sync += r_data.eq(element)

        result = r_data
        for k, reg in enumerate(ext_regs):
            ext = getattr(self, f"ext_{_port_name(reg)}")
            result = Mux(r_ext == k + 1, ext.r_data, result)
        m.d.comb += bus.r_data.eq(result)
        return m
