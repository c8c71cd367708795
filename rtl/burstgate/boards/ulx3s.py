"""ULX3S-85F board top: the core's self-test at ``CLOCK_HZ``, status on the LEDs and the FTDI UART.

    python scripts/pnr_ecp5.py ulx3s          # bitstream build/pnr/ulx3s.bit
    openFPGALoader -b ulx3s build/pnr/ulx3s.bit

LEDs: 0 pass (at least one batch checked, nothing disagreed), 1 fail (sticky), 2 heartbeat
(1.5 Hz from the PLL's clock: the PLL runs), 3..7 batches checked, bits 14..10 (they blink
while batches pass). UART (115200 8N1, the FTDI port, ``/dev/ttyUSB0``): a status line about
every 0.67 s, see ``StatusUart``.

The clock is 25 MHz because the core routes at 28.00 MHz on this part (docs/results.md,
ECP5-85F): a bitstream clocked above its routed Fmax would fail its own self-test.
``scripts/pnr_ecp5.py`` fails when the routed Fmax of this clock falls below it. Raise
``CLOCK_HZ`` (a multiple of 25 MHz dividing 600 MHz) as the core's timing improves.
"""

from amaranth import ClockDomain, ClockSignal, Instance, Module, Signal
from amaranth.lib.cdc import ResetSynchronizer
from amaranth.lib import io, wiring

from .selftest import SelfTest
from .status_uart import StatusUart

__all__ = ["BoardTop", "CLOCK_HZ"]

CLOCK_HZ = 25_000_000
BAUD = 115_200
_OSC_HZ = 25_000_000
_VCO_HZ = 600_000_000     # inside the EHXPLLL's 400..800 MHz


def pll_divisors(clock_hz):
    """``(CLKFB_DIV, CLKOP_DIV, CLKOP_CPHASE)`` of an EHXPLLL making ``clock_hz`` from the
    25 MHz oscillator with its VCO at 600 MHz (CLKI_DIV 1, feedback from CLKOP); the phase
    is ``ecppll``'s for a zero-degree output. 100 MHz gives ``ecppll -i 25 -o 100``'s (4, 6, 2).
    """
    if clock_hz <= 0 or clock_hz % _OSC_HZ or _VCO_HZ % clock_hz:
        raise ValueError(f"the board clock must be a multiple of 25 MHz dividing 600 MHz, not {clock_hz!r}")
    op_div = _VCO_HZ // clock_hz
    return clock_hz // _OSC_HZ, op_div, (op_div - 1) // 2


class BoardTop(wiring.Component):
    """The ULX3S top (no ports: every I/O is requested from the platform).

    ``EHXPLLL`` makes ``CLOCK_HZ`` from the 25 MHz oscillator (``pll_divisors``); nextpnr
    derives the constraint of its output from the oscillator's 25 MHz LPF constraint and the
    divisors. The ``sync`` domain is held in reset until the PLL
    locks.
    """

    def __init__(self, **params):
        self._params = params
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = cd_sync = ClockDomain("sync")
        locked = Signal()
        m.submodules.clk25 = clk25 = io.Buffer("i", platform.request("clk25", 0, dir="-"))
        fb_div, op_div, op_phase = pll_divisors(CLOCK_HZ)
        m.submodules.pll = Instance(
            "EHXPLLL",
            a_FREQUENCY_PIN_CLKI="25", a_FREQUENCY_PIN_CLKOP=str(CLOCK_HZ // 1_000_000), a_ICP_CURRENT="12",
            a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1", a_MFG_GMCREF_SEL="2",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_CLKI_DIV=1, p_CLKOP_ENABLE="ENABLED",
            p_CLKOP_DIV=op_div, p_CLKOP_CPHASE=op_phase, p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP",
            p_CLKFB_DIV=fb_div,
            i_RST=0, i_STDBY=0, i_CLKI=clk25.i, i_CLKFB=ClockSignal("sync"),
            i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1, i_PLLWAKESYNC=0,
            i_ENCLKOP=0, o_CLKOP=cd_sync.clk, o_LOCK=locked)
        m.submodules.rst = ResetSynchronizer(~locked, domain="sync")

        m.submodules.test = test = SelfTest(**self._params)
        # 2**beat_bits clocks: about 0.67 s (1.5 Hz) at any CLOCK_HZ
        beat_bits = (CLOCK_HZ * 2 // 3).bit_length()
        m.submodules.uart = uart = StatusUart(divisor=CLOCK_HZ // BAUD, period=1 << beat_bits)
        for name in ("passed", "failed", "fail_code", "batches", "decided", "admitted"):
            m.d.comb += getattr(uart, name).eq(getattr(test, name))

        beat = Signal(beat_bits)
        m.d.sync += beat.eq(beat + 1)
        leds = []
        for k in range(8):
            m.submodules[f"led{k}"] = led = io.Buffer("o", platform.request("led", k, dir="-"))
            leds.append(led.o)
        m.d.comb += [leds[0].eq(test.passed), leds[1].eq(test.failed), leds[2].eq(beat[-1])]
        m.d.comb += [leds[3 + k].eq(test.batches[14 - k]) for k in range(5)]
        m.submodules.uart_tx = tx = io.Buffer("o", platform.request("uart", 0, dir="-").tx)
        m.d.comb += tx.o.eq(uart.tx)
        return m
