"""Ring records: the Python description, and the gateware's record <-> stream-layout mapping
(``burstgate.kernel.records``) checked against it in amaranth.sim."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from burstgate.kernel.records import from_record, to_record
from burstgate.layouts import Completion, Decision, Descriptor, pack, unpack
from burstgate.regmap import C
from burstgate.regmap.records import COMPLETION, DECISION, DESC, Field, Record


def random_fields(layout, rng):
    out = {}
    for name, field in layout:
        shape = field.shape
        if hasattr(shape, "length"):
            out[name] = [rng.getrandbits(32) for _ in range(shape.length)]
        else:
            out[name] = rng.getrandbits(shape.width)
    return out


def test_pack_unpack_round_trip():
    rng = random.Random(1)
    for rec in (DESC, DECISION, COMPLETION):
        for _ in range(50):
            values = {f.name.lower(): ([rng.getrandbits(f.width) for _ in range(f.count)] if f.count > 1
                                       else rng.getrandbits(f.width)) for f in rec.fields}
            raw = rec.pack(values)
            assert len(raw) == rec.size
            assert rec.unpack(raw) == values


@pytest.mark.parametrize("make,message", [
    (lambda: Record("R", 12, "", ()), "power of two"),
    (lambda: Record("R", 16, "", (Field("A", 0, 16, ""), Field("B", 8, 8, ""))), "overlap"),
    (lambda: Record("R", 4, "", (Field("A", 0, 16, ""), Field("B", 16, 16, ""), Field("C", 32, 8, ""))), "past"),
    (lambda: Field("A", 16, 32, ""), "straddle"),
])
def test_record_validation(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_pack_rejects_what_does_not_fit():
    with pytest.raises(ValueError, match="does not fit"):
        DESC.pack({"tag": 1 << 16})
    with pytest.raises(KeyError, match="no field"):
        DESC.pack({"colour": 1})


@pytest.mark.parametrize("record,layout", [(DESC, Descriptor), (COMPLETION, Completion)])
def test_gateware_reads_records_as_described(record, layout):
    """A record the host packs (Python description) is the payload the datapath sees: a
    field mapped to the wrong bits or truncated wrongly in the gateware fails here."""
    m = Module()
    bits = Signal(record.size * 8)
    view = from_record(m, record, layout, bits)
    rng = random.Random(2)
    sim = Simulator(m)

    async def bench(ctx):
        for _ in range(200):
            fields = random_fields(layout, rng)
            ctx.set(bits, int.from_bytes(record.pack(fields), "little"))
            assert unpack(layout, ctx.get(view.as_value())) == fields
    sim.add_testbench(bench)
    sim.run()


def test_gateware_writes_decisions_as_described():
    m = Module()
    value = Signal(Decision)
    bits = to_record(m, DECISION, Decision, value)
    rng = random.Random(3)
    sim = Simulator(m)

    async def bench(ctx):
        for _ in range(200):
            fields = random_fields(Decision, rng)
            ctx.set(value.as_value(), pack(Decision, fields))
            raw = ctx.get(bits).to_bytes(DECISION.size, "little")
            assert DECISION.unpack(raw) == fields
    sim.add_testbench(bench)
    sim.run()


def test_record_fields_carry_every_layout_field():
    assert DESC.field("TENANT").width >= C["TENANT_BITS"]
    assert DECISION.field("SOURCE").width >= 3
