// Segment-level I/O rate monitor; the per-I/O rule is spelled out in segment_monitor.hpp.
#include "burstgate/model/segment_monitor.hpp"

#include <stdexcept>
#include <string>

namespace bg {

SegmentMonitor::SegmentMonitor(std::uint16_t hot_threshold, std::uint32_t steady_intervals)
    : threshold_(hot_threshold), steady_(0), ram_(kSegments)
{
    set_steady_intervals(steady_intervals);
}

void SegmentMonitor::set_steady_intervals(std::uint32_t n)
{
    if (n > kMaxSteadyIntervals)
        throw std::invalid_argument("dualbucket.steady_intervals: " + std::to_string(n) +
                                    " exceeds " + std::to_string(kMaxSteadyIntervals));
    steady_ = n;
}

bool SegmentMonitor::is_hot(std::uint16_t segment) const
{
    const SegmentEntry& e = ram_[segment];
    return (e.stamp == interval_ ? e.hold : decayed_hold(e, interval_)) != 0;
}

std::uint16_t SegmentMonitor::threshold_from_iops(std::uint64_t iops, std::uint32_t interval_us)
{
    std::uint64_t r = iops * interval_us / 1000000u;
    return r >= UINT16_MAX ? std::uint16_t{UINT16_MAX} : static_cast<std::uint16_t>(r);
}

std::uint16_t SegmentMonitor::threshold_from_bytes(std::uint64_t bytes)
{
    const std::uint64_t r = bytes >> BG_SEGMON_SECTOR_SHIFT;
    return r >= UINT16_MAX ? std::uint16_t{UINT16_MAX} : static_cast<std::uint16_t>(r);
}

}  // namespace bg
