// Calcspar's IOPS stabilizer (§4.1, Fig. 13): the volume's token mechanism mirrored
// in the client. Every request must take a token before it may reach the volume; the token
// count is reset to the paid IOPS at each one-second boundary (aligned with the volume's, see
// docs/lsm.md), unused tokens do not carry over. So at most paid-IOPS tokens reach the
// volume per second, the volume's bucket is never empty, and no I/O ever overdraws.
//
// `slices` > 1 is our extension, not the paper's: the second's tokens are released in n equal
// slices (A/n every 1/n s, still not carried over), so an I/O that finds the tokens gone
// waits at most 1/n s instead of up to a whole second, while the volume still sees <= A
// tokens in every aligned second. slices = 1 is §4.1 exactly.
//
// `borrow` is our extension too (Calcspar's "borrow" stabilizer, docs/lsm.md), not the paper's:
// the stabilizer also mirrors the volume's borrowing pool (§2.3): A pool tokens, full at
// start; each second's refresh repays the pool first and only the rest are new tokens
// (A - repaid, still not carried over). try_borrow() spends pool tokens once the second's are
// gone, so the volume serves those I/Os as overdraft (slow, 1/A apart) instead of the caller
// waiting for the next second. Because the refresh is never more than the volume's bucket
// after the same refill and the pool never more than the volume's, an I/O the stabilizer
// admits never waits in the volume. §4.1 forbids overdraft; borrow = false is the paper.
#pragma once

#include <cstdint>

#include "burstgate/lsm/event_loop.hpp"

namespace bg::lsm {

class IopsStabilizer {
public:
    // Throws std::invalid_argument when paid_iops is 0.
    // Throws std::invalid_argument when slices is 0 or exceeds paid_iops.
    // Throws std::invalid_argument when borrow is set with slices > 1.
    IopsStabilizer(std::uint32_t paid_iops, Time phase = 0, std::uint32_t slices = 1, bool borrow = false);

    // Takes `n` tokens at time `now` if that many remain in now's second.
    bool try_take(Time now, std::uint32_t n);
    // Borrow mode only: takes `n` tokens from the mirrored borrowing pool (false when it lacks
    // them, or without borrow).
    bool try_borrow(Time now, std::uint32_t n);
    bool borrows() const { return borrow_; }
    std::uint32_t pool(Time now) { roll(now); return pool_; }
    std::uint64_t borrowed() const { return borrowed_; }
    std::uint32_t available(Time now);
    // Start of the second containing `now`, and of the next one.
    Time second_start(Time now) const;
    Time next_second(Time now) const { return second_start(now) + kSec; }
    // When tokens are next refreshed after `now` (the next slice or second).
    Time next_refill(Time now) const;
    std::uint32_t slices() const { return slices_; }
    std::uint32_t paid_iops() const { return paid_; }
    std::uint64_t granted() const { return granted_; }

private:
    void roll(Time now);
    std::uint32_t paid_;
    Time phase_;
    std::uint32_t slices_;
    std::int64_t second_ = -1;
    std::int64_t slice_ = -1;
    std::uint32_t tokens_ = 0;
    std::uint64_t granted_ = 0;
    bool borrow_ = false;
    std::uint32_t pool_ = 0;        // borrow mode: the mirrored borrowing pool
    std::uint64_t borrowed_ = 0;
};

}  // namespace bg::lsm
