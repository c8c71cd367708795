// BurstCBS Fig. 25 (§6.6), held: RUN_SCHEDULING's time "increases linearly with the number of
// VMs and is always below 100 µs" up to 1024 tenants, and with 64 active of any total "less
// than 5 µs", idle tenants having left the schedule. Algorithm 1 as printed (no floor: an
// idle tenant's allocation decays to zero and it is dropped, line 13), on the benchmark's own
// workload (sw/bench/bios_workload.hpp). `make bench` measures the same runs precisely; here
// each figure is the fastest of many runs, which a loaded machine delays but does not speed
// up, and the bounds are the paper's (about 10x above this firmware's time on a desktop
// core), so what fails is the shape: a scan per tenant of the burst or schedule list
// (quadratic), or idle tenants still visited every window.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "bios_workload.hpp"

namespace {

using bg::bench::BiosSetup;
using bg::bench::Rng;

// The fastest of `reps` runs, in microseconds, cycling over the setup's windows.
double fastest_run_us(BiosSetup &s, unsigned reps, unsigned first = 0)
{
    double best = 1e300;
    for (unsigned k = first; k < first + reps; k++) {
        const auto t0 = std::chrono::steady_clock::now();
        s.run(k);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    return best;
}

// n tenants, one in `stride` offering I/O every window and the rest idle throughout, under
// Algorithm 1 as printed plus `options`.
struct Case {
    Case(std::uint32_t n, std::uint32_t stride, std::uint32_t options = 0)
    {
        // A typical I/O's cost, for throttled tenants' counters (the values do not change the work).
        const bg_vec io_cost{{12000u, 8192u, 8192u, 8192u}};
        Rng rng(0xF125 + n * 7919 + stride);
        bg_bios_params p = bg::bench::kPrinted;
        p.options = options;
        EXPECT_EQ(s.set_up(p, rng, n, io_cost, [stride](Rng &, std::uint32_t i) { return i % stride == 0; }),
                  BG_BIOS_OK);
    }
    BiosSetup s;
    double best = 1e300;
};

// The two cases' fastest runs, measured in alternating rounds a few milliseconds apart: on a
// shared host one case measured alone can meet a neighbour thrashing the cache throughout
// (1024 tenants once took 24.5 us under ctest -j2 beside other builds, 2.8x its quiet figure),
// while both meet the same host when interleaved, and one quiet slice of a round suffices.
void race(Case &a, Case &b)
{
    for (unsigned round = 0; round < 8; round++) {
        a.best = std::min(a.best, fastest_run_us(a.s, 50, round * 50));
        b.best = std::min(b.best, fastest_run_us(b.s, 50, round * 50));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

TEST(BiosScaling, BelowThePapersBoundAndLinearInTheTenants)
{
    Case c256(256, 1), c1024(1024, 1);
    race(c256, c1024);
    const double t256 = c256.best, t1024 = c1024.best;
    EXPECT_EQ(c256.s.b.n_sched, 256u);
    EXPECT_EQ(c1024.s.b.n_sched, 1024u);
    EXPECT_LT(t1024, 100.0) << "1024 tenants: " << t1024 << " us (paper: always below 100 us)";
    // Linear: 4x the tenants, 4x the time; a quadratic pass would take 16x.
    EXPECT_LT(t1024, 8.0 * t256) << "256 tenants " << t256 << " us, 1024 tenants " << t1024 << " us";
}

TEST(BiosScaling, SixtyFourActiveCostTheSameWhateverTheTotal)
{
    Case c64(64, 1), c1024(1024, 16);
    race(c64, c1024);
    const double t64 = c64.best, t1024 = c1024.best;
    // The idle ones decayed to zero in the warm-up and left the schedule (line 13).
    EXPECT_EQ(c64.s.b.n_sched, 64u);
    EXPECT_EQ(c1024.s.b.n_sched, 64u);
    EXPECT_LT(t1024, 5.0) << "64 active of 1024: " << t1024 << " us (paper: less than 5 us)";
    // "No matter how many VMs are there in total": within 2x of 64 tenants alone (the
    // bitmap of 1024 is 16 words to AND; visiting the 960 idle tenants would be ~16x).
    EXPECT_LT(t1024, 2.0 * t64 + 0.5) << "64 alone " << t64 << " us, 64 of 1024 " << t1024 << " us";
}

TEST(BiosScaling, ShareRefillIsAFewPassesMore)
{
    // The variation's rounds (bios.h, "Line 11's leftover") are vector passes over the schedule
    // list, at most BG_BIOS_REFILL_ROUNDS, and a dimension takes another only while a round
    // brought a tenant to its cap. Measured on the project's host: 26-32 us at 1024 tenants
    // where the printed algorithm takes 11-12. Rounds repeated until the rounding's last units
    // were placed took 133-146 us (a review's measurement, host load 5); scalar rounds 53-69.
    Case printed(1024, 1), refill(1024, 1, BG_BIOS_OPT_SHARE_REFILL | BG_BIOS_OPT_RESERVE_SHORTFALL);
    race(printed, refill);
    EXPECT_LT(refill.best, 100.0) << "1024 tenants with share_refill: " << refill.best << " us";
    EXPECT_LT(refill.best, 4.0 * printed.best + 2.0)
        << "printed " << printed.best << " us, with share_refill " << refill.best << " us";
}

}  // namespace
