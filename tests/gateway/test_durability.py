"""Durability (issue 19): kill -9 in the middle of a write load on a file-backed export, restart
on the same --data-dir, and no write acknowledged before the last completed FLUSH is lost.

The client records every acknowledgement: each 4 KiB block's versions in the order sent (one
write in flight per block, so their order is the disk's), and at each FLUSH the version each
block had acknowledged when the FLUSH was sent. After the restart each block must hold that
version or one sent later (which may or may not have landed), never an older one or garbage.
Catches a write (or a split write's block) acknowledged before its pwrite, a FLUSH answered
before the writes it covers are done, or a restart that recreates or truncates the disk. (A
process kill leaves the page cache to the kernel: a missing fdatasync would need a power cut
to show, which no test here can make.)"""

import os
import signal

import pytest
import struct
import threading
import time

from . import gateway as g

BLOCKS = 512  # 2 MiB of the export, so blocks are rewritten often


def block(b, version, rng_bytes):
    return struct.pack(">QQ", b, version) + rng_bytes[16:]


@pytest.mark.parametrize("rounds", [1, pytest.param(8, marks=pytest.mark.long)])
def test_kill9_loses_nothing_flushed(tmp_path, rounds):
    """Short: one kill; long: eight kills, each restart's disk the next round's starting point."""
    data = tmp_path / "disks"
    data.mkdir()
    versions = {}      # block -> [payloads in the order sent]
    durable = {}       # block -> index into versions[block], as of the last completed FLUSH
    for r in range(rounds):
        kill_and_check(tmp_path / f"round{r}", data, versions, durable)


def kill_and_check(tmp, data, versions, durable):
    tmp.mkdir()
    first = tmp / "first"
    first.mkdir()
    gw = g.Gateway(first, data_dir=data, export_size="16m")
    stop = threading.Event()
    counts = {"acked": 0, "flushes": 0}

    def writer(export):
        s, _ = g.connect(gw.sock, export)
        s.settimeout(10)
        rnd = os.urandom(4096)
        acked = {}
        k = 0
        try:
            while not stop.is_set():
                if k % 25 == 24:
                    snapshot = dict(acked)
                    g.request(s, g.CMD_FLUSH, cookie=k)
                    if g.reply(s)[0] == 0:
                        durable.update({(export, b): i for b, i in snapshot.items()})
                        counts["flushes"] += 1
                else:
                    b = (k * 7919) % BLOCKS
                    key = (export, b)
                    payload = block(b, k, rnd)
                    versions.setdefault(key, []).append(payload)
                    g.request(s, g.CMD_WRITE, b * 4096, 4096, payload, cookie=k)
                    if g.reply(s)[0] == 0:
                        acked[b] = len(versions[key]) - 1
                        counts["acked"] += 1
                k += 1
        except (EOFError, OSError):
            pass
        s.close()

    ths = [threading.Thread(target=writer, args=(e,), daemon=True) for e in ("victim", "bursty")]
    for t in ths:
        t.start()
    time.sleep(2.0)
    gw.proc.send_signal(signal.SIGKILL)
    gw.proc.wait()
    gw._log.close()
    stop.set()
    for t in ths:
        t.join(timeout=10)
    assert counts["flushes"] > 2 and durable, counts
    second = tmp / "second"
    second.mkdir()
    again = g.Gateway(second, data_dir=data, export_size="16m")
    lost = []
    for export in ("victim", "bursty"):
        s, _ = g.connect(again.sock, export)
        for b in range(BLOCKS):
            g.request(s, g.CMD_READ, b * 4096, 4096)
            err, _, got = g.reply(s, 4096)
            assert err == 0
            key = (export, b)
            if key in durable:
                if got not in versions[key][durable[key]:]:
                    lost.append(key)
            elif key in versions:
                assert got == bytes(4096) or got in versions[key]
            else:
                assert got == bytes(4096)
        s.close()
    again.stop()
    print(f"kill -9: {counts['acked']} writes acknowledged, {counts['flushes']} flushes, "
          f"{len(durable)} blocks flushed, {len(lost)} lost")
    assert not lost, lost[:10]
