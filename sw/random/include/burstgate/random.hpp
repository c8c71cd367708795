// The host side's pseudo-random generators, one definition for the simulator, the LSM-side
// model and the benchmarks: splitmix64 (Steele, Lea and Flood's finaliser, as a stateless mix
// and as a generator) and xoshiro256** (Blackman and Vigna) seeded through it. None of them is
// part of the datapath: the device's LFSRs are the bit-exact contract, these only draw
// workloads, backends and per-key decisions, so drawing never moves the device's state.
#pragma once

#include <cstdint>

namespace bg {

inline constexpr std::uint64_t kGolden64 = 0x9E3779B97F4A7C15ull;

// splitmix64's output for the state x: x advanced by one step, then finalised. Stateless, so
// the same key always gets the same answer (bloom-filter false positives, key scrambling).
constexpr std::uint64_t mix64(std::uint64_t x)
{
    x += kGolden64;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// splitmix64 as a generator: 2^64 period, every output distinct.
class SplitMix64 {
public:
    explicit constexpr SplitMix64(std::uint64_t seed) : s_(seed) {}
    constexpr std::uint64_t next()
    {
        const std::uint64_t r = mix64(s_);
        s_ += kGolden64;
        return r;
    }

private:
    std::uint64_t s_;
};

// xoshiro256**: its four state words are splitmix64's first four outputs from `seed` (the
// seeding its authors recommend: never all zero).
class Xoshiro256ss {
public:
    explicit constexpr Xoshiro256ss(std::uint64_t seed)
    {
        SplitMix64 sm(seed);
        for (auto &w : s_)
            w = sm.next();
    }
    constexpr std::uint64_t next()
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
    constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4] = {};
};

}  // namespace bg
