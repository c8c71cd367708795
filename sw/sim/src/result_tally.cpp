// burstgate-sim's report counters; see result_tally.hpp.
#include "burstgate/sim/result_tally.hpp"

#include <memory>

#include "burstgate/sim/io_table.hpp"

namespace bg::sim {

ResultTally::ResultTally(const Scenario &sc, const std::string &engine, Scheduler sched, std::uint64_t seed)
    : warmup_ns_(sc.warmup_ns), withheld_(sc)
{
    res_.scenario = sc.name;
    res_.file = sc.file;
    res_.engine = engine;
    res_.scheduler = scheduler_name(sched);
    res_.seed = seed;
    res_.duration_ns = sc.duration_ns;
    res_.warmup_ns = sc.warmup_ns;
    res_.window_ns = sc.window_ns;
    for (const Tenant &t : sc.tenants) {
        res_.tenants.emplace_back();
        res_.tenants.back().name = t.name;
        if (t.wl.hot_segments > 0) {
            res_.tenants.back().lat_hot = std::make_unique<LatencyHist>();
            res_.tenants.back().lat_steady = std::make_unique<LatencyHist>();
        }
    }
    res_.thread_completed.assign(sc.dpu.threads, 0);
}

void ResultTally::decided(const Io &io, const IoDecision &dec, std::uint64_t now)
{
    TenantResult &tr = res_.tenants[io.tenant];
    if (dec.hot && !io.hot && tr.lat_hot && measured(now)) {
        tr.steady_as_hot++;
        if (!io.deferred)
            tr.steady_new_as_hot++;
    }
    // The monitor's recall: a hot segment whose requests stay at or below R looks steady.
    if (io.hot && !io.deferred && tr.lat_hot && measured(now)) {
        tr.hot_new++;
        tr.hot_new_as_hot += dec.hot;
    }
    if (!dec.admitted()) {
        withheld_.deferred(io.tenant, io.size, io.write);
        if (measured(now)) {
            tr.throttled++;
            if (!io.deferred)
                tr.deferred_ios++;
        }
        return;
    }
    withheld_.admitted(io.tenant, io.size);
    if (measured(now)) {
        tr.admitted_by[dec.source & 3]++;
        tr.buffer_borrows += dec.prefill;
    }
}

void ResultTally::completed(const Io &io, std::uint64_t now)
{
    const std::uint64_t lat = now - io.arrival;
    TenantResult &tr = res_.tenants[io.tenant];
    tr.finished++;
    res_.finished++;
    if (measured(now)) {
        tr.completed++;
        tr.bytes += io.size;
        res_.thread_completed[io.egress]++;
        if (measured(io.arrival)) {
            tr.lat.record(lat);
            if (tr.lat_hot)
                (io.hot ? tr.lat_hot : tr.lat_steady)->record(lat);
        }
    }
}

void ResultTally::finish()
{
    const double period = period_s();
    for (std::uint32_t i = 0; i < res_.tenants.size(); i++) {
        TenantResult &t = res_.tenants[i];
        t.iops = static_cast<double>(t.completed) / period;
        t.mbps = static_cast<double>(t.bytes) / period / 1e6;
        t.deferred_withheld = withheld_.withheld(i);
        t.deferred_below_base = withheld_.below_base(i);
    }
}

}  // namespace bg::sim
