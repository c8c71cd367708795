#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "burstgate/model/task_loop.hpp"

namespace {

using bg::LoopPolicy;
using bg::LoopRecord;
using bg::Task;
using bg::TaskClass;
using bg::TaskLoop;
using bg::TaskLoopConfig;
using bg::UnrelatedGate;

constexpr std::uint64_t kUs = 1000;

Task io(const std::string& name, std::uint64_t us, std::vector<Task> spawns = {})
{
    return Task{name, TaskClass::kIoRelated, us * kUs, std::move(spawns)};
}

Task bg_task(const std::string& name, std::uint64_t us)
{
    return Task{name, TaskClass::kIoUnrelated, us * kUs, {}};
}

// Figure 9's initial state: A3 B3 C3 | a3 b2 c2, and D5 waiting in the rx buffer, which
// generates E3, F3 (I/O-related) and d3, e3 (I/O-unrelated).
TaskLoop figure9(std::uint32_t alpha_permille, UnrelatedGate gate, LoopPolicy policy = LoopPolicy::kPriority)
{
    TaskLoopConfig cfg;
    cfg.lt_ns = 10 * kUs;
    cfg.alpha_permille = alpha_permille;
    cfg.gate = gate;
    cfg.policy = policy;
    TaskLoop loop(cfg);
    loop.enqueue(io("A", 3));
    loop.enqueue(io("B", 3));
    loop.enqueue(io("C", 3));
    loop.enqueue(bg_task("a", 3));
    loop.enqueue(bg_task("b", 2));
    loop.enqueue(bg_task("c", 2));
    loop.post_rx(io("D", 5, {io("E", 3), io("F", 3), bg_task("d", 3), bg_task("e", 3)}), 0);
    return loop;
}

struct Expect {
    std::uint64_t loop;
    const char* task;
    std::uint64_t start_us;
    std::uint64_t end_us;
};

void expect_trace(const TaskLoop& loop, const std::vector<Expect>& want)
{
    const auto& got = loop.trace();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); i++) {
        SCOPED_TRACE("trace entry " + std::to_string(i));
        EXPECT_EQ(got[i].loop, want[i].loop);
        EXPECT_EQ(got[i].task, want[i].task);
        EXPECT_EQ(got[i].start_ns, want[i].start_us * kUs);
        EXPECT_EQ(got[i].end_ns, want[i].end_us * kUs);
    }
}

TEST(TaskLoop, DltIsMaxOfScaledTioAndLt)
{
    EXPECT_EQ(TaskLoop::dlt(9000, 1200, 10000), 10800u);
    EXPECT_EQ(TaskLoop::dlt(11000, 1200, 10000), 13200u);
    EXPECT_EQ(TaskLoop::dlt(0, 1200, 10000), 10000u);
    EXPECT_EQ(TaskLoop::dlt(11000, 0, 10000), 10000u);
    EXPECT_EQ(TaskLoop::dlt(7, 1500, 0), 10u);  // floor(10.5)
}

TEST(TaskLoop, Figure9Exactly)
{
    TaskLoop loop = figure9(1200, UnrelatedGate::kFirstThenFit);
    const std::vector<LoopRecord> loops = loop.run(10);
    ASSERT_EQ(loops.size(), 3u);
    expect_trace(loop, {{1, "A", 0, 3},
                        {1, "B", 3, 6},
                        {1, "C", 6, 9},
                        {1, "a", 9, 12},
                        {2, "D", 12, 17},
                        {2, "E", 17, 20},
                        {2, "F", 20, 23},
                        {2, "b", 23, 25},
                        {3, "c", 25, 27},
                        {3, "d", 27, 30},
                        {3, "e", 30, 33}});
    // Loop 1 skips the rx buffer although D is already there: the I/O queue is not empty.
    EXPECT_FALSE(loops[0].rx_polled);
    EXPECT_EQ(loops[0].t_io_ns, 9 * kUs);
    EXPECT_EQ(loops[0].dlt_ns, 10800u);
    EXPECT_EQ(loops[0].end_ns, 12 * kUs);
    EXPECT_TRUE(loops[1].rx_polled);
    EXPECT_EQ(loops[1].rx_taken, 1u);
    EXPECT_EQ(loops[1].t_io_ns, 11 * kUs);
    EXPECT_EQ(loops[1].dlt_ns, 13200u);
    EXPECT_EQ(loops[1].unrelated_tasks, 1u);
    EXPECT_TRUE(loops[2].rx_polled);
    EXPECT_EQ(loops[2].rx_taken, 0u);
    EXPECT_EQ(loops[2].t_io_ns, 0u);
    EXPECT_EQ(loops[2].dlt_ns, 10 * kUs);
    EXPECT_FALSE(loop.run_loop().has_value());
    EXPECT_EQ(loop.pending_io() + loop.pending_unrelated() + loop.pending_rx(), 0u);
}

TEST(TaskLoop, StaticLtSkipsB2InLoop2)
{
    // alpha = 0 is the plain static LT; alpha = 1.0 gives DLT = T_IO = 11 us, also too late.
    for (std::uint32_t alpha : {0u, 1000u}) {
        SCOPED_TRACE("alpha_permille " + std::to_string(alpha));
        TaskLoop loop = figure9(alpha, UnrelatedGate::kFirstThenFit);
        const std::vector<LoopRecord> loops = loop.run(10);
        ASSERT_EQ(loops.size(), 3u);
        EXPECT_EQ(loops[1].unrelated_tasks, 0u);
        expect_trace(loop, {{1, "A", 0, 3},
                            {1, "B", 3, 6},
                            {1, "C", 6, 9},
                            {1, "a", 9, 12},
                            {2, "D", 12, 17},
                            {2, "E", 17, 20},
                            {2, "F", 20, 23},
                            {3, "b", 23, 25},
                            {3, "c", 25, 27},
                            {3, "d", 27, 30},
                            {3, "e", 30, 33}});
    }
}

TEST(TaskLoop, LiteralStartBeforeDeadlineAlsoRunsC2InLoop2)
{
    // After b2 the elapsed time is 13 us < 13.2 us, so the literal rule starts c2 as well;
    // this is the one place where it departs from the paper's narration of Figure 9.
    TaskLoop loop = figure9(1200, UnrelatedGate::kStartBeforeDeadline);
    ASSERT_EQ(loop.run(10).size(), 3u);
    expect_trace(loop, {{1, "A", 0, 3},
                        {1, "B", 3, 6},
                        {1, "C", 6, 9},
                        {1, "a", 9, 12},
                        {2, "D", 12, 17},
                        {2, "E", 17, 20},
                        {2, "F", 20, 23},
                        {2, "b", 23, 25},
                        {2, "c", 25, 27},
                        {3, "d", 27, 30},
                        {3, "e", 30, 33}});
}

TEST(TaskLoop, IoTasksSpawnedByUnrelatedTasksWaitAndBlockTheNextPoll)
{
    TaskLoopConfig cfg;
    TaskLoop loop(cfg);
    loop.enqueue(Task{"m", TaskClass::kIoUnrelated, 1 * kUs, {io("X", 1)}});
    loop.post_rx(io("R", 1), 0);
    std::optional<LoopRecord> first = loop.run_loop();
    ASSERT_TRUE(first);
    EXPECT_TRUE(first->rx_polled);  // the I/O queue was empty: R is taken and runs first
    std::optional<LoopRecord> second = loop.run_loop();
    ASSERT_TRUE(second);
    EXPECT_FALSE(second->rx_polled);  // X, spawned by m, is pending
    expect_trace(loop, {{1, "R", 0, 1}, {1, "m", 1, 2}, {2, "X", 2, 3}});
}

TEST(TaskLoop, IdleLoopWaitsForTheNextArrival)
{
    TaskLoop loop(TaskLoopConfig{});
    loop.post_rx(io("late", 2), 50 * kUs);
    loop.post_rx(io("early", 1), 5 * kUs);
    std::optional<LoopRecord> r = loop.run_loop();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->idle_ns, 5 * kUs);
    EXPECT_EQ(r->rx_taken, 1u);
    r = loop.run_loop();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->start_ns, 50 * kUs);
    expect_trace(loop, {{1, "early", 5, 6}, {2, "late", 50, 52}});
    EXPECT_EQ(loop.trace()[1].ready_ns, 50 * kUs);
}

TEST(TaskLoop, RxPollCostCountsInTio)
{
    TaskLoopConfig cfg;
    cfg.rx_poll_ns = 500;
    TaskLoop loop(cfg);
    loop.post_rx(io("R", 9), 0);
    std::optional<LoopRecord> r = loop.run_loop();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->t_io_ns, 9500u);
    EXPECT_EQ(loop.trace()[0].start_ns, 500u);
}

// A request every 12 us, each 12 us of I/O work: T_IO > LT in every loop. With a static LT
// the monitoring tasks never run; with DLT they get a slot every loop.
std::uint64_t unrelated_run_under_load(std::uint32_t alpha_permille)
{
    TaskLoopConfig cfg;
    cfg.alpha_permille = alpha_permille;
    TaskLoop loop(cfg);
    for (int i = 0; i < 20; i++)
        loop.enqueue(bg_task("mon" + std::to_string(i), 2));
    for (std::uint64_t k = 0; k < 200; k++)
        loop.post_rx(io("R" + std::to_string(k), 12), k * 12 * kUs);
    std::uint64_t ran = 0;
    for (const LoopRecord& r : loop.run(100))
        ran += r.unrelated_tasks;
    return ran;
}

TEST(TaskLoop, DynamicLtPreventsStarvation)
{
    EXPECT_EQ(unrelated_run_under_load(0), 0u);
    EXPECT_EQ(unrelated_run_under_load(1200), 20u);
}

// The baseline event loop (§3.2, Figure 7) on Figure 9's tasks: one FIFO of both classes in the
// order they were queued, the rx buffer polled every loop, each loop running the batch present
// after its poll; what D spawns waits for loop 2. D arrives before loop 1, so loop 1 polls it
// in (the priority loop skips the poll because its I/O queue is not empty).
TEST(TaskLoop, FifoRunsTheBatchInQueueOrderAndPollsEveryLoop)
{
    TaskLoop loop = figure9(1200, UnrelatedGate::kFirstThenFit, LoopPolicy::kFifo);
    const std::vector<LoopRecord> loops = loop.run(10);
    ASSERT_EQ(loops.size(), 2u);
    expect_trace(loop, {{1, "A", 0, 3},
                        {1, "B", 3, 6},
                        {1, "C", 6, 9},
                        {1, "a", 9, 12},
                        {1, "b", 12, 14},
                        {1, "c", 14, 16},
                        {1, "D", 16, 21},
                        {2, "E", 21, 24},
                        {2, "F", 24, 27},
                        {2, "d", 27, 30},
                        {2, "e", 30, 33}});
    EXPECT_TRUE(loops[0].rx_polled);
    EXPECT_EQ(loops[0].rx_taken, 1u);
    EXPECT_EQ(loops[0].io_tasks, 4u);
    EXPECT_EQ(loops[0].unrelated_tasks, 3u);
    EXPECT_EQ(loops[0].t_io_ns, 21 * kUs);  // the whole batch: no loop timeout
    EXPECT_EQ(loops[0].dlt_ns, 0u);
    EXPECT_TRUE(loops[1].rx_polled);
}

// The simulator's use: a request arriving while a loop runs waits for the next loop's poll;
// advance_to starts an idle loop at the caller's clock; take_trace hands the trace over once
// with the caller's id; has_work sees only arrivals up to the loop's clock.
TEST(TaskLoop, DrivenByAnOutsideClock)
{
    TaskLoop loop(TaskLoopConfig{});
    Task r1 = io("r1", 4);
    r1.id = 7;
    loop.post_rx(std::move(r1), 0);
    ASSERT_TRUE(loop.run_loop());
    Task r2 = io("r2", 1);
    r2.id = 8;
    loop.post_rx(std::move(r2), 2 * kUs);  // arrived mid-loop (the loop ended at 4 us)
    loop.post_rx(io("r3", 1), 40 * kUs);
    std::vector<bg::TraceEntry> first = loop.take_trace();
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].id, 7u);
    EXPECT_TRUE(loop.trace().empty());
    EXPECT_TRUE(loop.has_work());
    std::optional<LoopRecord> r = loop.run_loop();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->start_ns, 4 * kUs);
    EXPECT_EQ(loop.trace()[0].id, 8u);
    EXPECT_EQ(loop.trace()[0].ready_ns, 4 * kUs);
    EXPECT_FALSE(loop.has_work());  // r3 arrives at 40 us, after the loop's clock (5 us)
    loop.advance_to(30 * kUs);
    loop.advance_to(10 * kUs);  // never back
    EXPECT_EQ(loop.now(), 30 * kUs);
}

}  // namespace
