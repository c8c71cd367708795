// RUN_SCHEDULING's workload (fw/src/bios.c, BurstCBS Algorithm 1 lines 1-13), shared by the
// benchmark (bench_bios.cpp, `make bench`) and the test that holds BurstCBS Fig. 25's bounds
// (tests/cpp/test_bios_scaling.cpp): n tenants on one SA thread, kWindows windows of their
// counters drawn in advance, the scheduler warmed up over them. Nothing here is timed.
#pragma once

#include <cstdint>
#include <vector>

#include "burstgate/bios.h"
#include "workload.hpp"

namespace bg::bench {

inline constexpr unsigned kWindows = 16;
inline constexpr unsigned kWarmupWindows = 32;  // idle tenants decay and are dropped

// One 10 ms window of one SA thread: 1 core, 100 Gb/s each way, 3 GB/s software limit.
inline constexpr bg_vec kThreadWindow{{10000000u, 125000000u, 125000000u, 30000000u}};

// Algorithm 1 as printed (§5.2): alpha 1/2, line 10's weight 2, the pool of the two largest
// bases, no floor, no variation.
inline constexpr bg_bios_params kPrinted{kThreadWindow, 0, BG_BIOS_ONE / 2, 2 * BG_BIOS_ONE, 0, 0, 2};
// The project's variations (docs/results.md, "BIOS: Algorithm 1 as printed, and the project's
// variations"): a 5 % pool, a floor of base / 16, the usage clamp and the spill trigger.
inline constexpr bg_bios_params kVariations{kThreadWindow, BG_BIOS_ONE / 20, BG_BIOS_ONE / 2, 2 * BG_BIOS_ONE,
                                            BG_BIOS_ONE / 16, BG_BIOS_OPT_PROJECT, 0};

struct WindowCounters {
    std::vector<bg_bios_usage> u;
    std::uint64_t active[BG_BIOS_BITMAP_WORDS] = {};
};

// Counters of an active tenant for one window: half run steadily below base, a quarter
// burst between base and burst provisioning, a quarter were throttled (1..8 deferrals of
// typical I/Os); one in eight spilled to a lender or the reserved pool.
inline bg_bios_usage draw_usage(Rng &rng, const bg_bios_tenant &t, const bg_vec &io_cost)
{
    bg_bios_usage c{};
    const std::uint32_t kind = rng.below(4);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        const double base = t.res_base.d[d], burst = t.res_burst.d[d];
        const double use = kind < 2 ? base * rng.uniform(0.2, 1.0) : rng.uniform(base, burst);
        c.usage.d[d] = static_cast<std::uint32_t>(use);
    }
    if (kind == 3) {
        c.throttle_n = 1 + rng.below(8);
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            c.throttle.d[d] = c.throttle_n * io_cost.d[d];
    }
    c.spill_n = rng.below(8) == 0 ? 1 + rng.below(4) : 0;
    return c;
}

// n tenants: bases fill 90 % of the thread (the rest is the pool and slack), bursts reach 4x
// base, credit buckets hold 64 windows of base; paid or credit at random.
inline std::vector<bg_bios_tenant> draw_tenants(Rng &rng, std::uint32_t n)
{
    std::vector<bg_bios_tenant> t(n);
    for (std::uint32_t i = 0; i < n; i++) {
        t[i] = bg_bios_tenant{};
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            t[i].res_base.d[d] = static_cast<std::uint32_t>(kThreadWindow.d[d] * 0.9 / n);
            t[i].res_burst.d[d] = t[i].res_base.d[d] * 4;
            t[i].credit_max.d[d] = t[i].res_base.d[d] * 64;
            t[i].credit.d[d] = t[i].res_base.d[d] * rng.below(16);
        }
        t[i].mode = static_cast<std::uint8_t>(rng.below(2) ? BG_BURST_CREDIT : BG_BURST_PAID);
    }
    return t;
}

// A bg_bios over n drawn tenants and kWindows windows of their counters, warmed up over
// kWarmupWindows; `offers(rng, i)` says whether tenant i offers I/O in a window. The arrays
// bg_bios points into live here, so a BiosSetup must not move once set up.
struct BiosSetup {
    std::vector<bg_bios_tenant> t;
    std::vector<std::uint16_t> sched, burst;
    bg_bios b{};
    std::vector<WindowCounters> win;

    BiosSetup() = default;
    BiosSetup(const BiosSetup &) = delete;
    BiosSetup &operator=(const BiosSetup &) = delete;

    // bg_bios_init's result (BG_BIOS_OK or its error).
    template <class Offers>
    int set_up(const bg_bios_params &params, Rng &rng, std::uint32_t n, const bg_vec &io_cost, Offers offers)
    {
        t = draw_tenants(rng, n);
        sched.assign(n, 0);
        burst.assign(n, 0);
        if (const int rc = bg_bios_init(&b, &params, t.data(), sched.data(), burst.data(), n); rc != BG_BIOS_OK)
            return rc;
        win.assign(kWindows, WindowCounters{});
        for (WindowCounters &w : win) {
            w.u.assign(n, bg_bios_usage{});
            for (std::uint32_t i = 0; i < n; i++) {
                if (!offers(rng, i))
                    continue;
                w.u[i] = draw_usage(rng, t[i], io_cost);
                w.active[i >> 6] |= std::uint64_t{1} << (i & 63u);
            }
        }
        for (unsigned k = 0; k < kWarmupWindows; k++)
            run(k);
        return BG_BIOS_OK;
    }

    // One RUN_SCHEDULING over window k's counters (k modulo kWindows).
    void run(unsigned k) { bg_bios_run(&b, win[k % kWindows].u.data(), win[k % kWindows].active); }
};

}  // namespace bg::bench
