// burstgate-sim --arrivals: the scenario run on the arrivals burstgate-gateway recorded
// (burstgate-gateway --arrivals, sw/gateway/arrivals.hpp), so that the simulator's BIOS meets the
// same clumped demand the gateway's did and their withheld counts (withheld.hpp) compare.
#pragma once

#include <string>

#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

// Every tenant's workload becomes its recorded arrivals: `mode: trace` over `path`, fio iolog v3,
// device = the tenant's name, open loop at the recorded times from 0 to duration_ms; queues,
// segments and provisioning stay the scenario's. The whole file is read once now, so a malformed
// line is reported (FILE:LINE: message, ScenarioError) before the run; so is a file that cannot be
// opened or a scenario whose workloads cannot be replaced (an `lsm:` store, libra.swap pairs).
void replay_arrivals(Scenario &sc, const std::string &path);

}  // namespace bg::sim
