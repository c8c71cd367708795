#include "burstgate/model/task_loop.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace bg {

TaskLoop::TaskLoop(const TaskLoopConfig& cfg) : cfg_(cfg)
{
    if (cfg.gate != UnrelatedGate::kStartBeforeDeadline &&
        cfg.gate != UnrelatedGate::kFirstThenFit)
        throw std::invalid_argument("task loop: unknown unrelated-task gate");
    if (cfg.policy != LoopPolicy::kPriority && cfg.policy != LoopPolicy::kFifo)
        throw std::invalid_argument("task loop: unknown loop policy");
}

std::uint64_t TaskLoop::dlt(std::uint64_t t_io_ns, std::uint32_t alpha_permille,
                            std::uint64_t lt_ns)
{
    // T_IO of one loop is far below 2^54 ns, so the product cannot overflow 64 bits.
    const std::uint64_t scaled = t_io_ns * alpha_permille / 1000u;
    return std::max(scaled, lt_ns);
}

void TaskLoop::push(Task task, std::uint64_t ready_ns)
{
    // kFifo keeps both classes in one queue (io_), in the order they became ready.
    auto& q = task.cls == TaskClass::kIoRelated || cfg_.policy == LoopPolicy::kFifo ? io_ : unrelated_;
    q.push_back(Ready{std::move(task), ready_ns});
}

void TaskLoop::enqueue(Task task)
{
    push(std::move(task), now_);
}

void TaskLoop::post_rx(Task task, std::uint64_t arrival_ns)
{
    auto pos = std::upper_bound(rx_.begin(), rx_.end(), arrival_ns,
                                [](std::uint64_t t, const Arrival& a) { return t < a.arrival_ns; });
    rx_.insert(pos, Arrival{std::move(task), arrival_ns});
}

void TaskLoop::execute(Ready r, std::uint64_t loop)
{
    const std::uint64_t start = now_;
    now_ += r.task.duration_ns;
    trace_.push_back(TraceEntry{loop, r.task.name, r.task.cls, r.ready_ns, start, now_, r.task.id});
    for (Task& child : r.task.spawns)
        push(std::move(child), now_);
}

std::optional<LoopRecord> TaskLoop::run_loop()
{
    LoopRecord rec;
    if (io_.empty() && unrelated_.empty() && (rx_.empty() || rx_.front().arrival_ns > now_)) {
        if (rx_.empty())
            return std::nullopt;
        rec.idle_ns = rx_.front().arrival_ns - now_;
        now_ = rx_.front().arrival_ns;
    }
    rec.loop = ++loops_;
    rec.start_ns = now_;

    if (io_.empty() || cfg_.policy == LoopPolicy::kFifo) {
        rec.rx_polled = true;
        const std::uint64_t poll_time = now_;
        while (!rx_.empty() && rx_.front().arrival_ns <= poll_time) {
            push(std::move(rx_.front().task), poll_time);
            rx_.pop_front();
            rec.rx_taken++;
        }
        now_ += cfg_.rx_poll_ns;
    }

    if (cfg_.policy == LoopPolicy::kFifo) {
        // The batch present after the poll; what it spawns lands behind it, for the next loop.
        for (std::size_t batch = io_.size(); batch > 0; batch--) {
            Ready r = std::move(io_.front());
            io_.pop_front();
            const bool io_task = r.task.cls == TaskClass::kIoRelated;
            execute(std::move(r), rec.loop);
            (io_task ? rec.io_tasks : rec.unrelated_tasks)++;
        }
        rec.t_io_ns = now_ - rec.start_ns;
        rec.end_ns = now_;
        return rec;
    }

    while (!io_.empty()) {
        Ready r = std::move(io_.front());
        io_.pop_front();
        execute(std::move(r), rec.loop);
        rec.io_tasks++;
    }
    rec.t_io_ns = now_ - rec.start_ns;
    rec.dlt_ns = dlt(rec.t_io_ns, cfg_.alpha_permille, cfg_.lt_ns);

    // Tasks spawned below land behind the ones present now and are never reconsidered
    // here, so the queue length bounds this loop.
    std::size_t budget = unrelated_.size();
    while (budget-- > 0) {
        const std::uint64_t elapsed = now_ - rec.start_ns;
        if (elapsed >= rec.dlt_ns)
            break;
        if (cfg_.gate == UnrelatedGate::kFirstThenFit && rec.unrelated_tasks > 0 &&
            elapsed + unrelated_.front().task.duration_ns > rec.dlt_ns)
            break;
        Ready r = std::move(unrelated_.front());
        unrelated_.pop_front();
        execute(std::move(r), rec.loop);
        rec.unrelated_tasks++;
    }
    rec.end_ns = now_;
    return rec;
}

std::vector<LoopRecord> TaskLoop::run(std::size_t max_loops)
{
    std::vector<LoopRecord> out;
    while (out.size() < max_loops) {
        std::optional<LoopRecord> rec = run_loop();
        if (!rec)
            break;
        out.push_back(*rec);
    }
    return out;
}

}  // namespace bg
