// The simulator's own PRNG for workloads and the backend: xoshiro256** seeded through
// splitmix64. It is deliberately separate from the datapath's LFSRs (which are part of the
// bit-exact contract): drawing a workload never moves the device's state.
#pragma once

#include <cmath>
#include <cstdint>

namespace bg::sim {

class Rng {
public:
    explicit Rng(std::uint64_t seed, std::uint64_t stream = 0)
    {
        std::uint64_t x = seed ^ (0x9E3779B97F4A7C15ull * (stream + 1));
        for (auto &w : s_)
            w = splitmix(x);
    }
    std::uint64_t next()
    {
        const std::uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return r;
    }
    // Uniform in [0, 1) with 53 bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
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
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix(std::uint64_t &x)
    {
        std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint64_t s_[4];
    double spare_ = 0;
    bool have_spare_ = false;
};

}  // namespace bg::sim
