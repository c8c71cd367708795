// The grant carry's knee term (provision.hpp kCarryIos) and its cap (kCarryCapacitySeconds):
// a knee-exact tenant's carry holds kCarryIos I/Os at its knee, and a large knee's never more
// than 5 ms of the device's capacity -- what one tenant's saved carry, spent at once, queues
// ahead of its neighbours (docs/contracts.md, "What the deeper carry costs").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/scenario.hpp"

namespace {

using namespace bg::sim;

Scenario one_tenant(const std::string &base)
{
    return parse_scenario("duration_ms: 10\nwindow_us: 1000\ndpu:\n  threads: 2\n  swlimit_mbps: 3000\n"
                          "  cpu_ns:\n    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}\n"
                          "tenants:\n  - name: t\n    base: {" + base + "}\n"
                          "    workload: {mode: closed, iodepth: 1, sizes: {4k: 1}}\n",
                          "s.yaml");
}

TEST(CarryCap, AKneeTenantCarriesItsIosAndALargeKneeAtMostFiveMsOfTheDevice)
{
    // 5000 IOPS at a 55.7 kB knee: 128 I/Os of its base cost, 7.1 MB of limiter bytes, below the cap.
    const Scenario knee = one_tenant("iops: 5000, mbps: 278.5");
    const bg_vec kb = contract_vector(knee.dpu, knee.tenants[0], knee.tenants[0].base, knee.window_ns);
    const bg_vec kc = carry_vector(knee.dpu, knee.tenants[0], kb, knee.window_ns);
    const double per_io = kb.d[BG_DIM_SWLIMIT] / (5000 * 1e-3);
    EXPECT_GE(kc.d[BG_DIM_SWLIMIT], 0.999 * kCarryIos * per_io);
    // 100 IOPS at a 1 MB knee: 128 I/Os would be 128 MB, 43 ms of the 3 GB/s limiter.
    const Scenario big = one_tenant("iops: 100, mbps: 100");
    const bg_vec bb = contract_vector(big.dpu, big.tenants[0], big.tenants[0].base, big.window_ns);
    const bg_vec bc = carry_vector(big.dpu, big.tenants[0], bb, big.window_ns);
    const double cap = 3000e6 * 0.005;  // docs/contracts.md: 5 ms of the device
    EXPECT_LE(bc.d[BG_DIM_SWLIMIT], cap + 1) << "large knee's carry above 5 ms of the limiter";
    EXPECT_GE(bc.d[BG_DIM_SWLIMIT], std::min(cap, kCarryIos * bb.d[BG_DIM_SWLIMIT] / (100 * 1e-3)) - 1);
}

}  // namespace
