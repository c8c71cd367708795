// The SA control thread's event loop with priority-based task scheduling ("Come Hell or
// Still Water" §4.3, Figure 9). Two FIFO queues, I/O-related and I/O-unrelated. A loop:
//   1. if the I/O-related queue is empty, poll the rx buffer: every request that has arrived
//      moves into the queue of its class (this is the only way requests enter);
//   2. run I/O-related tasks to completion until that queue is empty, including the ones
//      they spawn; their time (with the poll) is T_IO;
//   3. DLT = max(alpha * T_IO, LT); run I/O-unrelated tasks while the gate below allows,
//      each to completion once started; tasks spawned here wait for the next loop.
// LoopPolicy::kFifo is the event loop §3.2 starts from (Figure 7, libevent's): one FIFO queue
// for both classes, the rx buffer polled at the start of every loop, and the loop runs the
// batch present after the poll (tasks spawned by the batch wait for the next loop).
// Time is integer ns and nothing is random, so a run is a pure function of its inputs.
#ifndef BURSTGATE_MODEL_TASK_LOOP_HPP
#define BURSTGATE_MODEL_TASK_LOOP_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bg {

enum class TaskClass : std::uint8_t { kIoRelated = 0, kIoUnrelated = 1 };

// When the next I/O-unrelated task may start, with elapsed = now - loop start.
enum class UnrelatedGate : std::uint8_t {
    // elapsed < DLT: the literal rule of §4.3. In Figure 9's second loop it would also
    // start c2 (elapsed 13 us < DLT 13.2 us), which the paper's narration defers.
    kStartBeforeDeadline = 0,
    // elapsed < DLT, and either no unrelated task has run yet in this loop or this one ends
    // by DLT (elapsed + duration <= DLT). Reproduces every loop of Figure 9, and still
    // guarantees one unrelated task per loop whenever T_IO < DLT (the starvation bound).
    kFirstThenFit = 1,
};

// How one loop picks its tasks.
enum class LoopPolicy : std::uint8_t {
    kPriority = 0,  // §4.3: I/O-related queue first, then I/O-unrelated up to DLT
    kFifo = 1,      // the baseline event loop: one FIFO of both classes, a batch per loop
};

struct Task {
    std::string name;
    TaskClass cls = TaskClass::kIoRelated;
    std::uint64_t duration_ns = 0;
    std::vector<Task> spawns;  // enqueued, in order, when this task completes
    std::uint32_t id = 0;      // the caller's handle (the simulator's I/O record), copied to the trace
};

struct TaskLoopConfig {
    std::uint64_t lt_ns = 10000;          // LT, the static loop timeout (paper: 10 us)
    std::uint32_t alpha_permille = 1200;  // alpha in 1/1000 (paper: 1.2); 0 = static LT
    std::uint64_t rx_poll_ns = 0;         // cost of one rx poll, counted in T_IO
    UnrelatedGate gate = UnrelatedGate::kFirstThenFit;
    LoopPolicy policy = LoopPolicy::kPriority;
};

struct TraceEntry {
    std::uint64_t loop = 0;  // 1-based
    std::string task;
    TaskClass cls = TaskClass::kIoRelated;
    std::uint64_t ready_ns = 0;  // when it entered its queue
    std::uint64_t start_ns = 0;
    std::uint64_t end_ns = 0;
    std::uint32_t id = 0;  // Task::id
};

struct LoopRecord {
    std::uint64_t loop = 0;      // 1-based
    std::uint64_t start_ns = 0;
    std::uint64_t idle_ns = 0;   // waited for the next rx arrival before this loop
    bool rx_polled = false;
    std::uint32_t rx_taken = 0;
    std::uint64_t t_io_ns = 0;   // kFifo: the whole batch's time
    std::uint64_t dlt_ns = 0;    // kFifo: 0 (no timeout)
    std::uint64_t end_ns = 0;
    std::uint32_t io_tasks = 0;
    std::uint32_t unrelated_tasks = 0;
};

class TaskLoop {
public:
    explicit TaskLoop(const TaskLoopConfig& cfg);

    // Ready now, at the tail of the task's class queue.
    void enqueue(Task task);
    // A request in the rx buffer, visible to polls that start at or after arrival_ns.
    // Requests with equal arrival keep their posting order.
    void post_rx(Task task, std::uint64_t arrival_ns = 0);

    // One loop from now. When both queues are empty and nothing has arrived, time first
    // jumps to the next arrival; with nothing left at all, returns nullopt.
    std::optional<LoopRecord> run_loop();
    // Loops until idle or max_loops, whichever comes first.
    std::vector<LoopRecord> run(std::size_t max_loops);
    // An idle loop's clock moves to t (never back): a caller that drives the loop from its
    // own clock starts the next loop at its `now`, not at the last loop's end.
    void advance_to(std::uint64_t t) { now_ = std::max(now_, t); }
    // Something is ready now: a task queued, or an rx arrival at or before now.
    bool has_work() const { return !io_.empty() || !unrelated_.empty() || (!rx_.empty() && rx_.front().arrival_ns <= now_); }
    // The trace so far, handed over and cleared (a long-running caller's memory stays bounded).
    std::vector<TraceEntry> take_trace() { return std::exchange(trace_, {}); }

    // max(alpha_permille * t_io / 1000, lt), floored; software-only, so it may divide.
    static std::uint64_t dlt(std::uint64_t t_io_ns, std::uint32_t alpha_permille,
                             std::uint64_t lt_ns);

    std::uint64_t now() const { return now_; }
    std::uint64_t loops() const { return loops_; }
    std::size_t pending_io() const { return io_.size(); }
    std::size_t pending_unrelated() const { return unrelated_.size(); }
    std::size_t pending_rx() const { return rx_.size(); }
    const std::vector<TraceEntry>& trace() const { return trace_; }
    const TaskLoopConfig& config() const { return cfg_; }

private:
    struct Ready {
        Task task;
        std::uint64_t ready_ns;
    };
    struct Arrival {
        Task task;
        std::uint64_t arrival_ns;
    };

    void push(Task task, std::uint64_t ready_ns);
    void execute(Ready r, std::uint64_t loop);

    TaskLoopConfig cfg_;
    std::uint64_t now_ = 0;
    std::uint64_t loops_ = 0;
    std::deque<Ready> io_;
    std::deque<Ready> unrelated_;
    std::deque<Arrival> rx_;  // sorted by arrival_ns, stable
    std::vector<TraceEntry> trace_;
};

}  // namespace bg

#endif  // BURSTGATE_MODEL_TASK_LOOP_HPP
