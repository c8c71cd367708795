// Calcspar's IOPS stabilizer (§4.1), congestion-aware allocator with dynamic time windows
// (§4.2) and opportunistic compaction priorities (§4.4).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "burstgate/lsm/allocator.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/compaction_priority.hpp"
#include "burstgate/lsm/stabilizer.hpp"

using namespace bg::lsm;

namespace {
IoRequest req(IoSource src, std::uint8_t level = 0)
{
    IoRequest io;
    io.source = src;
    io.level = level;
    return io;
}
}  // namespace

// Tokens are refreshed, not accumulated: an idle second does not let the next one send 2A.
// Catches a stabilizer that carries unused tokens over (which would overdraw the volume).
TEST(LsmStabilizer, RefreshNotAccumulate)
{
    IopsStabilizer s(1000);
    EXPECT_EQ(s.available(0), 1000u);
    EXPECT_TRUE(s.try_take(0, 999));
    EXPECT_FALSE(s.try_take(kSec - 1, 2));
    EXPECT_TRUE(s.try_take(kSec - 1, 1));
    EXPECT_EQ(s.available(3 * kSec + 5), 1000u);  // after idle seconds: still A, not 3A
    EXPECT_TRUE(s.try_take(3 * kSec + 5, 1000));
    EXPECT_FALSE(s.try_take(4 * kSec - 1, 1));
    EXPECT_EQ(s.granted(), 2000u);
    EXPECT_EQ(s.available(5 * kSec), 1000u);  // second 5 unused ...
    EXPECT_EQ(s.available(6 * kSec), 1000u);  // ... does not give second 6 2A
}

// Our extension (slices > 1): A/n per 1/n s, summing to exactly A per second; an exhausted
// slice refills at the next slice, not the next second. Catches slices that leak tokens
// beyond A per second (the volume would overdraw).
TEST(LsmStabilizer, SlicesSumToPaidIops)
{
    IopsStabilizer s(1003, 0, 10);
    std::uint32_t total = 0;
    for (int i = 0; i < 10; ++i) {
        const Time t = i * (kSec / 10) + 7;
        const std::uint32_t a = s.available(t);
        EXPECT_TRUE(a == 100u || a == 101u) << a;
        EXPECT_TRUE(s.try_take(t, a));
        EXPECT_EQ(s.next_refill(t), (i + 1) * (kSec / 10));
        total += a;
    }
    EXPECT_EQ(total, 1003u);
    EXPECT_THROW(IopsStabilizer(5, 0, 6), std::invalid_argument);
}

// Our "borrow" stabilizer mirrors the volume's borrowing pool (§2.3): once the second's tokens
// are gone it lends up to A more; the next refresh repays the pool first (A - debt new
// tokens), and after an idle second everything is back to A. The paper's strict stabilizer
// never lends. Catches a mirror that carries tokens over or forgets the debt (the volume would
// make the caller wait in the I/O domain), or a strict stabilizer that overdraws.
TEST(LsmStabilizer, BorrowMirrorsTheVolumePool)
{
    IopsStabilizer strict(1000);
    EXPECT_TRUE(strict.try_take(0, 1000));
    EXPECT_FALSE(strict.try_borrow(1, 1));
    IopsStabilizer s(1000, 0, 1, true);
    EXPECT_TRUE(s.try_take(0, 1000));
    EXPECT_FALSE(s.try_take(1, 1));
    EXPECT_TRUE(s.try_borrow(1, 300));
    EXPECT_EQ(s.pool(2), 700u);
    EXPECT_FALSE(s.try_borrow(2, 701));
    EXPECT_EQ(s.available(kSec), 700u);  // 300 of the refill repaid the pool
    EXPECT_EQ(s.pool(kSec), 1000u);
    EXPECT_TRUE(s.try_take(kSec + 1, 700));
    EXPECT_TRUE(s.try_borrow(kSec + 1, 1000));
    EXPECT_EQ(s.available(2 * kSec), 0u);  // the whole refill repaid the pool
    EXPECT_EQ(s.available(3 * kSec), 1000u);  // second 2 borrowed nothing: no debt, and its
                                              // unused tokens are not carried over
    EXPECT_TRUE(s.try_borrow(3 * kSec, 500));
    EXPECT_EQ(s.available(5 * kSec), 1000u);  // an idle second between: the debt is repaid
    EXPECT_EQ(s.borrowed(), 1800u);
    EXPECT_THROW(IopsStabilizer(1000, 0, 2, true), std::invalid_argument);
}

// End to end: a flood of user reads through the borrow allocator on a CloudVolume. What the
// allocator lends is exactly what the volume serves as overdraft, nothing waits in the
// volume, and low-priority I/O never borrows. Catches a mirror out of step with the volume's
// refill (waited > 0), or medium/low queues spending the pool.
TEST(LsmAllocator, BorrowOnlyForHighAndNeverWaitsInTheVolume)
{
    EventLoop loop;
    CloudVolume vol(loop, volume_preset("io2", 1000), 1);
    CongestionAwareAllocator alloc(vol, CongestionAwareAllocator::Policy::time_window, 0, 1, true);
    int high = 0, low = 0;
    for (int i = 0; i < 5000; ++i) alloc.submit(req(IoSource::user), [&] { ++high; });
    for (int i = 0; i < 300; ++i) alloc.submit(req(IoSource::prefetch), [&] { ++low; });
    loop.run_until(kSec - 1);
    EXPECT_EQ(alloc.borrowed(), 1000u);  // A regular + the whole pool in second 0
    loop.run_until(30 * kSec);
    EXPECT_EQ(high, 5000);
    EXPECT_EQ(low, 300);
    EXPECT_EQ(vol.stats().waited, 0u);
    EXPECT_EQ(vol.stats().overdraft, alloc.borrowed());
    // Seconds 1-3 refresh 0 tokens (each repays the previous second's 1000) and lend 1000.
    EXPECT_EQ(alloc.borrowed(), 4000u);
    EXPECT_EQ(alloc.granted(), 5300u);
}

// §4.4 / §4.2 priority map. Catches e.g. L0 compaction demoted (read amplification grows) or
// prefetch competing with user reads.
TEST(LsmOpportunisticCompaction, PriorityByLevel)
{
    EXPECT_EQ(priority_of(req(IoSource::user)), Priority::high);
    EXPECT_EQ(priority_of(req(IoSource::flush)), Priority::high);
    EXPECT_EQ(priority_of(req(IoSource::wal)), Priority::high);
    EXPECT_EQ(priority_of(req(IoSource::compaction, 0)), Priority::high);
    EXPECT_EQ(priority_of(req(IoSource::compaction, 1)), Priority::medium);
    EXPECT_EQ(priority_of(req(IoSource::compaction, 2)), Priority::medium);
    EXPECT_EQ(priority_of(req(IoSource::compaction, 3)), Priority::low);
    EXPECT_EQ(priority_of(req(IoSource::compaction, 5)), Priority::low);
    EXPECT_EQ(priority_of(req(IoSource::prefetch)), Priority::low);
}

// The paper's example (§4.2): high took 70 % and medium 20 % of the tokens in the previous
// second -> windows [0,1), [0.7,1), [0.9,1). A medium I/O submitted at 0.5 s goes out at
// exactly 0.7 s, a low one at 0.9 s, a high one at once. Catches windows computed from the
// current second, windows not aligned at the tail, or a window formula other than
// Allocated / Paid.
TEST(LsmAllocator, DynamicTimeWindowsPaperExample)
{
    EventLoop loop;
    CloudVolume vol(loop, volume_preset("io2", 1000), 1);
    CongestionAwareAllocator alloc(vol);
    for (int i = 0; i < 700; ++i) alloc.submit(req(IoSource::user), [] {});
    for (int i = 0; i < 200; ++i) alloc.submit(req(IoSource::compaction, 1), [] {});
    loop.run_until(kSec - 1);
    EXPECT_EQ(alloc.allocated_now(Priority::high), 700u);
    EXPECT_EQ(alloc.allocated_now(Priority::medium), 200u);
    loop.run_until(kSec + kSec / 2);
    EXPECT_DOUBLE_EQ(alloc.window_start(Priority::high), 0.0);
    EXPECT_DOUBLE_EQ(alloc.window_start(Priority::medium), 0.7);
    EXPECT_DOUBLE_EQ(alloc.window_start(Priority::low), 0.9);
    const std::uint64_t before = vol.stats().ios;
    Time t_high = -1, t_med = -1, t_low = -1;
    alloc.submit(req(IoSource::compaction, 4), [] {});
    alloc.submit(req(IoSource::compaction, 2), [] {});
    alloc.submit(req(IoSource::user), [] {});
    EXPECT_EQ(vol.stats().ios, before + 1);  // only the high one went out now
    t_high = loop.now();
    loop.run_until(kSec + 7 * kSec / 10 - 1);
    EXPECT_EQ(vol.stats().ios, before + 1);
    loop.run_until(kSec + 7 * kSec / 10);
    EXPECT_EQ(vol.stats().ios, before + 2);
    t_med = loop.now();
    loop.run_until(kSec + 9 * kSec / 10 - 1);
    EXPECT_EQ(vol.stats().ios, before + 2);
    loop.run_until(kSec + 9 * kSec / 10);
    EXPECT_EQ(vol.stats().ios, before + 3);
    t_low = loop.now();
    EXPECT_LT(t_high, t_med);
    EXPECT_LT(t_med, t_low);
    EXPECT_EQ(alloc.allocated_now(Priority::medium), 1u);
    EXPECT_EQ(alloc.allocated_now(Priority::low), 1u);
}

// Under sustained overload from every queue the volume never overdraws and never makes an
// I/O wait (the stabilizer's promise, §4.1), high priority gets served first, and every I/O
// is eventually sent (nothing dropped). Catches tokens leaking past the per-second budget
// or a low queue starving the high one.
TEST(LsmAllocator, NeverOverdrawsAndHighFirst)
{
    EventLoop loop;
    CloudVolume vol(loop, volume_preset("io2", 1000), 1);
    CongestionAwareAllocator alloc(vol);
    int done_high = 0, done_low = 0;
    // A second in which high took 95 %: the next second's low window is [0.95, 1).
    for (int i = 0; i < 950; ++i) alloc.submit(req(IoSource::user), [] {});
    loop.run_until(kSec);
    for (int i = 0; i < 1500; ++i) alloc.submit(req(IoSource::prefetch), [&] { ++done_low; });
    for (int i = 0; i < 1500; ++i) alloc.submit(req(IoSource::user), [&] { ++done_high; });
    loop.run_until(2 * kSec - 1);
    EXPECT_EQ(done_high, 1000);  // the whole second went to high, none to low
    EXPECT_EQ(done_low, 0);
    loop.run_until(12 * kSec);
    EXPECT_EQ(done_high, 1500);
    EXPECT_EQ(done_low, 1500);
    EXPECT_EQ(vol.stats().overdraft, 0u);
    EXPECT_EQ(vol.stats().waited, 0u);
    for (std::uint32_t t : vol.tokens_per_second()) EXPECT_LE(t, 1000u);
}

// NA ("no allocation", §5.3): one FIFO behind the stabilizer -- a compaction burst queued
// first takes the whole second's tokens and delays a user read to the next second; with TWA
// the low queue waits for its window (0.9 s after a second where high took 90 %) and the
// user read goes out at once. Catches a policy switch that does nothing.
TEST(LsmAllocator, NoAllocationIsFifo)
{
    for (auto pol : {CongestionAwareAllocator::Policy::no_allocation, CongestionAwareAllocator::Policy::time_window}) {
        EventLoop loop;
        CloudVolume vol(loop, volume_preset("io2", 1000), 1);
        CongestionAwareAllocator alloc(vol, pol);
        for (int i = 0; i < 900; ++i) alloc.submit(req(IoSource::user), [] {});
        loop.run_until(kSec);
        for (int i = 0; i < 1000; ++i) alloc.submit(req(IoSource::compaction, 3), [] {});
        Time user_done = -1;
        alloc.submit(req(IoSource::user), [&] { user_done = loop.now(); });
        loop.run_until(4 * kSec);
        if (pol == CongestionAwareAllocator::Policy::no_allocation) {
            EXPECT_GE(user_done, 2 * kSec);
        } else {
            EXPECT_LT(user_done, kSec + kMs);
        }
    }
}

// Where the time windows leak, and our reserve extension: after a second in which high took
// 50 %, a medium compaction burst queued at the start of the next second takes every token
// once its window opens at 0.5 s, so a user read at 0.6 s waits for the next second (TWA as
// the paper describes it); with twa-reserve the medium queue leaves prev_high * (1 - 0.5) =
// 250 tokens and the read goes out at once. Catches a reserve that does nothing or that
// blocks the medium queue entirely.
TEST(LsmAllocator, ReserveKeepsTokensForHigh)
{
    for (auto pol : {CongestionAwareAllocator::Policy::time_window, CongestionAwareAllocator::Policy::time_window_reserve}) {
        EventLoop loop;
        CloudVolume vol(loop, volume_preset("io2", 1000), 1);
        CongestionAwareAllocator alloc(vol, pol);
        for (int i = 0; i < 500; ++i) alloc.submit(req(IoSource::user), [] {});
        loop.run_until(kSec);
        int medium = 0;
        for (int i = 0; i < 1000; ++i) alloc.submit(req(IoSource::compaction, 1), [&] { ++medium; });
        loop.run_until(kSec + 6 * kSec / 10);
        Time user_sent = -1;
        const std::uint64_t before = vol.stats().ios;
        alloc.submit(req(IoSource::user), [] {});
        if (vol.stats().ios > before) user_sent = loop.now();
        loop.run_until(2 * kSec - 1);
        if (pol == CongestionAwareAllocator::Policy::time_window) {
            EXPECT_EQ(alloc.allocated_now(Priority::medium), 1000u);
            EXPECT_EQ(user_sent, -1);
        } else {
            EXPECT_EQ(user_sent, kSec + 6 * kSec / 10);
            EXPECT_GE(alloc.allocated_now(Priority::medium), 740u);  // ~750 minus rounding
            EXPECT_LE(alloc.allocated_now(Priority::medium), 999u);
        }
    }
}

// §5.3's comparisons. SA: fixed 6:3:1 shares, so low priority gets 100 tokens a second even
// when nothing else runs (the "resource wastage"); DA: after a second in which high took 700,
// medium and low together get at most 300, at any time of the second. Catches SA sharing
// unused tokens (then it is NA) or DA ignoring the high queue's usage.
TEST(LsmAllocator, StaticAndDynamicShares)
{
    {
        EventLoop loop;
        CloudVolume vol(loop, volume_preset("io2", 1000), 1);
        CongestionAwareAllocator alloc(vol, CongestionAwareAllocator::Policy::static_share);
        for (int i = 0; i < 1000; ++i) alloc.submit(req(IoSource::prefetch), [] {});
        loop.run_until(kSec - 1);
        EXPECT_EQ(alloc.allocated_now(Priority::low), 100u);
        loop.run_until(kSec);
        EXPECT_EQ(alloc.allocated_now(Priority::low), 100u);  // the next second's share
    }
    {
        EventLoop loop;
        CloudVolume vol(loop, volume_preset("io2", 1000), 1);
        CongestionAwareAllocator alloc(vol, CongestionAwareAllocator::Policy::dynamic_share);
        for (int i = 0; i < 700; ++i) alloc.submit(req(IoSource::user), [] {});
        loop.run_until(kSec);
        for (int i = 0; i < 400; ++i) alloc.submit(req(IoSource::compaction, 1), [] {});
        for (int i = 0; i < 400; ++i) alloc.submit(req(IoSource::compaction, 4), [] {});
        EXPECT_EQ(alloc.allocated_now(Priority::medium) + alloc.allocated_now(Priority::low), 300u);
        EXPECT_EQ(alloc.allocated_now(Priority::medium), 300u);  // higher priority first
    }
}
