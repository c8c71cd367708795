// Two-tier I/O buffer pool (BurstCBS §5.1, Figure 12). Each queue owns dedicated buffers
// prefilled once with its disk/queue metadata; a queue whose in-flight count outgrows what it
// owns borrows from a global shared pool, prefills the borrowed buffer once and keeps it for
// the rest of the burst, so a burst pays one prefill per extra buffer instead of one per I/O.
// The pool is credit accounting (counts, not addresses), the form the gateware keeps.
//
// "The burst ends" is evaluated only at window ticks, never per clock, so the model and the
// RTL agree whatever the clock-to-event ratio: a queue's burst has ended after quiet_windows
// consecutive windows whose peak in-flight count stayed at or below its dedicated buffers;
// then every extra buffer is idle and all of them go back at once. quiet_windows = 0 is the
// no-keeping design the paper moved away from: an extra buffer goes back on its release.
#ifndef BURSTGATE_MODEL_BUFFER_POOL_HPP
#define BURSTGATE_MODEL_BUFFER_POOL_HPP

#include <array>
#include <cstdint>
#include <vector>

#include "burstgate/regs.h"

namespace bg {

// Widths from the register map (regs.h), which sizes the gateware too.
inline constexpr unsigned kBpMaxQueues = BG_QUEUES_MAX;
inline constexpr unsigned kBpCountBits = BG_BP_COUNT_BITS;  // every buffer count register
inline constexpr unsigned kBpQuietBits = BG_BP_QUIET_BITS;  // quiet_windows register: 0..15
inline constexpr std::uint32_t kBpMaxCount = (1u << kBpCountBits) - 1u;
inline constexpr std::uint32_t kBpMaxQuiet = (1u << kBpQuietBits) - 1u;

struct BufferPoolConfig {
    std::vector<std::uint32_t> dedicated;  // one entry per queue (1..16 queues)
    std::uint32_t shared = 0;              // buffers in the global pool
    std::uint32_t borrow_cap = kBpMaxCount; // most extra buffers one queue may hold
    std::uint32_t quiet_windows = 1;       // 0: return on release; else windows to keep

    static BufferPoolConfig uniform(unsigned queues, std::uint32_t dedicated_each,
                                    std::uint32_t shared_total, std::uint32_t quiet = 1)
    {
        BufferPoolConfig c;
        c.dedicated.assign(queues, dedicated_each);
        c.shared = shared_total;
        c.quiet_windows = quiet;
        return c;
    }
};

enum class Acquire : std::uint8_t {
    kOwn = 0,       // a buffer the queue already held: no prefill
    kBorrowed = 1,  // newly moved from the shared pool: prefilled once, now
    kStall = 2,     // nothing free to the queue; the caller holds the I/O and retries
};

struct BufferPoolStats {
    std::uint64_t acquired = 0;
    std::uint64_t released = 0;
    std::uint64_t borrowed = 0;  // buffers moved shared -> queue
    std::uint64_t returned = 0;  // buffers moved queue -> shared
    std::uint64_t prefills = 0;  // metadata prefills after configuration (one per borrow)
    std::uint64_t stalls = 0;    // I/Os that stalled at least once (episodes, not retries)
};

class BufferPool {
public:
    // Throws std::invalid_argument when a count is out of range. Dedicated buffers are
    // prefilled at configuration, which is not counted in the per-I/O prefills.
    explicit BufferPool(const BufferPoolConfig& cfg);

    Acquire acquire(unsigned queue);
    // Whether acquire(queue) would not stall, changing nothing. Inline, as inflight(): the
    // agent asks for every admitted descriptor and completion; the check's throw stays out
    // of line in check_queue.
    bool can_acquire(unsigned queue) const
    {
        if (queue >= queues_)
            check_queue(queue);
        return inflight_[queue] < cfg_.dedicated[queue] + extra_[queue] ||
               (shared_free_ > 0 && extra_[queue] < cfg_.borrow_cap);
    }
    // Throws std::logic_error when the queue has nothing in flight (a caller bug).
    void release(unsigned queue);
    // Window boundary: decide per queue whether its burst has ended (see the file comment).
    void tick();

    unsigned queues() const { return queues_; }
    std::uint32_t dedicated(unsigned queue) const;
    std::uint32_t extra(unsigned queue) const;      // borrowed buffers the queue keeps
    std::uint32_t inflight(unsigned queue) const
    {
        if (queue >= queues_)
            check_queue(queue);
        return inflight_[queue];
    }
    std::uint32_t peak(unsigned queue) const;       // since the last tick
    std::uint32_t quiet(unsigned queue) const;      // consecutive quiet windows so far
    std::uint32_t shared_free() const { return shared_free_; }
    std::uint32_t shared_total() const { return cfg_.shared; }

    // Every shared buffer is either free or kept by exactly one queue, and no queue has more
    // in flight than it owns.
    bool conserved() const;

    const BufferPoolStats& stats() const { return total_; }
    const BufferPoolStats& queue_stats(unsigned queue) const;

private:
    void check_queue(unsigned queue) const;
    void give_back(unsigned queue, std::uint32_t n);

    BufferPoolConfig cfg_;
    unsigned queues_;
    std::uint32_t shared_free_;
    std::array<std::uint32_t, kBpMaxQueues> extra_{};
    std::array<std::uint32_t, kBpMaxQueues> inflight_{};
    std::array<std::uint32_t, kBpMaxQueues> peak_{};
    std::array<std::uint32_t, kBpMaxQueues> quiet_{};
    std::array<bool, kBpMaxQueues> stalled_{};
    std::array<BufferPoolStats, kBpMaxQueues> per_queue_{};
    BufferPoolStats total_;
};

}  // namespace bg

#endif  // BURSTGATE_MODEL_BUFFER_POOL_HPP
