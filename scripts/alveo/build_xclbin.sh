#!/usr/bin/env bash
# `make xclbin PLATFORM=...`: bg_kernel.xclbin for an Alveo card with Vitis. Without Vitis or
# the platform it says exactly what is missing and exits 1; nothing else needs Vitis.
#   scripts/alveo/build_xclbin.sh PLATFORM OUTDIR [core sizes, e.g. --tenants 1024 --ingress 16 --egress 16]
set -euo pipefail
platform=${1:?usage: build_xclbin.sh PLATFORM OUTDIR [sizes]}
out=${2:?usage: build_xclbin.sh PLATFORM OUTDIR [sizes]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

case "$platform" in
  *u250*) cfg=$here/u250.cfg; part=xcu250-figd2104-2L-e ;;
  *u55c*) cfg=$here/u55c.cfg; part=xcu55c-fsvh2892-2L-e ;;
  *) echo "make xclbin: PLATFORM '$platform' is neither a U250 nor a U55C platform (scripts/alveo/u250.cfg, u55c.cfg)" >&2; exit 1 ;;
esac

missing=()
command -v v++ >/dev/null || missing+=("v++ (Vitis 2022.1 or later: source <Vitis>/settings64.sh)")
command -v vivado >/dev/null || missing+=("vivado (comes with Vitis: source <Vitis>/settings64.sh)")
xpfm=""
for dir in ${PLATFORM_REPO_PATHS:+${PLATFORM_REPO_PATHS//:/ }} /opt/xilinx/platforms; do
  [ -f "$dir/$platform/$platform.xpfm" ] && xpfm=$dir/$platform/$platform.xpfm && break
done
[ -n "$xpfm" ] || missing+=("platform $platform (install its deployment and development packages, or set PLATFORM_REPO_PATHS to the folder holding $platform/$platform.xpfm)")
if [ ${#missing[@]} -gt 0 ]; then
  echo "make xclbin: cannot build; missing:" >&2
  for m in "${missing[@]}"; do echo "  - $m" >&2; done
  echo "Without a board or Vitis, the same kernel runs under Verilator: --engine verilator (built by make cpp)." >&2
  exit 1
fi

mkdir -p "$out"
PYTHONPATH="$root/rtl" python3 -m burstgate.kernel.generate --datapath core --out "$out" "$@"
PYTHONPATH="$root/rtl" python3 "$here/kernel_xml.py" "$out/kernel.xml"
vivado -mode batch -nojournal -log "$out/package_xo.log" -source "$here/package_xo.tcl" \
  -tclargs "$out/bg_kernel.xo" "$out/bg_kernel.v" "$out/kernel.xml" "$root/constraints/alveo_kernel.xdc" "$part" "$out/xo"
v++ -l -t hw --platform "$xpfm" --config "$cfg" --temp_dir "$out/vpp" --log_dir "$out/vpp/logs" \
  -o "$out/bg_kernel.xclbin" "$out/bg_kernel.xo"
echo "wrote $out/bg_kernel.xclbin; run with: BG_XCLBIN=$out/bg_kernel.xclbin ... --engine xrt"
