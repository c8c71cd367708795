#!/usr/bin/env python3
"""Instructions per offered I/O of one bench_admission.cpp row, from a callgrind profile.

    valgrind --tool=callgrind --callgrind-out-file=cg.out bg_bench \\
        --benchmark_filter='BM_ThrottleIo/bios/tenants:64$' --benchmark_min_time=0.01
    sw/bench/callgrind_per_io.py cg.out IOS

Counts what BM_Admission runs per I/O: its own instructions (the inlined loop) plus the
inclusive count of every function it calls except the setup ones (workload generation, the
Admission constructor and destructor, the firmware window, Google Benchmark's bookkeeping,
memory allocation), divided by IOS, the I/Os offered in the run: the 16 warm-up windows of
16,384 plus iterations x the row's ios_per_window counter (under callgrind with
--benchmark_min_time=0.01 one iteration: 262,144 + 19,983 = 282,127 at 64 tenants). With
link-time optimization the decision is inlined differently than without; summing over the
callees counts it either way. Needs callgrind_annotate on PATH.
"""

from __future__ import annotations

import re
import subprocess
import sys

_SETUP = re.compile(
    r"admission_workload|Admission::Admission|Admission::~Admission|bg_fw_window|window_tick|"
    r"benchmark::|memcpy|memmove|memcmp|operator new|operator delete|_dl_runtime_resolve|malloc|free"
)
_CALLEE = re.compile(r"\s*([\d,]+) \(.*?\)\s+>\s+(.*?) \(([\d,]+)x\)")


def _annotate(path: str, *opts: str) -> str:
    done = subprocess.run(["callgrind_annotate", "--threshold=100", *opts, path], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"callgrind_per_io: {path}: callgrind_annotate failed: {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[2].isdigit() or int(argv[2]) == 0:
        print(__doc__, file=sys.stderr)
        return 2
    path, ios = argv[1], int(argv[2])
    total, found = 0, False
    for block in _annotate(path, "--tree=calling", "--inclusive=yes").split("\n\n"):
        lines = block.strip().split("\n")
        if not lines or "*  " not in lines[0] or "BM_Admission" not in lines[0]:
            continue
        found = True
        for line in lines[1:]:
            m = _CALLEE.match(line)
            if m and not _SETUP.search(m.group(2)):
                total += int(m.group(1).replace(",", ""))
    for line in _annotate(path).split("\n"):
        if "BM_Admission" in line:
            total += int(line.split()[0].replace(",", ""))
    if not found:
        print(f"callgrind_per_io: {path}: no BM_Admission in the profile", file=sys.stderr)
        return 1
    print(f"{total / ios:.1f} instructions per I/O ({total:,} / {ios:,})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
