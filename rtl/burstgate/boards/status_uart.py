"""A transmit-only UART that prints the self-test's status line, 8N1."""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["StatusUart"]

_HEX = b"0123456789ABCDEF"


class StatusUart(wiring.Component):
    """Prints ``BG PASS B<batches> D<decided> A<admitted> E<code>\\r\\n`` (hex) every ``period`` cycles.

    ``FAIL`` replaces ``PASS`` once ``failed`` is set, ``WAIT`` before the first batch. The
    values are sampled when a line starts, so a line is self-consistent.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (clock / baud).
    period : int
        Clock cycles from the start of one line to the start of the next.

    Members
    -------
    passed, failed : In(1)
    fail_code : In(4)
    batches, decided, admitted : In(32)
    tx : Out(1)
        Serial output, idle high.
    """

    passed: In(1)
    failed: In(1)
    fail_code: In(4)
    batches: In(32)
    decided: In(32)
    admitted: In(32)
    tx: Out(1, init=1)

    def __init__(self, *, divisor, period):
        if not isinstance(divisor, int) or divisor < 2:
            raise TypeError(f"Divisor must be an integer of at least 2, not {divisor!r}")
        if not isinstance(period, int) or period < divisor * 10 * 48:
            raise TypeError(f"Period must be an integer long enough for a line, not {period!r}")
        self._divisor, self._period = divisor, period
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        snap = {n: Signal(32, name=f"snap_{n}") for n in ("batches", "decided", "admitted")}
        code, state = Signal(4), Signal(2)  # 0 WAIT, 1 PASS, 2 FAIL

        # The line: literal bytes, or (value, nibble) for a hex digit, or a word by state.
        line = [*b"BG ", "word", *b" B", *((snap["batches"], i) for i in range(7, -1, -1)),
                *b" D", *((snap["decided"], i) for i in range(7, -1, -1)),
                *b" A", *((snap["admitted"], i) for i in range(7, -1, -1)),
                *b" E", (code, 0), *b"\r\n"]
        words = (b"WAIT", b"PASS", b"FAIL")
        pos = Signal(range(len(line) + 4))
        char = Signal(8)
        with m.Switch(pos):
            k = 0
            for item in line:
                if item == "word":
                    for j in range(4):
                        with m.Case(k + j):
                            m.d.comb += char.eq(Mux(state == 2, words[2][j], Mux(state == 1, words[1][j],
                                                                                   words[0][j])))
                    k += 4
                    continue
                with m.Case(k):
                    if isinstance(item, int):
                        m.d.comb += char.eq(item)
                    else:
                        value, nibble = item
                        digit = value[4 * nibble:4 * nibble + 4]
                        m.d.comb += char.eq(Mux(digit < 10, Const(ord("0"), 8) + digit,
                                                Const(ord("A") - 10, 8) + digit))
                k += 1
        length = k

        timer = Signal(range(self._period))
        baud = Signal(range(self._divisor))
        shift = Signal(10)
        bits = Signal(range(11))
        m.d.sync += timer.eq(Mux(timer == self._period - 1, 0, timer + 1))
        with m.FSM():
            with m.State("IDLE"):
                with m.If(timer == 0):
                    m.d.sync += [snap[n].eq(getattr(self, n)) for n in snap]
                    m.d.sync += [code.eq(self.fail_code), pos.eq(0),
                                 state.eq(Mux(self.failed, 2, Mux(self.passed, 1, 0)))]
                    m.next = "LOAD"
            with m.State("LOAD"):
                m.d.sync += [shift.eq(Cat(Const(0, 1), char, Const(1, 1))), bits.eq(10), baud.eq(0)]
                m.next = "SEND"
            with m.State("SEND"):
                m.d.sync += baud.eq(Mux(baud == self._divisor - 1, 0, baud + 1))
                with m.If(baud == self._divisor - 1):
                    m.d.sync += [shift.eq(shift >> 1), bits.eq(bits - 1)]
                    with m.If(bits == 1):
                        m.d.sync += pos.eq(pos + 1)
                        m.next = "NEXT"
            with m.State("NEXT"):
                m.next = "LOAD"
                with m.If(pos == length):
                    m.next = "IDLE"
        with m.If(bits != 0):
            m.d.comb += self.tx.eq(shift[0])
        with m.Else():
            m.d.comb += self.tx.eq(1)
        return m
