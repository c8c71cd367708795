// burstgate-sim's report counters (SimResult, simulator.hpp) as a run produces them: the
// decisions, deferrals and completions of the measured period (from warmup on) and the whole
// run's I/O counts. Kept apart from the parts whose events they count, so what the report
// means is read in one place; report.cpp turns the result into JSON.
#pragma once

#include <cstdint>
#include <string>

#include "burstgate/host/device.hpp"
#include "burstgate/sim/scenario.hpp"
#include "burstgate/sim/simulator.hpp"
#include "burstgate/sim/withheld.hpp"

namespace bg::sim {

struct Io;

class ResultTally {
public:
    // The report's header (scenario, engine, scheduler, seed, times) and one entry per tenant,
    // with the hot/steady latency split when the tenant's workload has hot segments.
    ResultTally(const Scenario &sc, const std::string &engine, Scheduler sched, std::uint64_t seed);

    // The measured period: [warmup, duration].
    bool measured(std::uint64_t t) const { return t >= warmup_ns_; }
    SimResult &result() { return res_; }
    std::vector<std::string> &warnings() { return res_.warnings; }

    // A new I/O of tenant ti.
    void generated(std::uint32_t ti)
    {
        res_.tenants[ti].generated++;
        res_.generated++;
    }
    // The device's decision on `io` at `now`, before the caller marks it deferred (io.deferred
    // still says whether this is a re-offer).
    void decided(const Io &io, const IoDecision &dec, std::uint64_t now);
    // The window's end at `now`, before the firmware's COMMIT: its deferrals judged withheld or
    // below base (withheld.hpp, the gateway's own count), in the measured period.
    void window_end(const bg_hal &hal, const Firmware &fw, std::uint64_t now)
    {
        withheld_.window_end(hal, fw, measured(now));
    }
    // `io` completed at `now` (its latency runs from its first arrival).
    void completed(const Io &io, std::uint64_t now);
    // The measured period in seconds.
    double period_s() const { return static_cast<double>(res_.duration_ns - res_.warmup_ns) / 1e9; }
    // Throughput over the measured period, once the run has ended.
    void finish();

private:
    SimResult res_;
    std::uint64_t warmup_ns_;
    WithheldTally withheld_;
};

}  // namespace bg::sim
