// The store threads' queue and their policy per request (sw/gateway/work_queue.hpp). Each case
// would let a deferred within-base request wait behind a bursting tenant's work (one FIFO for
// both: 74 ms at P95 in compare-qemu case 2), starve the second class, reorder a class, lose
// queued work at stop, leave a store thread asleep with work queued, or run a bursting tenant's
// work -- or a within-base tenant's unbounded FLUSH, TRIM, CACHE or BLOCK_STATUS -- at a
// real-time priority.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "work_queue.hpp"

using bg::gw::first_class;
using bg::gw::store_priority;
using bg::gw::WorkQueue;
namespace nbd = bg::gw::nbd;

TEST(WorkQueue, WithinComesFirstAndEachClassKeepsItsOrder)
{
    WorkQueue<int> q;
    int v[6] = {0, 1, 2, 3, 4, 5};
    q.push(&v[0], false);
    q.push(&v[1], true);
    q.push(&v[2], false);
    q.push(&v[3], true);
    q.push(&v[4], false);
    q.push(&v[5], true);
    std::vector<int> got;
    for (int k = 0; k < 6; k++)
        got.push_back(*q.pop());
    EXPECT_EQ(got, (std::vector<int>{1, 3, 5, 0, 2, 4}));
}

TEST(WorkQueue, AWithinItemPushedLaterOvertakesQueuedOthers)
{
    WorkQueue<int> q;
    int other[3] = {10, 11, 12}, within = 20;
    for (int &o : other)
        q.push(&o, false);
    EXPECT_EQ(*q.pop(), 10);
    q.push(&within, true);
    EXPECT_EQ(*q.pop(), 20);
    EXPECT_EQ(*q.pop(), 11);
}

TEST(WorkQueue, StopHandsOutWhatIsQueuedThenNull)
{
    WorkQueue<int> q;
    int a = 1, b = 2;
    q.push(&a, false);
    q.push(&b, true);
    q.stop();
    EXPECT_EQ(*q.pop(), 2);
    EXPECT_EQ(*q.pop(), 1);
    EXPECT_EQ(q.pop(), nullptr);
}

TEST(WorkQueue, AWaitingPopWakesForAPushAndForStop)
{
    WorkQueue<int> q;
    int a = 7;
    std::atomic<int> seen{0};
    std::thread t([&] {
        seen = *q.pop();
        seen = q.pop() == nullptr ? -1 : -2;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    q.push(&a, false);
    for (int k = 0; k < 2000 && seen.load() != 7; k++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(seen.load(), 7);  // woken by the push itself, not by the stop below
    q.stop();
    t.join();
    EXPECT_EQ(seen.load(), -1);
}

TEST(WorkQueue, TheSecondClassGetsATurnAfterARunOfTheFirst)
{
    WorkQueue<int> q;
    constexpr unsigned kRun = WorkQueue<int>::kFirstRun;
    std::vector<int> first(3 * kRun), second(3);
    for (unsigned k = 0; k < first.size(); k++)
        first[k] = static_cast<int>(k);
    for (unsigned k = 0; k < second.size(); k++)
        second[k] = 1000 + static_cast<int>(k);
    for (int &s : second)
        q.push(&s, false);
    for (int &f : first)
        q.push(&f, true);
    std::vector<int> got;
    while (got.size() < first.size() + second.size())
        got.push_back(*q.pop());
    // kRun of the first class, one of the second, and so on: each class still in its order.
    std::vector<int> want;
    for (unsigned r = 0; r < 3; r++) {
        for (unsigned k = 0; k < kRun; k++)
            want.push_back(static_cast<int>(r * kRun + k));
        want.push_back(1000 + static_cast<int>(r));
    }
    EXPECT_EQ(got, want);
}

TEST(FirstClass, OnlyAReadersOwnWorkWithinItsBase)
{
    EXPECT_TRUE(first_class(true, nbd::kCmdRead, 0));
    EXPECT_TRUE(first_class(true, nbd::kCmdWrite, 0));
    EXPECT_FALSE(first_class(false, nbd::kCmdRead, 0));
    EXPECT_FALSE(first_class(false, nbd::kCmdWrite, 0));
    // Within a base but not bounded by its bytes: one request token each, any range.
    EXPECT_FALSE(first_class(true, nbd::kCmdWrite, nbd::kCmdFlagFua));
    for (std::uint16_t type : {nbd::kCmdFlush, nbd::kCmdTrim, nbd::kCmdCache, nbd::kCmdWriteZeroes,
                               nbd::kCmdBlockStatus})
        EXPECT_FALSE(first_class(true, type, 0)) << type;
}

TEST(StorePriority, FollowsTheRequestWhileAnotherTenantIsFavoured)
{
    constexpr int kBase = 5, kEngine = 10;
    // Without --realtime nothing is real-time.
    for (bool other : {false, true})
        for (bool within : {false, true})
            EXPECT_EQ(store_priority(false, other, within, kBase, kEngine), 0);
    // Nobody else favoured: the engine's priority for any request (--base-priority 0 always).
    EXPECT_EQ(store_priority(true, false, false, kBase, kEngine), kEngine);
    EXPECT_EQ(store_priority(true, false, true, kBase, kEngine), kEngine);
    // Another tenant favoured: within its own base at the readers' priority, else normal.
    EXPECT_EQ(store_priority(true, true, true, kBase, kEngine), kBase);
    EXPECT_EQ(store_priority(true, true, false, kBase, kEngine), 0);
}
