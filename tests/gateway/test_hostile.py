"""Hostile tenants (issue 19): one tenant's clients try to take the gateway from the other --
memory, reply bandwidth, connections, handshakes, the socket and the data directory. Each case
asserts both the neighbour's service (its 4 KiB reads' P99, or its first connection's time) and
the gateway's health (alive, memory under its documented bound, exit 0 with its report).

The numbers the cases hold the gateway to are docs/gateway.md's, *Hostile clients*."""

import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from . import gateway as g

MIB = 1 << 20


@pytest.fixture
def spawn():
    """Starts gateways; whatever a failing test leaves running is killed at teardown."""
    started = []

    def start(*args, **kw):
        gw = g.Gateway(*args, **kw)
        started.append(gw)
        return gw

    yield start
    for gw in started:
        if gw.alive():
            gw.proc.kill()
            gw.proc.wait()
        if not gw._log.closed:
            gw._log.close()


def rss_kib(pid):
    """(VmRSS, VmHWM) of a process, KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def neighbour_p99_ms(sock, seconds, export="victim"):
    """The P99 (ms) of 4 KiB reads one at a time on a fresh connection of `export` for `seconds`,
    seen by the client (connection set-up excluded); also how many were made."""
    s, _ = g.connect(sock, export)
    lat = []
    end = time.monotonic() + seconds
    k = 0
    while time.monotonic() < end:
        t0 = time.perf_counter()
        g.request(s, g.CMD_READ, (k % 256) * 4096, 4096, cookie=k)
        err, cookie, _ = g.reply(s, 4096)
        lat.append(time.perf_counter() - t0)
        assert (err, cookie) == (0, k)
        k += 1
        time.sleep(0.002)
    s.close()
    lat.sort()
    return lat[int(len(lat) * 0.99)] * 1e3, len(lat)


def hog_writer(sock, stop, size, export="bursty"):
    """A client that writes `size`-byte WRITEs as fast as the socket takes them, reading the
    replies on another thread (it is greedy, not slow)."""
    s, _ = g.connect(sock, export)
    s.settimeout(60)
    payload = os.urandom(size)
    sent = [0]

    def drain():
        try:
            while True:
                g.reply(s)
        except (EOFError, OSError):
            pass

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    try:
        k = 0
        while not stop.is_set():
            s.sendall(struct.pack(">IHHQQI", g.REQUEST_MAGIC, 0, g.CMD_WRITE, k, (k % 16) * size, size) + payload)
            k += 1
            sent[0] = k
    except OSError:
        pass
    s.close()
    t.join(timeout=10)


@pytest.mark.parametrize("conns,seconds,budget_mib", [
    (4, 3, 16),
    pytest.param(12, 30, 64, marks=pytest.mark.long),
])
def test_memory_hog_is_bounded(tmp_path, spawn, conns, seconds, budget_mib):
    """Connections of one tenant stream 2 MiB WRITEs (the issue's 0.83 GiB per connection): the
    gateway's peak RSS stays under its start RSS + the global buffer budget + 16 MiB, and the
    neighbour's 4 KiB read P99 under 5 ms. Catches WRITE payloads buffered without a byte bound
    (the 512-request cap alone lets one connection hold 1 GiB). Long: 12 connections for 30 s
    with the default 64 MiB budget."""
    data = tmp_path / "disks"
    data.mkdir()
    gw = spawn(tmp_path, "--realtime", "--tenant-buffer", f"{budget_mib}m", data_dir=data, export_size="64m")
    start, _ = rss_kib(gw.proc.pid)
    stop = threading.Event()
    threads = []
    for _ in range(conns):
        th = threading.Thread(target=hog_writer, args=(gw.sock, stop, 2 * MIB), daemon=True)
        th.start()
        threads.append(th)
    time.sleep(0.5)
    p99, n = neighbour_p99_ms(gw.sock, seconds)
    stop.set()
    _, peak = rss_kib(gw.proc.pid)
    for th in threads:
        th.join(timeout=30)
    assert gw.alive()
    bound = start + (2 * budget_mib * MIB + 16 * MIB) // 1024  # two tenants' budgets, + 16 MiB
    live = gw.live()
    bursty = live["tenants"][1]["total"]["completed"]
    report = gw.stop()
    print(f"memory hog ({conns} connections, {seconds} s): RSS start {start} KiB, peak {peak} KiB (bound {bound}); neighbour P99 {p99:.2f} ms "
          f"over {n} reads; hog writes completed {bursty}")
    assert peak < bound, (start, peak, bound)
    assert bursty > 0  # the hog was served, only bounded
    assert p99 < 5.0, p99
    assert report["ios"]["bad_completions"] == 0


def slow_reader(sock, nreq, size, export="bursty"):
    """A connection that sends `nreq` READs of `size` bytes and then does not read."""
    s, _ = g.connect(sock, export)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"".join(struct.pack(">IHHQQI", g.REQUEST_MAGIC, 0, g.CMD_READ, k, (k % 16) * size, size)
                       for k in range(nreq)))
    return s


def cuts(gw):
    return gw.log.read_text().count("minimum reply rate")


def head_waits_ms(gw):
    """How long each cut connection's reply waited at the head of its queue (the gateway's note)."""
    return [int(m) for m in re.findall(r"not read (\d+) ms after reaching the head", gw.log.read_text())]


def wait_cut(gw, n, timeout):
    end = time.monotonic() + timeout
    while cuts(gw) < n and time.monotonic() < end:
        time.sleep(0.05)
    return cuts(gw) >= n


@pytest.mark.parametrize("readers", [1, 2])
def test_slow_reader_is_cut_and_isolated(tmp_path, readers, spawn):
    """One or two connections send 512 x 2 MiB READs and never read a reply (the issue: the
    neighbour's 4 KiB read took 20.5 s): the neighbour's P99 stays under 5 ms, and each slow
    connection is cut once its reply has waited grace + 2 MiB / min rate (1 s + 2 s, +0.2 s of
    polling) at the head of its queue -- within 10 s of its first request. Catches replies
    written by the engine's backend threads (one slow client blocks every tenant) and a send
    timeout that partial progress restarts."""
    gw = spawn(tmp_path, "--realtime")
    t0 = time.monotonic()
    slow = [slow_reader(gw.sock, 512, 2 * MIB) for _ in range(readers)]
    p99, n = neighbour_p99_ms(gw.sock, 2)
    assert wait_cut(gw, readers, 10.0 - (time.monotonic() - t0)), gw.log.read_text()
    took = time.monotonic() - t0
    waits = head_waits_ms(gw)
    for s in slow:  # the client sees the end of the stream after what was queued in its socket
        s.settimeout(10)
        got = 0
        try:
            while chunk := s.recv(1 << 20):
                got += len(chunk)
        except ConnectionResetError:
            pass
        assert got < 512 * 2 * MIB
        s.close()
    assert gw.alive()
    print(f"{readers} slow reader(s): cut after {took:.2f} s, the reply at the head for {waits} ms; "
          f"neighbour P99 {p99:.2f} ms over {n} reads")
    assert all(3000 <= w <= 3200 for w in waits), waits
    assert p99 < 5.0, p99
    gw.stop()


def test_trickle_reader_is_cut(tmp_path, spawn):
    """A connection with 64 x 2 MiB READs outstanding reads 1 KiB every 50 ms: steady progress,
    but 20 KiB/s. It is cut once its reply has waited grace + 2 MiB / min rate (3 s) at the head
    of its queue however often a byte moves (the old per-send timeout restarted on every
    partial send: never cut); the neighbour's P99 stays under 5 ms meanwhile."""
    gw = spawn(tmp_path, "--realtime")
    s = slow_reader(gw.sock, 64, 2 * MIB)
    t0 = time.monotonic()
    stop = threading.Event()

    def trickle():
        s.settimeout(10)
        try:
            while not stop.is_set() and s.recv(1024):
                time.sleep(0.05)
        except OSError:
            pass

    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    p99, n = neighbour_p99_ms(gw.sock, 2)
    assert wait_cut(gw, 1, 10.0 - (time.monotonic() - t0)), gw.log.read_text()
    took = time.monotonic() - t0
    stop.set()
    th.join()
    s.close()
    waits = head_waits_ms(gw)
    print(f"trickle reader: cut after {took:.2f} s, the reply at the head for {waits} ms; "
          f"neighbour P99 {p99:.2f} ms over {n} reads")
    assert all(3000 <= w <= 3200 for w in waits), waits
    assert p99 < 5.0, p99
    assert gw.alive()
    gw.stop()


def timed_first_connection(sock, export="victim"):
    """Seconds from connect() to GO acknowledged, and a read served, for a new client."""
    t0 = time.perf_counter()
    s, _ = g.connect(sock, export)
    took = time.perf_counter() - t0
    g.request(s, g.CMD_READ, 0, 4096)
    assert g.reply(s, 4096)[0] == 0
    s.close()
    return took


def test_connection_flood_of_one_tenant(tmp_path, spawn):
    """The bursty tenant holds every connection its limit allows and keeps asking for more: the
    next GO gets NBD_REP_ERR_POLICY with a reason naming the limit (not a silent close), and the
    victim's first connection is accepted within 100 ms. Catches a global connection limit one
    tenant can fill (the issue: 64 idle connections locked every other tenant out)."""
    gw = spawn(tmp_path, "--max-conns", "8")
    held = [g.connect(gw.sock, "bursty")[0] for _ in range(8)]
    s = g.hello(gw.sock)
    name = b"bursty"
    g.send_option(s, g.OPT_GO, struct.pack(">I", len(name)) + name + struct.pack(">H", 0))
    while True:
        _, rtype, data = g.option_reply(s)
        if rtype != g.REP_INFO:
            break
    assert rtype == 0x80000002, hex(rtype)  # NBD_REP_ERR_POLICY
    assert b"limit" in data and b"bursty" in data, data
    assert g.go(s, "victim")  # haggling goes on: the same client may pick another export
    s.close()
    took = max(timed_first_connection(gw.sock) for _ in range(5))
    print(f"connection flood: victim's first connection in {took * 1e3:.1f} ms (worst of 5)")
    assert took < 0.1
    for h in held:
        h.close()
    gw.stop()


FLOODER = r"""
import socket, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
held = []
end = time.monotonic() + seconds
while time.monotonic() < end:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(1)
        s.connect(path)
        s.recv(18)          # the greeting; then nothing, ever
        held.append(s)
    except OSError:
        pass
    while len(held) > 900:  # keeps every handshake it got, up to its file limit
        held.pop(0).close()
    time.sleep(0.001)
for s in held:
    s.close()
"""


def test_handshake_flood_of_one_source(tmp_path, spawn):
    """Another process opens handshakes as fast as it can and never finishes one (the issue: 64
    of them locked everyone out for 10 s): the victim's first connection, from another process,
    is accepted within 100 ms, every time. Catches a handshake phase without a bounded pool
    evicting the flooder's oldest, or one that refuses new connections when full."""
    gw = spawn(tmp_path)
    flood = subprocess.Popen([sys.executable, "-c", FLOODER, gw.sock, "4"])
    try:
        time.sleep(1.0)
        times = [timed_first_connection(gw.sock) for _ in range(10)]
    finally:
        flood.wait(timeout=30)
    print(f"handshake flood: victim's first connection in {max(times) * 1e3:.1f} ms (worst of 10)")
    assert max(times) < 0.1, times
    assert "handshake pool full" in gw.log.read_text()
    assert gw.alive()
    gw.stop()


def test_second_instance_refused(tmp_path, spawn):
    """A second gateway on the same --unix path, or on the same --data-dir, exits 2 with one
    line naming the owner's pid, and the first serves on, data intact; after kill -9 the stale
    socket file is replaced. Catches a second gateway unlinking a live socket (the first becomes
    unreachable) or two gateways writing one disk."""
    data = tmp_path / "disks"
    data.mkdir()
    one = tmp_path / "one"
    one.mkdir()
    gw = spawn(one, data_dir=data)
    s, _ = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_WRITE, 0, 4096, b"\x42" * 4096, flags=g.FLAG_FUA)
    assert g.reply(s)[0] == 0
    for args in (["--unix", gw.sock], ["--unix", str(tmp_path / "other.sock"), "--data-dir", str(data)]):
        p = subprocess.run([str(g.GATEWAY), "--config", str(g.SCENARIO), "--export-size", "64m", *args],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and f"pid {gw.proc.pid}" in lines[0], p.stderr
    g.request(s, g.CMD_READ, 0, 4096)
    assert g.reply(s, 4096)[2] == b"\x42" * 4096
    s.close()
    assert os.path.exists(gw.sock)
    s, _ = g.connect(gw.sock, "victim")  # still reachable by a new client
    s.close()
    gw.proc.send_signal(signal.SIGKILL)
    gw.proc.wait()
    assert os.path.exists(gw.sock)  # stale now
    two = tmp_path / "two"
    two.mkdir()
    os.rename(gw.sock, two / "gw.sock")
    again = spawn(two, data_dir=data)
    s, _ = g.connect(again.sock, "victim")
    g.request(s, g.CMD_READ, 0, 4096)
    assert g.reply(s, 4096)[2] == b"\x42" * 4096
    s.close()
    again.stop()


def test_in_flight_after_sigint_matches_clients(tmp_path, spawn):
    """SIGINT while two connections keep 64 READs in flight each: every request the gateway read
    is answered before it stops, and the report's counts equal what the clients saw -- completed
    = replies received, in_flight 0. Catches a request read just before the stop and handed to
    an engine whose workers are gone (the issue: `in_flight 1`)."""
    gw = spawn(tmp_path)
    replies = [0, 0]

    def client(i):
        s, _ = g.connect(gw.sock, "bursty")
        s.settimeout(10)
        k = 0
        out = 0
        sending = True
        try:
            while True:
                while sending and out < 64:
                    try:
                        g.request(s, g.CMD_READ, (k % 64) * 4096, 4096, cookie=k)
                    except OSError:  # the gateway stopped reading: collect what it answers
                        sending = False
                        break
                    k += 1
                    out += 1
                err, _, _ = g.reply(s, 4096)
                replies[i] += 1
                out -= 1
        except (EOFError, OSError):
            pass
        s.close()

    ths = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(2)]
    for t in ths:
        t.start()
    time.sleep(1.0)
    report = gw.stop()
    for t in ths:
        t.join(timeout=10)
    bursty = report["tenants"][1]
    print(f"SIGINT under load: clients saw {sum(replies)} replies; report completed {bursty['completed']}, "
          f"in_flight {report['ios']['in_flight']}")
    assert report["ios"]["in_flight"] == 0
    assert bursty["completed"] == sum(replies)
