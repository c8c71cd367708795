"""Drive and observe :mod:`amaranth.lib.stream` interfaces from an ``amaranth.sim`` testbench.

Every stream test should also run with idle cycles on the source and backpressure on the
sink: :class:`StreamPattern` gives both, reproducibly from a seed.
"""

import random

__all__ = ["StreamPattern", "stream_put", "stream_get"]


class StreamPattern:
    """When a source offers data or a sink accepts it.

    Parameters
    ----------
    kind : str
        ``"always"`` (every cycle), ``"random"`` (with probability ``duty``), or
        ``"bursty"`` (runs of 1..8 cycles on, then off).
    duty : float
        Probability of being on, for ``"random"``.
    seed : int
    """

    KINDS = ("always", "random", "bursty")

    def __init__(self, kind="always", *, duty=0.5, seed=0):
        if kind not in self.KINDS:
            raise TypeError(f"Pattern kind must be one of {self.KINDS}, not {kind!r}")
        if not 0.0 < duty <= 1.0:
            raise TypeError(f"Duty must be in (0, 1], not {duty!r}")
        self.kind, self.duty = kind, duty
        self._rng = random.Random(seed)
        self._run = 0
        self._on = True

    def __repr__(self):
        return f"StreamPattern({self.kind!r}, duty={self.duty})"

    def __call__(self):
        """True when the source/sink is active this cycle."""
        if self.kind == "always":
            return True
        if self.kind == "random":
            return self._rng.random() < self.duty
        if self._run == 0:
            self._on = not self._on
            self._run = self._rng.randint(1, 8)
        self._run -= 1
        return self._on


async def stream_put(ctx, stream, payload, *, pattern=None):
    """Transfer ``payload`` on ``stream`` (the testbench is the source).

    Holds ``valid`` and the payload until the transfer, as the stream rules require.
    """
    if pattern is not None:
        while not pattern():
            await ctx.tick()
    ctx.set(stream.valid, 1)
    ctx.set(stream.payload, payload)
    await ctx.tick().until(stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, *, pattern=None):
    """Receive one payload from ``stream`` (the testbench is the sink)."""
    if pattern is not None:
        while not pattern():
            await ctx.tick()
    ctx.set(stream.ready, 1)
    payload, = await ctx.tick().sample(stream.payload).until(stream.valid)
    ctx.set(stream.ready, 0)
    return payload
