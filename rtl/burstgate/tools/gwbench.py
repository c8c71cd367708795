"""Shared pieces of the gateway measurements (`burstgate calibrate`, scripts/gateway_overhead.py,
scripts/compare_qemu.py): start a server on a Unix socket, run Debian's fio with --ioengine=nbd
against it, read the result."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

from ..command import Program, find_program

#: The checkout's root, for the benchmark scripts' scenarios (they run from a checkout only).
ROOT = pathlib.Path(__file__).resolve().parents[3]
GATEWAY = Program("sw/gateway/burstgate-gateway")


def die(tool: str, msg: str) -> None:
    print(f"{tool}: {msg}", file=sys.stderr)
    sys.exit(2)


def gateway_binary(build: str | None = None) -> pathlib.Path:
    """burstgate-gateway under the CMake build tree ``build`` if given, else where `burstgate`
    finds its programs (``command.find_program``; raises ``command.NotBuilt``)."""
    if build is None:
        return find_program(GATEWAY)
    b = pathlib.Path(build)
    if not b.is_absolute():
        b = ROOT / b
    return b / GATEWAY.build_path


def fio(uri: str, rw: str, bs: str, iodepth: int, seconds: float, numjobs: int = 1, size: str = "256m") -> dict:
    """One time-based fio run; {iops, mbps, lat_mean_us, lat_p99_us} over all its jobs."""
    cmd = ["fio", "--name=bench", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", f"--bs={bs}",
           f"--iodepth={iodepth}", f"--size={size}", "--time_based", f"--runtime={seconds}",
           f"--numjobs={numjobs}", "--group_reporting", "--output-format=json", "--randrepeat=0"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    if p.returncode != 0:
        raise RuntimeError(f"fio failed ({' '.join(cmd)}): {p.stderr.strip()}")
    job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]
    side = job["read"] if "read" in rw else job["write"]
    return {"iops": side["iops"], "mbps": side["bw_bytes"] / 1e6, "lat_mean_us": side["clat_ns"]["mean"] / 1e3,
            "lat_p99_us": side["clat_ns"]["percentile"]["99.000000"] / 1e3}


def schedstat(pids) -> dict:
    """Per thread of the given processes: (CPU time, time waiting on a run queue) in ns, from
    /proc/PID/task/TID/schedstat (absent threads are skipped: they may have ended). Keyed by
    thread id (unique on the host while the thread lives)."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    cpu, wait = f.read().split()[:2]
                out[int(tid)] = (int(cpu), int(wait))
            except (OSError, ValueError):
                continue
    return out


class SchedWatch:
    """``with SchedWatch(pids) as w: ...``: samples, every ``period`` s on a thread, the threads of
    the processes ``pids()`` names (asked again at every sample: processes start and end inside
    the block), and on leaving sets ``cpu_s`` and ``wait_s``, the CPU time they ran and the time
    they were runnable but waited for a CPU over the block (schedstat; a thread there at the start
    counts from then, one that starts later from its start), ``threads`` and ``seconds``; with
    ``names=True`` also ``by_name``, the same per thread name (burstgate-gateway names its
    threads by role: docs/gateway.md, *Threads*). What a thread did after its last sample before
    it ended is not seen."""

    def __init__(self, pids, period: float = 0.25, names: bool = False) -> None:
        self._pids, self._period, self._names = pids, period, names
        self._base: dict = {}  # thread id -> (cpu, wait) at the block's start
        self._last: dict = {}  # thread id -> (cpu, wait) at its last sample
        self._name: dict = {}  # thread id -> its name (comm) at its last sample, with names=True
        self.cpu_s = self.wait_s = self.seconds = 0.0
        self.threads = 0
        self.by_name: dict = {}

    def _sample(self, first: bool = False) -> None:
        for tid, v in schedstat(self._pids()).items():
            if first:
                self._base[tid] = v
            self._last[tid] = v
            if self._names:  # every sample: a thread names itself after it starts
                try:
                    with open(f"/proc/{tid}/comm") as f:
                        self._name[tid] = f.read().strip()
                except OSError:
                    pass

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            self._sample()

    def __enter__(self) -> "SchedWatch":
        self._t0 = time.monotonic()
        self._sample(first=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> bool:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.seconds = max(time.monotonic() - self._t0, 1e-6)
        grew = [(v[0] - self._base.get(tid, (0, 0))[0], v[1] - self._base.get(tid, (0, 0))[1])
                for tid, v in self._last.items()]
        self.cpu_s = sum(c for c, _ in grew) / 1e9
        self.wait_s = sum(w for _, w in grew) / 1e9
        self.threads = len(self._last)
        # With names=True: per thread name, [threads, CPU s, wait s] over the block.
        for tid, v in self._last.items():
            b = self._base.get(tid, (0, 0))
            agg = self.by_name.setdefault(self._name.get(tid, "?"), [0, 0.0, 0.0])
            agg[0] += 1
            agg[1] += (v[0] - b[0]) / 1e9
            agg[2] += (v[1] - b[1]) / 1e9
        return False


def live_json(control: str) -> dict:
    """The live JSON burstgate-gateway writes to whoever connects to its control socket."""
    with socket.socket(socket.AF_UNIX) as c:
        c.connect(control)
        data = b""
        while chunk := c.recv(65536):
            data += chunk
    return json.loads(data)


class Server:
    """A server process listening on `sock`; stop() ends it with SIGINT."""

    def __init__(self, name: str, cmd: list[str], sock: str, export: str, tmp: pathlib.Path, report=None,
                 control=None):
        self.name, self.sock, self.export, self.report, self.control = name, sock, export, report, control
        self.log = tmp / f"{name.replace(' ', '_').replace('/', '_')}.log"
        self._log = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._log)
        deadline = time.monotonic() + 20
        while True:
            if os.path.exists(sock):
                try:
                    with socket.socket(socket.AF_UNIX) as s:
                        s.connect(sock)
                    break
                except OSError:
                    pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self._log.close()
                raise RuntimeError(f"{name} did not start: {self.log.read_text()}")
            time.sleep(0.05)

    def uri(self, export: str | None = None) -> str:
        return f"nbd+unix:///{self.export if export is None else export}?socket={self.sock}"

    def live(self) -> dict:
        """burstgate-gateway's live JSON (its control socket)."""
        return live_json(self.control)

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        if self.report is not None and self.report.exists():
            return json.loads(self.report.read_text())
        return None
