// A tenant's idle payload buffers, reused across its requests (READ replies, WRITE payloads).
//
// Why: a fresh buffer per request cost the gateway most of its large-I/O time. A 64 KiB buffer
// is mmapped (M_MMAP_THRESHOLD, main.cpp) or cut from an arena top that malloc trims as soon as
// it is free, so each request zero-filled 16 fresh pages (16 page faults) and each free unmapped
// them (a TLB shootdown of the other cores running the gateway's threads). At iodepth 1 the
// arena's top happened to serve one buffer again and again; at iodepth 16 it could not, and
// 64 KiB reads fell from ~20k to ~8k IOPS (perf: 40 % of the gateway's samples in the
// zero-fill's page faults, 15 % in munmap; docs/results.md).
//
// Bound: an idle buffer stays charged to its tenant's and the global byte budget (budget.hpp),
// exactly as the request that last used it was, so the pool adds nothing to what the budgets
// bound (RSS <= R0 + --buffer + threads' stacks, docs/gateway.md). A reader that finds a budget
// short trims the pools first (its own tenant's for the tenant budget, every tenant's for the
// global one) and, while it waits, buffers coming back are freed rather than kept, so idle
// buffers never hold a waiting request back.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "budget.hpp"

namespace bg::gw {

class BufferPool {
public:
    using Bytes = std::vector<std::uint8_t>;
    // Buffers below this come from malloc's per-thread caches without a page fault: not pooled.
    static constexpr std::size_t kMinPooled = 16 << 10;

    // `tenant_pressed`, `global_pressed`: non-zero while a reader waits for this tenant's budget,
    // or for the global one (then nothing is kept).
    BufferPool(Budget *tenant, Budget *global, const std::atomic<int> *tenant_pressed,
               const std::atomic<int> *global_pressed)
        : t_(tenant), g_(global), tp_(tenant_pressed), gp_(global_pressed)
    {
    }
    BufferPool(const BufferPool &) = delete;
    BufferPool &operator=(const BufferPool &) = delete;
    ~BufferPool() { trim(); }

    // An idle buffer of at least n bytes and at most twice that (a larger one would hold budget
    // the request does not need), resized to n, its capacity's charge moved to `to`; or false.
    // Its bytes are whatever the last request left there: the caller overwrites all n of them
    // (a READ's store read, a WRITE's payload) before anything is sent.
    bool take(std::uint32_t n, Bytes &out, Charge &to)
    {
        if (n < kMinPooled)
            return false;
        std::lock_guard<std::mutex> g(mu_);
        auto it = idle_.lower_bound(n);
        if (it == idle_.end() || it->first > 2ull * n)
            return false;
        out = std::move(it->second);
        idle_.erase(it);
        held_ -= out.capacity();
        to.attach(out.capacity());
        out.resize(n);  // within the capacity: no allocation; bytes past the old size are zeroed
        return true;
    }

    // Keeps `b` for a later request, its capacity's charge detached from `from` (whose budgets
    // must be this pool's); or frees it, `from` keeping the charge, when it is small, nobody
    // could use it (above the tenant budget's half: the largest payload) or a reader waits.
    void put(Bytes &&b, Charge &from)
    {
        const std::size_t cap = b.capacity();
        if (cap < kMinPooled || cap > from.amount() || cap > t_->limit() / 2)
            return;
        std::lock_guard<std::mutex> g(mu_);
        // Read under the lock: a reader raises the flag, then trims (taking the lock), so a buffer
        // is either trimmed by it or sees the flag here, never kept while the reader waits.
        if (tp_->load() > 0 || gp_->load() > 0)
            return;
        from.detach(cap);
        held_ += cap;
        idle_.emplace(cap, std::move(b));
    }

    // Frees every idle buffer and gives its bytes back to the budgets.
    void trim()
    {
        std::multimap<std::size_t, Bytes> drop;
        std::uint64_t n;
        {
            std::lock_guard<std::mutex> g(mu_);
            drop.swap(idle_);
            n = held_;
            held_ = 0;
        }
        if (n) {
            g_->give(n);
            t_->give(n);
        }
    }

    std::uint64_t held()
    {
        std::lock_guard<std::mutex> g(mu_);
        return held_;
    }

private:
    Budget *t_, *g_;
    const std::atomic<int> *tp_, *gp_;
    std::mutex mu_;
    std::multimap<std::size_t, Bytes> idle_;  // by capacity
    std::uint64_t held_ = 0;                  // their capacities, charged to both budgets
};

}  // namespace bg::gw
