"""NBD protocol robustness of burstgate-gateway over raw sockets: every malformed or hostile
case gets the protocol's error reply or a closed connection, the gateway keeps serving (it is
checked alive and answering after each case, and exits 0 with its report at the end), and a
neighbour's data is never touched.

Each test names the bug it catches in its docstring."""

import socket
import struct

import pytest

from . import gateway as g


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    gw = g.Gateway(tmp_path_factory.mktemp("proto"))
    yield gw
    report = gw.stop()
    assert report["ios"]["bad_completions"] == 0
    assert report["ios"]["in_flight"] == 0 and report["ios"]["deferred_pending"] == 0


@pytest.fixture(autouse=True)
def still_serving(gw):
    """After every case: the process lives and a fresh client reads and writes."""
    yield
    assert gw.alive(), gw.log.read_text()
    s, _ = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_READ, 0, 512)
    assert g.reply(s, 512)[0] == 0
    s.close()


def test_go_info_list(gw):
    """GO/INFO report the export's size, flags and a maximum block size; LIST names every
    tenant. Catches a wrong size (clients would read past the disk) or missing FLUSH/FUA/TRIM
    flags (fio would not send them)."""
    s = g.hello(gw.sock)
    size, flags, max_block = g.go(s, "bursty", opt=g.OPT_INFO)  # INFO stays in haggling
    assert size == 64 << 20
    assert flags & 1 and flags & 4 and flags & 8 and flags & 32  # HAS_FLAGS, FLUSH, FUA, TRIM
    assert max_block == 32 << 20  # the protocol's 32 MiB; split into what one window's grant admits
    g.send_option(s, g.OPT_LIST)
    names = []
    while True:
        _, rtype, data = g.option_reply(s)
        if rtype == g.REP_ACK:
            break
        assert rtype == g.REP_SERVER
        names.append(data[4:4 + struct.unpack(">I", data[:4])[0]].decode())
    assert names == ["victim", "bursty"]
    size, _, max_block = g.go(s, "victim")
    assert (size, max_block) == (64 << 20, 32 << 20)
    g.request(s, g.CMD_READ, 0, 4096)
    assert g.reply(s, 4096) == (0, 7, bytes(4096))
    s.close()


def test_export_name_then_io(gw):
    """The old NBD_OPT_EXPORT_NAME path enters transmission (size, flags, 124 zero bytes unless
    NO_ZEROES). Catches a wrong reply layout for clients that never send GO."""
    s = g.hello(gw.sock, client_flags=1)  # fixed newstyle, zeroes wanted
    g.send_option(s, g.OPT_EXPORT_NAME, b"victim")
    size, flags = struct.unpack(">QH", g.recv_exact(s, 10))
    assert size == 64 << 20 and flags & 1
    assert g.recv_exact(s, 124) == bytes(124)
    g.request(s, g.CMD_WRITE, 8192, 4096, b"\x5a" * 4096, flags=g.FLAG_FUA)
    assert g.reply(s)[0] == 0
    g.request(s, g.CMD_READ, 8192, 4096)
    assert g.reply(s, 4096)[2] == b"\x5a" * 4096
    s.close()


def test_unknown_export(gw):
    """GO of a name no tenant has gets NBD_REP_ERR_UNKNOWN and haggling goes on; EXPORT_NAME of
    one (no error reply exists) closes. Catches a client reaching some default export."""
    s = g.hello(gw.sock)
    assert g.go(s, "nobody") == g.REP_ERR_UNKNOWN
    assert g.go(s, "victi") == g.REP_ERR_UNKNOWN
    g.send_option(s, g.OPT_EXPORT_NAME, b"nobody")
    assert g.closed(s)
    s.close()


def test_bad_client_flags(gw):
    """A client without fixed newstyle, or with unknown flags, is closed. Catches a server that
    goes on parsing options it cannot frame."""
    for flags in (0, 1 | 0x80):
        s = g.hello(gw.sock, client_flags=flags)
        assert g.closed(s)
        s.close()


def test_bad_option_magic_and_huge_option(gw):
    """A wrong IHAVEOPT magic or an option longer than any name closes the connection without
    reading (or allocating) the claimed length. Catches a 4 GiB allocation on a hostile length."""
    s = g.hello(gw.sock)
    g.send_option(s, g.OPT_GO, b"", magic=0x1122334455667788)
    assert g.closed(s)
    s.close()
    s = g.hello(gw.sock)
    s.sendall(struct.pack(">QII", g.OPT_MAGIC, g.OPT_GO, 0xFFFFFFF0))
    assert g.closed(s)
    s.close()


def test_unsupported_and_malformed_options(gw):
    """An unknown option gets ERR_UNSUP; a GO whose inner lengths do not add up, a LIST or
    STRUCTURED_REPLY with data, gets ERR_INVALID; ABORT is acknowledged and closed."""
    s = g.hello(gw.sock)
    g.send_option(s, g.OPT_STRUCTURED_REPLY, b"x")
    assert g.option_reply(s)[1] == g.REP_ERR_INVALID
    g.send_option(s, 0x7777, b"abc")
    assert g.option_reply(s)[1] == g.REP_ERR_UNSUP
    g.send_option(s, g.OPT_GO, struct.pack(">I", 200) + b"victim" + struct.pack(">H", 0))
    assert g.option_reply(s)[1] == g.REP_ERR_INVALID
    g.send_option(s, g.OPT_LIST, b"x")
    assert g.option_reply(s)[1] == g.REP_ERR_INVALID
    g.send_option(s, g.OPT_ABORT)
    assert g.option_reply(s)[1] == g.REP_ACK
    assert g.closed(s)
    s.close()


def test_bad_request_magic_closes(gw):
    """A request with a wrong magic cannot be framed: the connection is closed."""
    s, _ = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_READ, 0, 4096, magic=0xDEADBEEF)
    assert g.closed(s)
    s.close()


def test_unknown_command_einval(gw):
    """An unknown command type or flag gets EINVAL and the connection keeps working. Catches a
    server that crashes on, or silently drops, an unknown command."""
    s, _ = g.connect(gw.sock, "victim")
    g.request(s, 9, 0, 4096, cookie=11)
    assert g.reply(s)[:2] == (g.EINVAL, 11)
    g.request(s, g.CMD_READ, 0, 4096, flags=0x40, cookie=12)
    assert g.reply(s)[:2] == (g.EINVAL, 12)
    g.request(s, g.CMD_FLUSH, 4096, 0, cookie=13)  # FLUSH carries no range
    assert g.reply(s)[:2] == (g.EINVAL, 13)
    g.request(s, g.CMD_READ, 0, 0, cookie=14)
    assert g.reply(s)[:2] == (g.EINVAL, 14)
    g.request(s, g.CMD_READ, 0, 4096, cookie=15)
    assert g.reply(s, 4096)[:2] == (0, 15)
    s.close()


def test_past_the_end(gw):
    """A READ or TRIM past the end gets EINVAL, a WRITE ENOSPC, with its payload skipped so the
    next request is framed right; an offset near 2^64 does not wrap the bounds check."""
    s, (size, _, _) = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_READ, size - 2048, 4096, cookie=21)
    assert g.reply(s)[:2] == (g.EINVAL, 21)
    g.request(s, g.CMD_READ, 2**64 - 512, 1024, cookie=22)
    assert g.reply(s)[:2] == (g.EINVAL, 22)
    g.request(s, g.CMD_TRIM, size, 4096, cookie=23)
    assert g.reply(s)[:2] == (g.EINVAL, 23)
    g.request(s, g.CMD_WRITE, size, 4096, b"\xee" * 4096, cookie=24)
    assert g.reply(s)[:2] == (g.ENOSPC, 24)
    g.request(s, g.CMD_READ, size - 4096, 4096, cookie=25)
    assert g.reply(s, 4096)[:2] == (0, 25)
    s.close()


def test_oversized_length(gw):
    """A READ above the advertised maximum (32 MiB) gets EINVAL; one above the schedulable block
    (victim: 32 KiB, what one window's grant covers) is split and answered whole and in order;
    a WRITE above the maximum gets EINVAL and the connection is closed without reading a payload
    of up to 4 GiB."""
    s, (_, _, max_block) = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_READ, 0, max_block * 2, cookie=31)
    assert g.reply(s)[:2] == (g.EINVAL, 31)
    data = bytes(range(256)) * 1024  # 256 KiB: eight 32 KiB blocks
    g.request(s, g.CMD_WRITE, 1 << 20, len(data), data, cookie=32)
    assert g.reply(s)[:2] == (0, 32)
    g.request(s, g.CMD_READ, 1 << 20, len(data), cookie=33)
    assert g.reply(s, len(data)) == (0, 33, data)
    g.request(s, g.CMD_WRITE, 0, 0xFFFFFFFF, cookie=34)
    assert g.reply(s)[:2] == (g.EINVAL, 34)
    assert g.closed(s)
    s.close()


def test_disconnect_mid_request_leaves_neighbour_intact(gw):
    """Clients that vanish mid-header or mid-payload neither crash the gateway nor apply a torn
    write; a neighbour tenant's data stays as written. Catches a partial WRITE reaching the
    store, or a request of one connection landing on another tenant's disk."""
    s, _ = g.connect(gw.sock, "bursty")
    pattern = bytes(range(256)) * 16
    g.request(s, g.CMD_WRITE, 65536, 4096, pattern)
    assert g.reply(s)[0] == 0
    g.request(s, g.CMD_FLUSH)
    assert g.reply(s)[0] == 0
    # Hostile victim clients: half a header; a WRITE header with half its payload.
    h, _ = g.connect(gw.sock, "victim")
    h.sendall(struct.pack(">IHH", g.REQUEST_MAGIC, 0, g.CMD_READ))
    h.close()
    h, _ = g.connect(gw.sock, "victim")
    h.sendall(struct.pack(">IHHQQI", g.REQUEST_MAGIC, 0, g.CMD_WRITE, 1, 65536, 4096) + b"\xff" * 1000)
    h.close()
    # Many in flight, then gone before the replies: the answers go nowhere, quietly.
    h, _ = g.connect(gw.sock, "victim")
    for k in range(32):
        g.request(h, g.CMD_READ, k * 4096, 4096, cookie=k)
    h.shutdown(socket.SHUT_RDWR)
    h.close()
    g.request(s, g.CMD_READ, 65536, 4096)
    assert g.reply(s, 4096)[2] == pattern
    s.close()
    v, _ = g.connect(gw.sock, "victim")
    g.request(v, g.CMD_READ, 65536, 4096)
    assert g.reply(v, 4096)[2] == bytes(4096)  # never written: the torn write was not applied
    v.close()


def test_trim_reads_zero_and_disc(gw):
    """TRIM makes a range read back as zeroes (memory store: pages dropped, edges zeroed); DISC
    answers what is in flight and closes."""
    s, _ = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_WRITE, 4096 * 10, 4096 * 3, b"\x11" * (4096 * 3))
    assert g.reply(s)[0] == 0
    g.request(s, g.CMD_TRIM, 4096 * 10 + 100, 4096 * 2)
    assert g.reply(s)[0] == 0
    g.request(s, g.CMD_READ, 4096 * 10, 4096 * 3)
    data = g.reply(s, 4096 * 3)[2]
    assert data[:100] == b"\x11" * 100
    assert data[100:100 + 8192] == bytes(8192)
    assert data[100 + 8192:] == b"\x11" * (4096 - 100)
    g.request(s, g.CMD_READ, 0, 4096, cookie=41)
    g.request(s, g.CMD_DISC, cookie=42)
    assert g.reply(s, 4096)[:2] == (0, 41)
    assert g.closed(s)
    s.close()


def test_live_json_and_sigusr1(gw):
    """The control socket answers with per-tenant live statistics; SIGUSR1 does not stop the
    gateway (it writes the same JSON to stderr)."""
    import signal
    live = gw.live()
    assert [t["name"] for t in live["tenants"]] == ["victim", "bursty"]
    assert live["tenants"][0]["total"]["completed"] > 0
    assert live["windows"] > 0
    gw.proc.send_signal(signal.SIGUSR1)
    import time
    deadline = time.monotonic() + 5
    while '"uptime_s"' not in gw.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert '"uptime_s"' in gw.log.read_text()


def test_pipelined_beyond_the_connection_cap(gw):
    """2000 READs sent before reading any reply (the gateway reads at most 512 ahead per
    connection, then stops reading until replies drain): every reply arrives, each cookie once.
    Catches a deadlock between the per-connection cap and replies blocked on a full socket, or a
    reply lost when requests wait for a slot."""
    s, _ = g.connect(gw.sock, "victim")
    n = 2000
    s.sendall(b"".join(struct.pack(">IHHQQI", g.REQUEST_MAGIC, 0, g.CMD_READ, k, (k % 64) * 4096, 4096)
                       for k in range(n)))
    s.settimeout(60)
    seen = set()
    for _ in range(n):
        err, cookie, data = g.reply(s, 4096)
        assert err == 0 and len(data) == 4096
        seen.add(cookie)
    assert seen == set(range(n))
    s.close()


def test_structured_replies_and_block_status(gw):
    """Structured replies: a READ is one OFFSET_DATA chunk (offset, data) with DONE; an oversized
    READ gets an ERROR chunk with EOVERFLOW and a reason text; BLOCK_STATUS of base:allocation
    covers the range with data where written and holes elsewhere (REQ_ONE: one extent);
    WRITE_ZEROES (FAST_ZERO refused where zeroes must be stored) / CACHE are served. Catches a wrong chunk layout (clients disconnect), an
    error without its reason, or extents that do not add up to the range."""
    s, (_, _, max_block) = g.connect_structured(gw.sock, "victim")
    base = 40 << 20
    g.request(s, g.CMD_WRITE, base + 8192, 4096, b"\x77" * 4096, cookie=1)
    assert g.reply(s)[:2] == (0, 1)
    g.request(s, g.CMD_READ, base + 8192, 4096, cookie=2)
    flags, rtype, cookie, data = g.chunk(s)
    assert (flags, rtype, cookie) == (g.REPLY_FLAG_DONE, g.REPLY_OFFSET_DATA, 2)
    assert struct.unpack(">Q", data[:8])[0] == base + 8192 and data[8:] == b"\x77" * 4096
    g.request(s, g.CMD_READ, 0, max_block * 2, cookie=3)
    flags, rtype, cookie, data = g.chunk(s)
    assert (flags, rtype, cookie) == (g.REPLY_FLAG_DONE, g.REPLY_ERROR, 3)
    err, n = struct.unpack(">IH", data[:6])
    assert err == g.EOVERFLOW and b"maximum payload" in data[6:6 + n]
    g.request(s, g.CMD_BLOCK_STATUS, base, 65536, cookie=4)
    flags, rtype, cookie, data = g.chunk(s)
    assert (flags, rtype, cookie) == (g.REPLY_FLAG_DONE, g.REPLY_BLOCK_STATUS, 4)
    ctx = struct.unpack(">I", data[:4])[0]
    extents = [struct.unpack(">II", data[k:k + 8]) for k in range(4, len(data), 8)]
    assert ctx == 1
    assert extents == [(8192, 3), (4096, 0), (65536 - 12288, 3)]
    g.request(s, g.CMD_BLOCK_STATUS, base, 65536, flags=g.FLAG_REQ_ONE, cookie=5)
    data = g.chunk(s)[3]
    assert len(data) == 12 and struct.unpack(">II", data[4:]) == (8192, 3)
    # Zeroes to be stored in memory are no faster than a WRITE: FAST_ZERO refuses at once.
    g.request(s, g.CMD_WRITE_ZEROES, base + 8192, 4096, flags=g.FLAG_NO_HOLE | g.FLAG_FAST_ZERO, cookie=6)
    flags, rtype, cookie, data = g.chunk(s)
    assert (rtype, cookie, struct.unpack(">I", data[:4])[0]) == (g.REPLY_ERROR, 6, 95)
    g.request(s, g.CMD_WRITE_ZEROES, base + 8192, 4096, flags=g.FLAG_NO_HOLE, cookie=6)
    assert g.reply(s)[:2] == (0, 6)
    g.request(s, g.CMD_CACHE, base, 1 << 20, cookie=7)
    assert g.reply(s)[:2] == (0, 7)
    g.request(s, g.CMD_READ, base + 8192, 4096, cookie=8)
    assert g.chunk(s)[3][8:] == bytes(4096)
    s.close()


def test_meta_context_rules(gw):
    """SET_META_CONTEXT before STRUCTURED_REPLY is ERR_INVALID; LIST_META_CONTEXT with no query
    names base:allocation; an unknown query selects nothing; BLOCK_STATUS without a selected
    context is EINVAL (simple reply when structured replies are off)."""
    s = g.hello(gw.sock)
    g.send_option(s, g.OPT_SET_META_CONTEXT, g.meta_payload("victim", "base:allocation"))
    assert g.option_reply(s)[1] == g.REP_ERR_INVALID
    g.send_option(s, g.OPT_LIST_META_CONTEXT, g.meta_payload("victim"))
    _, rtype, data = g.option_reply(s)
    assert rtype == g.REP_META_CONTEXT and data[4:] == b"base:allocation"
    assert g.option_reply(s)[1] == g.REP_ACK
    g.send_option(s, g.OPT_STRUCTURED_REPLY)
    assert g.option_reply(s)[1] == g.REP_ACK
    g.send_option(s, g.OPT_SET_META_CONTEXT, g.meta_payload("victim", "qemu:dirty-bitmap:x"))
    assert g.option_reply(s)[1] == g.REP_ACK  # nothing selected
    g.send_option(s, g.OPT_SET_META_CONTEXT, g.meta_payload("nobody", "base:allocation"))
    assert g.option_reply(s)[1] == g.REP_ERR_UNKNOWN
    assert isinstance(g.go(s, "victim"), tuple)
    g.request(s, g.CMD_BLOCK_STATUS, 0, 4096, cookie=9)
    flags, rtype, cookie, data = g.chunk(s)
    assert rtype == g.REPLY_ERROR and struct.unpack(">I", data[:4])[0] == g.EINVAL
    s.close()
