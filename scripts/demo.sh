#!/usr/bin/env bash
# `make demo`: the cost table, then the burst-neighbour scenario under WildCBS and BIOS on the
# Verilated kernel (the real generated RTL), the victim's latency side by side, plots in out/.
# Falls back to the C++ model only when the Verilator engine is not in this build, and says so.
set -euo pipefail
build=$1 scenario=$2 out=$3
sim=$build/sw/sim/burstgate-sim
mkdir -p "$out"

"$build/sw/tools/burstgate-cost"
echo

engine=verilator
for s in wild bios; do
  if ! "$sim" "$scenario" --engine "$engine" --scheduler "$s" \
        --out "$out/demo-$s.json" --csv "$out/demo-$s.csv" 2> "$out/demo-$s.err"; then
    if [ "$engine" = verilator ] && grep -q "not built" "$out/demo-$s.err"; then
      echo "demo: $(tail -n 1 "$out/demo-$s.err")" >&2
      echo "demo: falling back to --engine model" >&2
      engine=model
      "$sim" "$scenario" --engine model --scheduler "$s" --out "$out/demo-$s.json" --csv "$out/demo-$s.csv"
    else
      cat "$out/demo-$s.err" >&2
      exit 1
    fi
  fi
  tail -n 1 "$out/demo-$s.err" >&2
done
echo "== $(basename "$scenario"), engine $engine: the victim (4 KiB, iodepth 1) beside a bursting neighbour"
burstgate compare "$out/demo-wild.json" "$out/demo-bios.json" --tenant victim
burstgate plot "$out/demo-wild.json" "$out/demo-bios.json" \
  --csv "$out/demo-wild.csv" --csv "$out/demo-bios.csv" --out "$out"

# A neighbour whose burst provisioning exceeds the SA (BurstCBS Fig. 19, iodepth 64), on the model.
for s in wild bios; do
  "$sim" scenarios/fig19_bps_neighbor.yaml --scheduler "$s" --out "$out/fig19-$s.json" --quiet
done
echo "== BurstCBS Fig. 19: BPS-intensive neighbour at iodepth 64 (engine model)"
burstgate compare "$out/fig19-wild.json" "$out/fig19-bios.json" --tenant victim
burstgate plot "$out/fig19-wild.json" "$out/fig19-bios.json" --out "$out"
