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

__extension__ typedef unsigned __int128 u128;

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
