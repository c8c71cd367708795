// Latency histogram of the simulator's report: every sample counted (nothing is sampled), in
// log-linear buckets: values below 2^kSubBits ns each have their own bucket (exact), and every
// octave above is split into 2^kSubBits equal buckets, so a reported percentile is within
// 2^-kSubBits / 2 (0.2 %) of the true sample value (the bucket midpoint is reported). The sum,
// minimum and maximum are exact. Up to 2^40 ns (18 minutes); larger values clamp to the top.
#pragma once

#include <cstdint>
#include <vector>

namespace bg::sim {

class LatencyHist {
public:
    static constexpr unsigned kSubBits = 8;
    static constexpr unsigned kMaxBits = 40;
    static constexpr std::uint32_t kBuckets = (kMaxBits - kSubBits + 1) << kSubBits;

    LatencyHist() : count_(kBuckets, 0) {}

    static std::uint32_t bucket(std::uint64_t ns)
    {
        if (ns >= (std::uint64_t{1} << kMaxBits))
            ns = (std::uint64_t{1} << kMaxBits) - 1;
        if (ns < (1u << kSubBits))
            return static_cast<std::uint32_t>(ns);
        const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(ns));  // >= kSubBits
        const unsigned shift = e - kSubBits;
        return static_cast<std::uint32_t>(((shift + 1) << kSubBits) + ((ns >> shift) - (1u << kSubBits)));
    }
    static std::uint64_t lower(std::uint32_t b)
    {
        if (b < (1u << kSubBits))
            return b;
        const unsigned shift = (b >> kSubBits) - 1;
        return (std::uint64_t{(b & ((1u << kSubBits) - 1)) + (1u << kSubBits)}) << shift;
    }
    static std::uint64_t upper(std::uint32_t b) { return b + 1 < kBuckets ? lower(b + 1) - 1 : lower(b) * 2 - 1; }

    void record(std::uint64_t ns)
    {
        count_[bucket(ns)]++;
        n_++;
        sum_ += ns;
        if (ns > max_) max_ = ns;
        if (ns < min_) min_ = ns;
    }
    void merge(const LatencyHist &o);

    std::uint64_t count() const { return n_; }
    double mean() const { return n_ ? static_cast<double>(sum_) / static_cast<double>(n_) : 0.0; }
    std::uint64_t max() const { return max_; }
    std::uint64_t min() const { return n_ ? min_ : 0; }
    // The value at quantile q (0..1): the sample of rank ceil(q * n) (at least 1), reported as
    // its bucket's midpoint, clamped into [min, max]. 0 for an empty histogram.
    double quantile(double q) const;
    const std::vector<std::uint64_t> &counts() const { return count_; }

private:
    std::vector<std::uint64_t> count_;
    std::uint64_t n_ = 0, sum_ = 0, max_ = 0, min_ = UINT64_MAX;
};

}  // namespace bg::sim
