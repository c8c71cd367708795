// The store threads' work (engine.cpp backend_loop): requests admitted at a window (deferred
// ones), FUA writes, FLUSH, TRIM, WRITE_ZEROES, CACHE and BLOCK_STATUS. Two classes: a request
// within its tenant's base (Request::within, base_priority.hpp) is taken before any other, each
// class in arrival order. With one FIFO for both, a deferred within-base request waited behind
// the bursting tenants' work, which the store threads do at the normal policy while a reader is
// favoured: 74 ms at P95 behind 56 fio clients on 2 cores (docs/results.md, "The store threads'
// queue"). The other class cannot starve the contracts' work, and the within class is bounded by
// the tenants' bases, whose sum fits the machine (docs/contracts.md).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace bg::gw {

template <class T>
class WorkQueue {
public:
    void push(T *item, bool within)
    {
        {
            std::lock_guard<std::mutex> g(mu_);
            q_[within ? 0 : 1].push_back(item);
        }
        cv_.notify_one();
    }
    // Blocks until an item or stop(); nullptr once stopped and empty (what is queued is still
    // handed out after stop()).
    T *pop()
    {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return stop_ || !q_[0].empty() || !q_[1].empty(); });
        std::deque<T *> &q = !q_[0].empty() ? q_[0] : q_[1];
        if (q.empty())
            return nullptr;
        T *item = q.front();
        q.pop_front();
        return item;
    }
    void stop()
    {
        {
            std::lock_guard<std::mutex> g(mu_);
            stop_ = true;
        }
        cv_.notify_all();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<T *> q_[2];  // [0]: within a base, [1]: the rest
    bool stop_ = false;
};

// The SCHED_FIFO priority a store thread takes for one request (0: the normal policy). Without
// --realtime nothing is real-time. With nobody else favoured (always with --base-priority 0,
// base_priority_in_use()) at the engine's priority, as the window loop and the pacer. While
// another tenant's reader is favoured: a request within its own tenant's base at the readers'
// priority (the same within-base work, deferred: neither ahead of a favoured reader nor behind
// the clients), any other at the normal policy (a bursting tenant's deferred 128 KiB copies at
// the engine's priority ran ahead of the favoured readers).
inline int store_priority(bool realtime, bool other_favoured, bool within, int base_priority, int engine_priority)
{
    if (!realtime)
        return 0;
    if (!other_favoured)
        return engine_priority;
    return within ? base_priority : 0;
}

}  // namespace bg::gw
