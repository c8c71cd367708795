// Dual-bucket admission (seed 002 §4.2), the per-I/O half; the per-interval half is the
// firmware in fw/src/dualbucket.c, which tick() calls.
//
// Per I/O (one decision per clock in gateware; cost is the I/O's 4-vector):
//   hot = segment_monitor.on_io(segment)          // counts the I/O first
//   if main covers cost in every dimension:       main   -= cost; source = MAIN
//   elif !hot and cheque covers cost:             cheque -= cost; source = CHEQUE;
//                                                 cheque_drawn = 1
//   else:                                         source = DEFERRED; deferred += 1
// A deferred I/O is never dropped: the caller presents it again after the next tick, where it
// is counted and classified like any I/O of that interval.
//
// Interval tick, in this order (the datapath's atomic tick followed by the firmware's work
// during the next interval, so the model and hardware agree on the one-interval lag):
//   bg_db_refill(cheque_drawn = any cheque payment this interval)  // target latched last tick
//   bg_db_update(histogram of the interval that just ended)   // target for the next tick
//   segment monitor interval += 1; per-interval counters restart
#pragma once

#include <cstdint>

#include "burstgate/dualbucket.h"
#include "burstgate/latency_hist.h"
#include "burstgate/model/segment_monitor.hpp"
#include "burstgate/vec.h"

namespace bg {

enum class DbSource : std::uint8_t { Main, Cheque, Deferred };

struct DbDecision {
    DbSource source;
    bool hot;
};

struct DbCounters {
    std::uint64_t main = 0;          // I/Os paid by the main bucket
    std::uint64_t cheque = 0;        // I/Os paid by the cheque bucket
    std::uint64_t deferred = 0;      // I/Os deferred
    std::uint64_t deferred_hot = 0;  // of which from hot segments
    bg_vec spent{};                  // cost admitted from both buckets, saturating
};

class DualBucket {
public:
    struct Config {
        bg_db_config fw{};                   // buckets and estimator (see dualbucket.h)
        std::uint16_t hot_threshold = 0;     // R, I/Os per interval
        std::uint32_t steady_intervals = 0;  // N
    };

    // Throws std::invalid_argument naming the bad field ("dualbucket.<field>: ...").
    explicit DualBucket(const Config& cfg);

    DbDecision admit(std::uint16_t segment, const bg_vec& cost);
    // The cheque as a later admission source for a scheduler that tried its own buckets
    // first (BIOS): pays cost from the cheque if the segment is steady and the cheque covers.
    bool draw_cheque(bool hot, const bg_vec& cost);

    // End of interval; window is the aggregate SA-delay histogram of the interval that ended.
    void tick(const bg_lhist& window);

    const bg_db_state& buckets() const { return st_; }
    const bg_db_config& config() const { return cfg_.fw; }
    const SegmentMonitor& monitor() const { return monitor_; }
    SegmentMonitor& monitor() { return monitor_; }
    std::uint32_t interval() const { return monitor_.interval(); }

    const DbCounters& current() const { return cur_; }
    const DbCounters& last_interval() const { return last_; }
    const DbCounters& totals() const { return total_; }

private:
    void count(DbSource src, bool hot, const bg_vec& cost);

    Config cfg_;
    bg_db_state st_{};
    SegmentMonitor monitor_;
    DbCounters cur_{};
    DbCounters last_{};
    DbCounters total_{};
    bool drawn_ = false;  // any cheque payment this interval (admit or draw_cheque)
};

}  // namespace bg
