#include "burstgate/model/buffer_pool.hpp"

#include <stdexcept>
#include <string>

namespace bg {

namespace {

void check_count(const char* what, std::uint32_t v, std::uint32_t max)
{
    if (v > max)
        throw std::invalid_argument(std::string("buffer pool: ") + what + " " +
                                    std::to_string(v) + " above " + std::to_string(max));
}

}  // namespace

BufferPool::BufferPool(const BufferPoolConfig& cfg)
    : cfg_(cfg), queues_(static_cast<unsigned>(cfg.dedicated.size())), shared_free_(cfg.shared)
{
    if (queues_ == 0 || queues_ > kBpMaxQueues)
        throw std::invalid_argument("buffer pool: dedicated has " + std::to_string(queues_) +
                                    " queues, outside 1..16");
    check_count("shared", cfg.shared, kBpMaxCount);
    for (unsigned q = 0; q < queues_; q++) {
        check_count("dedicated", cfg.dedicated[q], kBpMaxCount);
        // Every in-flight counter is kBpCountBits wide, so no queue may ever own more.
        check_count("dedicated + shared of a queue", cfg.dedicated[q] + cfg.shared,
                    kBpMaxCount);
    }
    check_count("borrow_cap", cfg.borrow_cap, kBpMaxCount);
    check_count("quiet_windows", cfg.quiet_windows, kBpMaxQuiet);
}

void BufferPool::check_queue(unsigned queue) const
{
    if (queue >= queues_)
        throw std::out_of_range("buffer pool: queue " + std::to_string(queue) +
                                " >= " + std::to_string(queues_));
}

Acquire BufferPool::acquire(unsigned queue)
{
    if (queue >= queues_)  // the check's throw is out of line, per I/O is one compare
        check_queue(queue);
    BufferPoolStats& qs = per_queue_[queue];
    Acquire result = Acquire::kOwn;
    if (inflight_[queue] >= cfg_.dedicated[queue] + extra_[queue]) {
        if (shared_free_ == 0 || extra_[queue] >= cfg_.borrow_cap) {
            if (!stalled_[queue]) {
                stalled_[queue] = true;
                qs.stalls++;
                total_.stalls++;
            }
            return Acquire::kStall;
        }
        shared_free_--;
        extra_[queue]++;
        qs.borrowed++;
        qs.prefills++;
        total_.borrowed++;
        total_.prefills++;
        result = Acquire::kBorrowed;
    }
    stalled_[queue] = false;
    inflight_[queue]++;
    if (inflight_[queue] > peak_[queue])
        peak_[queue] = inflight_[queue];
    qs.acquired++;
    total_.acquired++;
    return result;
}

void BufferPool::give_back(unsigned queue, std::uint32_t n)
{
    extra_[queue] -= n;
    shared_free_ += n;
    per_queue_[queue].returned += n;
    total_.returned += n;
}

void BufferPool::release(unsigned queue)
{
    if (queue >= queues_)
        check_queue(queue);
    if (inflight_[queue] == 0)
        throw std::logic_error("buffer pool: release on queue " + std::to_string(queue) +
                               " with nothing in flight");
    inflight_[queue]--;
    per_queue_[queue].released++;
    total_.released++;
    // Without keeping, in-flight never drops below dedicated + extra - 1, so the buffer just
    // freed is the surplus one and goes straight back.
    if (cfg_.quiet_windows == 0 && extra_[queue] > 0)
        give_back(queue, 1);
}

void BufferPool::tick()
{
    for (unsigned q = 0; q < queues_; q++) {
        if (cfg_.quiet_windows != 0 && extra_[q] > 0 && peak_[q] <= cfg_.dedicated[q]) {
            quiet_[q]++;
            if (quiet_[q] >= cfg_.quiet_windows) {
                // peak <= dedicated bounds the current in-flight count, so every extra
                // buffer is idle.
                give_back(q, extra_[q]);
                quiet_[q] = 0;
            }
        } else {
            quiet_[q] = 0;
        }
        peak_[q] = inflight_[q];
    }
}

bool BufferPool::conserved() const
{
    std::uint64_t kept = 0;
    for (unsigned q = 0; q < queues_; q++) {
        kept += extra_[q];
        if (inflight_[q] > cfg_.dedicated[q] + extra_[q] || extra_[q] > cfg_.borrow_cap)
            return false;
    }
    return kept + shared_free_ == cfg_.shared;
}

std::uint32_t BufferPool::dedicated(unsigned queue) const
{
    check_queue(queue);
    return cfg_.dedicated[queue];
}

std::uint32_t BufferPool::extra(unsigned queue) const
{
    check_queue(queue);
    return extra_[queue];
}

std::uint32_t BufferPool::peak(unsigned queue) const
{
    check_queue(queue);
    return peak_[queue];
}

std::uint32_t BufferPool::quiet(unsigned queue) const
{
    check_queue(queue);
    return quiet_[queue];
}

const BufferPoolStats& BufferPool::queue_stats(unsigned queue) const
{
    check_queue(queue);
    return per_queue_[queue];
}

}  // namespace bg
