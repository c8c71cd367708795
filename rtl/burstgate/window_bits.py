"""Per-tenant "written in this window" bits, in distributed RAM instead of flip-flops.

Admission needs, a cycle before A3, whether each tenant word it reads was written since the
last COMMIT (so that A3 selects the word, or its refill, from a registered flag: issue 22,
round 12). As one flip-flop per tenant, cleared for all tenants by COMMIT, that is 1 024
flip-flops per RAM at 1 024 tenants, each with its own set and clear, and a 1 024-way select
per read (issue 22, round 14: ``bg_core@large`` over its LUT and FF budgets).

Here the bits are kept in two banks of distributed RAM (LUTRAM on UltraScale+), one for the
window in progress (the bank is the window index's parity, a register here) and one being
cleared for the next: a RAM cannot clear every word in one cycle, so after each COMMIT the
bank just left is scrubbed, one word of ``width`` bits per cycle, and a COMMIT waits until
the scrub is done (``scrubbing``) -- at most 32 cycles, against windows of thousands. A
COMMIT already waits for the datapath's drain; nothing is decided while it waits, so no
decision changes.

A set arrives a cycle after the tenant RAM's write (from the registered copy of that write
the forwarding keeps), so the set's RAM write starts at flip-flops; :meth:`_Bits.fresh`
adds that one write back to the read. What a read of bank ``b`` returns in cycle ``t``
holds the sets of cycle ``t - 1`` and before, i.e. the tenant RAM's writes up to ``t - 2``.
"""

from amaranth import Const, Mux, Signal, unsigned
from amaranth.lib.memory import Memory

__all__ = ["WindowBits"]

#: Words per bank: the depth of one distributed-RAM primitive (RAM32M16), and the most
#: cycles a COMMIT can wait for the scrub.
_WORDS_MAX = 32


class WindowBits:
    """The bank and the scrub shared by every set of bits (they all clear at COMMIT).

    ``commit`` is the cycle a COMMIT applies; it must be low while :attr:`scrubbing` is high
    (the caller gates its COMMIT with it). Bits are read as set at reset (every tenant word
    is stamped with window 0 then)."""

    def __init__(self, m, tenants, commit, *, name="window_bits"):
        self.row_bits = max((tenants - 1).bit_length(), 1)
        self.bit_bits = max(self.row_bits - (_WORDS_MAX - 1).bit_length(), 0)
        self.width = 1 << self.bit_bits
        self.words = -(-tenants // self.width)
        self._m, self._name, self.commit = m, name, commit
        self.bank = Signal(name=f"{name}_bank")  # the window index's parity
        self.scrubbing = Signal(name=f"{name}_scrubbing")
        self._scrub_word = Signal(range(self.words), name=f"{name}_scrub_word")
        with m.If(commit):
            m.d.sync += [self.bank.eq(~self.bank), self.scrubbing.eq(1), self._scrub_word.eq(0)]
        with m.Elif(self.scrubbing):
            m.d.sync += self._scrub_word.eq(self._scrub_word + 1)
            with m.If(self._scrub_word == self.words - 1):
                m.d.sync += self.scrubbing.eq(0)

    def bits(self, name, set_en, set_row):
        """A set of bits, one per tenant, set by ``set_en`` at ``set_row`` (the registered
        copy of the tenant RAM's write of the cycle before)."""
        return _Bits(self, f"{self._name}_{name}", set_en, set_row)


class _Bits:
    def __init__(self, wb, name, set_en, set_row):
        m, width, words = wb._m, wb.width, wb.words
        self._wb, self._set_en, self._set_row = wb, set_en, set_row
        ones = (1 << width) - 1  # the reset value of bank 0: every word is of window 0
        self._banks = []
        set_word = set_row[wb.bit_bits:wb.row_bits]
        set_bit = Const(1, width) << set_row[:wb.bit_bits] if wb.bit_bits else Const(1, 1)
        for b in range(2):
            mem = Memory(shape=unsigned(width), depth=words, init=[ones] * words if b == 0 else [])
            m.submodules[f"{name}{b}"] = mem
            wp = mem.write_port()
            # A set writes its word with the bit added (read here: a write port with an
            # enable per bit maps to one LUTRAM per bit, 8 times the LUTs at 1024 tenants).
            old = mem.read_port(domain="comb")
            m.d.comb += old.addr.eq(set_word)
            current = wb.bank == b
            # The bank in use takes the sets; the other is being scrubbed, word by word.
            m.d.comb += [
                wp.addr.eq(Mux(current, set_word, wb._scrub_word)),
                wp.data.eq(Mux(current, old.data | set_bit, 0)),
                wp.en.eq(Mux(current, set_en, wb.scrubbing)),
            ]
            self._banks.append(mem)

    def fresh(self, row):
        """Whether tenant ``row``'s word was written in this window, up to the previous
        cycle's write (what a flip-flop set by that write would read this cycle)."""
        wb, m = self._wb, self._wb._m
        row = row[:wb.row_bits]
        word, bit = row[wb.bit_bits:], row[:wb.bit_bits]
        reads = []
        for mem in self._banks:
            rp = mem.read_port(domain="comb")
            m.d.comb += rp.addr.eq(word)
            reads.append(rp.data.bit_select(bit, 1) if wb.bit_bits else rp.data[0])
        return Mux(wb.bank, reads[1], reads[0]) | (self._set_en & (self._set_row[:wb.row_bits] == row))
