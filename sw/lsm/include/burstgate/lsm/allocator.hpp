// Calcspar's congestion-aware IOPS allocator (§4.2, Fig. 13): three priority queues
// in front of the IOPS stabilizer, with dynamic time windows.
//
// Each one-second period, a queue may take tokens only inside its window, all windows ending
// at the second's end. High priority always has [0, 1). The medium window opens at
// Allocated_high / Paid and the low window at (Allocated_high + Allocated_medium) / Paid,
// with the allocations counted in the previous second -- the paper's example: high used 70 %
// and medium 20 % -> windows [0,1), [0.7,1), [0.9,1). Within its window a queue competes
// for the remaining tokens, higher priority first, FIFO inside a queue; an I/O that finds no
// token waits for the next second. Requests never reach the volume without a token, so the
// volume never overdraws and never queues (the stabilizer, §4.1).
//
// Policy::no_allocation is the "NA" comparison of §5.3 (one FIFO behind the stabilizer).
// Policy::static_share and dynamic_share are §5.3's other comparisons: "SA" gives the three
// queues fixed 6:3:1 shares of each second's tokens (unused shares are wasted); "DA" lets the
// medium and low queues together take at most Paid - Allocated_high(previous second), at any
// time of the second. Neither has time windows.
// Policy::time_window_reserve is our extension, not the paper's: inside its window a medium or
// low queue may only take tokens beyond the high queue's expected remaining demand in this
// second, prev_high * (1 - elapsed share of the second). Without it a greedy medium queue
// (an L1 -> L2 compaction streams 256 KiB I/Os back to back) can take every token left after
// its window opens, and high-priority reads arriving later in that second wait for the next
// one (docs/lsm.md, "Where the time windows leak").
// `borrow` (our extension, see stabilizer.hpp): a high-priority I/O that finds the second's
// tokens gone spends the stabilizer's mirrored borrowing pool -- the volume serves it as
// overdraft, 1/A apart -- instead of waiting for the next second; medium and low never borrow.
// The allocator is itself a Volume, so the LSM store does not know whether it is there.
#pragma once

#include <array>
#include <cstdint>
#include <deque>

#include "burstgate/lsm/compaction_priority.hpp"
#include "burstgate/lsm/stabilizer.hpp"
#include "burstgate/lsm/volume.hpp"

namespace bg::lsm {

class CongestionAwareAllocator final : public Volume {
public:
    enum class Policy { time_window, no_allocation, time_window_reserve, static_share, dynamic_share };

    // `slices`: the stabilizer's token release granularity (1 = the paper; see stabilizer.hpp).
    // `borrow`: see above (false = the paper). Throws std::invalid_argument with slices > 1.
    CongestionAwareAllocator(Volume& volume, Policy policy = Policy::time_window, Time phase = 0,
                             std::uint32_t slices = 1, bool borrow = false);

    void submit(const IoRequest& io, Completion done) override;
    std::uint32_t paid_iops() const override { return volume_.paid_iops(); }
    EventLoop& loop() override { return volume_.loop(); }

    // Window start of queue p in the current second, as a fraction of the second.
    double window_start(Priority p);
    // Tokens allocated to queue p in the previous / current second.
    std::uint32_t allocated_prev(Priority p) { roll(); return prev_[idx(p)]; }
    std::uint32_t allocated_now(Priority p) { roll(); return cur_[idx(p)]; }
    // Share of the paid tokens the high queue took in the current second so far and in the
    // previous second (the fluctuation-aware cache's 95 % switch reads these, §4.3).
    double high_share_now() { roll(); return static_cast<double>(cur_[0]) / paid_iops(); }
    double high_share_prev() { roll(); return static_cast<double>(prev_[0]) / paid_iops(); }
    std::size_t queued(Priority p) const { return queues_[idx(p)].size(); }
    std::uint64_t granted() const { return stabilizer_.granted(); }
    // Tokens high-priority I/O took from the mirrored borrowing pool (borrow mode).
    std::uint64_t borrowed() const { return stabilizer_.borrowed(); }
    // Total time I/Os waited in the allocator, per queue (ns).
    Time wait_ns(Priority p) const { return wait_[idx(p)]; }
    Time max_wait_ns(Priority p) const { return max_wait_[idx(p)]; }

private:
    struct Pending {
        IoRequest io;
        Completion done;
        Time enqueued;
    };
    static std::size_t idx(Priority p) { return static_cast<std::size_t>(p); }
    void roll();
    void pump();
    void schedule_wake(Time t);

    Volume& volume_;
    Policy policy_;
    IopsStabilizer stabilizer_;
    std::array<std::deque<Pending>, kPriorities> queues_;
    std::array<std::uint32_t, kPriorities> prev_{};
    std::array<std::uint32_t, kPriorities> cur_{};
    std::array<Time, kPriorities> wait_{};
    std::array<Time, kPriorities> max_wait_{};
    Time second_ = -1;             // start of the second cur_ counts
    Time wake_at_ = -1;            // earliest pending wake-up, -1 when none
};

}  // namespace bg::lsm
