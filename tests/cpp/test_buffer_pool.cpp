#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "burstgate/model/buffer_pool.hpp"

namespace {

using bg::Acquire;
using bg::BufferPool;
using bg::BufferPoolConfig;

void acquire_n(BufferPool& pool, unsigned q, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        ASSERT_NE(pool.acquire(q), Acquire::kStall);
}

void release_n(BufferPool& pool, unsigned q, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        pool.release(q);
}

TEST(BufferPool, RejectsBadConfiguration)
{
    EXPECT_THROW(BufferPool(BufferPoolConfig{}), std::invalid_argument);
    EXPECT_THROW(BufferPool(BufferPoolConfig::uniform(17, 1, 1)), std::invalid_argument);
    EXPECT_THROW(BufferPool(BufferPoolConfig::uniform(2, 1, 1, bg::kBpMaxQuiet + 1)),
                 std::invalid_argument);
    EXPECT_THROW(BufferPool(BufferPoolConfig::uniform(2, 40000, 40000)), std::invalid_argument);
    BufferPool pool(BufferPoolConfig::uniform(2, 1, 1));
    EXPECT_THROW(pool.release(0), std::logic_error);
    EXPECT_THROW(pool.acquire(2), std::out_of_range);
}

TEST(BufferPool, BorrowsDuringABurstKeepsThemAndReturnsWhenItEnds)
{
    BufferPool pool(BufferPoolConfig::uniform(2, 4, 8, 2));
    for (unsigned i = 0; i < 4; i++)
        EXPECT_EQ(pool.acquire(0), Acquire::kOwn);
    for (unsigned i = 0; i < 6; i++)
        EXPECT_EQ(pool.acquire(0), Acquire::kBorrowed);
    EXPECT_EQ(pool.extra(0), 6u);
    EXPECT_EQ(pool.shared_free(), 2u);
    EXPECT_EQ(pool.stats().prefills, 6u);
    release_n(pool, 0, 10);
    EXPECT_EQ(pool.extra(0), 6u);  // kept: the burst has not ended yet

    pool.tick();  // the window saw 10 in flight
    EXPECT_EQ(pool.quiet(0), 0u);
    for (unsigned i = 0; i < 10; i++)
        EXPECT_EQ(pool.acquire(0), Acquire::kOwn);  // the kept buffers need no prefill
    EXPECT_EQ(pool.stats().prefills, 6u);
    release_n(pool, 0, 10);
    pool.tick();
    EXPECT_EQ(pool.extra(0), 6u);

    pool.tick();  // first quiet window
    EXPECT_EQ(pool.quiet(0), 1u);
    EXPECT_EQ(pool.extra(0), 6u);
    pool.tick();  // second: the burst has ended
    EXPECT_EQ(pool.extra(0), 0u);
    EXPECT_EQ(pool.shared_free(), 8u);
    EXPECT_EQ(pool.stats().returned, 6u);
    EXPECT_EQ(pool.quiet(0), 0u);

    acquire_n(pool, 0, 5);  // a new burst prefills again
    EXPECT_EQ(pool.stats().prefills, 7u);
    EXPECT_TRUE(pool.conserved());
}

TEST(BufferPool, InFlightAtDedicatedIsQuiet)
{
    BufferPool pool(BufferPoolConfig::uniform(1, 4, 4, 1));
    acquire_n(pool, 0, 6);
    release_n(pool, 0, 2);
    pool.tick();  // peak 6
    EXPECT_EQ(pool.extra(0), 2u);
    pool.tick();  // peak 4 = dedicated: the extra two are idle and go back
    EXPECT_EQ(pool.extra(0), 0u);
    EXPECT_EQ(pool.inflight(0), 4u);
    EXPECT_TRUE(pool.conserved());
}

// The same trace of 50 windows, each a burst to 10 in flight on a queue with 4 dedicated
// buffers: keeping costs one prefill per extra buffer, returning on release one per I/O
// above the dedicated depth.
std::uint64_t prefills_for(std::uint32_t quiet_windows)
{
    BufferPool pool(BufferPoolConfig::uniform(1, 4, 16, quiet_windows));
    for (int w = 0; w < 50; w++) {
        acquire_n(pool, 0, 10);
        release_n(pool, 0, 10);
        pool.tick();
        EXPECT_TRUE(pool.conserved());
        if (quiet_windows == 0) {
            EXPECT_EQ(pool.extra(0), 0u);
        }
    }
    return pool.stats().prefills;
}

TEST(BufferPool, KeepingSavesThePrefillsThatReturnOnReleasePays)
{
    EXPECT_EQ(prefills_for(1), 6u);
    EXPECT_EQ(prefills_for(0), 300u);
}

TEST(BufferPool, ExhaustionStallsAndLosesNothing)
{
    for (std::uint32_t quiet : {0u, 1u}) {
        SCOPED_TRACE(quiet);
        BufferPool pool(BufferPoolConfig::uniform(2, 2, 2, quiet));
        acquire_n(pool, 0, 4);
        acquire_n(pool, 1, 2);
        for (int retry = 0; retry < 3; retry++)
            EXPECT_EQ(pool.acquire(1), Acquire::kStall);
        EXPECT_EQ(pool.stats().stalls, 1u);  // one I/O held, however often it retries
        release_n(pool, 0, 2);
        if (quiet == 0) {
            EXPECT_EQ(pool.acquire(1), Acquire::kBorrowed);
        } else {
            // Queue 0 keeps its extra buffers while its burst lasts (§5.1).
            EXPECT_EQ(pool.acquire(1), Acquire::kStall);
            pool.tick();  // peak 4
            pool.tick();  // peak 2: burst over, buffers back
            EXPECT_EQ(pool.acquire(1), Acquire::kBorrowed);
        }
        EXPECT_EQ(pool.stats().stalls, 1u);
        EXPECT_EQ(pool.stats().acquired, 7u);
        EXPECT_TRUE(pool.conserved());
    }
}

TEST(BufferPool, BorrowCapBoundsOneQueue)
{
    BufferPoolConfig cfg = BufferPoolConfig::uniform(2, 1, 10, 1);
    cfg.borrow_cap = 3;
    BufferPool pool(cfg);
    acquire_n(pool, 0, 4);
    EXPECT_EQ(pool.acquire(0), Acquire::kStall);
    EXPECT_EQ(pool.shared_free(), 7u);
    acquire_n(pool, 1, 4);  // the other queue still can burst
}

// Random arrivals, releases and ticks over random configurations; stalled I/Os are held per
// queue and retried. Invariants after every step: shared buffers are free or kept by one
// queue, nothing is in flight beyond what a queue owns, a stall happens only when the queue
// owns no free buffer and cannot borrow, and in the end every I/O got a buffer.
TEST(BufferPool, RandomizedConservationAndNoLoss)
{
    std::mt19937 rng(99);
    std::uint64_t stalls = 0, borrowed = 0, returned = 0;
    for (int round = 0; round < 40; round++) {
        const unsigned queues = 1 + rng() % 6;
        BufferPoolConfig cfg;
        for (unsigned q = 0; q < queues; q++)
            cfg.dedicated.push_back(1 + rng() % 6);
        cfg.shared = rng() % 13;
        cfg.quiet_windows = rng() % 4;
        cfg.borrow_cap = (rng() % 3 == 0) ? rng() % 5 : bg::kBpMaxCount;
        BufferPool pool(cfg);
        std::vector<std::uint64_t> held(queues, 0);
        std::uint64_t offered = 0;
        auto serve = [&] {
            for (unsigned q = 0; q < queues; q++) {
                while (held[q] > 0) {
                    const bool owns_free = pool.inflight(q) < pool.dedicated(q) + pool.extra(q);
                    const bool can_borrow =
                        pool.shared_free() > 0 && pool.extra(q) < cfg.borrow_cap;
                    const Acquire a = pool.acquire(q);
                    ASSERT_EQ(a == Acquire::kStall, !owns_free && !can_borrow);
                    ASSERT_EQ(a == Acquire::kBorrowed, !owns_free && can_borrow);
                    if (a == Acquire::kStall)
                        break;
                    held[q]--;
                }
            }
        };
        for (int step = 0; step < 3000; step++) {
            const unsigned q = rng() % queues;
            const unsigned op = rng() % 10;
            if (op < 5) {
                held[q]++;
                offered++;
            } else if (op < 9) {
                if (pool.inflight(q) > 0)
                    pool.release(q);
            } else {
                pool.tick();
            }
            serve();
            ASSERT_TRUE(pool.conserved());
            std::uint64_t kept = 0;
            for (unsigned k = 0; k < queues; k++)
                kept += pool.extra(k);
            ASSERT_EQ(kept + pool.shared_free(), cfg.shared);
            ASSERT_EQ(pool.stats().borrowed - pool.stats().returned, kept);
            ASSERT_EQ(pool.stats().prefills, pool.stats().borrowed);
        }
        for (int drain = 0; drain < 100; drain++) {
            for (unsigned q = 0; q < queues; q++)
                release_n(pool, q, pool.inflight(q));
            pool.tick();
            serve();
        }
        for (unsigned q = 0; q < queues; q++)
            ASSERT_EQ(held[q], 0u);
        EXPECT_EQ(pool.stats().acquired, offered);
        stalls += pool.stats().stalls;
        borrowed += pool.stats().borrowed;
        returned += pool.stats().returned;
    }
    std::printf("[ pool     ] 40 rounds: %llu stalled I/Os, %llu borrowed, %llu returned\n",
                static_cast<unsigned long long>(stalls), static_cast<unsigned long long>(borrowed),
                static_cast<unsigned long long>(returned));
    EXPECT_GT(stalls, 100u);
    EXPECT_GT(borrowed, 100u);
    EXPECT_EQ(returned, borrowed);  // drained pools hand every buffer back
}

}  // namespace
