// The gateway's within-base priority (sw/gateway/base_priority.hpp): which requests count as
// within a tenant's base, and the reader thread's policy. Each case would let a tenant above
// its base (or a flood) run at real-time priority, or keep a within-base tenant from it.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <thread>
#include <vector>

#include "base_priority.hpp"

using bg::gw::BasePriority;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// One tenant: 1000 IOPS and 1 MB/s at its base, 64 KiB the largest block (so its buckets hold
// 10 requests and 64 KiB: the byte bucket's depth is one max block, above 10 ms of 1 MB/s).
BasePriority one(int prio = 5) { return BasePriority(prio, {1000}, {1e6}, {64 << 10}); }

}  // namespace

TEST(BasePriority, RequestsWithinTheBaseRateAreWithinAndNoMore)
{
    BasePriority bp = one();
    const auto t0 = Clock::now();
    for (int k = 0; k < 10; k++)
        EXPECT_TRUE(bp.within(0, 0, t0)) << k;  // 10 ms of 1000 IOPS
    EXPECT_FALSE(bp.within(0, 0, t0));        // a flood of 0-byte requests is not favoured
    EXPECT_FALSE(bp.within(0, 0, t0 + std::chrono::microseconds(500)));
    EXPECT_TRUE(bp.within(0, 0, t0 + std::chrono::microseconds(1000)));  // one more per ms
}

TEST(BasePriority, BytesCountAndARequestOutsideTakesNothing)
{
    BasePriority bp = one();
    const auto t0 = Clock::now();
    EXPECT_FALSE(bp.within(0, 128 << 10, t0));  // above the byte bucket: not within ...
    EXPECT_TRUE(bp.within(0, 64 << 10, t0));    // ... and it took nothing from it
    EXPECT_FALSE(bp.within(0, 4096, t0));       // the bytes are spent
    // 1 MB/s refills 4096 bytes in about 4.1 ms.
    EXPECT_FALSE(bp.within(0, 4096, t0 + milliseconds(4)));
    EXPECT_TRUE(bp.within(0, 4096, t0 + milliseconds(5)));
}

TEST(BasePriority, TheBucketsHoldAtMostTheirDepth)
{
    BasePriority bp = one();
    const auto t0 = Clock::now() + std::chrono::seconds(10);  // a long idle time
    int n = 0;
    while (bp.within(0, 0, t0))
        n++;
    EXPECT_EQ(n, 10);
}

TEST(BasePriority, TenantsHaveTheirOwnBuckets)
{
    BasePriority bp(5, {1000, 100000}, {1e6, 1e9}, {65536, 65536});
    const auto t0 = Clock::now();
    for (int k = 0; k < 10; k++)
        bp.within(0, 0, t0);
    EXPECT_FALSE(bp.within(0, 0, t0));
    EXPECT_TRUE(bp.within(1, 65536, t0));
}

TEST(BasePriority, OffMeansNeverWithin)
{
    BasePriority bp = one(0);
    EXPECT_FALSE(bp.enabled());
    EXPECT_FALSE(bp.within(0, 0, Clock::now()));
}

TEST(BasePriority, AReaderRunsAtTheRealTimePolicyOnlyWhileFavoured)
{
    BasePriority bp = one();
    {
        BasePriority::Thread th(bp);
        th.favour(true);
        if (!bp.enabled())
            GTEST_SKIP() << "SCHED_FIFO refused (no CAP_SYS_NICE)";
        EXPECT_EQ(sched_getscheduler(0), SCHED_FIFO);
        th.favour(false);
        EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
        th.favour(true);
        EXPECT_EQ(sched_getscheduler(0), SCHED_FIFO);
    }
    EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);  // the reader's end drops it
}

TEST(BasePriority, InUseOnlyWhileAnotherTenantIsFavoured)
{
    // With nobody else to protect, a tenant's replies and store work keep the engine's fast path.
    std::this_thread::sleep_for(milliseconds(20));  // earlier cases' favoured requests expire
    BasePriority bp(5, std::vector<double>(9, 1000), std::vector<double>(9, 1e6), std::vector<std::uint32_t>(9, 65536));
    ASSERT_TRUE(bp.within(7, 0));
    EXPECT_FALSE(bg::gw::base_priority_in_use(7));  // only itself
    EXPECT_TRUE(bg::gw::base_priority_in_use(8));
    ASSERT_TRUE(bp.within(8, 0));
    EXPECT_TRUE(bg::gw::base_priority_in_use(7));
    EXPECT_TRUE(bg::gw::base_priority_in_use(8));  // 7, a moment ago
    EXPECT_TRUE(bg::gw::base_priority_in_use(3));
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_FALSE(bg::gw::base_priority_in_use(3));  // 10 ms on, nobody is
}
