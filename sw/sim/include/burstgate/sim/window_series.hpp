// burstgate-sim --csv: the per-window time series, one row per tenant per window -- what the
// tenant completed (IOPS, MB/s, average and maximum latency) and how often it was deferred in
// that window, the grants the firmware committed at its end, and the SA delay the firmware read.
// `burstgate plot` draws it and `burstgate fit-alpha` fits Still Water's alpha to it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

class FirmwareLoop;

class WindowSeries {
public:
    WindowSeries(const Scenario &sc, Scheduler sched);

    static void write_header(std::ostream &os);
    // A deferral decision on an I/O of tenant ti.
    void deferred(std::uint32_t ti) { w_[ti].defer++; }
    // An I/O of tenant ti of `size` bytes completed with latency `lat` ns.
    void completed(std::uint32_t ti, std::uint32_t size, std::uint64_t lat);
    // Window `window` (1, 2, ...) ended at `now` and the firmware has run: one row per tenant,
    // then the counters start over for the next window.
    void write_window(std::ostream &os, std::uint64_t window, std::uint64_t now, const FirmwareLoop &fw);

private:
    struct Counts {
        std::uint64_t done = 0, bytes = 0, lat_sum = 0, lat_max = 0, defer = 0;
    };
    const Scenario &sc_;
    bool hist_read_;
    std::vector<Counts> w_;
};

}  // namespace bg::sim
