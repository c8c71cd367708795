#include "burstgate/lsm/allocator.hpp"

#include <algorithm>
#include <cmath>

namespace bg::lsm {

CongestionAwareAllocator::CongestionAwareAllocator(Volume& volume, Policy policy, Time phase,
                                                   std::uint32_t slices, bool borrow)
    : volume_(volume), policy_(policy), stabilizer_(volume.paid_iops(), phase, slices, borrow)
{
}

void CongestionAwareAllocator::roll()
{
    const Time now = volume_.loop().now();
    const Time start = stabilizer_.second_start(now);
    if (start == second_) return;
    // The previous second is the one just before `start`; if whole seconds passed with no
    // activity, it allocated nothing.
    prev_ = (second_ == start - kSec) ? cur_ : std::array<std::uint32_t, kPriorities>{};
    cur_ = {};
    second_ = start;
}

double CongestionAwareAllocator::window_start(Priority p)
{
    roll();
    if (policy_ == Policy::no_allocation || policy_ == Policy::static_share || policy_ == Policy::dynamic_share ||
        p == Priority::high) {
        return 0.0;
    }
    const double paid = paid_iops();
    const double above = p == Priority::medium ? static_cast<double>(prev_[0])
                                                : static_cast<double>(prev_[0]) + prev_[1];
    return std::min(1.0, above / paid);
}

void CongestionAwareAllocator::submit(const IoRequest& io, Completion done)
{
    const Priority p = policy_ == Policy::no_allocation ? Priority::high : priority_of(io);
    queues_[idx(p)].push_back(Pending{io, std::move(done), volume_.loop().now()});
    pump();
}

void CongestionAwareAllocator::schedule_wake(Time t)
{
    if (wake_at_ != -1 && wake_at_ <= t) return;
    wake_at_ = t;
    volume_.loop().at(t, [this, t] {
        if (wake_at_ == t) wake_at_ = -1;
        pump();
    });
}

void CongestionAwareAllocator::pump()
{
    roll();
    const Time now = volume_.loop().now();
    Time next_wake = -1;
    auto want_wake = [&](Time t) { if (next_wake == -1 || t < next_wake) next_wake = t; };
    for (int q = 0; q < kPriorities; ++q) {
        auto& queue = queues_[static_cast<std::size_t>(q)];
        if (queue.empty()) continue;
        const double frac = window_start(static_cast<Priority>(q));
        // Window opening time, rounded up to whole ns so "now >= open" is exact.
        const Time open = second_ + static_cast<Time>(std::ceil(frac * static_cast<double>(kSec)));
        if (frac >= 1.0 || now < open) {
            want_wake(frac >= 1.0 ? second_ + kSec : open);
            continue;
        }
        // Tokens a lower queue must leave for the high queue's expected rest-of-second demand.
        std::uint32_t reserve = 0;
        if (policy_ == Policy::time_window_reserve && q > 0) {
            const double left = 1.0 - static_cast<double>(now - second_) / static_cast<double>(kSec);
            const double expect = static_cast<double>(prev_[0]) * left;
            reserve = static_cast<std::uint32_t>(std::ceil(expect));
        }
        // SA / DA: a per-second cap on what this queue may take.
        std::uint64_t cap = ~std::uint64_t{0};
        const std::uint64_t paid = paid_iops();
        if (policy_ == Policy::static_share) {
            static constexpr std::uint64_t kShare[kPriorities] = {6, 3, 1};  // §5.3: 6:3:1
            cap = paid * kShare[q] / 10;
        } else if (policy_ == Policy::dynamic_share && q > 0) {
            const std::uint64_t lower = std::uint64_t{cur_[1]} + cur_[2];
            const std::uint64_t room = paid > prev_[0] ? paid - prev_[0] : 0;
            cap = room > lower ? cur_[static_cast<std::size_t>(q)] + (room - lower) : cur_[static_cast<std::size_t>(q)];
        }
        while (!queue.empty()) {
            Pending& head = queue.front();
            const std::uint32_t need = io_tokens(head.io.bytes);
            if (std::uint64_t{cur_[static_cast<std::size_t>(q)]} + need > cap) {
                want_wake(second_ + kSec);
                break;
            }
            if (reserve > 0 && stabilizer_.available(now) < need + reserve) {
                // Re-check when the reserve has shrunk by one token's worth of time.
                want_wake(now + std::max<Time>(1, kSec / std::max<std::uint32_t>(1, prev_[0])));
                break;
            }
            if (!stabilizer_.try_take(now, need) && !(q == 0 && stabilizer_.try_borrow(now, need))) break;
            cur_[static_cast<std::size_t>(q)] += need;
            wait_[static_cast<std::size_t>(q)] += now - head.enqueued;
            max_wait_[static_cast<std::size_t>(q)] = std::max(max_wait_[static_cast<std::size_t>(q)], now - head.enqueued);
            Pending p = std::move(head);
            queue.pop_front();
            volume_.submit(p.io, std::move(p.done));
        }
        if (!queue.empty()) want_wake(stabilizer_.next_refill(now));
    }
    if (next_wake != -1) schedule_wake(next_wake);
}

}  // namespace bg::lsm
