"""Helpers for ``amaranth.sim`` testbenches of burstgate blocks."""

from .stream import StreamPattern, stream_get, stream_put
from .testbench import simulate

__all__ = ["StreamPattern", "simulate", "stream_get", "stream_put"]
