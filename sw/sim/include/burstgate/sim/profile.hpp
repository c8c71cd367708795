// A host profile: what `burstgate calibrate` (make calibrate) measured on
// the machine the gateway runs on, in the terms of the scenario's `dpu` section. burstgate-sim
// and burstgate-gateway both take it with --profile FILE: it replaces the scenario's SA thread
// count, every profiled product's CPU cost (cpu_ns, the linear model BurstCBS §5.3 fits on
// 4-16 KB max-IOPS measurements) and the software limit (swlimit_mbps, the large-I/O bandwidth),
// so the simulator predicts what the gateway on that host serves.
//
//   # burstgate host profile: `burstgate calibrate` on HOST, DATE
//   threads: 2
//   cpu_ns: {read: {base: 8100, per_kib: 120}, write: {base: 9000, per_kib: 150}}
//   swlimit_mbps: 2100
//   measured: {...}   # the measurements the fit came from (not read back)
#pragma once

#include <string>

#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

// Throws ScenarioError "FILE:LINE: field: what is wrong".
void apply_profile(Scenario &sc, const std::string &path);

}  // namespace bg::sim
