// The simulator's own PRNG for workloads and the backend: xoshiro256** (burstgate/random.hpp)
// with a stream number mixed into the seed, so that each part draws from its own stream.
#pragma once

#include <cmath>
#include <cstdint>

#include "burstgate/random.hpp"

namespace bg::sim {

class Rng {
public:
    explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) : g_(seed ^ (kGolden64 * (stream + 1))) {}
    std::uint64_t next() { return g_.next(); }
    // Uniform in [0, 1) with 53 bits.
    double uniform() { return g_.uniform(); }
    // Uniform in (0, 1].
    double uniform_pos() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
    // Uniform integer in [0, n): multiply-shift of the top 32 bits (bias < n / 2^32).
    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }
    double exponential(double mean) { return -std::log(uniform_pos()) * mean; }
    double normal()
    {
        if (have_spare_) {
            have_spare_ = false;
            return spare_;
        }
        const double u = uniform_pos(), v = uniform();
        const double r = std::sqrt(-2.0 * std::log(u));
        spare_ = r * std::sin(2 * M_PI * v);
        have_spare_ = true;
        return r * std::cos(2 * M_PI * v);
    }

private:
    Xoshiro256ss g_;
    double spare_ = 0;
    bool have_spare_ = false;
};

}  // namespace bg::sim
