// burstgate-sim's per-window CSV; see window_series.hpp.
#include "burstgate/sim/window_series.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "burstgate/sim/firmware_loop.hpp"

namespace bg::sim {

WindowSeries::WindowSeries(const Scenario &sc, Scheduler sched)
    // The firmware reads the SA-delay histogram only for dualbucket and the cost adjustment;
    // the column is blank otherwise.
    : sc_(sc), hist_read_(sched == Scheduler::kDualBucket || sc.dpu.cost_adjust != CostAdjust::kOff), w_(sc.tenants.size())
{
}

void WindowSeries::write_header(std::ostream &os)
{
    os << "window,t_ms,tenant,iops,mbps,alloc_cpu_ns,alloc_ingress_B,alloc_egress_B,alloc_swlimit_B,"
          "deferrals,lat_avg_us,lat_max_us,sa_p95_us,sa_n\n";
}

void WindowSeries::completed(std::uint32_t ti, std::uint32_t size, std::uint64_t lat)
{
    Counts &c = w_[ti];
    c.done++;
    c.bytes += size;
    c.lat_sum += lat;
    c.lat_max = std::max(c.lat_max, lat);
}

void WindowSeries::write_window(std::ostream &os, std::uint64_t window, std::uint64_t now, const FirmwareLoop &fw)
{
    char line[512];
    const double w_s = static_cast<double>(sc_.window_ns) / 1e9;
    // The SA delay the firmware read at this tick (the datapath's all-tenant histogram of the
    // window just ended), at P95 as the dual-bucket estimate reads it: what fitting Still
    // Water's alpha to Eq. (1) needs (burstgate fit-alpha). Blank for a window without
    // completions.
    char sa[48] = ",";
    if (hist_read_) {
        const std::uint64_t n = fw.sa_samples();
        if (n)
            std::snprintf(sa, sizeof sa, "%.3f,%llu", static_cast<double>(fw.sa_p95_ns()) / 1e3,
                          static_cast<unsigned long long>(n));
        else
            std::snprintf(sa, sizeof sa, ",0");
    }
    for (std::size_t i = 0; i < w_.size(); i++) {
        Counts &c = w_[i];
        std::uint32_t g[4];
        for (unsigned d = 0; d < 4; d++)
            g[d] = fw.grant(static_cast<std::uint32_t>(i), d);
        std::snprintf(line, sizeof line, "%llu,%.3f,%s,%.0f,%.3f,%u,%u,%u,%u,%llu,%.3f,%.3f,%s\n",
                      static_cast<unsigned long long>(window), static_cast<double>(now) / 1e6,
                      sc_.tenants[i].name.c_str(), static_cast<double>(c.done) / w_s,
                      static_cast<double>(c.bytes) / w_s / 1e6, g[0], g[1], g[2], g[3],
                      static_cast<unsigned long long>(c.defer),
                      c.done ? static_cast<double>(c.lat_sum) / static_cast<double>(c.done) / 1e3 : 0.0,
                      static_cast<double>(c.lat_max) / 1e3, sa);
        os << line;
        c = Counts{};
    }
}

}  // namespace bg::sim
