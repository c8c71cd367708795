// Dual-bucket admission per I/O (bg::DualBucket::admit, seed 002 §4.2): the segment
// monitor's read-modify-write, then the main bucket, then the cheque for steady segments.
//
// One iteration = one interval of kIosPerInterval I/Os; the interval tick (refill and the
// firmware's delta_p update from an SA-delay histogram) runs outside the timing. Segments:
// a fifth of the I/Os go to 16 hot segments (about 200 I/Os each per interval, above
// R = 64), the rest spread over 4096 steady ones. The main bucket issues 85 % of the offered
// cost per interval, so each interval ends on the cheque (steady segments) and deferrals
// (hot segments, or the cheque spent).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/latency_hist.h"
#include "burstgate/model/dual_bucket.hpp"
#include "workload.hpp"

namespace {

using bg::bench::Rng;

constexpr std::uint32_t kIosPerInterval = 16384;
constexpr unsigned kIntervals = 8;
constexpr unsigned kHotSegments = 16;
constexpr unsigned kSteadySegments = 4096;

struct Io {
    std::uint16_t segment;
    bg_vec cost;
};

void BM_DualBucketAdmit(benchmark::State &state)
{
    const std::vector<bg_vec> types = bg::bench::io_type_costs();
    const bg_vec mean = bg::bench::mean_cost(types);

    bg::DualBucket::Config cfg;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        cfg.fw.main_size.d[d] = static_cast<std::uint32_t>(0.85 * kIosPerInterval * mean.d[d]);
    cfg.fw.cheque_share_q16 = 13107;  // 0.2 (seed 002 §4.2)
    cfg.fw.alpha = 8000;              // the paper's production alpha
    cfg.fw.pct_ppm = 950000;
    cfg.fw.headroom_mbps = 330;
    cfg.fw.mu_mbps = 2130;            // Figure 6
    cfg.fw.interval_us = 10000;
    cfg.fw.min_samples = 1;
    cfg.fw.hist_mode = BG_LH_INTERP;
    cfg.hot_threshold = 64;
    cfg.steady_intervals = 5;
    bg::DualBucket db(cfg);

    Rng rng(0xDB);
    std::vector<std::vector<Io>> win(kIntervals);
    for (std::vector<Io> &w : win) {
        w.resize(kIosPerInterval);
        for (Io &io : w) {
            const bool hot = rng.below(5) == 0;
            io.segment = static_cast<std::uint16_t>(hot ? rng.below(kHotSegments)
                                                        : kHotSegments + rng.below(kSteadySegments));
            io.cost = types[rng.below(static_cast<std::uint32_t>(types.size()))];
        }
    }
    // SA delays of 2..20 us: w_p near 20 us gives delta_p well above the 20 % cheque share of
    // mu, so every refill restores the cheque to its full size.
    bg_lhist hist;
    bg_lh_clear(&hist);
    for (unsigned k = 0; k < 2000; k++)
        bg_lh_record(&hist, 2000 + rng.below(18000));

    unsigned k = 0;
    for (auto _ : state) {
        for (const Io &io : win[k]) {
            bg::DbDecision d = db.admit(io.segment, io.cost);
            benchmark::DoNotOptimize(d);
        }
        state.PauseTiming();  // once per interval of 16k I/Os
        db.tick(hist);
        k = k + 1 == kIntervals ? 0 : k + 1;
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * kIosPerInterval);
    const bg::DbCounters &c = db.totals();
    const auto all = static_cast<double>(c.main + c.cheque + c.deferred);
    state.counters["main"] = static_cast<double>(c.main) / all;
    state.counters["cheque"] = static_cast<double>(c.cheque) / all;
    state.counters["deferred"] = static_cast<double>(c.deferred) / all;
}

BENCHMARK(BM_DualBucketAdmit);

}  // namespace
