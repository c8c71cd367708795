// Deterministic discrete-event core of the LSM-side model: integer nanosecond time, an event
// queue ordered by (time, insertion sequence) so equal-time events run in the order they were
// scheduled, and a seeded PRNG (burstgate/random.hpp's xoshiro256**). The datapath
// LFSR is deliberately not used: the client model is not bit-exact with any hardware, and its
// random draws must not perturb the agent model's LFSR streams when both run in one simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "burstgate/random.hpp"

namespace bg::lsm {

using Time = std::int64_t;  // nanoseconds since the start of the simulation

constexpr Time kUs = 1000;
constexpr Time kMs = 1000 * kUs;
constexpr Time kSec = 1000 * kMs;

class EventLoop {
public:
    using Action = std::function<void()>;

    Time now() const { return now_; }
    // Runs `action` at absolute time `at` (>= now(); an earlier time is a bug and throws).
    void at(Time at, Action action);
    void after(Time delay, Action action) { at(now_ + delay, std::move(action)); }
    // Runs events until the queue is empty or the next event is later than `until`; now()
    // ends at `until` (or the last event's time if the queue drained earlier).
    void run_until(Time until);
    bool empty() const { return queue_.empty(); }
    // Time of the earliest pending event, or INT64_MAX when none: lets another event loop
    // (burstgate-sim's, for a burstgate-scheduled disk) interleave this one with its own.
    Time next_time() const { return queue_.empty() ? INT64_MAX : queue_.top().t; }
    std::uint64_t events_run() const { return events_; }

private:
    struct Event {
        Time t;
        std::uint64_t seq;
        Action action;
    };
    struct Later {
        bool operator()(const Event& a, const Event& b) const
        {
            return a.t != b.t ? a.t > b.t : a.seq > b.seq;
        }
    };
    std::priority_queue<Event, std::vector<Event>, Later> queue_;
    Time now_ = 0;
    std::uint64_t seq_ = 0;
    std::uint64_t events_ = 0;
};

class Rng {
public:
    // The state is xoshiro256** seeded at seed + one splitmix64 step (the order this model's
    // published figures were drawn in).
    explicit Rng(std::uint64_t seed) : g_(seed + kGolden64) {}
    std::uint64_t next() { return g_.next(); }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return g_.uniform(); }
    // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < n / 2^64).
    std::uint64_t below(std::uint64_t n);
    // Exponential with the given mean.
    double exponential(double mean);
    // An independent stream derived from this one (for per-component generators).
    Rng fork() { return Rng(next()); }

private:
    Xoshiro256ss g_;
};

// splitmix64's stateless finaliser (burstgate/random.hpp) for deterministic per-key decisions
// (bloom-filter false positives, YCSB key scrambling) that must give the same answer every
// time the same key is asked about.
using bg::mix64;

}  // namespace bg::lsm
