// The cost estimator model (sw/model cost.hpp) against the COST block formula of
// docs/registers.md, and the firmware cost-table loaders (fw cost_table.h) programming it.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "burstgate/cost_table.h"
#include "burstgate/model/cost.hpp"

namespace {

using bg::CostEstimator;
using bg::CostVector;

constexpr uint32_t kOne = 1u << BG_FACTOR_FRAC_BITS;  // factor 1.0
constexpr uint32_t kMaxSize = (1u << BG_SIZE_BITS) - 1;

uint32_t base_addr(unsigned product, bool write, unsigned k, unsigned d)
{
    return BG_COST_TABLE_BASE(bg_cost_entry(product, write, k) * BG_COST_DIMS + d);
}

uint32_t slope_addr(unsigned product, bool write, unsigned k, unsigned d)
{
    return BG_COST_TABLE_SLOPE(bg_cost_entry(product, write, k) * BG_COST_DIMS + d);
}

// Every register of the block, to check that something left all of them alone.
std::vector<uint32_t> snapshot(const CostEstimator &est)
{
    std::vector<uint32_t> regs;
    for (uint32_t a = BG_COST_BASE; a < BG_COST_BASE + BG_COST_SIZE; a += 4)
        regs.push_back(est.read(a));
    return regs;
}

void set_bounds(CostEstimator &est, const std::vector<uint32_t> &lo)
{
    for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++)
        est.write(BG_COST_SIZE_LO(j), lo[j]);
}

TEST(CostEstimator, ResetValues)
{
    CostEstimator est;
    for (unsigned d = 0; d < BG_COST_FACTOR_COUNT; d++)
        EXPECT_EQ(est.read(BG_COST_FACTOR(d)), BG_COST_FACTOR_RESET);
    for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++)
        EXPECT_EQ(est.read(BG_COST_SIZE_LO(j)), bg_cost_size_lo_reset(j));
    for (unsigned i = 0; i < BG_COST_TABLE_BASE_COUNT; i++) {
        EXPECT_EQ(est.read(BG_COST_TABLE_BASE(i)), BG_COST_TABLE_BASE_RESET);
        EXPECT_EQ(est.read(BG_COST_TABLE_SLOPE(i)), BG_COST_TABLE_SLOPE_RESET);
    }
    const std::vector<uint32_t> fresh = snapshot(est);
    for (uint32_t a = BG_COST_BASE; a < BG_COST_BASE + BG_COST_SIZE; a += 4)
        est.write(a, 0x12345678u);
    EXPECT_NE(snapshot(est), fresh);
    est.reset();
    EXPECT_EQ(snapshot(est), fresh);
    // The reset table costs nothing.
    EXPECT_EQ(est.estimate(3, true, kMaxSize), CostVector{});
}

TEST(CostEstimator, WritesKeepImplementedBits)
{
    CostEstimator est;
    est.write(BG_COST_FACTOR(2), 0xFFFFFFFFu);
    est.write(BG_COST_SIZE_LO(6), 0xFFFFFFFFu);
    est.write(BG_COST_TABLE_BASE(255), 0xFFFFFFFFu);
    est.write(BG_COST_TABLE_SLOPE(17), 0xFFFFFFFFu);
    EXPECT_EQ(est.read(BG_COST_FACTOR(2)), BG_COST_FACTOR_MASK);
    EXPECT_EQ(est.read(BG_COST_SIZE_LO(6)), BG_COST_SIZE_LO_MASK);
    EXPECT_EQ(est.read(BG_COST_TABLE_BASE(255)), BG_COST_TABLE_BASE_MASK);
    EXPECT_EQ(est.read(BG_COST_TABLE_SLOPE(17)), BG_COST_TABLE_SLOPE_MASK);
    est.write(BG_COST_FACTOR(2), 0xABCD1234u);
    EXPECT_EQ(est.read(BG_COST_FACTOR(2)), 0x1234u);
    // Neighbours are untouched.
    EXPECT_EQ(est.read(BG_COST_FACTOR(1)), BG_COST_FACTOR_RESET);
    EXPECT_EQ(est.read(BG_COST_TABLE_SLOPE(16)), 0u);
    EXPECT_EQ(est.read(BG_COST_TABLE_SLOPE(18)), 0u);
}

TEST(CostEstimator, UnmappedAndForeignAddresses)
{
    CostEstimator est;
    // Every COST register is read-write; a read-only one would need a test of its own.
    static_assert(!BG_COST_FACTOR_RO && !BG_COST_SIZE_LO_RO && !BG_COST_TABLE_BASE_RO && !BG_COST_TABLE_SLOPE_RO);
    const std::vector<uint32_t> fresh = snapshot(est);
    // Holes inside the block: after FACTOR, after SIZE_LO, after TABLE_SLOPE, the last word.
    const uint32_t holes[] = {BG_COST_FACTOR(BG_COST_FACTOR_COUNT), BG_COST_SIZE_LO(0) - 4,
                              BG_COST_SIZE_LO(BG_COST_SIZE_LO_COUNT), BG_COST_TABLE_BASE(0) - 4,
                              BG_COST_TABLE_SLOPE(BG_COST_TABLE_SLOPE_COUNT), BG_COST_BASE + BG_COST_SIZE - 4};
    for (uint32_t a : holes) {
        EXPECT_TRUE(est.owns(a)) << std::hex << a;
        est.write(a, 0xFFFFFFFFu);
        EXPECT_EQ(est.read(a), 0u) << std::hex << a;
    }
    // Outside the block, including another block's read-only register.
    const uint32_t foreign[] = {BG_COST_BASE - 4, BG_COST_BASE + BG_COST_SIZE, BG_INFO_MAGIC, BG_INFO_VERSION, 0,
                                0xFFFFFFFCu};
    for (uint32_t a : foreign) {
        EXPECT_FALSE(est.owns(a)) << std::hex << a;
        est.write(a, 0xFFFFFFFFu);
        EXPECT_EQ(est.read(a), 0u) << std::hex << a;
    }
    EXPECT_EQ(snapshot(est), fresh);
    // Like the RTL bus, address bits 1..0 are ignored.
    est.write(BG_COST_FACTOR(1) + 3, 7);
    EXPECT_EQ(est.read(BG_COST_FACTOR(1)), 7u);
    EXPECT_EQ(est.read(BG_COST_FACTOR(1) + 2), 7u);
}

TEST(CostEstimator, SizeClassBoundaries)
{
    CostEstimator est;
    // Reset bounds: 4K, 8K, ..., 256K.
    EXPECT_EQ(est.size_class(0), 0u);
    for (unsigned k = 1; k < BG_SIZE_CLASSES; k++) {
        const uint32_t lo = bg_cost_size_lo_reset(k - 1);
        EXPECT_EQ(est.size_class(lo - 1), k - 1) << lo;
        EXPECT_EQ(est.size_class(lo), k) << lo;
    }
    EXPECT_EQ(est.size_class(kMaxSize), BG_SIZE_CLASSES - 1);

    // A top class bounded at 0xFFFFFF ("unused") still holds the largest I/O.
    est.write(BG_COST_SIZE_LO(BG_COST_SIZE_LO_COUNT - 1), BG_COST_SIZE_UNUSED);
    EXPECT_EQ(est.size_class(kMaxSize - 1), BG_SIZE_CLASSES - 2);
    EXPECT_EQ(est.size_class(kMaxSize), BG_SIZE_CLASSES - 1);

    // Non-ascending bounds: still the largest k whose bound is <= size.
    constexpr uint32_t U = BG_COST_SIZE_UNUSED;
    set_bounds(est, {8192, 4096, U, 100, U, U, U});
    EXPECT_EQ(est.size_class(99), 0u);
    EXPECT_EQ(est.size_class(100), 4u);
    EXPECT_EQ(est.size_class(5000), 4u);
    set_bounds(est, {8192, 4096, U, U, U, U, U});
    EXPECT_EQ(est.size_class(4095), 0u);
    EXPECT_EQ(est.size_class(5000), 2u);
    EXPECT_EQ(est.size_class(9000), 2u);  // class 1's bound 8192 also fits, but 2 is larger
    // ... and the cost uses that class's own bound: slope 1024 = one unit per byte above 4096.
    est.write(slope_addr(0, false, 2, BG_DIM_CPU), 1024);
    EXPECT_EQ(est.estimate(0, false, 9000)[BG_DIM_CPU], 9000u - 4096u);

    // All bounds 0: class 0 is empty.
    set_bounds(est, std::vector<uint32_t>(BG_COST_SIZE_LO_COUNT, 0));
    EXPECT_EQ(est.size_class(0), BG_SIZE_CLASSES - 1);

    EXPECT_THROW(est.size_class(kMaxSize + 1), std::invalid_argument);
}

TEST(CostEstimator, EveryDescriptorReadsItsOwnEntry)
{
    CostEstimator est;
    // Base of entry e, dimension d = e * 4 + d + 1: unique, so a wrong index shows.
    for (unsigned i = 0; i < BG_COST_TABLE_BASE_COUNT; i++)
        est.write(BG_COST_TABLE_BASE(i), i + 1);
    for (unsigned p = 0; p < BG_PRODUCTS; p++)
        for (bool w : {false, true})
            for (unsigned k = 0; k < BG_SIZE_CLASSES; k++) {
                const uint32_t size = k ? bg_cost_size_lo_reset(k - 1) + 5 : 5;
                const CostVector v = est.estimate(p, w, size);
                for (unsigned d = 0; d < BG_COST_DIMS; d++)
                    EXPECT_EQ(v[d], bg_cost_entry(p, w, k) * BG_COST_DIMS + d + 1) << p << w << k << d;
            }
}

TEST(CostEstimator, HandComputedCosts)
{
    CostEstimator est;
    // Product B (1), write, class 1 = [4096, 8192): the BurstCBS-style entry of a 4 KiB write.
    const uint32_t base[BG_COST_DIMS] = {1800, 4096 + 64, 64, 4096};
    const uint32_t slope[BG_COST_DIMS] = {35, 1024, 0, 1024};
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        est.write(base_addr(1, true, 1, d), base[d]);
        est.write(slope_addr(1, true, 1, d), slope[d]);
    }
    est.write(BG_COST_FACTOR(BG_DIM_CPU), 2 * kOne);              // cpu x 2.0
    est.write(BG_COST_FACTOR(BG_DIM_SWLIMIT), 3 * kOne / 4);      // swlimit x 0.75
    // size 4096: delta 0 -> raw = base; cpu 1800 x 2 = 3600; swlimit 4096 x 0.75 = 3072.
    EXPECT_EQ(est.estimate(1, true, 4096), (CostVector{{3600, 4160, 64, 3072}}));
    // size 5096: delta 1000. cpu: 1000 * 35 = 35000, >> 10 = 34 (34.18 floored), raw 1834,
    // x 2 = 3668. ingress 4160 + 1000 = 5160. swlimit (4096 + 1000) * 3072 >> 12 = 3822 (3822.0).
    EXPECT_EQ(est.estimate(1, true, 5096), (CostVector{{3668, 5160, 64, 3822}}));
    // size 8191: delta 4095. cpu 4095 * 35 >> 10 = 139 (139.96), (1800 + 139) * 2 = 3878.
    // swlimit (4096 + 4095) * 0.75 = 6143.25 -> 6143.
    EXPECT_EQ(est.estimate(1, true, 8191), (CostVector{{3878, 4160 + 4095, 64, 6143}}));
    // The same I/O as a read, or of product A, hits another (empty) entry.
    EXPECT_EQ(est.estimate(1, false, 5096), CostVector{});
    EXPECT_EQ(est.estimate(0, true, 5096), CostVector{});
}

TEST(CostEstimator, FactorScalesWithFloor)
{
    CostEstimator est;
    est.write(base_addr(0, false, 0, BG_DIM_CPU), 1001);
    auto cpu = [&](uint32_t factor) {
        est.write(BG_COST_FACTOR(BG_DIM_CPU), factor);
        return est.estimate(0, false, 0)[BG_DIM_CPU];
    };
    EXPECT_EQ(cpu(kOne), 1001u);           // 1.0
    EXPECT_EQ(cpu(2 * kOne), 2002u);       // 2.0
    EXPECT_EQ(cpu(kOne / 2), 500u);        // 0.5: 500.5 floored
    EXPECT_EQ(cpu(kOne + kOne / 4), 1251u);  // 1.25: 1251.25
    EXPECT_EQ(cpu(3), 0u);                 // 1001 * 3 / 4096 < 1
    EXPECT_EQ(cpu(0), 0u);
    // Each dimension has its own factor.
    est.write(base_addr(0, false, 0, BG_DIM_EGRESS), 1001);
    EXPECT_EQ(est.estimate(0, false, 0)[BG_DIM_EGRESS], 1001u);
}

TEST(CostEstimator, SaturatesInBothStages)
{
    CostEstimator est;
    const unsigned d = BG_DIM_INGRESS;
    // Stage 1, base alone at the top: 0xFFFFFFFF + 1 saturates.
    est.write(base_addr(2, false, 0, d), 0xFFFFFFFFu);
    est.write(slope_addr(2, false, 0, d), 1024);
    EXPECT_EQ(est.estimate(2, false, 0)[d], 0xFFFFFFFFu);
    EXPECT_EQ(est.estimate(2, false, 1)[d], 0xFFFFFFFFu);
    // Stage 1, slope x size: (2^24 - 1 - 256K) * (2^24 - 1) >> 10 is about 2^38.
    est.write(base_addr(2, true, 7, d), 0);
    est.write(slope_addr(2, true, 7, d), BG_COST_TABLE_SLOPE_MASK);
    EXPECT_EQ(est.estimate(2, true, kMaxSize)[d], 0xFFFFFFFFu);
    // Just below: 4 KiB above the bound at slope 2^20 per KiB gives 4 * 2^20.
    est.write(slope_addr(2, true, 7, d), 1u << 20);
    EXPECT_EQ(est.estimate(2, true, bg_cost_size_lo_reset(6) + 4096)[d], 4u << 20);
    // Stage 2: raw 0x20000000 x 8.0 = 2^32 saturates; 0x1FFFFFFF x 8.0 = 0xFFFFFFF8 does not.
    est.write(base_addr(3, false, 0, d), 0x20000000u);
    est.write(base_addr(3, true, 0, d), 0x1FFFFFFFu);
    est.write(BG_COST_FACTOR(d), 8 * kOne);
    EXPECT_EQ(est.estimate(3, false, 0)[d], 0xFFFFFFFFu);
    EXPECT_EQ(est.estimate(3, true, 0)[d], 0xFFFFFFF8u);
    // Both stages at once: saturated raw times the largest factor (15.99976).
    est.write(BG_COST_FACTOR(d), BG_COST_FACTOR_MASK);
    EXPECT_EQ(est.estimate(2, true, kMaxSize)[d], 0xFFFFFFFFu);
    // The largest factor on a small raw: 1000 * 65535 >> 12 = 15999 (15999.76).
    est.write(base_addr(1, false, 0, d), 1000);
    EXPECT_EQ(est.estimate(1, false, 0)[d], 15999u);
}

TEST(CostEstimator, RejectsImpossibleDescriptors)
{
    CostEstimator est;
    EXPECT_THROW(est.estimate(BG_PRODUCTS, false, 4096), std::invalid_argument);
    EXPECT_THROW(est.estimate(0, false, kMaxSize + 1), std::invalid_argument);
    EXPECT_THROW(est.estimate(0, true, 0xFFFFFFFFu), std::invalid_argument);
    EXPECT_NO_THROW(est.estimate(BG_PRODUCTS - 1, true, kMaxSize));
}

TEST(CostEstimator, HalReachesTheModel)
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    bg_hal_write(&hal, BG_COST_TABLE_SLOPE(9), 0xFFFFFFFFu);
    EXPECT_EQ(est.read(BG_COST_TABLE_SLOPE(9)), BG_COST_TABLE_SLOPE_MASK);
    est.write(BG_COST_SIZE_LO(3), 12345);
    EXPECT_EQ(bg_hal_read(&hal, BG_COST_SIZE_LO(3)), 12345u);
    EXPECT_EQ(bg_hal_read(&hal, BG_INFO_MAGIC), 0u);  // not the cost block's
}

// --- firmware helpers ---------------------------------------------------------------------

TEST(CostTable, EntryFactorAndBoundsValidateFirst)
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    const uint32_t base[BG_COST_DIMS] = {1, 2, 3, 4};
    uint32_t slope[BG_COST_DIMS] = {5, 6, 7, BG_COST_TABLE_SLOPE_MASK};
    const std::vector<uint32_t> fresh = snapshot(est);

    EXPECT_EQ(bg_cost_set_entry(&hal, BG_PRODUCTS, false, 0, base, slope), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_set_entry(&hal, 0, false, BG_SIZE_CLASSES, base, slope), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_set_entry(nullptr, 0, false, 0, base, slope), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_set_entry(&hal, 0, false, 0, nullptr, slope), BG_COST_EINVAL);
    slope[3] = BG_COST_TABLE_SLOPE_MASK + 1;
    EXPECT_EQ(bg_cost_set_entry(&hal, 0, false, 0, base, slope), BG_COST_ERANGE);
    EXPECT_EQ(bg_cost_set_factor(&hal, BG_COST_DIMS, kOne), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_set_factor(&hal, 0, BG_COST_FACTOR_MASK + 1), BG_COST_ERANGE);
    uint32_t lo[BG_COST_SIZE_LO_COUNT] = {512, 1024, 2048, 4096, 4096, BG_COST_SIZE_UNUSED, 1u << BG_SIZE_BITS};
    EXPECT_EQ(bg_cost_set_bounds(&hal, lo), BG_COST_ERANGE);
    lo[6] = BG_COST_SIZE_UNUSED;
    lo[2] = 100;
    EXPECT_EQ(bg_cost_set_bounds(&hal, lo), BG_COST_EDOM);
    EXPECT_EQ(snapshot(est), fresh);

    slope[3] = 8;
    ASSERT_EQ(bg_cost_set_entry(&hal, 3, true, 5, base, slope), BG_COST_OK);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        EXPECT_EQ(est.read(base_addr(3, true, 5, d)), base[d]);
        EXPECT_EQ(est.read(slope_addr(3, true, 5, d)), slope[d]);
    }
    ASSERT_EQ(bg_cost_set_factor(&hal, BG_DIM_EGRESS, 3 * kOne), BG_COST_OK);
    EXPECT_EQ(est.read(BG_COST_FACTOR(BG_DIM_EGRESS)), 3 * kOne);
    lo[2] = 2048;  // equal neighbours are allowed: the class between them is empty
    ASSERT_EQ(bg_cost_set_bounds(&hal, lo), BG_COST_OK);
    for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++)
        EXPECT_EQ(est.read(BG_COST_SIZE_LO(j)), lo[j]);
}

// floor(base + per_kib * size / 1024): the profile the linear builder approximates.
uint64_t profile_ns(const bg_linear_profile &p, uint32_t size)
{
    return p.cpu_base_ns + ((uint64_t)p.cpu_per_kib_ns * size >> 10);
}

void expect_linear(const CostEstimator &est, unsigned product, bool write, const bg_linear_profile &p,
                   uint32_t header, uint32_t size, bool exact)
{
    const CostVector v = est.estimate(product, write, size);
    const uint64_t want = profile_ns(p, size);
    if (exact)
        EXPECT_EQ(v[BG_DIM_CPU], want) << "size " << size;
    else
        EXPECT_TRUE(v[BG_DIM_CPU] <= want && want - v[BG_DIM_CPU] <= 1) << "size " << size << " got "
                                                                         << v[BG_DIM_CPU] << " want " << want;
    EXPECT_EQ(v[BG_DIM_INGRESS], header + (write ? 0 : size)) << size;
    EXPECT_EQ(v[BG_DIM_EGRESS], header + (write ? size : 0)) << size;
    EXPECT_EQ(v[BG_DIM_SWLIMIT], size) << size;
}

TEST(CostTable, LinearProfileMatchesAtBoundsAndWithinOneInside)
{
    // scenarios/example.yaml, dpu.cpu_ns of product B.
    const bg_linear_profile read = {3000, 55}, write = {2500, 45};
    const uint32_t header = 128;
    for (bool kib_aligned : {true, false}) {
        CostEstimator est;
        const bg_hal hal = est.hal();
        if (!kib_aligned) {  // bounds off the KiB grid make the two floors differ inside a class
            const uint32_t lo[BG_COST_SIZE_LO_COUNT] = {1000, 3333, 7777, 20001, 65537, 300007, 1000003};
            ASSERT_EQ(bg_cost_set_bounds(&hal, lo), BG_COST_OK);
        }
        ASSERT_EQ(bg_cost_load_linear(&hal, 1, &read, &write, header), BG_COST_OK);
        for (bool w : {false, true}) {
            const bg_linear_profile &p = w ? write : read;
            expect_linear(est, 1, w, p, header, 0, true);
            for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++) {
                const uint32_t lo = est.read(BG_COST_SIZE_LO(j));
                expect_linear(est, 1, w, p, header, lo, true);
                expect_linear(est, 1, w, p, header, lo - 1, kib_aligned);
            }
            std::mt19937 rng(kib_aligned ? 1 : 2);
            for (int n = 0; n < 20000; n++)
                expect_linear(est, 1, w, p, header, rng() % (kMaxSize + 1), kib_aligned);
        }
        // Hand check, B write 16 KiB: 2500 + 45 * 16 = 3220 ns; egress 128 + 16384. Off the
        // KiB grid it sits in [7777, 20001): 2500 + (45 * 7777 >> 10) + (45 * 8607 >> 10) = 3219.
        EXPECT_EQ(est.estimate(1, true, 16384), (CostVector{{kib_aligned ? 3220u : 3219u, 128, 16512, 16384}}));
        // Other products were not touched.
        EXPECT_EQ(est.estimate(0, true, 16384), CostVector{});
    }
}

TEST(CostTable, LinearProfileValidates)
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    const bg_linear_profile ok = {1000, 10}, steep = {1000, BG_COST_TABLE_SLOPE_MASK + 1};
    EXPECT_EQ(bg_cost_load_linear(&hal, BG_PRODUCTS, &ok, &ok, 0), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_load_linear(&hal, 0, nullptr, &ok, 0), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_load_linear(&hal, 0, &ok, &steep, 0), BG_COST_ERANGE);
    EXPECT_EQ(snapshot(est), snapshot(CostEstimator{}));
    // Saturates like the datapath rather than wrapping: a huge header on the largest read.
    ASSERT_EQ(bg_cost_load_linear(&hal, 0, &ok, &ok, 0xFFFFFFF0u), BG_COST_OK);
    EXPECT_EQ(est.estimate(0, false, kMaxSize)[BG_DIM_INGRESS], 0xFFFFFFFFu);
}

TEST(CostTable, LibraCurveChargesAQuarterOfCapacity)
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    ASSERT_EQ(bg_cost_load_vop(&hal, bg_vop_libra, BG_VOP_LIBRA_POINTS, BG_DIM_CPU), BG_COST_OK);
    auto mvop = [&](bool write, uint32_t size) {
        const CostVector v = est.estimate(2, write, size);
        EXPECT_EQ(v[BG_DIM_INGRESS] | v[BG_DIM_EGRESS] | v[BG_DIM_SWLIMIT], 0u);
        return static_cast<double>(v[BG_DIM_CPU]);
    };
    // Libra §4.3: 10000 1KB reads, 3000 1KB writes and 160 256KB reads per second each cost
    // about a quarter of the 40000 VOP/s capacity, i.e. 10000 VOP/s = 1e7 mVOP/s.
    const double quarter = BG_VOP_LIBRA_CAPACITY * 1000.0 / 4;
    EXPECT_NEAR(10000 * mvop(false, 1024), quarter, 0.05 * quarter);
    EXPECT_NEAR(3000 * mvop(true, 1024), quarter, 0.05 * quarter);
    EXPECT_NEAR(160 * mvop(false, 256 * 1024), quarter, 0.05 * quarter);

    // Hand checks. Read slope: (62500 - 1000) * 1024 / (262144 - 1024) = 241.17 -> 241/KiB.
    EXPECT_EQ(mvop(false, 1024), 1000);
    EXPECT_EQ(mvop(true, 1024), 3333);
    EXPECT_EQ(mvop(false, 262144), 62500);
    EXPECT_EQ(mvop(true, 262144), 64833);
    // 128 KiB read: 1000 + (131072 - 1024) * 241 >> 10 = 1000 + 127 * 241 = 31607.
    EXPECT_EQ(mvop(false, 131072), 31607);
    // Below the first point the curve is flat; past the last it keeps the last slope:
    // 1 MiB read: 62500 + 768 * 241 = 247588.
    EXPECT_EQ(mvop(false, 512), 1000);
    EXPECT_EQ(mvop(false, 0), 1000);
    EXPECT_EQ(mvop(false, 1 << 20), 247588);
    // Unused classes continue the curve up to the largest I/O, without a jump.
    EXPECT_NEAR(mvop(false, kMaxSize), mvop(false, kMaxSize - 1), 241);
    EXPECT_GE(mvop(false, kMaxSize), mvop(false, kMaxSize - 1));
    // Writes always cost more than reads of the same size (Libra §4.3), at every size.
    for (uint32_t size = 0; size <= kMaxSize; size += 4099)
        EXPECT_GT(mvop(true, size), mvop(false, size)) << size;
    EXPECT_GT(mvop(true, kMaxSize), mvop(false, kMaxSize));
    // Interpolation is monotone and never overshoots the next point.
    double last = 0;
    for (uint32_t size = 0; size <= 262144; size += 97) {
        EXPECT_GE(mvop(false, size), last);
        EXPECT_LE(mvop(false, size), 62500);
        last = mvop(false, size);
    }
}

TEST(CostTable, VopCurveStartingAtZeroUsesAllClasses)
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    bg_vop_point pts[BG_SIZE_CLASSES];
    for (unsigned i = 0; i < BG_SIZE_CLASSES; i++)
        pts[i] = {i * 4096u, 500 + 1000 * i, 900 + 2000 * i};
    ASSERT_EQ(bg_cost_load_vop(&hal, pts, BG_SIZE_CLASSES, BG_DIM_SWLIMIT), BG_COST_OK);
    for (unsigned i = 0; i < BG_SIZE_CLASSES; i++) {
        EXPECT_EQ(est.size_class(pts[i].size), i);
        EXPECT_EQ(est.estimate(0, false, pts[i].size), (CostVector{{0, 0, 0, pts[i].read_mvop}}));
        EXPECT_EQ(est.estimate(3, true, pts[i].size), (CostVector{{0, 0, 0, pts[i].write_mvop}}));
    }
    // Halfway between points 2 and 3: 2500 + 2048 * 250 >> 10 = 3000 (slope 1000 per 4 KiB).
    EXPECT_EQ(est.estimate(1, false, 10240)[BG_DIM_SWLIMIT], 3000u);
}

TEST(CostTable, VopLoaderRejectsBadCurves)
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    const std::vector<uint32_t> fresh = snapshot(est);
    bg_vop_point pts[BG_SIZE_CLASSES + 1];
    for (unsigned i = 0; i <= BG_SIZE_CLASSES; i++)
        pts[i] = {1024u << i, 1000 * (i + 1), 3000 * (i + 1)};

    EXPECT_EQ(bg_cost_check_vop(pts, 0), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_check_vop(nullptr, 2), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_load_vop(nullptr, pts, 2, BG_DIM_CPU), BG_COST_EINVAL);
    EXPECT_EQ(bg_cost_load_vop(&hal, pts, 2, BG_COST_DIMS), BG_COST_EINVAL);
    // More than 8 points; 8 points that do not start at 0 (class 0 is then the flat part).
    EXPECT_EQ(bg_cost_load_vop(&hal, pts, BG_SIZE_CLASSES + 1, BG_DIM_CPU), BG_COST_E2BIG);
    EXPECT_EQ(bg_cost_load_vop(&hal, pts, BG_SIZE_CLASSES, BG_DIM_CPU), BG_COST_E2BIG);
    EXPECT_EQ(bg_cost_check_vop(pts, BG_SIZE_CLASSES - 1), BG_COST_OK);

    bg_vop_point bad[3] = {pts[0], pts[1], pts[2]};
    bad[2].size = bad[1].size;  // not strictly ascending
    EXPECT_EQ(bg_cost_load_vop(&hal, bad, 3, BG_DIM_CPU), BG_COST_EDOM);
    bad[2].size = bad[1].size - 1;  // descending
    EXPECT_EQ(bg_cost_load_vop(&hal, bad, 3, BG_DIM_CPU), BG_COST_EDOM);
    bad[2] = pts[2];
    bad[2].write_mvop = bad[1].write_mvop - 1;  // cost falls with size
    EXPECT_EQ(bg_cost_load_vop(&hal, bad, 3, BG_DIM_CPU), BG_COST_EDOM);
    bad[2] = pts[2];
    bad[2].size = 1u << BG_SIZE_BITS;  // no I/O is that large
    EXPECT_EQ(bg_cost_load_vop(&hal, bad, 3, BG_DIM_CPU), BG_COST_ERANGE);
    bad[2] = pts[2];
    bad[2].read_mvop = 0xFFFFFFFFu;  // 2^32 mVOP over 4 KiB: slope beyond 24 bits
    EXPECT_EQ(bg_cost_load_vop(&hal, bad, 3, BG_DIM_CPU), BG_COST_ERANGE);
    EXPECT_EQ(snapshot(est), fresh);  // nothing was written

    // A single point is a fixed cost per I/O (Libra's "fixed" model).
    ASSERT_EQ(bg_cost_load_vop(&hal, pts, 1, BG_DIM_CPU), BG_COST_OK);
    EXPECT_EQ(est.estimate(0, false, 0)[BG_DIM_CPU], 1000u);
    EXPECT_EQ(est.estimate(0, false, kMaxSize)[BG_DIM_CPU], 1000u);
    EXPECT_EQ(est.estimate(0, true, 4096)[BG_DIM_CPU], 3000u);
}

}  // namespace
