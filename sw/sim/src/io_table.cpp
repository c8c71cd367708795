// burstgate-sim's I/O records; see io_table.hpp.
#include "burstgate/sim/io_table.hpp"

#include <string>

#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

std::uint32_t IoTable::alloc(std::uint64_t now, std::uint32_t ti)
{
    std::uint32_t id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        // Memory is bounded for any scenario that loads: an open loop or a trace offered far
        // above what the SA serves would otherwise grow its backlog until the machine runs out
        // (rate_iops: 1e9 reached 3.5 GB in 21 s). The limit is documented in docs/simulator.md.
        if (ios_.size() >= kMaxLiveIos) {
            const Tenant &t = sc_.tenants[ti];
            throw ScenarioError(sc_.file + ":" + std::to_string(t.line) + ": tenants[" + std::to_string(ti) + "] (" +
                                t.name + "): more than " + std::to_string(kMaxLiveIos) +
                                " I/Os waiting or in flight at once at " + std::to_string(now / 1'000'000) +
                                " ms: the offered load is far above what the SA serves; lower rate_iops (or the "
                                "trace's time_scale) or shorten the run");
        }
        id = static_cast<std::uint32_t>(ios_.size());
        ios_.emplace_back();
    }
    Io &io = ios_[id];
    io = Io{};
    io.arrival = now;
    io.tenant = static_cast<std::uint16_t>(ti);
    return id;
}

}  // namespace bg::sim
