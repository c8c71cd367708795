"""Ring engines: a reader (host-produced ring -> stream) and a writer (stream -> ring).

Both work in bursts that never cross a ``RING_ALIGN``-byte boundary (ring bases are aligned to
it and rings are at least that long), so no burst crosses a 4 KiB page or the ring's end.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from ..regmap import C
from .axi import ADDR_WIDTH, DATA_WIDTH

__all__ = ["AddrSignature", "ReadDataSignature", "WriteDataSignature", "WriteRespSignature",
           "RingReader", "RingWriter"]

_ALIGN_BITS = (C["RING_ALIGN"] - 1).bit_length()
_BEAT_BYTES = DATA_WIDTH // 8


def AddrSignature():
    """An AW or AR request, from the requester's side (AXI handshake rules)."""
    return wiring.Signature({
        "valid": Out(1), "ready": In(1), "addr": Out(ADDR_WIDTH), "len": Out(8),
    })


def ReadDataSignature():
    """R beats routed to one reader by ID; always accepted (the reader reserved room)."""
    return wiring.Signature({"valid": Out(1), "data": Out(DATA_WIDTH), "resp": Out(2)})


def WriteDataSignature():
    """W beats, from the writer's side."""
    return wiring.Signature({"valid": Out(1), "ready": In(1), "data": Out(DATA_WIDTH), "last": Out(1)})


def WriteRespSignature():
    """B responses; always accepted."""
    return wiring.Signature({"valid": Out(1), "resp": Out(2)})


def _ring_offset(m, index, log2, record_bytes):
    """Byte offset of entry ``index`` in a ring of ``2**log2`` entries."""
    shifted = Const(0xFFFF_FFFF, 32) << log2
    slot = Signal(32)
    m.d.comb += slot.eq(index & ~shifted[:32])
    return slot << (record_bytes.bit_length() - 1)


def _aligned(base):
    return Cat(Const(0, _ALIGN_BITS), base[_ALIGN_BITS:])


def _check(record_bytes, fifo_depth, max_burst):
    if not isinstance(record_bytes, int) or record_bytes < 1 or record_bytes & (record_bytes - 1):
        raise TypeError(f"Record bytes must be a power of two, not {record_bytes!r}")
    if record_bytes * (1 << C["RING_LOG2_MIN"]) < C["RING_ALIGN"]:
        raise TypeError(f"Record bytes {record_bytes!r} too small for the smallest ring to fill "
                        f"a {C['RING_ALIGN']}-byte burst chunk")
    if not isinstance(fifo_depth, int) or fifo_depth < max_burst:
        raise TypeError(f"FIFO depth must be an integer of at least {max_burst}, not {fifo_depth!r}")


class RingReader(wiring.Component):
    """Read a host-produced ring (descriptors, completions) into a stream of records.

    While ``run`` is high and ``tail != head-in-flight``, issues an INCR read burst of up to
    ``RING_ALIGN / record_bytes`` records, stopping at the next ``RING_ALIGN`` boundary, but
    only when the FIFO has room for every beat requested so far: R beats are therefore always
    accepted and a full output never loses a record. ``head`` counts records that arrived
    (their slots may be reused by the host).

    Parameters
    ----------
    record_bytes : int
        One record per beat: must equal the data width in bytes.
    fifo_depth : int
        Records buffered; at least one burst.

    Members
    -------
    base : In(64)
        Ring base in device memory (low bits below RING_ALIGN ignored).
    log2 : In(5)
        log2 of the ring's entries (already clamped).
    tail : In(32)
        The host's producer index (doorbell).
    run : In(1)
        Fetch while high.
    head : Out(32)
        Records received since reset.
    ar : Out(AddrSignature())
        Read requests; ``len`` is beats - 1.
    r : In(ReadDataSignature())
        This reader's R beats, in order.
    o : Out(stream.Signature(DATA_WIDTH))
        The records, in ring order. Latency from R beat to ``o.valid``: 1 to 2 cycles.
    idle : Out(1)
        No request outstanding and nothing buffered.
    error : Out(1)
        Sticky: an R beat carried a response other than OKAY.
    """

    def __init__(self, *, record_bytes=_BEAT_BYTES, fifo_depth=64):
        if record_bytes != _BEAT_BYTES:
            raise TypeError(f"Record bytes must equal the beat ({_BEAT_BYTES}), not {record_bytes!r}")
        self._burst = C["RING_ALIGN"] // record_bytes
        _check(record_bytes, fifo_depth, self._burst)
        self._record_bytes, self._depth = record_bytes, fifo_depth
        super().__init__({
            "base": In(ADDR_WIDTH), "log2": In(5), "tail": In(32), "run": In(1),
            "head": Out(32),
            "ar": Out(AddrSignature()), "r": In(ReadDataSignature()),
            "o": Out(stream.Signature(DATA_WIDTH)),
            "idle": Out(1), "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=DATA_WIDTH, depth=self._depth)
        burst_bits = self._burst.bit_length() - 1

        fetch = Signal(32)                       # next record to request
        inflight = Signal(range(self._depth + 1))  # beats requested, not yet arrived
        avail = Signal(32)
        to_boundary = Signal(burst_bits + 1)
        n = Signal(burst_bits + 1)
        m.d.comb += [
            avail.eq(self.tail - fetch),
            to_boundary.eq(self._burst - fetch[:burst_bits]),
            n.eq(Mux(avail < to_boundary, avail, to_boundary)),
        ]
        issue = Signal()
        m.d.comb += issue.eq(self.run & ~self.ar.valid & (n != 0)
                             & (fifo.level + inflight + n <= self._depth))
        with m.If(issue):
            m.d.sync += [
                self.ar.valid.eq(1),
                self.ar.addr.eq(_aligned(self.base)
                                + _ring_offset(m, fetch, self.log2, self._record_bytes)),
                self.ar.len.eq(n - 1),
                fetch.eq(fetch + n),
            ]
        with m.Elif(self.ar.ready):
            m.d.sync += self.ar.valid.eq(0)
        m.d.sync += inflight.eq(inflight + Mux(issue, n, 0) - self.r.valid)

        m.d.comb += [fifo.w_en.eq(self.r.valid), fifo.w_data.eq(self.r.data)]
        with m.If(self.r.valid):
            m.d.sync += self.head.eq(self.head + 1)
            with m.If(self.r.resp != 0):
                m.d.sync += self.error.eq(1)

        wiring.connect(m, fifo.r_stream, wiring.flipped(self.o))
        m.d.comb += self.idle.eq(~self.ar.valid & (inflight == 0) & (fifo.level == 0))
        return m


class RingWriter(wiring.Component):
    """Write a stream of records to a host-consumed ring (decisions), in order.

    Records wait in a FIFO; an INCR write burst covers the records buffered and not yet
    assigned, up to the ring's free room (``2**log2 - (written - head)``) and the next
    ``RING_ALIGN`` boundary. ``tail`` advances when a burst's B response arrives, so the host
    never sees an entry before memory holds it. A full ring or a slow memory stops ``i.ready``:
    the producer waits, nothing is dropped.

    Parameters
    ----------
    record_bytes : int
        A multiple of the beat (``DATA_WIDTH / 8``); the record is sent low beat first.
    fifo_depth : int
        Records buffered.

    Members
    -------
    base : In(64)
    log2 : In(5)
    head : In(32)
        The host's consumer index (doorbell).
    tail : Out(32)
        Records written and acknowledged since reset.
    published : Out(1)
        One-cycle pulse when ``tail`` advances.
    i : In(stream.Signature(record_bytes * 8))
    aw : Out(AddrSignature())
    w : Out(WriteDataSignature())
    b : In(WriteRespSignature())
    idle : Out(1)
    error : Out(1)
        Sticky: a B response other than OKAY.
    """

    def __init__(self, *, record_bytes, fifo_depth=32, bursts=4):
        self._burst = C["RING_ALIGN"] // record_bytes if isinstance(record_bytes, int) and record_bytes else 0
        _check(record_bytes, fifo_depth, self._burst)
        if record_bytes % _BEAT_BYTES:
            raise TypeError(f"Record bytes must be a multiple of {_BEAT_BYTES}, not {record_bytes!r}")
        if not isinstance(bursts, int) or bursts < 1:
            raise TypeError(f"Bursts must be a positive integer, not {bursts!r}")
        self._record_bytes, self._depth, self._bursts = record_bytes, fifo_depth, bursts
        super().__init__({
            "base": In(ADDR_WIDTH), "log2": In(5), "head": In(32),
            "tail": Out(32), "published": Out(1),
            "i": In(stream.Signature(record_bytes * 8)),
            "aw": Out(AddrSignature()), "w": Out(WriteDataSignature()), "b": In(WriteRespSignature()),
            "idle": Out(1), "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        beats = self._record_bytes // _BEAT_BYTES
        burst_bits = self._burst.bit_length() - 1
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=self._record_bytes * 8, depth=self._depth)
        # Burst sizes in records: one queue for the W engine, one for the B responses.
        m.submodules.wlen = wlen = SyncFIFOBuffered(width=burst_bits + 1, depth=self._bursts)
        m.submodules.blen = blen = SyncFIFOBuffered(width=burst_bits + 1, depth=self._bursts)
        wiring.connect(m, wiring.flipped(self.i), fifo.w_stream)

        written = Signal(32)                         # next record to assign to a burst
        assigned = Signal(range(self._depth + 1))    # buffered records some burst covers
        used = Signal(32)
        size = Signal(33)
        room = Signal(33)
        unassigned = Signal(range(self._depth + 1))
        to_boundary = Signal(burst_bits + 1)
        n = Signal(burst_bits + 1)
        m.d.comb += [
            used.eq(written - self.head),
            size.eq(Const(1, 33) << self.log2),
            room.eq(Mux(used >= size, 0, size - used)),
            unassigned.eq(fifo.level - assigned),
            to_boundary.eq(self._burst - written[:burst_bits]),
            n.eq(Mux(unassigned < to_boundary, unassigned, to_boundary)),
        ]
        count = Signal(burst_bits + 1)
        m.d.comb += count.eq(Mux(room < n, room, n))
        issue = Signal()
        m.d.comb += [
            issue.eq(~self.aw.valid & (count != 0) & wlen.w_rdy & blen.w_rdy),
            wlen.w_en.eq(issue), wlen.w_data.eq(count),
            blen.w_en.eq(issue), blen.w_data.eq(count),
        ]
        with m.If(issue):
            m.d.sync += [
                self.aw.valid.eq(1),
                self.aw.addr.eq(_aligned(self.base)
                                + _ring_offset(m, written, self.log2, self._record_bytes)),
                self.aw.len.eq(count * beats - 1),
                written.eq(written + count),
            ]
        with m.Elif(self.aw.ready):
            m.d.sync += self.aw.valid.eq(0)

        # W: the records of each burst, low beat first.
        left = Signal(burst_bits + 1)   # records of the current burst still to send
        beat = Signal(range(beats))
        m.d.comb += wlen.r_en.eq((left == 0) & wlen.r_rdy)
        with m.If(wlen.r_en):
            m.d.sync += left.eq(wlen.r_data)
        m.d.comb += [
            self.w.valid.eq((left != 0) & fifo.r_rdy),
            self.w.data.eq(fifo.r_data.word_select(beat, self._record_bytes * 8 // beats)),
            self.w.last.eq((beat == beats - 1) & (left == 1)),
        ]
        sent = Signal()
        with m.If(self.w.valid & self.w.ready):
            with m.If(beat == beats - 1):
                m.d.comb += [fifo.r_en.eq(1), sent.eq(1)]
                m.d.sync += [beat.eq(0), left.eq(left - 1)]
            with m.Else():
                m.d.sync += beat.eq(beat + 1)
        m.d.sync += assigned.eq(assigned + Mux(issue, count, 0) - sent)

        # B: publish the burst.
        m.d.comb += blen.r_en.eq(self.b.valid)
        with m.If(self.b.valid):
            m.d.sync += [self.tail.eq(self.tail + blen.r_data), self.published.eq(1)]
            with m.If(self.b.resp != 0):
                m.d.sync += self.error.eq(1)
        with m.Else():
            m.d.sync += self.published.eq(0)
        m.d.comb += self.idle.eq((fifo.level == 0) & ~blen.r_rdy & ~self.aw.valid)
        return m
