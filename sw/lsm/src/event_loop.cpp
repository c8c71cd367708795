#include "burstgate/lsm/event_loop.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace bg::lsm {

void EventLoop::at(Time t, Action action)
{
    if (t < now_) {
        throw std::logic_error("EventLoop::at: time " + std::to_string(t) + " ns is before now " +
                               std::to_string(now_) + " ns");
    }
    queue_.push(Event{t, seq_++, std::move(action)});
}

void EventLoop::run_until(Time until)
{
    while (!queue_.empty() && queue_.top().t <= until) {
        // Move the action out before popping: the action may schedule new events.
        Event e = std::move(const_cast<Event&>(queue_.top()));
        queue_.pop();
        now_ = e.t;
        ++events_;
        e.action();
    }
    if (until > now_) now_ = until;
}

std::uint64_t mix64(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t seed)
{
    for (auto& s : s_) {
        seed += 0x9e3779b97f4a7c15ull;
        s = mix64(seed);
    }
}

__extension__ typedef unsigned __int128 u128;

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next()
{
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

std::uint64_t Rng::below(std::uint64_t n)
{
    if (n == 0) throw std::invalid_argument("Rng::below(0)");
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
}

double Rng::exponential(double mean)
{
    // 1 - uniform() is in (0, 1], so the log is finite.
    return -mean * std::log(1.0 - uniform());
}

}  // namespace bg::lsm
