"""How much of a stretch of wall time this host's runnable tasks spent waiting for a CPU.

A closed-loop client at iodepth 1 gets what the gateway grants only while it is scheduled: on
a contended host it sends in bursts with milliseconds between them, and its run's IOPS then say
how the host scheduled it, not what the gateway granted. Tests that judge a run's IOPS ask this
first. The kernel's pressure-stall information (/proc/pressure/cpu, "some": the share of time
at least one runnable task waited) measures exactly that stretch; the 1-minute load average is
the fallback where PSI is missing, and lags by a minute.
"""

import os
import time

from burstgate.tools.gwbench import SchedWatch

PSI = "/proc/pressure/cpu"


def _stalled_us():
    try:
        with open(PSI) as f:
            for line in f:
                if line.startswith("some "):
                    return int(line.split("total=")[1])
    except (OSError, IndexError, ValueError):
        return None
    return None


class CpuContention:
    """``with CpuContention() as c: ...`` then ``c.share`` (0-1, the stall share over the block)
    and ``c.contended``: over ``limit`` (default 5 %), or, without PSI, a load average above
    twice the CPU count."""

    def __init__(self, limit=0.05):
        self.limit = limit
        self.share = None

    def __enter__(self):
        self._t0, self._s0 = time.monotonic(), _stalled_us()
        return self

    def __exit__(self, *exc):
        s1 = _stalled_us()
        if self._s0 is not None and s1 is not None:
            self.share = (s1 - self._s0) / 1e6 / max(time.monotonic() - self._t0, 1e-6)
        return False

    @property
    def contended(self):
        if self.share is not None:
            return self.share > self.limit
        return os.getloadavg()[0] > 2.0 * os.cpu_count()

    def __str__(self):
        if self.share is not None:
            return f"CPU stall share {100 * self.share:.1f} %"
        return f"load average {os.getloadavg()[0]:.1f} (no {PSI})"


class RunDelay(SchedWatch):
    """``with RunDelay(pids) as d: ...`` then ``d.share``: the time the threads of the processes
    ``pids()`` names spent runnable but waiting for a CPU (SchedWatch's ``wait_s``, sampled every
    20 ms), as a share of the block's wall time. Where CPU pressure says some task on the host
    waited, this says whether the processes a test judges did: a client held off for milliseconds
    sends in clumps."""

    def __init__(self, pids, threads=""):
        # threads: only the threads whose name starts with it (burstgate-gateway's "bg-rd:" are
        # its readers); every thread when empty.
        super().__init__(pids, period=0.02, names=bool(threads))
        self.threads_named = threads

    @property
    def share(self):
        if not self.threads_named:
            return self.wait_s / self.seconds
        return sum(w for name, (_, _, w) in self.by_name.items() if name.startswith(self.threads_named)) / self.seconds

    def __str__(self):
        return f"run delay {100 * self.share:.1f} % of the run" + (
            f" ({self.threads_named}* threads)" if self.threads_named else "")
