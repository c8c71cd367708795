// The store threads' work (engine.cpp backend_loop): requests admitted at a window (deferred
// ones), FUA writes, FLUSH, TRIM, WRITE_ZEROES, CACHE and BLOCK_STATUS. Two classes, each in
// arrival order: the first is a favoured reader's own kind of work, deferred (first_class), the
// second the rest. With one FIFO for both, a deferred within-base request waited behind the
// bursting tenants' work, which the store threads do at the normal policy while a reader is
// favoured: 74 ms at P95 behind 56 fio clients on 2 cores (docs/results.md, "The store
// threads' queue"). The first class is bounded by
// the tenants' bases (their bytes), but not so tightly that the second may wait without end:
// after kFirstRun first-class items in a row, a waiting second-class item goes next.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "nbd_proto.hpp"

namespace bg::gw {

// The work a connection's reader does itself when the request is admitted at its first offer
// (engine.hpp): a READ, or a WRITE without FUA. The rest (FLUSH, a FUA write's fdatasync, TRIM,
// WRITE_ZEROES, CACHE, BLOCK_STATUS) always goes to the store threads.
inline bool reader_work(std::uint16_t type, std::uint16_t flags)
{
    return (type == nbd::kCmdRead || type == nbd::kCmdWrite) && !(flags & nbd::kCmdFlagFua);
}

// The store threads' first class: a favoured reader's own kind of work, deferred -- a request
// within its tenant's base (Request::within) that is reader_work. Not FLUSH, FUA, TRIM, CACHE or
// BLOCK_STATUS even within a base: they take one request token and no bytes from the base's
// bucket (base_priority.hpp), yet may cover the whole export or every dirty page (0.1-0.3 ms each
// over 256 MiB), so at a real-time priority a tenant's base would not bound their CPU.
inline bool first_class(bool within, std::uint16_t type, std::uint16_t flags)
{
    return within && reader_work(type, flags);
}

template <class T>
class WorkQueue {
public:
    void push(T *item, bool first)
    {
        {
            std::lock_guard<std::mutex> g(mu_);
            q_[first ? 0 : 1].push_back(item);
        }
        cv_.notify_one();
    }
    // Blocks until an item or stop(); nullptr once stopped and empty (what is queued is still
    // handed out after stop()).
    T *pop()
    {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return stop_ || !q_[0].empty() || !q_[1].empty(); });
        const bool first = !q_[0].empty() && (q_[1].empty() || run_ < kFirstRun);
        std::deque<T *> &q = first ? q_[0] : q_[1];
        if (q.empty())
            return nullptr;
        run_ = first ? run_ + 1 : 0;
        T *item = q.front();
        q.pop_front();
        return item;
    }
    static constexpr unsigned kFirstRun = 8;
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
    std::deque<T *> q_[2];  // [0]: the first class, [1]: the rest
    unsigned run_ = 0;      // first-class items taken in a row
    bool stop_ = false;
};

// The SCHED_FIFO priority a store thread takes for one request (0: the normal policy). Without
// --realtime nothing is real-time. With nobody else favoured (always with --base-priority 0,
// base_priority_in_use()) at the engine's priority, as the window loop and the pacer. While
// another tenant's reader is favoured: first-class work (first_class) at the readers' priority
// (the same within-base work, deferred: neither ahead of a favoured reader nor behind the
// clients), any other at the normal policy (a bursting tenant's deferred 128 KiB copies at the
// engine's priority ran ahead of the favoured readers).
inline int store_priority(bool realtime, bool other_favoured, bool first, int base_priority, int engine_priority)
{
    if (!realtime)
        return 0;
    if (!other_favoured)
        return engine_priority;
    return first ? base_priority : 0;
}

}  // namespace bg::gw
