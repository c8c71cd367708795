"""`burstgate gen-trace`: a synthetic multi-device block trace in the Alibaba format, for tests and demos.

The Alibaba block traces' records are ``device_id,opcode,offset,length,timestamp`` (opcode R or W,
offset and length in bytes, timestamp in microseconds), one line per I/O, in time order across
devices. Each generated device is a Markov-modulated Poisson process, the usual model of bursty
block I/O: a quiet state at the device's own rate (log-normal across devices, so a few devices carry
most of the load, as in the published fleet traces) and burst episodes (exponential gaps and
lengths) at a multiple of it. Sizes are a 4 KiB-heavy mix up to 128 KiB, the read share differs per
device, and offsets are 4 KiB-aligned runs of sequential I/Os at random places on a 100 GiB disk.

Records are generated per device, lazily, and merged in time order (``heapq.merge``), so memory is
bounded by the number of devices, not the trace's length. The same arguments give the same bytes.
"""

import heapq
import math
import random
import sys

from burstgate.tools.reports import InputError, output_file, positive_number

SIZES = ((4096, 0.5), (8192, 0.15), (16384, 0.15), (65536, 0.12), (131072, 0.08))
DISK_BYTES = 100 << 30
START_US = 1_577_836_800_000_000  # 2020-01-01 00:00 UTC, in the traces' microseconds


def _device(dev, rng, duration_us, base_iops, burst_factor, burst_every_s, burst_len_s):
    """(timestamp_us, dev, opcode, offset, length) of one device, in time order."""
    rate = base_iops * math.exp(rng.gauss(0.0, 1.0))        # quiet rate, log-normal across devices
    factor = burst_factor * math.exp(rng.gauss(0.0, 0.5))   # this device's burst multiplier
    read_share = rng.uniform(0.2, 0.8)
    sizes, weights = zip(*SIZES)
    t = 0.0
    burst_end = -1.0
    next_burst = rng.expovariate(1.0 / (burst_every_s * 1e6))
    offset, run = 0, 0
    while True:
        if t >= next_burst:               # a burst starts: it lasts an exponential time
            burst_end = next_burst + rng.expovariate(1.0 / (burst_len_s * 1e6))
            next_burst = burst_end + rng.expovariate(1.0 / (burst_every_s * 1e6))
        r = rate * factor if t < burst_end else rate
        step = rng.expovariate(r / 1e6)
        # A state change inside the gap: restart the draw there (memorylessness keeps it exact).
        edge = burst_end if t < burst_end else next_burst
        if t + step > edge:
            t = edge
            continue
        t += step
        if t >= duration_us:
            return
        length = rng.choices(sizes, weights)[0]
        if run == 0:                       # a new sequential run somewhere on the disk
            run = 1 + int(rng.expovariate(1 / 8.0))
            offset = rng.randrange(0, DISK_BYTES // 4096) * 4096
        run -= 1
        if offset + length > DISK_BYTES:
            offset = 0
        yield (START_US + int(t), dev, "R" if rng.random() < read_share else "W", offset, length)
        offset += length


def records(devices, duration_s, seed, base_iops, burst_factor, burst_every_s, burst_len_s):
    gens = [_device(d, random.Random(seed * 1_000_003 + d), duration_s * 1e6, base_iops, burst_factor,
                    burst_every_s, burst_len_s) for d in range(devices)]
    return heapq.merge(*gens)


def add_arguments(p):
    p.add_argument("--out", required=True, help="the trace file to write (CSV, Alibaba format)")
    p.add_argument("--devices", type=int, default=16, help="virtual disks (default 16)")
    p.add_argument("--duration-s", type=positive_number, default=10.0, help="trace length in seconds (default 10)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--base-iops", type=positive_number, default=200.0,
                   help="median quiet rate of a device in I/Os per second (default 200)")
    p.add_argument("--burst-factor", type=positive_number, default=10.0,
                   help="median burst rate as a multiple of the quiet rate (default 10)")
    p.add_argument("--burst-every-s", type=positive_number, default=3.0, help="mean gap between bursts (default 3 s)")
    p.add_argument("--burst-len-s", type=positive_number, default=0.5, help="mean burst length (default 0.5 s)")


def run(args):
    if not 1 <= args.devices <= 100000:
        raise InputError(f"--devices: expected 1..100000, got {args.devices}")
    if args.seed < 0:
        raise InputError(f"--seed: expected 0 or more, got {args.seed}")
    out = output_file(args.out)
    try:
        n = 0
        with open(out, "w", encoding="ascii", buffering=1 << 20) as f:
            for ts, dev, op, off, length in records(args.devices, args.duration_s, args.seed, args.base_iops,
                                                    args.burst_factor, args.burst_every_s, args.burst_len_s):
                f.write(f"{dev},{op},{off},{length},{ts}\n")
                n += 1
    except OSError as exc:
        raise InputError(f"--out {out}: {exc.strerror or exc}") from exc
    print(f"burstgate gen-trace: {n} I/Os of {args.devices} devices over {args.duration_s:g} s in {out}",
          file=sys.stderr)
    return 0
