// Dual-bucket admission per I/O (the agent with CTRL.SCHEDULER = dual-bucket, Still Water §4.2):
// the segment monitor's read-modify-write, then the main bucket, then the cheque for steady
// segments, then the load balancer and buffer pool; admitted I/Os complete at once.
//
// One iteration = one interval of kIosPerInterval I/Os; the interval tick (refill and the
// firmware's delta_p update from the window's SA-delay histogram) runs outside the timing. Segments:
// a fifth of the I/Os go to 16 hot segments (about 200 I/Os each per interval, above
// R = 64), the rest spread over 4096 steady ones. The main bucket issues 85 % of the offered
// cost per interval, so each interval ends on the cheque (steady segments) and deferrals
// (hot segments, or the cheque spent).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/model/agent.hpp"
#include "burstgate/window.h"
#include "workload.hpp"

namespace {

using bg::bench::Rng;

constexpr std::uint32_t kIosPerInterval = 16384;
constexpr unsigned kIntervals = 8;
constexpr unsigned kHotSegments = 16;
constexpr unsigned kSteadySegments = 4096;

void BM_DualBucketAdmit(benchmark::State &state)
{
    const std::vector<bg_vec> types = bg::bench::io_type_costs();
    const bg_vec mean = bg::bench::mean_cost(types);

    bg::Agent agent(bg::AgentParams{1, 1, 1, 16});
    bg_hal hal = agent.hal();
    agent.write(BG_LB_DEPTH, BG_LB_DEPTH_MASK);
    agent.write(BG_SEGMON_HOT_THRESHOLD, 64);
    agent.write(BG_SEGMON_STEADY_WINDOWS, 5);
    bg_fw_config cfg{};
    cfg.scheduler = BG_SCHED_DUALBUCKET;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        cfg.db.main_size.d[d] = static_cast<std::uint32_t>(0.85 * kIosPerInterval * mean.d[d]);
    cfg.db.cheque_share_q16 = 13107;  // 0.2 (Still Water §4.2)
    cfg.db.alpha = 8000;              // the paper's production alpha
    cfg.db.pct_ppm = 950000;
    cfg.db.headroom_mbps = 330;
    cfg.db.mu_mbps = 2130;            // Figure 6
    cfg.db.interval_us = 10000;
    cfg.db.min_samples = 1;
    cfg.db.hist_mode = BG_LH_INTERP;
    cfg.bios.total = cfg.db.main_size;
    bg_bios_tenant tenant{};
    bg_bios_usage usage{};
    std::uint16_t sched = 0, burst = 0;
    bg_fw fw{};
    if (bg_fw_init(&fw, &cfg, &tenant, &usage, &sched, &burst, 1, &hal) != BG_FW_OK) {
        state.SkipWithError("firmware configuration rejected");
        return;
    }

    Rng rng(0xDB);
    struct Io {
        bg::IoDesc desc;
        bg_vec cost;
        std::uint32_t delay;
    };
    std::vector<std::vector<Io>> win(kIntervals);
    for (std::vector<Io> &w : win) {
        w.resize(kIosPerInterval);
        for (Io &io : w) {
            const bool hot = rng.below(5) == 0;
            io.desc.segment = static_cast<std::uint16_t>(hot ? rng.below(kHotSegments)
                                                             : kHotSegments + rng.below(kSteadySegments));
            io.cost = types[rng.below(static_cast<std::uint32_t>(types.size()))];
            // SA delays of 2..20 us: w_p near 20 us gives delta_p well above the 20 % cheque
            // share of mu, so every refill restores the cheque to its full size.
            io.delay = 2000 + rng.below(18000);
        }
    }

    unsigned k = 0;
    std::uint64_t n[8] = {};
    for (auto _ : state) {
        for (const Io &io : win[k]) {
            const bg::IoDecision d = agent.io_costed(io.desc, io.cost);
            n[d.source & 7u]++;
            if (d.admitted())
                agent.complete(bg::IoCompletion{0, 0, 0, d.egress, io.cost.d[BG_DIM_CPU], io.delay});
            benchmark::DoNotOptimize(d);
        }
        state.PauseTiming();  // once per interval of 16k I/Os
        bg_fw_window(&fw, &hal);
        k = k + 1 == kIntervals ? 0 : k + 1;
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * kIosPerInterval);
    const double all = static_cast<double>(n[BG_SRC_OWN] + n[BG_SRC_RESERVED] + n[BG_SRC_DEFER]);
    state.counters["main"] = static_cast<double>(n[BG_SRC_OWN]) / all;
    state.counters["cheque"] = static_cast<double>(n[BG_SRC_RESERVED]) / all;
    state.counters["deferred"] = static_cast<double>(n[BG_SRC_DEFER]) / all;
}

BENCHMARK(BM_DualBucketAdmit);

}  // namespace
