// burstgate-sim's control plane; see firmware_loop.hpp.
#include "burstgate/sim/firmware_loop.hpp"

#include <utility>

#include "burstgate/regs.h"
#include "burstgate/sim/simulator.hpp"

namespace bg::sim {

FirmwareLoop::FirmwareLoop(const Scenario &sc, Scheduler sched, std::uint64_t seed, Device &dev,
                           std::vector<std::string> &warnings)
    : hal_(dev.hal())
{
    program_device(sc, sched, seed, hal_, dev.params().ingress);
    init_firmware(sc, sched, hal_, fw_, warnings, true);  // Sim::on_meter calls meter()
}

std::uint32_t FirmwareLoop::grant(std::uint32_t ti, unsigned d) const
{
    return bg_hal_read(&hal_, BG_TENANT_GRANT(ti * BG_COST_DIMS + d));
}

// BG_LH_INTERP, as provision.cpp configures the firmware's histogram.
std::uint32_t FirmwareLoop::sa_p95_ns() const { return bg_lh_percentile(&fw_.fw.hist, 950000u, BG_LH_INTERP); }

std::uint64_t FirmwareLoop::sa_samples() const { return bg_lh_total(&fw_.fw.hist); }

void FirmwareLoop::swap_reservations(const std::vector<std::array<std::uint32_t, 2>> &pairs)
{
    if (fw_.libra.empty())
        return;
    for (const auto &p : pairs) {
        std::swap(fw_.libra[p[0]].v_q16, fw_.libra[p[1]].v_q16);
        std::swap(fw_.libra[p[0]].r, fw_.libra[p[1]].r);  // an unprofiled tenant's allocation
    }
    bg_libra_provision(&fw_.fw.libra, fw_.libra.data());
}

void FirmwareLoop::read_final(SimResult &r) const
{
    r.bad_completions = bg_hal_read(&hal_, BG_CTRL_BAD_COMPLETIONS);
    for (unsigned d = 0; d < 4; d++)
        r.final_factor[d] = bg_hal_read(&hal_, BG_COST_FACTOR(d));
    r.burst_factor = burst_factor(fw_);
    r.burst_factor_mean = burst_factor_mean(fw_);
}

}  // namespace bg::sim
