// Segment-level I/O rate monitor (Still Water §4.2): a segment is hot in an interval once its
// count in that interval exceeds R, and stays hot until N whole intervals have passed
// without exceeding R. The unit of the count (SEGMON.UNIT) is the request (the default, the
// paper's "I/O request rate") or the 512-byte sector (the paper's "volume of requests" read
// as bytes: an I/O adds ceil(size / 512), so bytes > R * 512 exactly for sector-multiple sizes).
//
// Hardware shape: one 56-bit RAM entry per segment (64K deep), one read-modify-write per
// I/O, no sweep at the interval tick. Each entry remembers the interval of its last update;
// an I/O that finds an older stamp first rolls the entry forward lazily:
//
//   entry = {stamp: u32, count: u16, hold: u8}, all zero at reset (= steady, never seen)
//   on I/O of `size` bytes (low SIZE_BITS used) to segment s in interval t (u32, wraps
//   modulo 2^32), counted or not:
//     e = ram[s]
//     if e.stamp != t:                       // first I/O of s in interval t
//         elapsed = t - e.stamp  (mod 2^32)
//         e.hold  = e.hold > elapsed ? e.hold - elapsed : 0
//         e.count = 0
//         e.stamp = t
//     if counted:
//         add     = unit == sectors ? ceil(size / 512) : 1     // 0..32768
//         sum     = e.count + add                              // 17 bits, not saturated
//         e.count = min(sum, 65535)
//         if R != 65535 and sum > R: e.hold = N + 1
//     hot = e.hold != 0
//     ram[s] = e
//
// hold = N + 1 in the hot interval h, so at interval h + k it is N + 1 - k: hot for k <= N,
// steady from interval h + N + 1 on, i.e. after N intervals that did not exceed R ("below R"
// means count <= R). The I/O is counted before it is classified and whether or not it is
// admitted: hotness measures demand, and counting only admitted I/Os would let a throttled
// hot segment look steady. An I/O the host offers again after a deferral (the descriptor's
// `reoffer` bit) is not counted: Still Water §4.2 counts "the volume of requests served by a
// segment", each request once, while a deferred I/O may be offered every interval until it
// is admitted; it is still classified (a re-offered I/O of a hot segment is hot). R = 65535
// disables hot marking (for requests this is the old "min(count + 1, 65535) > R" rule, which
// the unsaturated sum equals for every R < 65535); N <= 254 fits hold in 8 bits. A
// segment idle for exactly a multiple of 2^32 intervals aliases its stamp (136 years at 1 ms).
#pragma once

#include <cstdint>
#include <vector>

#include "burstgate/regs.h"

namespace bg {

struct SegmentEntry {
    std::uint32_t stamp = 0;
    std::uint16_t count = 0;
    std::uint8_t hold = 0;
};

class SegmentMonitor {
public:
    static constexpr std::uint32_t kSegments = 1u << BG_SEGMENT_BITS;
    static constexpr std::uint32_t kMaxSteadyIntervals = BG_SEGMON_STEADY_MAX;  // regs.h

    // Throws std::invalid_argument when steady_intervals > kMaxSteadyIntervals.
    SegmentMonitor(std::uint16_t hot_threshold, std::uint32_t steady_intervals);

    // The per-I/O read-modify-write; returns whether the segment is hot for this I/O.
    // `counted` false (a re-offer) rolls the entry forward and classifies without counting;
    // `size` (bytes, low BG_SIZE_BITS used) is what a counted I/O adds under the sector unit.
    // Inline: the agent runs it for every descriptor.
    bool on_io(std::uint16_t segment, bool counted, std::uint32_t size)
    {
        SegmentEntry& e = ram_[segment];
        if (e.stamp != interval_) {
            e.hold = decayed_hold(e, interval_);
            e.count = 0;
            e.stamp = interval_;
        }
        if (counted) {
            const std::uint32_t sum = e.count + (sectors_ ? sectors_of(size) : 1u);
            e.count = static_cast<std::uint16_t>(sum < UINT16_MAX ? sum : UINT16_MAX);
            if (threshold_ != UINT16_MAX && sum > threshold_)
                e.hold = static_cast<std::uint8_t>(steady_ + 1);
        }
        return e.hold != 0;
    }
    // Whether the segment is hot now, before any further I/O (no state change).
    bool is_hot(std::uint16_t segment) const;

    // The interval tick: later I/Os belong to the next interval. O(1).
    void tick() { ++interval_; }
    std::uint32_t interval() const { return interval_; }

    std::uint16_t hot_threshold() const { return threshold_; }
    std::uint32_t steady_intervals() const { return steady_; }
    // Register writes; take effect for later I/Os (a hold already set keeps its length).
    void set_hot_threshold(std::uint16_t r) { threshold_ = r; }
    void set_steady_intervals(std::uint32_t n);
    // SEGMON.UNIT: BG_SEGMON_UNIT_REQUESTS or BG_SEGMON_UNIT_SECTORS (the register is one bit).
    std::uint32_t unit() const { return sectors_ ? BG_SEGMON_UNIT_SECTORS : BG_SEGMON_UNIT_REQUESTS; }
    void set_unit(std::uint32_t unit) { sectors_ = (unit & 1u) == BG_SEGMON_UNIT_SECTORS; }

    // What a counted I/O of `size` bytes adds under the sector unit: ceil(low SIZE_BITS / 512).
    static std::uint32_t sectors_of(std::uint32_t size)
    {
        constexpr std::uint32_t kGranule = 1u << BG_SEGMON_SECTOR_SHIFT;
        return ((size & ((1u << BG_SIZE_BITS) - 1u)) + kGranule - 1u) >> BG_SEGMON_SECTOR_SHIFT;
    }

    const SegmentEntry& entry(std::uint16_t segment) const { return ram_[segment]; }

    // R in I/Os per interval from the scenario's per-segment IOPS threshold. Exact: a count
    // exceeds iops * T / 1e6 iff it exceeds its floor. Saturates at 65535 (never hot).
    static std::uint16_t threshold_from_iops(std::uint64_t iops, std::uint32_t interval_us);
    // R in sectors from a threshold of `bytes` per interval: floor(bytes / 512), since for
    // sector-multiple sizes a byte count exceeds `bytes` iff its sector count exceeds that.
    // Saturates at 65535 (never hot).
    static std::uint16_t threshold_from_bytes(std::uint64_t bytes);

private:
    // The hold left of e at interval t: it counts down one per interval since e.stamp.
    static std::uint8_t decayed_hold(const SegmentEntry& e, std::uint32_t t)
    {
        const std::uint32_t elapsed = t - e.stamp;
        return e.hold > elapsed ? static_cast<std::uint8_t>(e.hold - elapsed) : std::uint8_t{0};
    }

    std::uint16_t threshold_;
    std::uint32_t steady_;
    std::uint32_t interval_ = 0;
    bool sectors_ = false;  // SEGMON.UNIT; reset: requests
    std::vector<SegmentEntry> ram_;
};

}  // namespace bg
