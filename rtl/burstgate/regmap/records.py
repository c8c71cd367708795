"""Byte layout of the ring records the kernel exchanges with the host in device memory.

One description, read by the gateware's ring engines (:mod:`burstgate.kernel.records`), the C
header (``BG_REC_*`` macros in ``regs.h``) and ``docs/registers.md``. Every record is
little-endian and a power-of-two number of bytes; bytes not covered by a field are written 0
by the producer and ignored by the consumer. A field's value is the ``width`` bits starting at
bit ``bit`` of the record (bit 0 is bit 0 of byte 0); an array field repeats ``count`` times,
``width`` bits apart.
"""

from dataclasses import dataclass

from .burstgate_map import C

__all__ = ["Field", "Record", "RECORDS", "DESC", "DECISION", "COMPLETION"]


@dataclass(frozen=True)
class Field:
    """One field of a record: ``width`` bits at bit offset ``bit`` (``count`` elements)."""
    name: str
    bit: int
    width: int
    doc: str
    count: int = 1

    def __post_init__(self):
        if not self.name.isidentifier() or not self.name.isupper():
            raise ValueError(f"field name must be an upper-case identifier, not {self.name!r}")
        if self.bit < 0 or not 1 <= self.width <= 32 or self.count < 1:
            raise ValueError(f"{self.name}: bad bit/width/count {self.bit}/{self.width}/{self.count}")
        for i in range(self.count):
            if (self.bit + i * self.width) % 32 + self.width > 32:
                raise ValueError(f"{self.name}: a field must not straddle a 32-bit word")

    @property
    def end(self):
        return self.bit + self.width * self.count


@dataclass(frozen=True)
class Record:
    """A fixed-size ring entry."""
    name: str
    size: int
    doc: str
    fields: tuple

    def __post_init__(self):
        if self.size < 4 or self.size & (self.size - 1):
            raise ValueError(f"record {self.name}: size must be a power of two >= 4, not {self.size}")
        spans = sorted((f.bit, f.end, f.name) for f in self.fields)
        for (_lo0, hi0, n0), (lo1, _hi1, n1) in zip(spans, spans[1:]):
            if lo1 < hi0:
                raise ValueError(f"record {self.name}: {n0} and {n1} overlap")
        if spans and spans[-1][1] > self.size * 8:
            raise ValueError(f"record {self.name}: {spans[-1][2]} lies past the record's end")

    def field(self, name):
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"record {self.name} has no field {name!r}")

    def pack(self, values):
        """The record's bytes for a mapping field name (lower case) -> int or list of ints."""
        known = {f.name.lower() for f in self.fields}
        unknown = set(values) - known
        if unknown:
            raise KeyError(f"record {self.name} has no field {sorted(unknown)[0]!r}")
        word = 0
        for f in self.fields:
            v = values.get(f.name.lower(), 0)
            elems = list(v) if f.count > 1 else [v]
            if len(elems) != f.count:
                raise ValueError(f"{self.name}.{f.name}: expected {f.count} values, not {len(elems)}")
            for i, e in enumerate(elems):
                if not 0 <= e < (1 << f.width):
                    raise ValueError(f"{self.name}.{f.name}: {e!r} does not fit {f.width} bits")
                word |= e << (f.bit + i * f.width)
        return word.to_bytes(self.size, "little")

    def unpack(self, raw):
        """Inverse of :meth:`pack`: field name (lower case) -> int or list of ints."""
        if len(raw) != self.size:
            raise ValueError(f"record {self.name}: {len(raw)} bytes, not {self.size}")
        word = int.from_bytes(raw, "little")
        out = {}
        for f in self.fields:
            elems = [(word >> (f.bit + i * f.width)) & ((1 << f.width) - 1) for i in range(f.count)]
            out[f.name.lower()] = elems if f.count > 1 else elems[0]
        return out


# Fields are wider than the gateware's (tenant 16 bits for TENANT_BITS = 10, ...) so the
# format survives a larger build; the kernel uses the low bits and the host rejects values
# the build cannot carry before writing them.
DESC = Record(
    "DESC", 16,
    "One I/O, host to device (descriptor ring). `IoDesc` in burstgate/model/agent.hpp.",
    (
        Field("TAG", 0, 16, "echoed on the decision"),
        Field("TENANT", 16, 16, f"tenant id (low {C['TENANT_BITS']} bits used)"),
        Field("QUEUE", 32, 8, f"ingress queue (low {C['QUEUE_BITS']} bits used)"),
        Field("PRODUCT", 40, 8, "product class"),
        Field("WRITE", 48, 1, "1 for a write"),
        Field("REOFFER", 49, 1, "1 when the host offers a deferred I/O again: classified by the "
              "segment monitor, not counted"),
        Field("SIZE", 64, 32, f"bytes (low {C['SIZE_BITS']} bits used)"),
        Field("SEGMENT", 96, 16, f"segment id (low {C['SEGMENT_BITS']} bits used)"),
    ))

DECISION = Record(
    "DECISION", 32,
    "The verdict on one descriptor, device to host (decision ring), in descriptor order. "
    "`IoDecision` in agent.hpp.",
    (
        Field("TAG", 0, 16, "the descriptor's tag"),
        Field("TENANT", 16, 16, "the descriptor's tenant"),
        Field("QUEUE", 32, 8, "the descriptor's ingress queue"),
        Field("SOURCE", 40, 8, "SRC_* constant: who paid, or why it was deferred"),
        Field("EGRESS", 48, 8, "egress queue, valid when admitted"),
        Field("HOT", 56, 1, "the segment was hot for this I/O"),
        Field("PREFILL", 57, 1, "its buffer came from the shared pool"),
        Field("LENDER", 64, 16, "lending tenant, valid for SRC_BORROW"),
        Field("COST", 128, 32, "cost vector [cpu ns, ingress, egress, swlimit]",
              count=C["COST_DIMS"]),
    ))

COMPLETION = Record(
    "COMPLETION", 16,
    "An I/O the storage agent finished, host to device (completion ring). `IoCompletion` in "
    "agent.hpp.",
    (
        Field("TAG", 0, 16, "the decision's tag"),
        Field("TENANT", 16, 16, "the decision's tenant"),
        Field("QUEUE", 32, 8, "the decision's ingress queue"),
        Field("EGRESS", 40, 8, "the decision's egress queue"),
        Field("CHARGE_NS", 64, 32, "the decision's cpu cost"),
        Field("SA_DELAY_NS", 96, 32, "time in the storage agent, backend excluded"),
    ))

RECORDS = (DESC, DECISION, COMPLETION)
