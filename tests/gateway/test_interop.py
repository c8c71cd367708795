"""Stock NBD clients from Debian against burstgate-gateway, with their defaults (issue 19):
libnbd's nbdcopy and nbdinfo, qemu's qemu-img and qemu-io (scripts/deb-deps.sh installs
libnbd-bin and qemu-utils; a machine without them fails here rather than skipping).

Each test names the bug it catches."""

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from . import gateway as g

MIB = 1 << 20
SIZE = 16 * MIB


def tool(name):
    return shutil.which(name) or f"{name} (not on PATH: run scripts/deb-deps.sh)"


def run(*cmd, timeout=120):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{cmd[0]} exit {p.returncode}: {p.stdout}{p.stderr}"
    return p.stdout


def file_map(path, size):
    """The data runs of a sparse file, [(offset, length)], by SEEK_DATA/SEEK_HOLE."""
    runs = []
    fd = os.open(path, os.O_RDONLY)
    try:
        pos = 0
        while pos < size:
            try:
                d = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break
            h = os.lseek(fd, d, os.SEEK_HOLE)
            runs.append((d, min(h, size) - d))
            pos = h
    finally:
        os.close(fd)
    return runs


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture
def gw(tmp_path):
    data = tmp_path / "disks"
    data.mkdir()
    gw = g.Gateway(tmp_path, data_dir=data, export_size="16m")
    gw.data = data
    yield gw
    report = gw.stop()
    assert report["ios"]["bad_completions"] == 0 and report["ios"]["in_flight"] == 0


def test_nbdcopy_in_and_out_default_request_size(gw, tmp_path):
    """nbdcopy with its defaults (256 KiB requests, several connections) into the victim export
    (scheduled in 32 KiB blocks) and back out: sha256 equal. Catches the issue's closed
    connection / "Invalid argument" on requests above the schedulable block, a split request
    reassembled out of order, or a lost chunk."""
    src = tmp_path / "src.img"
    src.write_bytes(os.urandom(SIZE))
    run(tool("nbdcopy"), src, gw.uri("victim"))
    out = tmp_path / "out.img"
    run(tool("nbdcopy"), gw.uri("victim"), out)
    assert sha256(out) == sha256(src)
    assert sha256(gw.data / "victim.img") == sha256(src)


def write_pattern(gw, export, runs):
    s, _ = g.connect(gw.sock, export)
    for off, length in runs:
        g.request(s, g.CMD_WRITE, off, length, os.urandom(length))
        assert g.reply(s)[0] == 0
    g.request(s, g.CMD_FLUSH)
    assert g.reply(s)[0] == 0
    s.close()


RUNS = [(0, 64 << 10), (1 * MIB, 4096), (5 * MIB + 8192, 128 << 10), (SIZE - 4096, 4096)]


def test_nbdinfo_map_equals_the_files_extents(gw):
    """nbdinfo --map (base:allocation via structured replies and BLOCK_STATUS) of a sparse
    file-backed export: its data extents are exactly the backing file's. Catches a missing meta
    context (nbdinfo fails), extents from the wrong offset, or holes reported as data."""
    write_pattern(gw, "bursty", RUNS)
    out = json.loads(run(tool("nbdinfo"), "--map", "--json", gw.uri("bursty")))
    data = []
    for e in out:
        if not e["type"] & 1:  # not a hole
            if data and data[-1][0] + data[-1][1] == e["offset"]:
                data[-1] = (data[-1][0], data[-1][1] + e["length"])
            else:
                data.append((e["offset"], e["length"]))
    assert data == file_map(gw.data / "bursty.img", SIZE)
    assert sum(e["length"] for e in out) == SIZE


def test_memory_export_map_tracks_writes(tmp_path):
    """A memory export's map comes from the pages written (and trimmed): nbdinfo --map shows the
    written runs as data, the rest as holes. Catches a memory store that reports all data."""
    gw = g.Gateway(tmp_path, export_size="16m")
    write_pattern(gw, "victim", RUNS)
    s, _ = g.connect(gw.sock, "victim")
    g.request(s, g.CMD_TRIM, 0, 64 << 10)
    assert g.reply(s)[0] == 0
    s.close()
    out = json.loads(run(tool("nbdinfo"), "--map", "--json", gw.uri("victim")))
    data = [(e["offset"], e["length"]) for e in out if not e["type"] & 1]
    assert data == [(1 * MIB, 4096), (5 * MIB + 8192, 128 << 10), (SIZE - 4096, 4096)]
    gw.stop()


def test_qemu_img_convert_keeps_holes_and_map(gw, tmp_path):
    """qemu-img convert of a sparse raw image onto the export: the data arrives (sha256 equal)
    and the holes stay holes in the backing file (WRITE_ZEROES may punch them); qemu-img map of
    the export then reports the same data runs. Catches zeroes written as data (a sparse disk
    filled), a WRITE_ZEROES that does not read back as zeroes, or a wrong block status."""
    img = tmp_path / "sparse.img"
    with open(img, "wb") as f:
        f.truncate(SIZE)
        for off, length in RUNS:
            f.seek(off)
            f.write(os.urandom(length))
    run(tool("qemu-img"), "convert", "-n", "-f", "raw", "-O", "raw", img, gw.uri("bursty"))
    backing = gw.data / "bursty.img"
    assert sha256(backing) == sha256(img)
    assert file_map(backing, SIZE) == file_map(img, SIZE)
    m = json.loads(run(tool("qemu-img"), "map", "--output=json", "-f", "raw", gw.uri("bursty")))
    data = [(e["start"], e["length"]) for e in m if e["data"]]
    merged = []
    for off, length in data:
        if merged and merged[-1][0] + merged[-1][1] == off:
            merged[-1] = (merged[-1][0], merged[-1][1] + length)
        else:
            merged.append((off, length))
    assert merged == file_map(img, SIZE)


def test_qemu_io_write_zeroes(gw):
    """qemu-io write -z (NO_HOLE: the range stays allocated) and write -z -u (may punch): both
    read back as zeroes; the first leaves data in the backing file, the second a hole. Catches
    NO_HOLE ignored (a provisioned range deallocated) or zeroes not applied."""
    write_pattern(gw, "bursty", [(0, 2 * MIB)])
    run(tool("qemu-io"), "-f", "raw", "-c", "write -z 0 1M", "-c", "write -z -u 1M 1M", "-c",
        "read -P 0 0 2M", gw.uri("bursty"))
    runs = file_map(gw.data / "bursty.img", SIZE)
    assert runs == [(0, MIB)], runs
    with open(gw.data / "bursty.img", "rb") as f:
        assert f.read(2 * MIB) == bytes(2 * MIB)


def test_nbdcopy_out_of_a_sparse_export_skips_holes(gw, tmp_path):
    """nbdcopy out of a sparse export reads only its data: with base:allocation it asks for
    the extents and skips the holes, so the gateway moves far less than the 16 MiB (the issue:
    sparse copies read every hole). The copy still equals the export. Catches BLOCK_STATUS
    reporting holes as data, or a copy that loses the data between holes."""
    write_pattern(gw, "bursty", RUNS)
    before = gw.live()["tenants"][1]["total"]["bytes"]
    out = tmp_path / "out.img"
    run(tool("nbdcopy"), gw.uri("bursty"), out)
    moved = gw.live()["tenants"][1]["total"]["bytes"] - before
    assert sha256(out) == sha256(gw.data / "bursty.img")
    data = sum(length for _, length in RUNS)
    print(f"nbdcopy out of a sparse export: {moved} bytes read for {data} bytes of data in {SIZE}")
    assert moved <= 4 * (256 << 10), moved  # each data run's 256 KiB request, no more
