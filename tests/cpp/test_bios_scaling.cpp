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

#include "bios_workload.hpp"

namespace {

using bg::bench::BiosSetup;
using bg::bench::Rng;

// The fastest of `reps` runs, in microseconds, cycling over the setup's windows.
double fastest_run_us(BiosSetup &s, unsigned reps)
{
    double best = 1e300;
    for (unsigned k = 0; k < reps; k++) {
        const auto t0 = std::chrono::steady_clock::now();
        s.run(k);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    return best;
}

// n tenants, one in `stride` offering I/O every window and the rest idle throughout.
double fastest_us(std::uint32_t n, std::uint32_t stride, std::uint32_t *scheduled)
{
    // A typical I/O's cost, for throttled tenants' counters (the values do not change the work).
    const bg_vec io_cost{{12000u, 8192u, 8192u, 8192u}};
    Rng rng(0xF125 + n * 7919 + stride);
    BiosSetup s;
    EXPECT_EQ(s.set_up(bg::bench::kPrinted, rng, n, io_cost, [stride](Rng &, std::uint32_t i) { return i % stride == 0; }),
              BG_BIOS_OK);
    const double us = fastest_run_us(s, 400);
    *scheduled = s.b.n_sched;
    return us;
}

TEST(BiosScaling, BelowThePapersBoundAndLinearInTheTenants)
{
    std::uint32_t sched256 = 0, sched1024 = 0;
    const double t256 = fastest_us(256, 1, &sched256), t1024 = fastest_us(1024, 1, &sched1024);
    EXPECT_EQ(sched256, 256u);
    EXPECT_EQ(sched1024, 1024u);
    EXPECT_LT(t1024, 100.0) << "1024 tenants: " << t1024 << " us (paper: always below 100 us)";
    // Linear: 4x the tenants, 4x the time; a quadratic pass would take 16x.
    EXPECT_LT(t1024, 8.0 * t256) << "256 tenants " << t256 << " us, 1024 tenants " << t1024 << " us";
}

TEST(BiosScaling, SixtyFourActiveCostTheSameWhateverTheTotal)
{
    std::uint32_t sched64 = 0, sched1024 = 0;
    const double t64 = fastest_us(64, 1, &sched64), t1024 = fastest_us(1024, 16, &sched1024);
    // The idle ones decayed to zero in the warm-up and left the schedule (line 13).
    EXPECT_EQ(sched64, 64u);
    EXPECT_EQ(sched1024, 64u);
    EXPECT_LT(t1024, 5.0) << "64 active of 1024: " << t1024 << " us (paper: less than 5 us)";
    // "No matter how many VMs are there in total": within 2x of 64 tenants alone (the
    // bitmap of 1024 is 16 words to AND; visiting the 960 idle tenants would be ~16x).
    EXPECT_LT(t1024, 2.0 * t64 + 0.5) << "64 alone " << t64 << " us, 64 of 1024 " << t1024 << " us";
}

}  // namespace
