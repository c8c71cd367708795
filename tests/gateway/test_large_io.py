"""The gateway's large-I/O data path: payload buffers are reused, not faulted in per request.

A fresh 64 KiB buffer per READ reply or WRITE payload (malloc mmaps it, or cuts it from an arena
top it trims as soon as it is free) costs 16 zero-fill page faults per request and an munmap's TLB
shootdown per reply; at iodepth 16 that was most of the gateway's time, and its unpaced 64 KiB
rate fell from iodepth 1 to 16 where nbdkit's did not (docs/results.md, "Gateway on the real
clock"). The property checked here is the machine-independent cause, counted by the kernel: the
gateway's minor page faults per request in steady state, with 16 requests in flight.
"""

import os
import struct
import time

import pytest

from burstgate.tools.calibrate import scenario_text

from .gateway import CMD_READ, CMD_WRITE, REPLY_MAGIC, Gateway, connect, recv_exact

KIB = 1024
SIZE = 64 * KIB
DEPTH = 32
REGION = 2 * 1024 * KIB  # the offsets used: small, so the store's own pages are touched once, in the warm-up


def minflt(pid):
    """The process's minor page faults so far (/proc/PID/stat field 10)."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return int(stat[stat.rindex(")") + 2:].split()[7])


def rounds(s, cmd, n, payload):
    """n rounds of DEPTH pipelined requests of SIZE bytes over REGION; every reply checked."""
    for r in range(n):
        msgs = []
        for k in range(DEPTH):
            off = ((r * DEPTH + k) * SIZE) % REGION
            msgs.append(struct.pack(">IHHQQI", 0x25609513, 0, cmd, k, off, SIZE) + (payload if cmd == CMD_WRITE else b""))
        s.sendall(b"".join(msgs))
        time.sleep(0.005)  # every reply of the round ready before the first is taken: all their buffers live at once
        for _ in range(DEPTH):
            magic, error, cookie = struct.unpack(">IIQ", recv_exact(s, 16))
            assert magic == REPLY_MAGIC and error == 0, (magic, error)
            if cmd == CMD_READ:
                assert recv_exact(s, SIZE) == payload, cookie


@pytest.fixture
def unpaced(tmp_path):
    scen = tmp_path / "one_tenant.yaml"
    scen.write_text(scenario_text(2))  # one tenant far above any demand
    gw = Gateway(tmp_path, "--no-pace", scenario=scen, export_size="64m")
    yield gw
    gw.stop()


def test_large_reads_reuse_their_buffers(unpaced):
    """64 KiB READs at iodepth 32 on one connection: after a warm-up, under one minor page fault
    per request (a fresh reply buffer per request takes up to 16; the pool takes none). Catches
    reply buffers allocated (zero-filled) per request, or freed instead of pooled once their reply
    has left (before the pool: 14.6-15.1 per READ in five runs). WRITEs are not checked here: on
    one connection their payload buffer was freed by the thread that allocated the next one, and
    malloc served it again without a fault even before the pool."""
    payload = os.urandom(SIZE)
    s, _ = connect(unpaced.sock, "cal")
    try:
        rounds(s, CMD_WRITE, REGION // SIZE // DEPTH + 2, payload)  # the store's pages, once
        rounds(s, CMD_READ, 8, payload)  # warm-up: the pool fills
        before = minflt(unpaced.proc.pid)
        n = 64
        rounds(s, CMD_READ, n, payload)
        per_request = (minflt(unpaced.proc.pid) - before) / (n * DEPTH)
    finally:
        s.close()
    print(f"{per_request:.2f} minor page faults per 64 KiB READ")
    assert per_request < 1.0, per_request


def test_idle_buffers_give_way_to_a_request_short_of_budget(tmp_path):
    """Idle pooled buffers stay charged to the tenant's byte budget (so the memory bound is the
    budgets' alone), and must give it back when a request needs it: with a 16 MiB tenant budget,
    200 READs of 64 KiB in flight leave about 12 MiB of idle buffers in the pool; an 8 MiB READ
    after them must then be served at once. Catches a pool that keeps its bytes while a reader
    waits for budget (the READ would wait for ever: the pool's buffers are too small to serve it)."""
    n, big = 200, 8 * 1024 * KIB  # 12.5 MiB of 64 KiB replies at once; then the largest payload
    scen = tmp_path / "one_tenant.yaml"
    scen.write_text(scenario_text(2))
    gw = Gateway(tmp_path, "--no-pace", "--tenant-buffer", "16m", scenario=scen, export_size="64m")
    try:
        s, _ = connect(gw.sock, "cal")
        s.settimeout(10)
        payload = os.urandom(SIZE)
        msgs = [struct.pack(">IHHQQI", 0x25609513, 0, CMD_WRITE, k, k * SIZE, SIZE) + payload for k in range(n)]
        msgs += [struct.pack(">IHHQQI", 0x25609513, 0, CMD_READ, 1000 + k, k * SIZE, SIZE) for k in range(n)]
        s.sendall(b"".join(msgs))
        time.sleep(0.05)
        got = {}
        for _ in range(2 * n):
            magic, error, cookie = struct.unpack(">IIQ", recv_exact(s, 16))
            assert magic == REPLY_MAGIC and error == 0, (magic, error)
            if cookie >= 1000:
                got[cookie] = recv_exact(s, SIZE)
        assert all(got[1000 + k] == payload for k in range(n))
        t0 = time.monotonic()
        s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, CMD_READ, 7, 0, big))
        magic, error, cookie = struct.unpack(">IIQ", recv_exact(s, 16))
        data = recv_exact(s, big)
        waited = time.monotonic() - t0
        assert (magic, error, cookie) == (REPLY_MAGIC, 0, 7) and data[:SIZE] == payload
        assert waited < 1.0, waited
        s.close()
    finally:
        gw.stop()
