// Firmware half of BIOS (fw/src/bios.c): RUN_SCHEDULING lines 1-13, idle-tenant dropping,
// credits and the baselines' per-window parts. Its running time is measured by
// sw/bench/bench_bios.cpp (`make bench`), not here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "burstgate/bios.h"

namespace {

bg_vec splat(std::uint32_t x) { return bg_vec{{x, x, x, x}}; }

// A scheduler over caller-owned arrays, as the model or an embedded core would hold them.
struct Bench {
    std::vector<bg_bios_tenant> t;
    std::vector<bg_bios_usage> u;
    std::vector<std::uint16_t> sched, burst;
    std::uint64_t active[BG_BIOS_BITMAP_WORDS] = {};
    bg_bios b{};
    bg_bios_params p{};

    Bench(std::uint32_t n, bg_vec total, bg_vec base, bg_vec burst_prov)
        : t(n), u(n), sched(n), burst(n)
    {
        p.total = total;
        p.reserved_q16 = 0;
        p.alpha_q16 = BG_BIOS_ONE / 2;
        p.weight_throttle_q16 = 2 * BG_BIOS_ONE;
        // Algorithm 1 as printed (floor 0, no option); reserve_tenants 0 with reserved_q16 0
        // leaves no pool, so the arithmetic below is the algorithm's alone.
        p.floor_q16 = 0;
        p.options = 0;
        p.reserve_tenants = 0;
        for (auto &x : t) {
            x = bg_bios_tenant{};
            x.res_base = base;
            x.res_burst = burst_prov;
        }
    }
    int init() { return bg_bios_init(&b, &p, t.data(), sched.data(), burst.data(), static_cast<std::uint32_t>(t.size())); }
    void use(std::uint32_t i, bg_vec usage, std::uint32_t thr_n = 0, bg_vec thr = {}, std::uint32_t spill = 0)
    {
        u[i] = bg_bios_usage{usage, thr, thr_n, spill};
        active[i >> 6] |= std::uint64_t{1} << (i & 63u);
    }
    void run()
    {
        bg_bios_run(&b, u.data(), active);
        for (auto &x : u)
            x = bg_bios_usage{};
        for (auto &w : active)
            w = 0;
    }
    // Every tenant's grant plus the reserved pool, per dimension.
    std::uint64_t granted(unsigned d) const
    {
        std::uint64_t s = b.reserved.d[d];
        for (const auto &x : t)
            s += x.alloc.d[d];
        return s;
    }
};

TEST(BiosInit, RejectsBadConfigurations)
{
    Bench ok(3, splat(3000), splat(1000), splat(3000));
    EXPECT_EQ(ok.init(), BG_BIOS_OK);
    EXPECT_EQ(ok.b.n_sched, 3u);
    EXPECT_EQ(ok.b.reserved.d[0], 0u);  // total - sum(base)

    Bench over(3, splat(3000), splat(1000), splat(3000));
    over.p.reserved_q16 = BG_BIOS_ONE / 20;  // 150 reserved leaves 2850 < 3000 of base
    EXPECT_EQ(over.init(), BG_BIOS_E_OVERSUB);
    EXPECT_EQ(over.b.err_dim, 0);

    Bench low(2, splat(3000), splat(1000), splat(999));
    EXPECT_EQ(low.init(), BG_BIOS_E_BURST);
    EXPECT_EQ(low.b.err_tenant, 0);

    Bench ratio(2, splat(3000), splat(1000), splat(3000));
    ratio.p.alpha_q16 = BG_BIOS_ONE + 1;
    EXPECT_EQ(ratio.init(), BG_BIOS_E_RATIO);

    Bench none(1, splat(3000), splat(1000), splat(3000));
    EXPECT_EQ(bg_bios_init(&none.b, &none.p, none.t.data(), none.sched.data(), none.burst.data(), 0), BG_BIOS_E_COUNT);
    Bench opt(2, splat(3000), splat(1000), splat(3000));
    opt.p.options = BG_BIOS_OPT_ALL + 1;  // the first bit no option has
    EXPECT_EQ(opt.init(), BG_BIOS_E_OPTION);
    Bench many(2, splat(3000), splat(1000), splat(3000));
    many.p.reserve_tenants = BG_BIOS_RESERVE_TENANTS_MAX + 1;
    EXPECT_EQ(many.init(), BG_BIOS_E_OPTION);
}

// §5.2: the pool holds "just enough for two tenants to resume base-level provisioning": the
// two largest bases per dimension, or what the bases leave when that is less. Catches a pool
// sized from the wrong tenants (first two, smallest), summed over more than two, or one that
// makes a provisioning that fits look oversubscribed.
TEST(BiosInit, ReservedPoolIsTwoLargestBasesPerDimension)
{
    Bench s(4, bg_vec{{20000, 20000, 20000, 20000}}, {}, {});
    const std::uint32_t bases[4][BG_COST_DIMS] = {{1000, 4000, 10, 0}, {3000, 100, 20, 0}, {2000, 200, 30, 0},
                                                  {500, 300, 40, 0}};
    for (int i = 0; i < 4; i++)
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            s.t[i].res_base.d[d] = s.t[i].res_burst.d[d] = bases[i][d];
    s.p.reserve_tenants = 2;
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    EXPECT_EQ(s.b.reserve.d[0], 5000u);  // 3000 + 2000
    EXPECT_EQ(s.b.reserve.d[1], 4300u);  // 4000 + 300
    EXPECT_EQ(s.b.reserve.d[2], 70u);    // 40 + 30
    EXPECT_EQ(s.b.reserve.d[3], 0u);
    // Bases leaving 20000 - 19500 = 500 of dimension 0: the pool is those 500, no error.
    Bench tight(2, bg_vec{{20000, 20000, 20000, 20000}}, splat(9750), splat(9750));
    tight.p.reserve_tenants = 2;
    ASSERT_EQ(tight.init(), BG_BIOS_OK);
    EXPECT_EQ(tight.b.reserve.d[0], 500u);
    // Every window the pool is at least the reserve: line 2's unused never reaches it.
    for (int w = 0; w < 4; w++) {
        s.use(0, splat(100000), 9, splat(100000));
        s.run();
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            EXPECT_GE(s.b.reserved.d[d], s.b.reserve.d[d]);
    }
}

// Lines 9-11 for the five tenants of the first-round tests: each gets its first-round allocation
// plus its demand's share of `unused` (demands sum to 9100), at most one unit above the exact
// share and never above its 4000 burst.
void expect_second_round(const Bench &s, const std::uint32_t (&first)[5], const std::uint32_t (&dem)[5],
                         std::uint32_t unused)
{
    for (int i = 0; i < 5; i++) {
        const std::uint64_t exact = std::uint64_t{dem[i]} * unused / 9100;
        const std::uint64_t want = std::min<std::uint64_t>(first[i] + exact, 4000);
        EXPECT_GE(s.t[i].alloc.d[0], want) << i;
        EXPECT_LE(s.t[i].alloc.d[0], std::min<std::uint64_t>(want + 1, 4000)) << i;
    }
}

// Lines 4-7 as printed: burst and throttled tenants get base; everyone else, the spilled and
// the busy ones included, gets alloc_hist * alpha. Catches the usage clamp or the spill test
// leaking into the default, and line 8 not subtracting the base path's allocations.
TEST(BiosSchedule, FirstRoundPathsAsPrinted)
{
    Bench s(5, splat(100000), splat(1000), splat(4000));
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    s.use(0, splat(1000), 3, splat(3000));  // deferred 3 I/Os: line 4
    s.use(1, splat(1000), 0, {}, 2);        // spilled, nothing deferred: line 7
    s.use(2, splat(300));
    s.use(3, splat(800));                   // line 7 takes no notice of usage
    s.run();
    const std::uint32_t unused = 100000 - (1000 + 4 * 500);
    const std::uint32_t first[5] = {1000, 500, 500, 500, 500};
    const std::uint32_t dem[5] = {7000, 1000, 300, 800, 0};
    expect_second_round(s, first, dem, unused);
    EXPECT_EQ(s.t[4].alloc.d[0], 500u);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(s.granted(d), 100000u);
}

// The project's variations (options: spill takes line 4, line 7 clamps at usage; a floor):
// burst/throttled/spilled tenants get base; the rest decay with a usage floor.
TEST(BiosSchedule, FirstRoundPathsWithTheVariations)
{
    Bench s(5, splat(100000), splat(1000), splat(4000));
    s.p.options = BG_BIOS_OPT_USAGE_CLAMP | BG_BIOS_OPT_SPILL_BASE;
    s.p.floor_q16 = BG_BIOS_ONE / 16;
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    s.use(0, splat(1000), 3, splat(3000));  // deferred 3 I/Os
    s.use(1, splat(1000), 0, {}, 2);        // spilled
    s.use(2, splat(300));                   // below base, inside its allocation
    s.use(3, splat(800));
    // tenant 4 idle
    s.run();
    // Demands: 1000 + 2 * 3000 = 7000, 1000, 300, 800, 0 (sum 9100). Unused after the first
    // round: 100000 - (1000 + 1000 + 500 + 800 + 500) = 96200.
    const std::uint32_t unused = 96200;
    const std::uint32_t first[5] = {1000, 1000, 500, 800, 500};
    const std::uint32_t dem[5] = {7000, 1000, 300, 800, 0};
    expect_second_round(s, first, dem, unused);
    EXPECT_EQ(s.t[4].alloc.d[0], 500u);  // idle: halves, no share
    EXPECT_EQ(s.t[4].status, BG_BIOS_NORMAL);
    EXPECT_EQ(s.t[0].status, BG_BIOS_BURST);
    EXPECT_EQ(s.t[0].lend.d[0], s.t[0].alloc.d[0] - 1000u);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(s.granted(d), 100000u);
}

TEST(BiosSchedule, SoleDemanderGetsExactlyTheUnusedVector)
{
    Bench s(3, splat(3000), splat(1000), splat(3000));
    s.p.floor_q16 = 0;
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    for (int w = 0; w < 12; w++) {  // tenants 0 and 2 idle down to a zero floor
        s.use(1, splat(1000), 5, splat(5000));
        s.run();
    }
    EXPECT_EQ(s.t[0].alloc.d[0], 0u);
    EXPECT_EQ(s.t[1].alloc.d[0], 3000u);  // base 1000 + all 2000 unused, = burst provisioning
    EXPECT_EQ(s.b.n_burst, 1u);
    EXPECT_EQ(s.burst[0], 1u);
}

// §6.5: "its resource allocation drops to zero". Catches a floor or a clamp in the default
// line 7, and a tenant that never leaves the schedule list at zero (§6.6).
TEST(BiosSchedule, IdleTenantDecaysToZeroIsDroppedAndWakesOnThrottle)
{
    Bench s(4, splat(100000), splat(16000), splat(64000));
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    std::uint32_t prev = 16000;
    int w = 0;
    while (s.b.n_sched == 4u) {
        for (std::uint32_t i = 1; i < 4; i++)
            s.use(i, splat(16000), 1, splat(1000));
        s.run();
        ASSERT_EQ(s.t[0].alloc.d[0], prev / 2);  // alpha = 1/2, truncated
        prev = s.t[0].alloc.d[0];
        ASSERT_LT(++w, 20);
    }
    EXPECT_EQ(w, 14);  // 16000 < 2^14: fourteen halvings reach 0
    EXPECT_EQ(s.t[0].alloc.d[0], 0u);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(s.granted(d), 100000u);
    for (std::uint32_t i = 1; i < 4; i++)
        s.use(i, splat(16000), 1, splat(1000));
    s.use(0, splat(3000), 0, {}, 3);  // resumes on reclaim / the pool alone: still line 7
    s.run();
    EXPECT_EQ(s.b.n_sched, 4u);
    EXPECT_LT(s.t[0].alloc.d[0], 16000u);  // 0 * alpha + its share of line 10's unused
    for (std::uint32_t i = 1; i < 4; i++)
        s.use(i, splat(16000), 1, splat(1000));
    s.use(0, splat(0), 2, splat(2000));  // deferred: line 4 gives base back
    s.run();
    EXPECT_GE(s.t[0].alloc.d[0], 16000u);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(s.granted(d), 100000u);
}

// The floor variation: an idle tenant stops at base / 16 and is dropped there; a spill
// (BG_BIOS_OPT_SPILL_BASE) brings it back to base.
TEST(BiosSchedule, IdleTenantDecaysToFloorIsDroppedAndWakes)
{
    Bench s(4, splat(100000), splat(16000), splat(64000));
    s.p.options = BG_BIOS_OPT_USAGE_CLAMP | BG_BIOS_OPT_SPILL_BASE;
    s.p.floor_q16 = BG_BIOS_ONE / 16;
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    std::uint32_t prev = 16000;
    int w = 0;
    while (s.b.n_sched == 4u) {
        for (std::uint32_t i = 1; i < 4; i++)
            s.use(i, splat(16000), 1, splat(1000));
        s.run();
        ASSERT_LE(s.t[0].alloc.d[0], prev);
        ASSERT_GE(s.t[0].alloc.d[0], 1000u);  // floor = 16000 / 16
        prev = s.t[0].alloc.d[0];
        ASSERT_LT(++w, 10);
    }
    EXPECT_EQ(s.t[0].alloc.d[0], 1000u);
    EXPECT_EQ(s.b.n_sched, 3u);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(s.granted(d), 100000u);  // the dropped floor still counts

    s.use(0, splat(1000), 0, {}, 3);  // resumes: floor used up, then spilled
    s.run();
    EXPECT_EQ(s.b.n_sched, 4u);
    EXPECT_GE(s.t[0].alloc.d[0], 16000u);  // base path straight away
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(s.granted(d), 100000u);
}

// Randomized: grants stay within [floor, cap], the burst list is exactly the tenants above
// base, and grants + reserved == total every window, through drops and wakes.
TEST(BiosSchedule, InvariantsUnderRandomCounters)
{
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    auto rnd = [&x](std::uint32_t n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return static_cast<std::uint32_t>(x % n);
    };
    const std::uint32_t n = 200;
    Bench s(n, bg_vec{{4000000, 90000000, 90000000, 30000000}}, {}, {});
    for (std::uint32_t i = 0; i < n; i++) {
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            s.t[i].res_base.d[d] = s.p.total.d[d] / (n + 40) - rnd(100);
            s.t[i].res_burst.d[d] = s.t[i].res_base.d[d] * (1 + rnd(4));
            s.t[i].credit_max.d[d] = s.t[i].res_base.d[d] * 10;
        }
        s.t[i].mode = static_cast<std::uint8_t>(rnd(2));
    }
    s.p.reserved_q16 = BG_BIOS_ONE / 10;
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    for (int w = 0; w < 400; w++) {
        for (std::uint32_t i = 0; i < n; i++) {
            if (rnd(4) == 0)
                continue;  // idle this window
            bg_vec use{}, thr{};
            const bool throttled = rnd(3) == 0;
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                use.d[d] = rnd(s.t[i].res_burst.d[d] + 1);
                thr.d[d] = throttled ? 1 + rnd(s.t[i].res_base.d[d]) : 0;
            }
            s.use(i, use, throttled ? 1 + rnd(5) : 0, thr, rnd(8) == 0 ? 1 : 0);
        }
        s.run();
        std::uint32_t bursting = 0;
        for (std::uint32_t i = 0; i < n; i++) {
            bg_vec cap;
            bg_burst_cap(&s.t[i], &cap);
            ASSERT_TRUE(bg_vec_covers(&cap, &s.t[i].alloc)) << "w " << w << " t " << i;
            ASSERT_TRUE(bg_vec_covers(&s.t[i].alloc, &s.t[i].floor));
            const bool above = !bg_vec_covers(&s.t[i].res_base, &s.t[i].alloc);
            ASSERT_EQ(above, s.t[i].status == BG_BIOS_BURST);
            bursting += above;
        }
        ASSERT_EQ(bursting, s.b.n_burst);
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            ASSERT_EQ(s.granted(d), s.p.total.d[d]);
            ASSERT_GE(s.b.reserved.d[d], s.b.reserve.d[d]);
        }
    }
}

TEST(BiosCredit, AccruesBelowBaseSpendsAboveCappedAtMax)
{
    bg_bios_tenant t{};
    t.mode = BG_BURST_CREDIT;
    t.res_base = splat(10);
    t.res_burst = splat(30);
    t.credit_max = splat(50);
    bg_vec cap;
    bg_burst_cap(&t, &cap);
    EXPECT_EQ(cap.d[0], 10u);  // no credit: no burst
    const bg_vec u4 = splat(4), u25 = splat(25);
    bg_credit_update(&t, &u4);
    EXPECT_EQ(t.credit.d[0], 6u);
    for (int i = 0; i < 20; i++)
        bg_credit_update(&t, &u4);
    EXPECT_EQ(t.credit.d[0], 50u);
    bg_burst_cap(&t, &cap);
    EXPECT_EQ(cap.d[0], 30u);  // res_burst binds before credits
    bg_credit_update(&t, &u25);
    EXPECT_EQ(t.credit.d[0], 35u);
    bg_credit_update(&t, &u25);
    bg_credit_update(&t, &u25);
    bg_credit_update(&t, &u25);
    EXPECT_EQ(t.credit.d[0], 0u);
    const bg_vec io{{1000, 4096, 4096, 4096}};
    const bg_vec c = bg_credit_from_ios(5, &io);
    EXPECT_EQ(c.d[0], 5000u);
    EXPECT_EQ(c.d[3], 5u * 4096u);
}

TEST(BiosCredit, DroppedTenantEarnsItsIdleWindowsOnWake)
{
    Bench s(2, splat(100000), splat(16000), splat(64000));
    s.t[0].mode = BG_BURST_CREDIT;
    s.t[0].credit_max = splat(1000000);
    ASSERT_EQ(s.init(), BG_BIOS_OK);
    int w = 0;
    while (s.b.n_sched == 2u) {
        s.use(1, splat(16000));
        s.run();
        w++;
    }
    const std::uint32_t at_drop = s.t[0].credit.d[0];
    EXPECT_EQ(at_drop, 16000u * static_cast<std::uint32_t>(w));
    for (int i = 0; i < 7; i++) {
        s.use(1, splat(16000));
        s.run();
    }
    EXPECT_EQ(s.t[0].credit.d[0], at_drop);  // untouched while dropped
    s.use(0, splat(1000));
    s.run();
    EXPECT_EQ(s.t[0].credit.d[0], at_drop + 7u * 16000u + 15000u);
}

TEST(BiosBaselines, BaseCbsIsProportionalWildCbsIsTheBurstCap)
{
    std::vector<bg_bios_tenant> t(3);
    const std::uint32_t base[3] = {1000, 2000, 1000};
    for (int i = 0; i < 3; i++) {
        t[i].res_base = splat(base[i]);
        t[i].res_burst = splat(base[i] * 3);
    }
    t[2].res_burst = splat(1500);
    std::vector<bg_vec> alloc(3);
    const bg_vec total = splat(8000);
    ASSERT_EQ(bg_basecbs_alloc(&total, t.data(), 3, alloc.data()), BG_BIOS_OK);
    EXPECT_EQ(alloc[0].d[0], 2000u);
    EXPECT_EQ(alloc[1].d[0], 4000u);
    EXPECT_EQ(alloc[2].d[0], 1500u);  // the share (2000) capped at burst provisioning

    t[0].mode = BG_BURST_CREDIT;
    t[0].credit = splat(700);
    t[0].credit_max = splat(5000);
    std::vector<bg_bios_usage> u(3);
    u[0].usage = splat(1000);
    bg_wildcbs_window(t.data(), u.data(), 3, alloc.data());
    EXPECT_EQ(alloc[0].d[0], 1700u);  // base + credits
    EXPECT_EQ(alloc[1].d[0], 6000u);
}

}  // namespace
