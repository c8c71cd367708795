"""A tenant's own deferred backlog must not cost its neighbours (issue 18: no client able to
hurt another).

Every deferred request is offered again at every window under the engine lock, in deferral
order (docs/gateway.md, *What happens to one request*): BurstCBS's Algorithm 1 shares the
unused capacity in proportion to each tenant's usage plus its throttled cost (line 10), so the
re-offers are what the firmware reads a backlog's demand from, and a window's work grows with
the backlog. One tenant keeping 16 connections x 512 4 KiB READs in flight against its 4000 IOPS
holds about 8000 deferred requests: measured, its neighbour's 4 KiB read P99 0.11 ms alone,
9.65 ms beside it, 227 windows late and 140 skipped in 3 s (8 connections: 0.79 ms, 2 late).
Expected to fail until the work is bounded per tenant (docs/gateway.md, *Limits*).
"""

import threading
import time

import pytest

from .host_load import CpuContention
from .test_hostile import neighbour_p99_ms, spawn  # noqa: F401 (spawn: the fixture)
from .test_hostile_pool import reader_loop

CONNS, DEPTH = 16, 512


@pytest.mark.long
@pytest.mark.xfail(strict=True, reason="every deferred request is re-offered every window under the engine "
                   "lock: a backlog of 8000 makes windows late and the neighbour wait (docs/gateway.md, Limits)")
def test_a_deferred_backlog_does_not_slow_the_neighbour(tmp_path, spawn):
    gw = spawn(tmp_path, "--realtime")
    stop = threading.Event()
    threads = [threading.Thread(target=reader_loop, args=(gw.sock, "victim", 4096, DEPTH, stop, []))
               for _ in range(CONNS)]
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)
        before = gw.live()
        with CpuContention() as host:
            p99, n = neighbour_p99_ms(gw.sock, 3, export="bursty")
        after = gw.live()
    finally:
        stop.set()
        for t in threads:
            t.join()
    windows = after["windows"] - before["windows"]
    skipped = after["window_overruns"] - before["window_overruns"]
    print(f"\n{CONNS} x {DEPTH} deferred READs: neighbour P99 {p99:.2f} ms over {n}; {windows} windows run, "
          f"{skipped} skipped; in flight {after['in_flight']}; {host}")
    assert after["in_flight"] >= 0.9 * CONNS * DEPTH  # the backlog was there
    assert skipped <= 0.01 * (windows + skipped), (windows, skipped)
    assert p99 < (10.0 if host.contended else 5.0), (p99, str(host))
