#include "burstgate/sim/hist.hpp"

#include <algorithm>
#include <cmath>

namespace bg::sim {

void LatencyHist::merge(const LatencyHist &o)
{
    for (std::uint32_t b = 0; b < kBuckets; b++)
        count_[b] += o.count_[b];
    n_ += o.n_;
    sum_ += o.sum_;
    max_ = std::max(max_, o.max_);
    min_ = std::min(min_, o.min_);
}

double LatencyHist::quantile(double q) const
{
    if (n_ == 0)
        return 0;
    std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n_) - 1e-9));
    rank = std::clamp<std::uint64_t>(rank, 1, n_);
    std::uint64_t cum = 0;
    for (std::uint32_t b = 0; b < kBuckets; b++) {
        cum += count_[b];
        if (cum >= rank) {
            const double mid = (static_cast<double>(lower(b)) + static_cast<double>(upper(b))) / 2;
            return std::clamp(mid, static_cast<double>(min()), static_cast<double>(max_));
        }
    }
    return static_cast<double>(max_);
}

}  // namespace bg::sim
