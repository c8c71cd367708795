"""The completion path's SA-delay histograms: one row per tenant in block RAM, one aggregate.

The bucket rule is that of ``fw/include/burstgate/latency_hist.h``; both take the bucket
count and edges from the register map (``HIST_*``), so the gateware cannot drift from the
firmware that reads the counts.
"""

from amaranth import Array, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .csr import ExternalSignature
from .regmap import C, REGMAP

__all__ = ["BUCKET_BITS", "DelayHistogram", "FLOOR_BITS", "SUB_BITS", "bucket_of"]

#: Bucket 0 holds [0, 2**FLOOR_BITS) ns; every octave above it has 2**SUB_BITS buckets.
FLOOR_BITS = C["HIST_FLOOR_BITS"]
SUB_BITS = C["HIST_SUB_BITS"]
_BUCKETS = C["HIST_BUCKETS"]
_COUNT_MAX = (1 << 32) - 1
#: Width of a bucket index (what ``bucket_of`` returns).
BUCKET_BITS = (_BUCKETS - 1).bit_length()


def bucket_of(delay):
    """An Amaranth value: ``bg_lh_bucket(delay)`` for a 32-bit ``delay``."""
    # From the lowest octave up, so the highest set bit wins.
    result = 0
    for e in range(FLOOR_BITS, 32):
        sub = delay[e - SUB_BITS:e]
        b = 1 + ((e - FLOOR_BITS) << SUB_BITS) + sub
        capped = Mux(b < _BUCKETS, b, _BUCKETS - 1)
        result = Mux(delay[e], capped, result)
    return result


_Entry = data.StructLayout({"count": unsigned(32), "stamp": unsigned(32)})


class DelayHistogram(wiring.Component):
    """Count each completion's SA delay in its tenant's histogram and in the aggregate.

    ``count[bucket(delay)] += 1``, saturating, in the tenant's row (block RAM, one word per
    bucket) and in the aggregate (flops). COMMIT clears both in one cycle: the aggregate is
    flops, and every RAM word carries the window it was written in; a word from an older
    window reads as 0 (aliasing only after 2**32 windows of silence).

    Pipeline: the word is read in the cycle of ``record``, and written back one cycle later;
    the previous cycle's write, which that read cannot see, is forwarded, so completions of
    one tenant and bucket can follow each other on consecutive clocks.

    Parameters
    ----------
    tenants : int
        Rows, 1..``TENANTS_MAX``.

    Members
    -------
    record : In(1)
        Count ``tenant``/``delay`` this cycle.
    tenant : In(TENANT_BITS)
        Below ``tenants`` (the completion path checks it).
    bucket : In(BUCKET_BITS)
        ``bucket_of`` of the completion's SA delay, below ``HIST_BUCKETS``. The caller forms
        it ahead of ``record`` (the core, when it queues the completion): formed here from the
        delay, its compare tree was the head of the ULX3S board top's ECP5 critical path into
        the aggregate counters (issue 22).
    window : In(32)
        The current window (CTRL.WINDOW_INDEX).
    commit : In(1)
        The window closes at the end of this cycle (only when ``busy`` is low).
    busy : Out(1)
        A write-back is pending.
    hist : In(ExternalSignature)
        TENANT.HIST, index ``tenant * 32 + bucket``; read latency 1.
    hist_all : In(ExternalSignature)
        CTRL.HIST_ALL.
    """

    def __init__(self, *, tenants):
        if not isinstance(tenants, int) or isinstance(tenants, bool):
            raise TypeError(f"Tenants must be an integer, not {tenants!r}")
        if not 1 <= tenants <= C["TENANTS_MAX"]:
            raise ValueError(f"Tenants must be 1..{C['TENANTS_MAX']}, not {tenants!r}")
        self._tenants = tenants
        hist = REGMAP.block("TENANT").register("HIST")
        hist_all = REGMAP.block("CTRL").register("HIST_ALL")
        super().__init__({
            "record": In(1),
            "tenant": In(C["TENANT_BITS"]),
            "bucket": In(BUCKET_BITS),
            "window": In(32),
            "commit": In(1),
            "busy": Out(1),
            "hist": In(ExternalSignature(count=hist.count, width=hist.width)),
            "hist_all": In(ExternalSignature(count=hist_all.count, width=hist_all.width)),
        })

    def elaborate(self, platform):
        m = Module()
        words = self._tenants * _BUCKETS
        addr_bits = (words - 1).bit_length()
        m.submodules.ram = ram = Memory(shape=_Entry, depth=words, init=[])
        rp = ram.read_port()
        wp = ram.write_port()

        bucket = self.bucket
        addr = Signal(addr_bits)
        m.d.comb += [addr.eq(Cat(bucket, self.tenant)[:addr_bits]), rp.addr.eq(addr), rp.en.eq(1)]

        s1_valid = Signal()
        s1_addr = Signal(addr_bits)
        m.d.sync += [s1_valid.eq(self.record), s1_addr.eq(addr)]
        m.d.comb += self.busy.eq(s1_valid)

        last_valid = Signal()
        last_addr = Signal(addr_bits)
        last = Signal(_Entry)
        m.d.sync += [last_valid.eq(wp.en), last_addr.eq(wp.addr), last.eq(wp.data)]
        old = _Entry(Mux(last_valid & (last_addr == s1_addr), last, rp.data))
        count = Mux(old.stamp == self.window, old.count, 0)
        m.d.comb += [
            wp.addr.eq(s1_addr),
            wp.data.count.eq(Mux(count == _COUNT_MAX, count, count + 1)),
            wp.data.stamp.eq(self.window),
            wp.en.eq(s1_valid),
        ]

        # Each counter increments itself on its own bucket's match: a counter selected by
        # ``bucket``, incremented and written back put a 32-way read select before the adder.
        agg = Array(Signal(32, name=f"all{b}") for b in range(_BUCKETS))
        for b, a in enumerate(agg):
            with m.If(self.record & (bucket == b) & (a != _COUNT_MAX)):
                m.d.sync += a.eq(a + 1)
        with m.If(self.commit):
            m.d.sync += [a.eq(0) for a in agg]
        with m.If(self.hist_all.r_en):
            m.d.sync += self.hist_all.r_data.eq(agg[self.hist_all.index])

        # Register reads: a second port, the same stale-word rule and forwarding.
        csr_rp = ram.read_port()
        in_range = Signal()
        r_addr = Signal(addr_bits)
        m.d.comb += [csr_rp.addr.eq(self.hist.index[:addr_bits]), csr_rp.en.eq(1)]
        m.d.sync += [in_range.eq(self.hist.index < words), r_addr.eq(self.hist.index[:addr_bits])]
        word = _Entry(Mux(last_valid & (last_addr == r_addr), last, csr_rp.data))
        m.d.comb += self.hist.r_data.eq(Mux(in_range & (word.stamp == self.window), word.count, 0))
        return m
