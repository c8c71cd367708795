"""Verdicts a gateway benchmark prints after its tables (scripts/gateway_overhead.py): one line
per criterion of issue 18, PASS or MISS, with the figures it was judged on, so that a run judges
itself instead of leaving the reader to."""

from __future__ import annotations

import os


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: on a shared host they say how far to trust a run."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Verdicts:
    """Collects criteria; print_all() prints them and returns how many were missed."""

    def __init__(self) -> None:
        self.lines: list[tuple[bool, str]] = []

    def check(self, ok: bool, criterion: str, figures: str) -> bool:
        self.lines.append((bool(ok), f"{criterion}: {figures}"))
        return bool(ok)

    def print_all(self, title: str) -> int:
        """A line whose verdict is None is a note: printed, not counted."""
        print(f"\n{title}\n")
        for ok, text in self.lines:
            print(f"- {'NOTE' if ok is None else 'PASS' if ok else 'MISS'} {text}")
        judged = [ok for ok, _ in self.lines if ok is not None]
        missed = sum(1 for ok in judged if not ok)
        print(f"\n{len(judged) - missed} of {len(judged)} criteria met")
        return missed
