// Byte budgets for what the gateway holds for clients: WRITE payloads read but not yet written,
// READ data and replies not yet sent. A connection takes its request's bytes from its tenant's
// budget and from the global one before reading the payload (or before the READ is scheduled)
// and gives them back once the reply has left; over budget it waits, and while it waits the
// gateway reads nothing more from its socket. So no client behaviour grows memory past the sum.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>

namespace bg::gw {

class Budget {
public:
    explicit Budget(std::uint64_t limit = 0) : limit_(limit) {}
    void set_limit(std::uint64_t limit) { limit_ = limit; }
    std::uint64_t limit() const { return limit_; }
    // Takes n bytes (n <= limit), waiting while they are not free; false once `give_up()` says so
    // (the connection was cut or the gateway is stopping), checked at least every 50 ms.
    //
    // Who gets bytes that come back: the oldest waiter, which keeps them (reserved) until it has
    // all it asked for, so a large request is not starved by smaller later ones that would each
    // fit in what one reply frees. A later waiter may still take bytes that were free and not
    // reserved, so a waiter whose bytes never come back (the tenant's other replies sit unread)
    // holds back nobody that fits beside it. O(1) per grant (amortized over the bytes given).
    bool take(std::uint64_t n, const std::function<bool()> &give_up)
    {
        std::unique_lock<std::mutex> g(mu_);
        if (used_ + reserved_ + n <= limit_) {
            grant_locked(n);
            return true;
        }
        Waiter w{n};
        const auto it = waiters_.insert(waiters_.end(), &w);
        for (;;) {
            if (w.granted)
                return true;
            // Its own reservation and the free bytes nobody reserved.
            if (used_ + (reserved_ - w.got) + n <= limit_) {
                reserved_ -= w.got;
                waiters_.erase(it);
                grant_locked(n);
                return true;
            }
            if (give_up()) {
                const std::uint64_t back = w.got;
                reserved_ -= back;
                waiters_.erase(it);
                hand_out_locked(back);  // the next oldest inherits what it held
                g.unlock();
                cv_.notify_all();
                return false;
            }
            cv_.wait_for(g, std::chrono::milliseconds(50));
        }
    }
    // Takes n bytes if they are free now and nobody reserved them; never waits.
    bool try_take(std::uint64_t n)
    {
        std::lock_guard<std::mutex> g(mu_);
        if (used_ + reserved_ + n > limit_)
            return false;
        grant_locked(n);
        return true;
    }
    void give(std::uint64_t n)
    {
        {
            std::lock_guard<std::mutex> g(mu_);
            used_ -= n;
            hand_out_locked(n);
        }
        cv_.notify_all();
    }
    void wake() { cv_.notify_all(); }
    std::uint64_t used()
    {
        std::lock_guard<std::mutex> g(mu_);
        return used_;
    }
    std::uint64_t peak()
    {
        std::lock_guard<std::mutex> g(mu_);
        return peak_;
    }

private:
    struct Waiter {
        std::uint64_t n, got = 0;  // asked for; reserved for it so far
        bool granted = false;
    };
    void grant_locked(std::uint64_t n)
    {
        used_ += n;
        peak_ = std::max(peak_, used_);
    }
    // `n` bytes just came back (free, not reserved): the oldest waiters' reservations first, in
    // arrival order; a waiter whose reservation and the unreserved free bytes cover it is granted.
    void hand_out_locked(std::uint64_t n)
    {
        while (!waiters_.empty()) {
            Waiter &h = *waiters_.front();
            const std::uint64_t k = std::min(n, h.n - h.got);
            h.got += k, reserved_ += k, n -= k;
            if (used_ + (reserved_ - h.got) + h.n > limit_)
                return;
            reserved_ -= h.got;
            grant_locked(h.n);
            h.granted = true;
            waiters_.pop_front();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::uint64_t limit_, used_ = 0, peak_ = 0;
    std::uint64_t reserved_ = 0;     // bytes free but held for waiters (the sum of their `got`)
    std::list<Waiter *> waiters_;    // oldest first; each on its taker's stack
};

// Bytes taken from a tenant's and the global budget, given back when this is destroyed.
class Charge {
public:
    Charge() = default;
    Charge(Budget *tenant, Budget *global, std::uint64_t n) : t_(tenant), g_(global), n_(n) {}
    Charge(Charge &&o) noexcept : t_(o.t_), g_(o.g_), n_(o.n_) { o.n_ = 0; }
    Charge &operator=(Charge &&o) noexcept
    {
        if (this != &o) {
            release();
            t_ = o.t_, g_ = o.g_, n_ = o.n_;
            o.n_ = 0;
        }
        return *this;
    }
    Charge(const Charge &) = delete;
    Charge &operator=(const Charge &) = delete;
    ~Charge() { release(); }
    std::uint64_t amount() const { return n_; }
    // n of these bytes (n <= amount()) stop being this charge's without going back to the
    // budgets: whoever keeps them (the tenant's buffer pool) gives them back itself.
    void detach(std::uint64_t n) { n_ -= n; }
    // n bytes already taken from the same budgets (a pooled buffer's) become this charge's.
    void attach(std::uint64_t n) { n_ += n; }
    Budget *tenant() const { return t_; }
    Budget *global() const { return g_; }
    void release()
    {
        if (n_) {
            g_->give(n_);
            t_->give(n_);
            n_ = 0;
        }
    }

private:
    Budget *t_ = nullptr, *g_ = nullptr;
    std::uint64_t n_ = 0;
};

}  // namespace bg::gw
