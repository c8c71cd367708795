// Libra's DDRR grants, §4.1 EWMA profiles and the §4.2 floor's proportional scaling (libra.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "burstgate/libra.h"

namespace {

bg_vec all(uint32_t x) { return bg_vec{{x, x, x, x}}; }

bg_libra_params params(uint32_t total, double floor, uint32_t policy_windows, double w = 0.5)
{
    bg_libra_params p{};
    p.total = all(total);
    p.floor_q16 = static_cast<uint32_t>(floor * BG_LIBRA_ONE);
    p.ewma_w_q16 = static_cast<uint32_t>(w * BG_LIBRA_ONE);
    p.policy_windows = policy_windows;
    return p;
}

bg_bios_usage used(uint32_t x, uint32_t throttle_n = 0)
{
    bg_bios_usage u{};
    u.usage = all(x);
    u.throttle_n = throttle_n;
    return u;
}

}  // namespace

TEST(Libra, EwmaFirstSampleThenHalfway)
{
    EXPECT_EQ(bg_libra_ewma(0, 1000, BG_LIBRA_ONE / 2, 0), 1000u);      // first interval: the sample
    EXPECT_EQ(bg_libra_ewma(1000, 3000, BG_LIBRA_ONE / 2, 1), 2000u);   // q + w (x - q)
    EXPECT_EQ(bg_libra_ewma(3000, 1000, BG_LIBRA_ONE / 4, 1), 2500u);   // downward, w = 1/4
    EXPECT_EQ(bg_libra_ewma(3000, 1000, BG_LIBRA_ONE, 1), 1000u);       // w = 1: the last sample
}

TEST(Libra, ProfileIsCostPerKibRequest)
{
    uint64_t q = 0;
    uint32_t have = 0;
    EXPECT_EQ(bg_libra_profile_update(&q, &have, 500, 0, BG_LIBRA_ONE / 2), 0);  // no traffic: unchanged
    EXPECT_EQ(have, 0u);
    // 8192 units over 64 KiB of data: 128 units per normalized 1 KiB request.
    ASSERT_EQ(bg_libra_profile_update(&q, &have, 8192, 65536, BG_LIBRA_ONE / 2), 1);
    EXPECT_EQ(q, 128u << BG_LIBRA_FRAC_BITS);
    // Then 64 units per request: EWMA with w = 1/2 gives 96.
    bg_libra_profile_update(&q, &have, 4096, 65536, BG_LIBRA_ONE / 2);
    EXPECT_EQ(q, 96u << BG_LIBRA_FRAC_BITS);
}

TEST(Libra, RejectsBadParams)
{
    bg_libra l;
    std::vector<bg_libra_tenant> t(1);
    bg_libra_params p = params(1000, 0, 0);
    EXPECT_STREQ(bg_libra_init(&l, &p, t.data(), 1), "floor_q16");
    p = params(1000, 0.5, 4, 0);
    EXPECT_STREQ(bg_libra_init(&l, &p, t.data(), 1), "ewma_w_q16");
}

TEST(Libra, BackloggedTenantsShareTheSpareByQuantum)
{
    bg_libra l;
    std::vector<bg_libra_tenant> t(4);
    t[0].quantum = all(100);
    t[1].quantum = all(300);
    t[2].quantum = all(200);
    t[3].quantum = all(100);
    for (auto &x : t)
        x.deficit_max = all(1000);
    const bg_libra_params p = params(1000, 1.0, 0);
    ASSERT_EQ(bg_libra_init(&l, &p, t.data(), 4), nullptr);
    // 0 and 1 spent their grants and deferred I/O; 2 offered none; 3 ran out of work.
    std::vector<bg_bios_usage> u{used(100, 1), used(300, 2), used(0), used(40)};
    const uint64_t active[BG_BIOS_BITMAP_WORDS] = {0b1011};
    bg_libra_window(&l, t.data(), u.data(), active);
    // Spare 1000 - 700 = 300 to tenants 0 and 1 as 100:300; 2 and 3 keep their quanta.
    EXPECT_EQ(t[0].grant.d[0], 175u);
    EXPECT_EQ(t[1].grant.d[0], 525u);
    EXPECT_EQ(t[2].grant.d[0], 200u);
    EXPECT_EQ(t[3].grant.d[0], 100u);
}

TEST(Libra, DeficitKeptOnlyWhileBacklogged)
{
    bg_libra l;
    std::vector<bg_libra_tenant> t(2);
    t[0].quantum = all(100);
    t[1].quantum = all(100);
    t[0].deficit_max = all(30);
    t[1].deficit_max = all(1000);
    const bg_libra_params p = params(200, 1.0, 0);
    ASSERT_EQ(bg_libra_init(&l, &p, t.data(), 2), nullptr);
    // Both used 60 of their 100 and both are active; only tenant 0 deferred an I/O.
    std::vector<bg_bios_usage> u{used(60, 1), used(60, 0)};
    const uint64_t active[BG_BIOS_BITMAP_WORDS] = {0b11};
    bg_libra_window(&l, t.data(), u.data(), active);
    EXPECT_EQ(t[0].deficit.d[0], 30u);  // 40 left, capped at deficit_max
    EXPECT_EQ(t[1].deficit.d[0], 0u);   // its queue emptied: DRR drops the counter
    // The capacity left after quanta and the deficit (200 - 230 < 0) is nothing to share.
    EXPECT_EQ(t[0].grant.d[0], 130u);
    EXPECT_EQ(t[1].grant.d[0], 100u);
}

TEST(Libra, PolicyProfilesAndScalesToTheFloor)
{
    bg_libra l;
    std::vector<bg_libra_tenant> t(2);
    for (auto &x : t) {
        x.quantum = all(100);
        x.deficit_max = all(0);
        x.v_q16 = 10ull << BG_LIBRA_FRAC_BITS;  // 10 normalized requests per window
    }
    bg_libra_params p = params(1000, 0.5, 2, 1.0);  // floor 500; a policy every 2 windows
    p.total.d[BG_DIM_SWLIMIT] = 1u << 20;            // data bytes: never the scaled dimension here
    ASSERT_EQ(bg_libra_init(&l, &p, t.data(), 2), nullptr);
    const uint64_t active[BG_BIOS_BITMAP_WORDS] = {0b11};
    // Tenant 0 spends 40 units per KiB, tenant 1 5: over 2 windows, 2 KiB and 4 KiB of data.
    std::vector<bg_bios_usage> u(2);
    u[0].usage = bg_vec{{40, 40, 40, 1024}};
    u[1].usage = bg_vec{{10, 10, 10, 2048}};
    bg_libra_window(&l, t.data(), u.data(), active);
    EXPECT_EQ(t[0].quantum.d[0], 100u);  // mid-interval: unchanged
    bg_libra_window(&l, t.data(), u.data(), active);
    // r = v q: 10 x 40 = 400 and 10 x 5 = 50; 450 fits the floor.
    EXPECT_EQ(t[0].quantum.d[0], 400u);
    EXPECT_EQ(t[1].quantum.d[0], 50u);
    EXPECT_EQ(l.overbooked, 0u);
    // Tenant 1 now costs 40 per KiB too: 400 + 400 > 500, both scaled by 500/800.
    u[1].usage = bg_vec{{80, 80, 80, 2048}};
    bg_libra_window(&l, t.data(), u.data(), active);
    bg_libra_window(&l, t.data(), u.data(), active);
    EXPECT_EQ(t[0].quantum.d[0], 250u);
    EXPECT_EQ(t[1].quantum.d[0], 250u);
    EXPECT_EQ(l.overbooked, 1u);
}

TEST(Libra, ScalingAnUnprofiledTenantDoesNotCompound)
{
    // Tenant 1 never sends data, so it keeps its initial allocation r = 300; tenant 0 profiles
    // at 60 per KiB x 10 = 600. 900 > floor 500 every interval: both scaled by 5/9 each time,
    // from r, never from last interval's scaled quantum.
    bg_libra l;
    std::vector<bg_libra_tenant> t(2);
    t[0].quantum = all(100);
    t[1].quantum = all(300);
    for (auto &x : t) {
        x.deficit_max = all(0);
        x.v_q16 = 10ull << BG_LIBRA_FRAC_BITS;
    }
    bg_libra_params p = params(1000, 0.5, 1, 1.0);
    p.total.d[BG_DIM_SWLIMIT] = 1u << 20;
    ASSERT_EQ(bg_libra_init(&l, &p, t.data(), 2), nullptr);
    const uint64_t active[BG_BIOS_BITMAP_WORDS] = {0b01};
    std::vector<bg_bios_usage> u(2);
    u[0].usage = bg_vec{{60, 60, 60, 1024}};
    for (int w = 0; w < 3; w++) {
        bg_libra_window(&l, t.data(), u.data(), active);
        EXPECT_EQ(t[0].quantum.d[0], 600u * 500u / 900u) << w;
        EXPECT_EQ(t[1].quantum.d[0], 300u * 500u / 900u) << w;
    }
}

TEST(Libra, VopSharesOneScalarAcrossDimensions)
{
    // Two backlogged tenants with equal quanta, one bound by dimension 0 and one by dimension 3.
    // Per VOP each gets half of the capacity in every dimension; per dimension (vop = 0) the
    // tenant that fills a dimension most takes most of that dimension's spare.
    bg_libra l;
    std::vector<bg_libra_tenant> t(2);
    t[0].quantum = bg_vec{{250, 0, 0, 100}};   // a quarter of the capacity (dimension 0)
    t[1].quantum = bg_vec{{100, 0, 0, 250}};   // a quarter (dimension 3)
    for (auto &x : t)
        x.deficit_max = all(0);
    bg_libra_params p = params(1000, 1.0, 0);
    p.vop = 1;
    ASSERT_EQ(bg_libra_init(&l, &p, t.data(), 2), nullptr);
    EXPECT_EQ(t[0].grant_vop, (1ull << BG_LIBRA_VOP_BITS) / 4);
    std::vector<bg_bios_usage> u{used(0, 1), used(0, 1)};
    const uint64_t active[BG_BIOS_BITMAP_WORDS] = {0b11};
    bg_libra_window(&l, t.data(), u.data(), active);
    // Spare: 1/2 of the capacity, split 1:1; each grant is half of every dimension.
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        EXPECT_EQ(t[0].grant.d[d], 500u) << d;
        EXPECT_EQ(t[1].grant.d[d], 500u) << d;
    }
    // Per dimension: dimension 0's spare (650) goes 250:100, so tenant 0 gets 250 + 464.
    p.vop = 0;
    ASSERT_EQ(bg_libra_init(&l, &p, t.data(), 2), nullptr);
    bg_libra_window(&l, t.data(), u.data(), active);
    EXPECT_EQ(t[0].grant.d[0], 250u + 650u * 250u / 350u);
    EXPECT_EQ(t[1].grant.d[3], 250u + 650u * 250u / 350u);
}
