#include "burstgate/lsm/cloud_volume.hpp"

#include <algorithm>
#include <stdexcept>

namespace bg::lsm {

const char* to_string(IoSource s)
{
    switch (s) {
    case IoSource::user: return "user";
    case IoSource::wal: return "wal";
    case IoSource::flush: return "flush";
    case IoSource::compaction: return "compaction";
    case IoSource::prefetch: return "prefetch";
    }
    return "?";
}

VolumeSpec volume_preset(const std::string& type, std::uint32_t iops, std::uint32_t size_gb)
{
    if (size_gb == 0) throw std::invalid_argument("volume size must be > 0 GB");
    VolumeSpec v;
    v.type = type;
    if (type == "gp2") {
        v.paid_iops = std::max<std::uint32_t>(100, 3 * size_gb);
        v.base_latency = 200 * kUs;
        v.bandwidth_bps = 250000000;
    } else if (type == "gp3") {
        v.paid_iops = iops ? iops : 3000;
        v.base_latency = 300 * kUs;
        v.bandwidth_bps = 125000000;
    } else if (type == "io1" || type == "io2") {
        v.paid_iops = iops ? iops : 1000;
        v.base_latency = 100 * kUs;
        v.bandwidth_bps = 1000000000;
    } else {
        throw std::invalid_argument("unknown volume type '" + type + "' (gp2, gp3, io1, io2)");
    }
    if (type == "gp2" && iops != 0) {
        throw std::invalid_argument("gp2 IOPS follow its size (3 per GB); give size, not iops");
    }
    if (v.paid_iops == 0) throw std::invalid_argument("paid IOPS must be > 0");
    return v;
}

CloudVolume::CloudVolume(EventLoop& loop, const VolumeSpec& spec, std::uint64_t seed)
    : loop_(loop), spec_(spec), rng_(seed), bucket_(spec.paid_iops), pool_(spec.paid_iops)
{
    if (spec.paid_iops == 0) throw std::invalid_argument("CloudVolume: paid_iops must be > 0");
    if (spec.bandwidth_bps == 0) throw std::invalid_argument("CloudVolume: bandwidth must be > 0");
    if (spec.phase < 0 || spec.phase >= kSec) {
        throw std::invalid_argument("CloudVolume: phase must be in [0, 1 s)");
    }
}

void CloudVolume::roll()
{
    const std::int64_t sec = (loop_.now() - spec_.phase) < 0
                                 ? -1
                                 : (loop_.now() - spec_.phase) / kSec;
    const std::uint32_t a = spec_.paid_iops;
    while (second_ < sec) {
        ++second_;
        // A new tokens: the borrowing pool is repaid first (§2.3), the rest fills the bucket.
        const std::uint32_t repay = std::min(a, a - pool_);
        pool_ += repay;
        bucket_ = std::min<std::uint64_t>(a, std::uint64_t{bucket_} + (a - repay));
        if (bucket_ == a && pool_ == a && second_ < sec) {
            second_ = sec;  // idle seconds change nothing once both are full
        }
    }
}

Time CloudVolume::fast_service(std::uint32_t bytes)
{
    const double jitter = 0.6 + 0.4 * rng_.exponential(1.0);
    const Time base = static_cast<Time>(static_cast<double>(spec_.base_latency) * jitter);
    // Transfer through the shared bandwidth cap (Unwritten Contract Observation #4).
    const Time xfer = static_cast<Time>(static_cast<double>(bytes) * 1e9 /
                                        static_cast<double>(spec_.bandwidth_bps));
    const Time now = loop_.now();
    pipe_free_ = std::max(pipe_free_, now) + xfer;
    return base + (pipe_free_ - now);
}

bool CloudVolume::try_start(Pending& p)
{
    const std::uint32_t need = io_tokens(p.io.bytes);
    const Time now = loop_.now();
    Time done_at;
    if (bucket_ >= need) {
        bucket_ -= need;
        ++stats_.fast;
        done_at = now + fast_service(p.io.bytes);
    } else if (std::uint64_t{bucket_} + pool_ >= need) {
        pool_ -= need - bucket_;
        bucket_ = 0;
        ++stats_.overdraft;
        // Slow return: one overdraft I/O per 1/A seconds (per token), FIFO.
        const Time period = kSec / spec_.paid_iops;
        overdraft_free_ = std::max(overdraft_free_, now) + period * need;
        done_at = std::max(overdraft_free_, now + fast_service(p.io.bytes));
    } else {
        return false;
    }
    ++stats_.ios;
    stats_.tokens += need;
    stats_.bytes += p.io.bytes;
    const std::size_t sec = static_cast<std::size_t>(std::max<Time>(0, now / kSec));
    if (per_second_.size() <= sec) per_second_.resize(sec + 1, 0);
    per_second_[sec] += need;
    loop_.at(done_at, std::move(p.done));
    return true;
}

void CloudVolume::drain()
{
    roll();
    while (!waiting_.empty() && try_start(waiting_.front())) waiting_.pop_front();
    if (!waiting_.empty() && !wake_scheduled_) {
        wake_scheduled_ = true;
        const Time next = spec_.phase + (second_ + 1) * kSec;
        loop_.at(next, [this] {
            wake_scheduled_ = false;
            drain();
        });
    }
}

void CloudVolume::submit(const IoRequest& io, Completion done)
{
    if (io.bytes == 0) throw std::invalid_argument("CloudVolume::submit: zero-byte I/O");
    if (io_tokens(io.bytes) > spec_.paid_iops) {
        throw std::invalid_argument("CloudVolume::submit: one I/O costs more tokens than paid IOPS");
    }
    roll();
    Pending p{io, std::move(done)};
    if (waiting_.empty() && try_start(p)) return;
    ++stats_.waited;
    waiting_.push_back(std::move(p));
    drain();
}

}  // namespace bg::lsm
