"""burstgate.tools.gwbench.SchedWatch, what compare-qemu and the gateway tests read a process's
CPU time and run-queue wait with: per thread name (names=True), as burstgate-gateway names its
threads by role. Catches the figures of one thread booked under another's name, or threads that
ran inside the block left out."""

import os
import threading
import time

from burstgate.tools.gwbench import SchedWatch


def test_a_named_thread_s_cpu_is_booked_under_its_name():
    stop = threading.Event()

    def spin():
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as f:
            f.write("bg-test-spin")
        while not stop.is_set():
            pass

    t = threading.Thread(target=spin)
    with SchedWatch(lambda: [os.getpid()], period=0.05, names=True) as w:
        t.start()
        time.sleep(0.4)
        stop.set()
        t.join()
    spin_threads, spin_cpu, _ = w.by_name["bg-test-spin"]
    assert spin_threads == 1
    assert spin_cpu >= 0.05  # it spun for 0.4 s, sharing the GIL with this thread's sleeps only
    assert abs(sum(v[1] for v in w.by_name.values()) - w.cpu_s) < 1e-9
    assert sum(v[0] for v in w.by_name.values()) == w.threads
