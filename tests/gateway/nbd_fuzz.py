"""A seeded NBD protocol fuzzer for burstgate-gateway (issue 19).

Each case is one client connection: a handshake of random options (every option number, and
lengths at and around every bound), then requests with every command number, random flags, and
offsets and lengths at and around every bound (0, 512, 4 KiB, the schedulable block, the maximum
payload, the export size, 2^32, 2^64), sometimes cut mid-header or mid-payload. Every reply is
checked against a reference of the protocol's rules (`expect`) and every READ against a shadow
copy of the data each export should hold; a WRITE, TRIM or WRITE_ZEROES that succeeds is
applied to the shadow. The gateway must stay alive and serve the next case.

Requests of a case are sent one at a time, so the shadow is exact."""

import random
import struct

from . import gateway as g

MIB = 1 << 20
MAX_PAYLOAD = 32 * MIB
OPT_MAX = 4096 + 64

# The flags each command takes (nbd_proto.cpp's check_request, from the protocol document).
ALLOWED = {g.CMD_READ: 1, g.CMD_WRITE: 1, g.CMD_TRIM: 1, g.CMD_FLUSH: 0, g.CMD_CACHE: 0,
           g.CMD_WRITE_ZEROES: 1 | 2 | 16, g.CMD_BLOCK_STATUS: 8}


def expect(cmd, flags, off, length, size, structured, meta):
    """'ok', 'disc', 'close', or the NBD error the gateway must answer."""
    write = cmd == g.CMD_WRITE

    def fail(err):
        return "close" if write and length > MAX_PAYLOAD else err

    if cmd == g.CMD_DISC:
        return "disc"
    if cmd == g.CMD_BLOCK_STATUS and not meta:
        return g.EINVAL
    if cmd not in ALLOWED:
        return g.EINVAL
    if flags & ~ALLOWED[cmd]:
        return fail(g.EINVAL)
    if cmd == g.CMD_FLUSH:
        return fail(g.EINVAL) if off or length else "ok"
    if length == 0:
        return fail(g.EINVAL)
    if cmd in (g.CMD_READ, g.CMD_WRITE) and length > MAX_PAYLOAD:
        return fail(g.EOVERFLOW if structured and cmd == g.CMD_READ else g.EINVAL)
    if cmd == g.CMD_WRITE_ZEROES and flags & 2 and not flags & 16 and length > MAX_PAYLOAD:
        return g.EOVERFLOW
    if off > size or length > size - off:
        return fail(g.ENOSPC if cmd in (g.CMD_WRITE, g.CMD_WRITE_ZEROES) else g.EINVAL)
    return "ok"


def around(*points):
    out = []
    for p in points:
        out += [p - 1, p, p + 1]
    return [v for v in out if v >= 0]


class Fuzzer:
    def __init__(self, gw, seed, exports, size, blocks):
        self.gw, self.rng, self.size = gw, random.Random(seed), size
        self.exports = exports
        self.shadow = {e: bytearray(size) for e in exports}
        self.lengths = around(0, 1, 512, 4096, *blocks, 1 * MIB, MAX_PAYLOAD, size, 1 << 32) + [0xFFFFFFFF]
        self.offsets = around(0, 512, 4096, size // 2, size - 4096, size, 1 << 32, 1 << 63) + [(1 << 64) - 1]
        self.stats = {"cases": 0, "requests": 0, "closed": 0, "cut": 0}

    # --- the handshake phase -------------------------------------------------------------
    def options(self, s):
        """Random options before a GO; returns (structured, meta) or None once closed."""
        structured = meta = False
        for _ in range(self.rng.randrange(4)):
            opt = self.rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 0x7FFF, 0xFFFFFFFF])
            if opt in (1, 2):  # EXPORT_NAME / ABORT leave haggling: not here
                continue
            length = self.rng.choice(around(0, 4, 16, OPT_MAX) + [0xFFFFFFFF])
            if opt == 8 and self.rng.random() < 0.7:
                length = 0
            if opt in (9, 10) and self.rng.random() < 0.7:
                data = g.meta_payload(self.rng.choice(self.exports + ["nobody"]),
                                      *self.rng.sample(["base:allocation", "base:", "qemu:x"], self.rng.randrange(3)))
                length = len(data)
            else:
                data = self.rng.randbytes(min(length, OPT_MAX + 1))
            if length > OPT_MAX:
                s.sendall(struct.pack(">QII", g.OPT_MAGIC, opt, length) + data[:16])
                assert g.closed(s), f"option {opt} of {length} bytes not closed"
                return None
            s.sendall(struct.pack(">QII", g.OPT_MAGIC, opt, length) + data)
            while True:
                ropt, rtype, payload = g.option_reply(s)
                assert ropt == opt, (ropt, opt)
                if opt == 8 and rtype == g.REP_ACK:
                    structured = True
                if opt == 10:
                    meta = meta if rtype != g.REP_META_CONTEXT else True
                if rtype == g.REP_ACK or rtype >= 0x80000000:
                    if opt == 10 and rtype != g.REP_ACK:
                        meta = False
                    break
        return structured, meta

    def handshake(self):
        s = g.hello(self.gw.sock)
        s.settimeout(30)
        got = self.options(s)
        if got is None:
            s.close()
            return None
        structured, meta = got
        if not structured and self.rng.random() < 0.5:
            g.send_option(s, g.OPT_STRUCTURED_REPLY)
            assert g.option_reply(s)[1] == g.REP_ACK
            structured = True
        export = self.rng.choice(self.exports)
        if structured and self.rng.random() < 0.6:
            g.send_option(s, g.OPT_SET_META_CONTEXT, g.meta_payload(export, "base:allocation"))
            assert g.option_reply(s)[1] == g.REP_META_CONTEXT
            assert g.option_reply(s)[1] == g.REP_ACK
            meta = True
        elif meta:
            meta = False  # a SET for a random export earlier: send one that selects nothing
            g.send_option(s, g.OPT_SET_META_CONTEXT, g.meta_payload(export))
            assert g.option_reply(s)[1] == g.REP_ACK
        r = g.go(s, export)
        assert isinstance(r, tuple), r
        return s, export, structured, meta

    # --- the transmission phase ----------------------------------------------------------
    def reply(self, s, cmd, structured, length):
        """(error, payload) of the next reply, simple or structured."""
        magic = struct.unpack(">I", g.recv_exact(s, 4))[0]
        if magic == g.REPLY_MAGIC:
            error, _ = struct.unpack(">IQ", g.recv_exact(s, 12))
            assert not (structured and cmd == g.CMD_READ), "simple reply to a structured READ"
            data = g.recv_exact(s, length) if cmd == g.CMD_READ and error == 0 else b""
            return error, data
        assert magic == g.STRUCTURED_MAGIC and structured, hex(magic)
        flags, rtype, _, n = struct.unpack(">HHQI", g.recv_exact(s, 16))
        payload = g.recv_exact(s, n)
        assert flags & g.REPLY_FLAG_DONE
        if rtype == g.REPLY_ERROR:
            return struct.unpack(">I", payload[:4])[0], payload
        return 0, payload

    def request(self, s, export, structured, meta):
        rng = self.rng
        cmd = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 0, 1, 8, 9, 0xFFFF]) if rng.random() < 0.97 else 2
        flags = rng.choice([0, 0, 0, 1, 2, 4, 8, 16, 32, rng.randrange(1 << 16)])
        if rng.random() < 0.7:  # mostly valid, to reach deep
            off = rng.randrange(0, self.size // 4096) * 4096
            length = rng.choice([512, 4096, 8192, 65536, 256 << 10, 1 * MIB])
        else:
            off, length = rng.choice(self.offsets), rng.choice(self.lengths)
        length &= 0xFFFFFFFF
        off &= (1 << 64) - 1
        if cmd == g.CMD_FLUSH and rng.random() < 0.8:
            off = length = 0
        want = expect(cmd, flags, off, length, self.size, structured, meta)
        cookie = rng.randrange(1 << 64)
        head = struct.pack(">IHHQQI", g.REQUEST_MAGIC, flags, cmd, cookie, off, length)
        payload = rng.randbytes(length) if cmd == g.CMD_WRITE and length <= MAX_PAYLOAD else b""
        if rng.random() < 0.01:  # cut mid-header or mid-payload: never applied
            cut = rng.randrange(len(head) + len(payload))
            s.sendall((head + payload)[:cut])
            s.close()
            self.stats["cut"] += 1
            return False
        if rng.random() < 0.005:  # a bad magic closes
            s.sendall(struct.pack(">I", 0x12345678) + head[4:])
            assert g.closed(s)
            self.stats["closed"] += 1
            return False
        s.sendall(head + payload)
        self.stats["requests"] += 1
        if want == "disc":
            assert g.closed(s)
            return False
        if want == "close":
            assert g.closed(s)
            self.stats["closed"] += 1
            return False
        error, data = self.reply(s, cmd, structured, length)
        sh = self.shadow[export]
        if want != "ok":
            assert error == want, (cmd, flags, off, length, error, want)
            return True
        if cmd == g.CMD_WRITE_ZEROES and error == 95 and flags & 16:
            return True  # FAST_ZERO refused quickly: allowed, contents untouched
        assert error == 0, (cmd, flags, off, length, error)
        if cmd == g.CMD_READ:
            if structured:
                assert struct.unpack(">Q", data[:8])[0] == off
                data = data[8:]
            assert data == sh[off:off + length], f"READ {off}+{length} differs from the shadow"
        elif cmd == g.CMD_WRITE:
            sh[off:off + length] = payload
        elif cmd in (g.CMD_TRIM, g.CMD_WRITE_ZEROES):
            sh[off:off + length] = bytes(length)
        elif cmd == g.CMD_BLOCK_STATUS:
            assert struct.unpack(">I", data[:4])[0] == 1
            ext = [struct.unpack(">II", data[k:k + 8]) for k in range(4, len(data), 8)]
            assert ext and all(n > 0 for n, _ in ext)
            total = sum(n for n, _ in ext)
            assert total <= length and (not flags & 8 or len(ext) == 1)
            pos = off
            for n, st in ext:  # a hole must read as zeroes in the shadow
                if st & 2:
                    assert sh[pos:pos + n] == bytes(n), f"extent {pos}+{n} reported zero, shadow is not"
                pos += n
        return True

    def case(self):
        self.stats["cases"] += 1
        if self.rng.random() < 0.05:  # a handshake cut short
            s = g.hello(self.gw.sock)
            s.sendall(self.rng.randbytes(self.rng.randrange(12)))
            s.close()
            return
        got = self.handshake()
        if got is None:
            return
        s, export, structured, meta = got
        try:
            for _ in range(self.rng.randrange(1, 40)):
                if not self.request(s, export, structured, meta):
                    return
        finally:
            s.close()

    def verify(self):
        """Every export reads back as its shadow."""
        for e in self.exports:
            s, _ = g.connect(self.gw.sock, e)
            s.settimeout(60)
            for off in range(0, self.size, MIB):
                g.request(s, g.CMD_READ, off, MIB)
                err, _, data = g.reply(s, MIB)
                assert err == 0 and data == self.shadow[e][off:off + MIB], f"{e} at {off} differs from the shadow"
            s.close()


def run(gw, seed, cases, size):
    fz = Fuzzer(gw, seed, ["victim", "bursty"], size, [32 << 10, 128 << 10])
    for _ in range(cases):
        fz.case()
        assert gw.alive(), gw.log.read_text()[-2000:]
    fz.verify()
    return fz.stats
