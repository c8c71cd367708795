// A reader's real-time priority while its tenant stays within its base; see base_priority.hpp.
#include "base_priority.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace bg::gw {

namespace {
constexpr double kDepthS = 0.010;  // the buckets' depth in seconds of the base
}

BasePriority::BasePriority(int prio, const std::vector<double> &base_iops, const std::vector<double> &base_bytes_per_s,
                           const std::vector<std::uint32_t> &max_block)
    : prio_(prio)
{
    for (std::size_t t = 0; t < base_iops.size(); t++) {
        auto b = std::make_unique<Bucket>();
        b->rate_ios = base_iops[t];
        b->rate_bytes = base_bytes_per_s[t];
        b->depth_ios = std::max(1.0, base_iops[t] * kDepthS);
        b->depth_bytes = std::max<double>(max_block[t], base_bytes_per_s[t] * kDepthS);
        b->ios = b->depth_ios;
        b->bytes = b->depth_bytes;
        b->at = std::chrono::steady_clock::now();
        buckets_.push_back(std::move(b));
    }
}

bool BasePriority::within(std::size_t t, std::uint64_t bytes, std::chrono::steady_clock::time_point now)
{
    if (!enabled())
        return false;
    Bucket &b = *buckets_[t];
    std::lock_guard<std::mutex> g(b.mu);
    const double dt = std::max(0.0, std::chrono::duration<double>(now - b.at).count());
    b.at = std::max(b.at, now);
    b.ios = std::min(b.depth_ios, b.ios + dt * b.rate_ios);
    b.bytes = std::min(b.depth_bytes, b.bytes + dt * b.rate_bytes);
    if (b.ios < 1 || b.bytes < static_cast<double>(bytes))
        return false;
    b.ios -= 1;
    b.bytes -= static_cast<double>(bytes);
    return true;
}

void BasePriority::Thread::favour(bool on)
{
    on = on && bp_.enabled();
    if (on == on_)
        return;
    sched_param sp{};
    sp.sched_priority = on ? bp_.prio_ : 0;
    if (pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &sp) != 0) {
        bp_.refused_ = true;  // only raising can fail (no CAP_SYS_NICE): the thread stays as it was
        return;
    }
    on_ = on;
    bp_.switches_++;
}

BasePriority::Thread::~Thread() { favour(false); }

}  // namespace bg::gw
