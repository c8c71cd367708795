"""The segment-level I/O rate monitor (Still Water §4.2), one read-modify-write per I/O per clock.

The rule is the one of ``sw/model/include/burstgate/model/segment_monitor.hpp``, which the
unit and cocotb testbenches compare against decision by decision.
"""

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .regmap import C

__all__ = ["SegmentMonitor", "SegmentEntry", "SegmentIo", "SegmentVerdict"]

_SEGMENT_BITS = C["SEGMENT_BITS"]
_STAMP_BITS = 32   # SegmentEntry::stamp, the interval of the last update (wraps modulo 2**32)
_COUNT_BITS = 16   # SegmentEntry::count, saturating
_MAX_STEADY = C["SEGMON_STEADY_MAX"]   # SegmentMonitor::kMaxSteadyIntervals
_HOLD_BITS = (_MAX_STEADY + 1).bit_length()  # SegmentEntry::hold: N + 1

#: One RAM word: what the model keeps per segment.
SegmentEntry = data.StructLayout({
    "stamp": unsigned(_STAMP_BITS),
    "count": unsigned(_COUNT_BITS),
    "hold":  unsigned(_HOLD_BITS),
})

#: An I/O to classify. ``tag`` is carried through untouched so the consumer can pair the
#: verdict with its descriptor. ``count`` is 0 for an I/O the host offers again after a
#: deferral: Still Water §4.2 counts "the volume of requests served by a segment", so a
#: request is counted once, however often it is re-offered. ``size`` (bytes) is what a
#: counted I/O adds under the sector unit, ``ceil(size / 512)``.
SegmentIo = data.StructLayout({
    "segment": unsigned(_SEGMENT_BITS),
    "tag":     unsigned(C["TAG_BITS"]),
    "count":   unsigned(1),
    "size":    unsigned(C["SIZE_BITS"]),
})

#: The verdict for one I/O, in input order.
SegmentVerdict = data.StructLayout({
    "segment": unsigned(_SEGMENT_BITS),
    "tag":     unsigned(C["TAG_BITS"]),
    "hot":     unsigned(1),
})


class SegmentMonitor(wiring.Component):
    """Count I/Os per segment and interval; a segment is hot above R, steady N intervals later.

    Per I/O to segment ``s`` in interval ``t`` the entry ``e = ram[s]`` is rolled forward if
    its stamp is older (``hold -= t - stamp`` saturating at 0, ``count = 0``, ``stamp = t``);
    then, if the I/O is counted (``i.payload.count``), ``sum = count + add`` with ``add`` 1
    (``unit`` requests) or ``ceil(size / 512)`` (``unit`` sectors), ``count = min(sum,
    65535)``, and ``hold = N + 1`` if ``R != 65535`` and ``sum > R``; every I/O is hot iff
    ``hold != 0``. A counted I/O is counted before it is classified; an uncounted one (a
    re-offer) only rolls the entry forward, so a re-offered I/O of a hot segment is still hot.

    Pipeline (II = 1, stalls only when ``o`` is held):

    * cycle 0: the I/O is accepted; the RAM is read; ``t``, N and ``R - add`` are sampled;
    * cycle 1: the old entry (forwarded, see below) is updated; the result is registered;
    * cycle 2: the entry is written back and the verdict is on ``o``.

    The RAM read of cycle 0 does not see the write-backs of the two I/Os accepted just before
    (the one being written in the same cycle as the read, and the one being written in
    cycle 1); those are forwarded from the write-back register and from a copy of the last
    written entry, newest first, so I/Os to one segment on consecutive clocks never stall.

    The entry RAM is zero at configuration (``init``), as the model starts; ``rst`` clears
    the interval counter but not the RAM (block RAM has no reset), so after a reset without
    reconfiguration, stale stamps from before the reset decay as if that much time had
    passed modulo 2**32. Software that needs a clean monitor reloads the bitstream.

    Parameters
    ----------
    segments : int
        RAM depth, a power of two from 2 to ``2**SEGMENT_BITS``. Only the low
        ``log2(segments)`` bits of a segment id address the RAM; higher bits alias.

    Members
    -------
    i : In(stream.Signature(SegmentIo))
        I/Os to classify; those with ``count`` set are also counted.
    o : Out(stream.Signature(SegmentVerdict))
        Their verdicts, in order. Latency 2 cycles from ``i`` to ``o``.
    tick : In(1)
        Interval tick, one cycle high: I/Os accepted after this cycle belong to the next
        interval; an I/O accepted in the tick's own cycle belongs to the ending one.
    hot_threshold : In(16)
        R, in ``unit`` per interval. Sampled when an I/O is accepted (a change applies to
        later I/Os).
    unit : In(1)
        ``SEGMON_UNIT_REQUESTS`` or ``SEGMON_UNIT_SECTORS``. Sampled when an I/O is accepted.
    steady_intervals : In(8)
        N, 0..254; 255 acts as 254 (the model rejects it; ``hold`` is 8 bits wide).
        Sampled when an I/O is accepted.
    interval : Out(32)
        The current interval number (ticks since reset, wrapping).
    """

    def __new__(cls, *, segments=1 << _SEGMENT_BITS):
        # Checked before the object exists: a rejected one would warn "created but never used".
        if not isinstance(segments, int) or isinstance(segments, bool):
            raise TypeError(f"Segments must be an integer, not {segments!r}")
        if not 2 <= segments <= 1 << _SEGMENT_BITS or segments & (segments - 1):
            raise ValueError(f"Segments must be a power of two from 2 to {1 << _SEGMENT_BITS}, "
                             f"not {segments!r}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, *, segments=1 << _SEGMENT_BITS):
        self._segments = segments
        super().__init__({
            "i": In(stream.Signature(SegmentIo)),
            "o": Out(stream.Signature(SegmentVerdict)),
            "tick": In(1),
            "hot_threshold": In(_COUNT_BITS),
            "unit": In(1),
            "steady_intervals": In(_HOLD_BITS),
            "interval": Out(_STAMP_BITS),
        })

    @property
    def segments(self):
        return self._segments

    def elaborate(self, platform):
        m = Module()
        addr_bits = (self._segments - 1).bit_length()

        m.submodules.ram = ram = Memory(shape=SegmentEntry, depth=self._segments, init=[])
        wp = ram.write_port()
        rp = ram.read_port(domain="sync")  # not transparent: forwarding covers the hazards

        with m.If(self.tick):
            m.d.sync += self.interval.eq(self.interval + 1)

        advance = Signal()
        m.d.comb += [advance.eq(~self.o.valid | self.o.ready), self.i.ready.eq(advance)]

        # Cycle 0: read, and sample what the update needs.
        m.d.comb += [rp.addr.eq(self.i.payload.segment[:addr_bits]), rp.en.eq(advance)]
        s1_valid = Signal()
        s1_io = Signal(SegmentIo)
        s1_t = Signal(_STAMP_BITS)
        s1_hold_set = Signal(_HOLD_BITS)   # N + 1, clamped to 255
        # What a counted I/O adds, and R - add: sum > R is "add > R" (the borrow) in a fresh
        # interval and "count > R - add" otherwise, so cycle 1 compares the old count against
        # a register instead of waiting for its sum.
        size = self.i.payload.size
        shift = C["SEGMON_SECTOR_SHIFT"]
        add = Signal(_COUNT_BITS)
        m.d.comb += add.eq(Mux(self.unit == C["SEGMON_UNIT_SECTORS"],
                               size[shift:] + (size[:shift] != 0), 1))
        r_minus = Signal(_COUNT_BITS + 1)
        m.d.comb += r_minus.eq(self.hot_threshold - add)
        s1_add = Signal(_COUNT_BITS)
        s1_lim = Signal(_COUNT_BITS)     # R - add, when add <= R
        s1_always = Signal()             # add > R: any count exceeds it
        s1_never = Signal()              # R = 65535: hot marking off
        with m.If(advance):
            m.d.sync += [
                s1_valid.eq(self.i.valid),
                s1_io.eq(self.i.payload),
                s1_t.eq(self.interval),
                s1_add.eq(add),
                s1_lim.eq(r_minus[:_COUNT_BITS]),
                s1_always.eq(r_minus[_COUNT_BITS]),
                s1_never.eq(self.hot_threshold == (1 << _COUNT_BITS) - 1),
                s1_hold_set.eq(Mux(self.steady_intervals > _MAX_STEADY, _MAX_STEADY + 1,
                                   self.steady_intervals + 1)),
            ]

        # Write-back register (cycle 2) and the entry it wrote one advance earlier.
        s2_valid = Signal()
        s2_addr = Signal(addr_bits)
        s2_entry = Signal(SegmentEntry)
        s3_valid = Signal()
        s3_addr = Signal(addr_bits)
        s3_entry = Signal(SegmentEntry)

        # Cycle 1: forward, then update.
        s1_addr = s1_io.segment[:addr_bits]
        # Which forward applies, compared a cycle early (s2_valid & s2_addr == s1_addr, and
        # s3's): the stages move only together, so the compare of the addresses they will
        # hold after an advance stays true until the next one.
        s1_hit2 = Signal()
        s1_hit3 = Signal()
        i_addr = self.i.payload.segment[:addr_bits]
        with m.If(advance):
            m.d.sync += [
                s1_hit2.eq(s1_valid & (s1_addr == i_addr)),
                s1_hit3.eq(Mux(s2_valid, s2_addr == i_addr, s3_valid & (s3_addr == i_addr))),
            ]
        old = Signal(SegmentEntry)
        with m.If(s1_hit2):
            m.d.comb += old.eq(s2_entry)
        with m.Elif(s1_hit3):
            m.d.comb += old.eq(s3_entry)
        with m.Else():
            m.d.comb += old.eq(rp.data)

        elapsed = Signal(_STAMP_BITS)
        same = Signal()
        decayed = Signal()      # the hold outlasts the intervals elapsed
        rolled_hold = Signal(_HOLD_BITS)
        rolled_count = Signal(_COUNT_BITS)
        new = Signal(SegmentEntry)
        m.d.comb += [elapsed.eq(s1_t - old.stamp), same.eq(old.stamp == s1_t), decayed.eq(old.hold > elapsed)]
        with m.If(same):
            m.d.comb += [rolled_hold.eq(old.hold), rolled_count.eq(old.count)]
        with m.Else():
            m.d.comb += rolled_hold.eq(Mux(decayed, old.hold - elapsed, 0))
        count_max = (1 << _COUNT_BITS) - 1
        counted = s1_io.count
        total = Signal(_COUNT_BITS + 1)
        m.d.comb += total.eq(rolled_count + s1_add)
        count = Mux(counted, Mux(total[_COUNT_BITS], count_max, total[:_COUNT_BITS]), rolled_count)
        # sum > R without waiting for the sum: rolled is 0 in a fresh interval.
        over = Signal()
        m.d.comb += over.eq(counted & ~s1_never & (s1_always | (same & (old.count > s1_lim))))
        m.d.comb += [
            new.stamp.eq(s1_t),
            new.count.eq(count),
            new.hold.eq(Mux(over, s1_hold_set, rolled_hold)),
        ]

        with m.If(advance):
            m.d.sync += [
                s2_valid.eq(s1_valid),
                s2_addr.eq(s1_addr),
                s2_entry.eq(new),
                self.o.payload.segment.eq(s1_io.segment),
                self.o.payload.tag.eq(s1_io.tag),
                # new.hold != 0, from the flags: N + 1 >= 1, and a decayed hold is nonzero.
                self.o.payload.hot.eq(over | Mux(same, old.hold != 0, decayed)),
            ]
            # Only advancing cycles write, so a held pipeline is a frozen one and the
            # forwarding distances count advances, not clocks.
            with m.If(s2_valid):
                m.d.sync += [s3_valid.eq(1), s3_addr.eq(s2_addr), s3_entry.eq(s2_entry)]

        # Cycle 2: write back; the verdict is on the output.
        m.d.comb += [
            wp.addr.eq(s2_addr),
            wp.data.eq(s2_entry),
            wp.en.eq(s2_valid & advance),
            self.o.valid.eq(s2_valid),
        ]
        return m
