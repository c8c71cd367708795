// A reader's real-time priority while its tenant stays within its base; see base_priority.hpp.
#include "base_priority.hpp"

#include <algorithm>

#include "thread_name.hpp"

namespace bg::gw {

namespace {
constexpr double kDepthS = 0.010;  // the buckets' depth in seconds of the base
constexpr std::uint64_t kInUseUs = 10'000;
// The last request found within its base, and the last one of another tenant than that one's:
// each (steady_clock us << 16 | tenant), 0 for none. Two slots answer "another tenant than t
// in the last 10 ms" for any t without a scan over the tenants; updated without a lock (a race
// can only lose a slot's refresh for one request, then the next within refreshes it).
std::atomic<std::uint64_t> g_last{0}, g_other{0};

std::uint64_t steady_us(std::chrono::steady_clock::time_point t)
{
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

bool recent_other(std::uint64_t slot, std::size_t tenant, std::uint64_t now_us)
{
    return slot != 0 && (slot & 0xffff) != tenant && now_us - (slot >> 16) < kInUseUs;
}

void note_within(std::size_t tenant, std::chrono::steady_clock::time_point now)
{
    const std::uint64_t v = steady_us(now) << 16 | (tenant & 0xffff);
    const std::uint64_t last = g_last.exchange(v, std::memory_order_relaxed);
    if (last != 0 && (last & 0xffff) != (tenant & 0xffff))
        g_other.store(last, std::memory_order_relaxed);
}
}  // namespace

bool base_priority_in_use(std::size_t tenant)
{
    const std::uint64_t now = steady_us(std::chrono::steady_clock::now());
    return recent_other(g_last.load(std::memory_order_relaxed), tenant, now) ||
           recent_other(g_other.load(std::memory_order_relaxed), tenant, now);
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
    note_within(t, now);
    return true;
}

void BasePriority::Thread::favour(bool on)
{
    on = on && bp_.enabled();
    if (on == on_)
        return;
    if (!set_thread_fifo(on ? bp_.prio_ : 0)) {
        bp_.refused_ = true;  // only raising can fail (no CAP_SYS_NICE): the thread stays as it was
        return;
    }
    on_ = on;
}

BasePriority::Thread::~Thread() { favour(false); }

}  // namespace bg::gw
