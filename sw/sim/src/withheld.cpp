// Withheld and below-base deferrals, per window; see withheld.hpp.
#include "burstgate/sim/withheld.hpp"

#include <algorithm>

#include "burstgate/bios.h"
#include "burstgate/regs.h"

namespace bg::sim {

WithheldTally::WithheldTally(const Scenario &sc)
    : sc_(sc), deferrals_(sc.tenants.size()), admitted_(sc.tenants.size(), 0), admitted_bytes_(sc.tenants.size(), 0),
      withheld_(sc.tenants.size(), 0), below_base_(sc.tenants.size(), 0)
{
}

void WithheldTally::deferred(std::uint32_t ti, std::uint32_t size, bool write)
{
    deferrals_[ti].push_back({io_cost(sc_.dpu, sc_.tenants[ti], size, write), size});
    any_ = true;
}

void WithheldTally::window_end(const bg_hal &hal, const Firmware &fw, bool count)
{
    const std::size_t n = deferrals_.size();
    // Most windows defer nothing: then no register is read (the firmware reads them anyway).
    if (any_ && count) {
        bg_vec total_use{};
        std::vector<bg_vec> use(n);
        for (std::size_t i = 0; i < n; i++)
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                use[i].d[d] = bg_hal_read(&hal, BG_TENANT_USAGE(0) + 4u * (static_cast<std::uint32_t>(i) * BG_COST_DIMS + d));
                total_use.d[d] = sat32(double(total_use.d[d]) + use[i].d[d]);
            }
        const double window_s = static_cast<double>(sc_.window_ns) / 1e9;
        for (std::size_t i = 0; i < n; i++) {
            if (deferrals_[i].empty())
                continue;
            bg_vec cap;
            bg_burst_cap(&fw.t[i], &cap);
            // The count gate's grant of this window (still the one admission used: the firmware
            // writes the next one in bg_fw_window): a deferral at the tenant's burst IOPS is the
            // tenant's own cap, not withheld capacity.
            const std::uint64_t count_grant = bg_hal_read(&hal, BG_TENANT_COUNT_GRANT(static_cast<std::uint32_t>(i)));
            // The base entitlement of one window, in I/Os and in bytes (docs/contracts.md).
            const double base_n = sc_.tenants[i].base.iops * window_s;
            const double base_bytes = sc_.tenants[i].base.mbps * 1e6 * window_s;
            for (const Deferral &wd : deferrals_[i]) {
                const bg_vec &c = wd.cost;
                below_base_[i] += static_cast<double>(admitted_[i] + 1) <= base_n &&
                                  static_cast<double>(admitted_bytes_[i] + wd.size) <= base_bytes;
                bool fits = admitted_[i] + 1 <= count_grant;
                for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                    // What the window's pool held back (bios.reserve_shortfall: at most the shortfall).
                    const std::uint64_t room = fw.fw.cfg.bios.total.d[d] - fw.fw.bios.reserve_now.d[d];
                    fits = fits && std::uint64_t{use[i].d[d]} + c.d[d] <= cap.d[d] &&
                           std::uint64_t{total_use.d[d]} + c.d[d] <= room;
                }
                withheld_[i] += fits;
            }
        }
    }
    if (any_)
        for (auto &v : deferrals_)
            v.clear();
    any_ = false;
    std::fill(admitted_.begin(), admitted_.end(), 0);
    std::fill(admitted_bytes_.begin(), admitted_bytes_.end(), 0);
}

}  // namespace bg::sim
