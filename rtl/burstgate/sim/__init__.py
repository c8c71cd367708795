"""Helpers for ``amaranth.sim`` testbenches of burstgate blocks."""

from .stream import StreamPattern, stream_get, stream_put

__all__ = ["StreamPattern", "stream_get", "stream_put"]
