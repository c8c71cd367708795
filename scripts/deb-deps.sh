#!/usr/bin/env bash
# Install the Debian packages burstgate builds against, when missing.
# As root: apt-get installs them. Otherwise: one line naming what to install, exit 1.
set -euo pipefail

pkgs=(
  g++              # C++20 model, simulator, host; C11 firmware
  cmake            # C++ build
  ninja-build      # C++ build backend
  python3-venv     # the project's .venv
  python3-dev      # nanobind binding headers
  libgtest-dev     # C++ unit tests
  libbenchmark-dev # make bench
  libxrt-dev       # XrtDevice (Alveo engine)
  libyaml-cpp-dev  # burstgate-sim scenario files
  zlib1g-dev       # FST traces of the Verilated kernel (sw/host/verilator/)
  liblz4-dev       # FST traces of the Verilated kernel (sw/host/verilator/)
  librocksdb-dev   # burstgate-rocksdb-record: real RocksDB block-I/O traces (sw/lsm, optional)
  fio              # burstgate-gateway tests: stock fio as the NBD client (--ioengine=nbd, libnbd)
  libnbd-bin       # burstgate-gateway interop tests: nbdcopy, nbdinfo
  qemu-utils       # burstgate-gateway interop tests: qemu-img, qemu-io
  nbdkit           # make gateway-overhead: the memory plugin the gateway's cost is measured beside
  qemu-system-common # make compare-qemu: qemu-storage-daemon with throttle groups, the peer
  make
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "burstgate: missing Debian packages; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "burstgate: installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
