#include "burstgate/lsm/stabilizer.hpp"

#include <algorithm>
#include <stdexcept>

namespace bg::lsm {

IopsStabilizer::IopsStabilizer(std::uint32_t paid_iops, Time phase, std::uint32_t slices, bool borrow)
    : paid_(paid_iops), phase_(phase), slices_(slices), borrow_(borrow), pool_(borrow ? paid_iops : 0)
{
    if (borrow && slices != 1) throw std::invalid_argument("IopsStabilizer: borrow needs slices = 1");
    if (paid_iops == 0) throw std::invalid_argument("IopsStabilizer: paid IOPS must be > 0");
    if (slices == 0 || slices > paid_iops) throw std::invalid_argument("IopsStabilizer: slices in 1..paid IOPS");
    if (phase < 0 || phase >= kSec) throw std::invalid_argument("IopsStabilizer: phase in [0, 1 s)");
}

Time IopsStabilizer::second_start(Time now) const
{
    const Time rel = now - phase_;
    const Time sec = rel < 0 ? -1 : rel / kSec;
    return phase_ + sec * kSec;
}

Time IopsStabilizer::next_refill(Time now) const
{
    const Time start = second_start(now);
    const Time slice = kSec / slices_;
    const Time k = (now - start) / slice + 1;
    return k >= slices_ ? start + kSec : start + k * slice;
}

void IopsStabilizer::roll(Time now)
{
    const Time start = second_start(now);
    const std::int64_t sec = (start - phase_) / kSec;
    const std::int64_t slice = std::min<std::int64_t>(slices_ - 1, (now - start) / (kSec / slices_));
    if (borrow_ && sec != second_) {
        // Mirror the volume's refill (§2.3): A tokens repay the pool's debt first and only the
        // rest are this second's tokens (unused ones are not carried over). When more than one
        // boundary passed, the later refills found the pool full: A fresh tokens.
        const std::uint32_t debt = paid_ - pool_;
        const bool consecutive = second_ >= 0 && sec == second_ + 1;
        pool_ = paid_;
        tokens_ = consecutive ? paid_ - debt : paid_;
        second_ = sec;
        slice_ = slice;
        return;
    }
    if (sec != second_ || slice != slice_) {
        second_ = sec;
        slice_ = slice;
        // Refreshed, not accumulated (§4.1); slice i of n gets floor(A/n), plus one for the
        // first A mod n slices, so a second totals exactly A.
        const std::uint32_t i = static_cast<std::uint32_t>(slice);
        tokens_ = paid_ / slices_ + (i < paid_ % slices_ ? 1 : 0);
    }
}

std::uint32_t IopsStabilizer::available(Time now)
{
    roll(now);
    return tokens_;
}

bool IopsStabilizer::try_take(Time now, std::uint32_t n)
{
    roll(now);
    if (tokens_ < n) return false;
    tokens_ -= n;
    granted_ += n;
    return true;
}

bool IopsStabilizer::try_borrow(Time now, std::uint32_t n)
{
    roll(now);
    if (!borrow_ || pool_ < n) return false;
    pool_ -= n;
    granted_ += n;
    borrowed_ += n;
    return true;
}

}  // namespace bg::lsm
