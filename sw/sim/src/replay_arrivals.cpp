// burstgate-sim --arrivals; see replay_arrivals.hpp.
#include "burstgate/sim/replay_arrivals.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "burstgate/trace/trace.hpp"

namespace bg::sim {

void replay_arrivals(Scenario &sc, const std::string &path)
{
    if (!std::ifstream(path))
        throw ScenarioError("--arrivals: cannot open '" + path + "': " + std::strerror(errno));
    if (sc.lsm)
        throw ScenarioError("--arrivals: " + sc.file + " has an lsm: store, whose I/O is not a recorded workload");
    if (!sc.libra.swap_pairs.empty())
        throw ScenarioError("--arrivals: " + sc.file + " swaps workloads (libra.swap), which a replay cannot");
    try {
        bg::trace::TraceReader rd(path, bg::trace::Format::kIologV3);
        bg::trace::Record r;
        while (rd.next(r)) {
        }
    } catch (const bg::trace::TraceError &e) {
        throw ScenarioError(e.what());
    }
    for (Tenant &t : sc.tenants) {
        Workload &w = t.wl;
        w.trace = true;
        w.closed = false;
        w.tr = TraceSpec{};
        w.tr.file = path;
        w.tr.format = bg::trace::Format::kIologV3;
        w.tr.device = t.name;
        w.start_ns = 0;
        w.stop_ns = sc.duration_ns;
        w.hot_segments = 0;
        w.hot_share = 0;
    }
}

}  // namespace bg::sim
