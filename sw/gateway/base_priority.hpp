// With --realtime the gateway's window loop and SA stages run at SCHED_FIFO; the connections'
// reader threads do not, and on a host the gateway shares with its clients a within-base
// tenant's request then waits on the run queue behind a bursting neighbour's threads (compare-qemu
// case 1 on 2 cores: the victim's reader ran 0.07 s and waited 0.17-0.25 s per second, about
// 80 us of each 4 KiB round trip, and the victim fell to 83-92 % of its demand). BasePriority
// gives the host CPU to the work the contracts sell first: a reader runs at SCHED_FIFO
// --base-priority (below the engine's 10) for a request, and the wait for the next one, while
// its tenant's requests stay within its base rate, and at the normal policy otherwise.
//
// Within base: a token bucket per tenant at its base IOPS and base MB/s (every request takes
// one request token, READ/WRITE/WRITE_ZEROES also their length in bytes), 10 ms deep and at
// least one request and one `max_block`. A request it cannot cover takes nothing and runs
// unfavoured. So a tenant's real-time CPU is bounded by what its base buys, whatever it sends:
// a bursting neighbour's requests above its base, a flood of malformed requests, and a WRITE
// larger than 10 ms of its base all run at the normal policy.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace bg::gw {

// True while a reader of a tenant other than `tenant` is favoured: a request of another tenant
// was within its base in the last 10 ms. Only then do the engine's store threads leave the
// engine's SCHED_FIFO for `tenant`'s work (the readers' priority for first-class work, the
// normal policy for the rest: store_priority, work_queue.hpp), and its SCHED_FIFO threads leave
// `tenant`'s unfavoured replies to its connections' writers: with nobody else to protect (every
// other tenant idle or above its base) the gateway runs as with --base-priority 0, which the
// priority's price (a wake-up of the writer per reply, store work at the normal policy) would
// otherwise slow for nothing.
bool base_priority_in_use(std::size_t tenant);

class BasePriority {
public:
    // base_iops / base_bytes_per_s per tenant (scenario order); prio 0: off.
    BasePriority(int prio, const std::vector<double> &base_iops, const std::vector<double> &base_bytes_per_s,
                 const std::vector<std::uint32_t> &max_block);
    bool enabled() const { return prio_ > 0 && !refused_; }
    // One request of `bytes` of tenant t arrived at `now`: true (and its tokens taken) when it is
    // within t's base rate; false takes nothing.
    bool within(std::size_t t, std::uint64_t bytes, std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

    // The calling reader thread's policy, set only when it changes.
    class Thread {
    public:
        explicit Thread(BasePriority &bp) : bp_(bp) {}
        ~Thread();
        void favour(bool on);

    private:
        BasePriority &bp_;
        bool on_ = false;
    };

private:
    struct Bucket {
        std::mutex mu;
        double rate_ios = 0, rate_bytes = 0, depth_ios = 0, depth_bytes = 0;
        double ios = 0, bytes = 0;
        std::chrono::steady_clock::time_point at{};
    };
    int prio_;
    std::atomic<bool> refused_{false};  // SCHED_FIFO refused once (no CAP_SYS_NICE): off from then on
    std::vector<std::unique_ptr<Bucket>> buckets_;
};

}  // namespace bg::gw
