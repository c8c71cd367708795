"""Hostile clients against the gateway's newer parts (issue 18: no client able to hurt another):
the engine's descriptor tags a tenant's split requests hold, the per-tenant byte budget and
payload pool under unread and mixed-size READs, half-sent WRITEs, and the arrival recorder on a
file that stops taking writes. Each case asserts the neighbour's service and the gateway's
health; the bounds are docs/gateway.md's, *Hostile clients*."""

import os
import signal
import socket
import struct
import subprocess
import threading
import time

import pytest

from . import gateway as g
from .host_load import CpuContention
from .test_hostile import neighbour_p99_ms, rss_kib, spawn  # noqa: F401 (spawn: the fixture)

MIB = 1 << 20
# Requests one connection may leave unanswered (server.cpp, Conn::kMaxInflight).
MAX_INFLIGHT = 512
# two_tenants.yaml's schedulable blocks (docs/gateway.md, *What happens to one request*) and the
# default --tenant-buffer.
SCHEDULABLE_BLOCK = {"victim": 32 << 10, "bursty": 128 << 10}
TENANT_BUFFER = 64 * MIB


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
    each is split into schedulable blocks (1024 of 32 KiB for victim, 256 of 128 KiB for bursty)
    that were charged 512 bytes of budget each, so the tenant took all 65536 of the engine's
    tags and every other tenant's submit waited for one (neighbour P99 20-50 ms). Its blocks in
    the engine are now bounded as its WRITEs' are, by its byte budget (64 MiB / (block + 512)),
    and the neighbour's 4 KiB read P99 stays under 5 ms. Catches zeroes to be written charged
    less than the WRITE they cost (a share of the tags alone left 8192 blocks in the engine: a
    P99 of 4-17 ms on a loaded host)."""
    gw = spawn(tmp_path, "--realtime")
    s, (_, _, max_block) = g.connect(gw.sock, attacker)
    try:
        pipeline(s, [(g.CMD_WRITE_ZEROES, g.FLAG_NO_HOLE, 0, max_block)] * MAX_INFLIGHT)
        time.sleep(0.5)
        held = gw.live()["in_flight"]
        with CpuContention() as host:
            p99, n = neighbour_p99_ms(gw.sock, 2, export=neighbour)
        held = max(held, gw.live()["in_flight"])
    finally:
        s.close()
    print(f"split WRITE_ZEROES flood from {attacker}: {held} descriptors in the engine; "
          f"{neighbour}'s P99 {p99:.2f} ms over {n} reads; {host}")
    bound = TENANT_BUFFER // (SCHEDULABLE_BLOCK[attacker] + 512) + 1  # + the neighbour's read
    assert held <= bound, (held, bound)
    # 10 ms on a host whose CPUs were contended while the neighbour read (host_load.py): its
    # Python client's own scheduling delays reach 5 ms there (a CI run of make test: 5.10 ms);
    # the flood's 20-50 ms fails either way.
    assert p99 < (10.0 if host.contended else 5.0), (p99, str(host))
    assert gw.alive()


def reader_loop(sock, export, size, depth, stop, times):
    """A client keeping `depth` READs of `size` bytes in flight, reading every reply (it is
    greedy, not slow); appends each reply's arrival time to `times`."""
    s, _ = g.connect(sock, export)
    s.settimeout(30)
    buf = memoryview(bytearray(size + 16))
    try:
        for k in range(depth):
            g.request(s, g.CMD_READ, 0, size, cookie=k)
        k = depth
        while not stop.is_set():
            got = 0
            while got < size + 16:
                r = s.recv_into(buf[got:], size + 16 - got)
                if not r:
                    return
                got += r
            times.append(time.monotonic())
            g.request(s, g.CMD_READ, 0, size, cookie=k)
            k += 1
    except OSError:
        pass
    finally:
        s.close()


@pytest.mark.long
def test_large_request_not_starved_by_siblings(tmp_path, spawn):
    """Six connections of one tenant keep 4 x 1 MiB READs in flight each (24 MiB wanted of its
    8 MiB budget); a seventh asks for the maximum payload, 4 MiB. When each reply's bytes freed
    went to whichever reader asked next, always one of the small ones, the 4 MiB READ got
    nothing in 10 s while the others got 1305 replies. Bytes coming back now go to the oldest
    waiter's reservation first (Budget::take): it must be answered within 1 s and at least 3
    times in 2 s. (Plain arrival order did that too but put a tenant's good connection behind
    its own connections that do not read their replies, over 60 s:
    test_unread_max_size_reads_hold_only_their_budget guards that side.) Catches freed bytes
    handed to any waiter but the oldest."""
    gw = spawn(tmp_path, "--tenant-buffer", "8m", "--no-pace")
    stop = threading.Event()
    small, big = [], []
    threads = [threading.Thread(target=reader_loop, args=(gw.sock, "bursty", MIB, 4, stop, small), daemon=True)
               for _ in range(6)]
    for th in threads:
        th.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    threads.append(threading.Thread(target=reader_loop, args=(gw.sock, "bursty", 4 * MIB, 1, stop, big), daemon=True))
    threads[-1].start()
    time.sleep(2.0)
    stop.set()
    for th in threads:
        th.join(timeout=30)
    first = big[0] - t0 if big else None
    print(f"4 MiB READ beside 6 x 4 x 1 MiB of its tenant: {len(big)} answered in 2 s, the first after "
          f"{first if first is None else round(first, 3)} s; the small ones {len(small)}")
    assert big and first < 1.0, (first, len(small))
    assert len(big) >= 3, len(big)
    assert len(small) > 0
    assert gw.alive()


@pytest.mark.long
def test_stalled_arrivals_file_does_not_hang_the_stop(tmp_path, spawn):
    """--arrivals on a FIFO whose reader never reads (a file that stops taking writes, as a hung
    network file system does): the engine's path is not stalled (the recorder drops what does
    not fit), and at SIGINT the stop waits for the recorder's writer at most 2 s, then abandons
    the recording with one line naming the file and what was not written, and exits 0 (the
    report is written; a recorder's write error is not the gateway's). Catches the writer
    joined without a deadline (the gateway never exited)."""
    fifo = tmp_path / "arrivals.fifo"
    os.mkfifo(fifo)
    held = []
    opener = threading.Thread(target=lambda: held.append(os.open(fifo, os.O_RDONLY)), daemon=True)
    opener.start()
    gw = spawn(tmp_path, "--arrivals", str(fifo))
    opener.join(timeout=10)
    try:
        s, _ = g.connect(gw.sock, "bursty")
        for r in range(40):  # 40 x 256 records of ~30 bytes: a 256 KiB chunk for the writer, past the FIFO's 64 KiB
            pipeline(s, [(g.CMD_READ, 0, 512 * k, 512) for k in range(256)])
            for _ in range(256):
                assert g.reply(s, 512)[0] == 0
        s.close()
        gw.proc.send_signal(signal.SIGINT)
        try:
            rc = gw.proc.wait(timeout=8)
        except subprocess.TimeoutExpired:
            rc = None
        log = gw.log.read_text()
        assert rc == 0, log[-500:]
        assert f"arrivals recorded to {fifo}; WRITE ERROR: the file took no write for 2 s" in log, log[-500:]
    finally:
        for fd in held:
            os.close(fd)


@pytest.mark.long
def test_half_sent_writes_in_a_shared_budget(tmp_path, spawn):
    """With --buffer = --tenant-buffer (16 MiB: tenants share one budget), one tenant's two
    WRITE headers (8 MiB and 7.94 MiB, 16 MiB of budget with their blocks' overhead) followed by
    one byte of payload and silence held the whole budget, and the other tenant's 4 KiB READ
    waited for ever. A payload must now arrive within --reply-grace + its size / --min-reply-rate
    (here 1 s + 8 MiB / 4 MiB/s = 3 s) or the connection is cut and its budget given back: the
    READ is answered within 5 s. Catches a WRITE payload read with no deadline."""
    gw = spawn(tmp_path, "--tenant-buffer", "16m", "--buffer", "16m", "--min-reply-rate", "4m")
    held = []
    try:
        for n in (8 * MIB, 8323072):  # + 512 per 128 KiB block: 16 MiB exactly
            s, _ = g.connect(gw.sock, "bursty")
            s.sendall(struct.pack(">IHHQQI", g.REQUEST_MAGIC, 0, g.CMD_WRITE, 1, 0, n) + b"x")
            held.append(s)
        time.sleep(0.5)
        v, _ = g.connect(gw.sock, "victim")
        held.append(v)
        v.settimeout(5)
        t0 = time.monotonic()
        g.request(v, g.CMD_READ, 0, 4096)
        try:
            err = g.reply(v, 4096)[0]
        except TimeoutError:
            err = None
        print(f"the other tenant's 4 KiB READ beside two half-sent WRITEs: {time.monotonic() - t0:.2f} s")
        assert err == 0
    finally:
        for s in held:
            s.close()


def test_unread_max_size_reads_hold_only_their_budget(tmp_path, spawn):
    """Eight connections of one tenant each pipeline 512 READs of the maximum payload (32 MiB)
    and never read (4 KiB receive buffers): the tenant's budget holds what it can (one 32 MiB
    reply, the rest waits unread), the gateway's peak RSS stays under its start + both tenants'
    budgets + 16 MiB, the other tenant's 4 KiB read P99 under 5 ms, and a new connection of the
    same tenant has its 4 KiB READ answered within 1 s (the budget's other half: measured
    0.6-0.7 ms). Catches budget waits served strictly in arrival order (the good connection then
    waited over 60 s behind the unread ones) and replies buffered past the budget."""
    gw = spawn(tmp_path, "--realtime")
    start, _ = rss_kib(gw.proc.pid)
    held = []
    try:
        for _ in range(8):
            s, (_, _, max_block) = g.connect(gw.sock, "bursty")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            pipeline(s, [(g.CMD_READ, 0, 0, max_block)] * MAX_INFLIGHT)
            held.append(s)
        time.sleep(0.5)
        p99, n = neighbour_p99_ms(gw.sock, 1)
        t0 = time.perf_counter()
        s, _ = g.connect(gw.sock, "bursty")
        held.append(s)
        s.settimeout(5)
        g.request(s, g.CMD_READ, 0, 4096)
        err = g.reply(s, 4096)[0]
        took = time.perf_counter() - t0
        _, peak = rss_kib(gw.proc.pid)
    finally:
        for s in held:
            s.close()
    print(f"8 x 512 unread 32 MiB READs: RSS {start} -> peak {peak} KiB; victim P99 {p99:.2f} ms over {n}; "
          f"the same tenant's new 4 KiB READ in {took * 1e3:.1f} ms")
    assert err == 0 and took < 1.0, took
    assert peak < start + (2 * TENANT_BUFFER + 16 * MIB) // 1024, (start, peak)
    assert p99 < 5.0, p99
    assert gw.alive()
