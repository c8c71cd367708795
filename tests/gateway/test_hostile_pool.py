"""Hostile clients against the gateway's newer parts (issue 18: no client able to hurt another):
the engine's descriptor tags a tenant's split requests hold, and the arrival recorder under a
flood. Each case asserts the neighbour's service and the gateway's health; the bounds are
docs/gateway.md's, *Hostile clients*."""

import struct
import time

import pytest

from . import gateway as g
from .test_hostile import neighbour_p99_ms, rss_kib, spawn  # noqa: F401 (spawn: the fixture)

MIB = 1 << 20
# Requests one connection may leave unanswered (server.cpp, Conn::kMaxInflight) and the
# connections a tenant holds by default (--max-conns): a tenant's descriptors in the engine.
MAX_INFLIGHT, MAX_CONNS = 512, 16


def pipeline(s, reqs):
    """Sends every (type, flags, offset, length) request at once, cookies 0.., never reading."""
    s.sendall(b"".join(struct.pack(">IHHQQI", g.REQUEST_MAGIC, f, t, k, off, n)
                       for k, (t, f, off, n) in enumerate(reqs)))


@pytest.mark.parametrize("attacker,neighbour", [
    ("victim", "bursty"),
    pytest.param("bursty", "victim", marks=pytest.mark.long),
])
def test_split_zeroes_cannot_take_the_engine_tags(tmp_path, spawn, attacker, neighbour):
    """One connection pipelines 512 WRITE_ZEROES with NO_HOLE of the maximum payload (32 MiB):
    each is split into schedulable blocks (256 of 128 KiB for bursty, 1024 of 32 KiB for victim)
    holding 512 bytes of budget each, so the byte budget let the tenant take all 65536 of the
    engine's tags, and every other tenant's submit waited for one (neighbour P99 30-35 ms, one
    read in 3 s taking 300 ms on a loaded host). The tenant's descriptors in the engine stay at
    most what its connections hold unsplit (16 x 512) and the neighbour's 4 KiB read P99 under
    5 ms. Catches a split request's blocks not counted against a per-tenant share of the tags
    (a P99 of 30 ms also with a share of 32768: the window loop re-offers every deferred block)."""
    gw = spawn(tmp_path, "--realtime")
    s, (_, _, max_block) = g.connect(gw.sock, attacker)
    try:
        pipeline(s, [(g.CMD_WRITE_ZEROES, g.FLAG_NO_HOLE, 0, max_block)] * MAX_INFLIGHT)
        time.sleep(0.5)
        held = gw.live()["in_flight"]
        p99, n = neighbour_p99_ms(gw.sock, 2, export=neighbour)
        held = max(held, gw.live()["in_flight"])
    finally:
        s.close()
    print(f"split WRITE_ZEROES flood from {attacker}: {held} descriptors in the engine; "
          f"{neighbour}'s P99 {p99:.2f} ms over {n} reads")
    assert held <= MAX_CONNS * MAX_INFLIGHT + 1, held
    assert p99 < 5.0, p99
    assert gw.alive()
