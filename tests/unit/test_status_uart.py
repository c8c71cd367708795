"""The board's status UART, decoded bit by bit from its ``tx`` line in simulation.

Catches a wrong bit order, start/stop bits, baud divisor, hex digit (A..F), a line that is
not sampled atomically, and the PASS/FAIL/WAIT word.
"""

from amaranth.sim import Simulator

from burstgate.boards.status_uart import StatusUart

DIVISOR = 4


def _run(inputs, lines=1):
    dut = StatusUart(divisor=DIVISOR, period=DIVISOR * 10 * 48)
    text = bytearray()

    async def bench(ctx):
        for name, value in inputs.items():
            ctx.set(getattr(dut, name), value)
        while text.count(b"\n") < lines:
            await ctx.tick().until(dut.tx == 0)  # start bit
            await ctx.tick().repeat(DIVISOR // 2)  # middle of the start bit
            assert ctx.get(dut.tx) == 0
            byte = 0
            for bit in range(8):
                await ctx.tick().repeat(DIVISOR)
                byte |= ctx.get(dut.tx) << bit
            await ctx.tick().repeat(DIVISOR)
            assert ctx.get(dut.tx) == 1, f"no stop bit after {bytes(text) + bytes([byte])!r}"
            text.append(byte)
            for name, value in inputs.items():  # changes mid-line must not show
                ctx.set(getattr(dut, name), value + 1 if name in ("batches", "decided") else value)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return text.decode()


def test_pass_line():
    line = _run({"passed": 1, "batches": 0x1234ABCD, "decided": 0xFEDC0001, "admitted": 0x00C0FFEE})
    assert line == "BG PASS B1234ABCD DFEDC0001 A00C0FFEE E0\r\n"


def test_fail_line_wins_over_pass():
    line = _run({"passed": 1, "failed": 1, "fail_code": 0xB, "batches": 1, "decided": 2, "admitted": 3})
    assert line == "BG FAIL B00000001 D00000002 A00000003 EB\r\n"


def test_wait_before_first_batch():
    assert _run({}).startswith("BG WAIT B00000000 ")
