"""Start and stop burstgate-gateway for the tests, and speak raw NBD to it.

The helpers here are the tests' own client side: a minimal fixed-newstyle handshake and simple
requests over a Unix socket, so every malformed case can be sent byte for byte."""

import json
import os
import pathlib
import signal
import socket
import struct
import subprocess
import time

from burstgate.tools.gwbench import live_json

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", "build/cmake"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
GATEWAY = BUILD / "sw" / "gateway" / "burstgate-gateway"
HOST = BUILD / "sw" / "tools" / "burstgate-host"
SCENARIO = pathlib.Path(__file__).resolve().parent / "two_tenants.yaml"
# The datapath engine every test's gateway runs (GATEWAY_ENGINE=verilator needs a build with
# BG_VERILATOR_DATAPATH=core).
ENGINE = os.environ.get("GATEWAY_ENGINE", "model")

INIT_MAGIC = 0x4E42444D41474943
OPT_MAGIC = 0x49484156454F5054
OPT_REPLY_MAGIC = 0x3E889045565A9
REQUEST_MAGIC = 0x25609513
REPLY_MAGIC = 0x67446698
OPT_EXPORT_NAME, OPT_ABORT, OPT_LIST, OPT_INFO, OPT_GO, OPT_STRUCTURED_REPLY = 1, 2, 3, 6, 7, 8
OPT_LIST_META_CONTEXT, OPT_SET_META_CONTEXT = 9, 10
REP_ACK, REP_SERVER, REP_INFO, REP_META_CONTEXT = 1, 2, 3, 4
STRUCTURED_MAGIC = 0x668E33EF
REPLY_FLAG_DONE = 1
REPLY_NONE, REPLY_OFFSET_DATA, REPLY_BLOCK_STATUS, REPLY_ERROR = 0, 1, 5, 0x8001
REP_ERR_UNSUP, REP_ERR_INVALID, REP_ERR_UNKNOWN = 0x80000001, 0x80000003, 0x80000006
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM = 0, 1, 2, 3, 4
CMD_CACHE, CMD_WRITE_ZEROES, CMD_BLOCK_STATUS = 5, 6, 7
FLAG_FUA, FLAG_NO_HOLE, FLAG_REQ_ONE, FLAG_FAST_ZERO = 1, 2, 8, 16
EINVAL, ENOSPC, EOVERFLOW = 22, 28, 75


class Gateway:
    """One burstgate-gateway process serving SCENARIO's tenants on a Unix socket."""

    def __init__(self, tmp, *args, scenario=SCENARIO, data_dir=None, export_size="64m"):
        self.sock = str(tmp / "gw.sock")
        self.control = str(tmp / "gw.ctl")
        self.report = tmp / "report.json"
        self.log = tmp / "gateway.log"
        cmd = [str(GATEWAY), "--config", str(scenario), "--unix", self.sock, "--control", self.control,
               "--out", str(self.report), "--export-size", export_size, "--verbose", "--engine", ENGINE, *args]
        if data_dir is not None:
            cmd += ["--data-dir", str(data_dir)]
        self._log = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._log)
        deadline = time.monotonic() + 20
        while not os.path.exists(self.control):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self._log.close()
                raise RuntimeError(f"burstgate-gateway did not start: {self.log.read_text()}")
            time.sleep(0.05)

    def uri(self, export):
        return f"nbd+unix:///{export}?socket={self.sock}"

    def alive(self):
        return self.proc.poll() is None

    def live(self):
        """The live JSON from the control socket."""
        return live_json(self.control)

    def stop(self, sig=signal.SIGINT):
        """Stops the gateway; returns the final report (contract 4)."""
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=30)
        self._log.close()
        assert rc == 0, f"burstgate-gateway exit {rc}: {self.log.read_text()}"
        return json.loads(self.report.read_text())


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def closed(s, timeout=5.0):
    """True when the server has closed the connection (EOF or reset) within `timeout`."""
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(4096):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def hello(path, client_flags=3):
    """Connects and answers the server's greeting; returns the socket, in option haggling."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    magic, opt_magic, flags = struct.unpack(">QQH", recv_exact(s, 18))
    assert (magic, opt_magic) == (INIT_MAGIC, OPT_MAGIC)
    assert flags & 1, "fixed newstyle"
    s.sendall(struct.pack(">I", client_flags))
    return s


def send_option(s, opt, data=b"", magic=OPT_MAGIC):
    s.sendall(struct.pack(">QII", magic, opt, len(data)) + data)


def option_reply(s):
    magic, opt, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
    assert magic == OPT_REPLY_MAGIC
    return opt, rtype, recv_exact(s, length)


def go(s, export, opt=OPT_GO):
    """NBD_OPT_GO; returns (size, transmission flags, max block) or the error reply type."""
    name = export.encode()
    send_option(s, opt, struct.pack(">I", len(name)) + name + struct.pack(">H", 0))
    size = flags = max_block = None
    while True:
        _, rtype, data = option_reply(s)
        if rtype == REP_INFO:
            info = struct.unpack(">H", data[:2])[0]
            if info == 0:
                size, flags = struct.unpack(">QH", data[2:])
            elif info == 3:
                max_block = struct.unpack(">III", data[2:])[2]
        elif rtype == REP_ACK:
            return size, flags, max_block
        else:
            return rtype


def connect(path, export):
    s = hello(path)
    r = go(s, export)
    assert isinstance(r, tuple), f"GO {export}: error {r:#x}"
    return s, r


def request(s, cmd, offset=0, length=0, data=b"", flags=0, cookie=7, magic=REQUEST_MAGIC):
    s.sendall(struct.pack(">IHHQQI", magic, flags, cmd, cookie, offset, length) + data)


def reply(s, read_len=0):
    """(error, cookie, data): the data only for a successful READ of read_len bytes."""
    magic, error, cookie = struct.unpack(">IIQ", recv_exact(s, 16))
    assert magic == REPLY_MAGIC
    return error, cookie, (recv_exact(s, read_len) if error == 0 and read_len else b"")


def meta_payload(export, *queries):
    name = export.encode()
    body = struct.pack(">I", len(name)) + name + struct.pack(">I", len(queries))
    for q in queries:
        body += struct.pack(">I", len(q)) + q.encode()
    return body


def connect_structured(path, export, meta=True):
    """Connects with structured replies (and base:allocation selected when `meta`)."""
    s = hello(path)
    send_option(s, OPT_STRUCTURED_REPLY)
    assert option_reply(s)[1] == REP_ACK
    if meta:
        send_option(s, OPT_SET_META_CONTEXT, meta_payload(export, "base:allocation"))
        _, rtype, data = option_reply(s)
        assert rtype == REP_META_CONTEXT and data[4:] == b"base:allocation"
        assert option_reply(s)[1] == REP_ACK
    r = go(s, export)
    assert isinstance(r, tuple), f"GO {export}: error {r:#x}"
    return s, r


def chunk(s):
    """One structured reply chunk: (flags, type, cookie, payload)."""
    magic, flags, rtype, cookie, length = struct.unpack(">IHHQI", recv_exact(s, 20))
    assert magic == STRUCTURED_MAGIC, hex(magic)
    return flags, rtype, cookie, recv_exact(s, length)


def fio_json(path):
    """fio's JSON output file (fio prints a connection note on stdout, so --output is used)."""
    return json.loads(pathlib.Path(path).read_text())
