// Per window, which of a tenant's deferrals were capacity withheld from it, and which fell below
// its base contract: one definition for burstgate-gateway (on the real clock) and burstgate-sim
// (its replay of the gateway's arrivals, and every other run), so the two counts compare.
//
// A deferral withholds capacity when the deferred I/O would have fit both the tenant's burst
// beside all the tenant used in the window it was deferred in, and the capacity no tenant used
// in that window: at the window's end, before the firmware's COMMIT (the USAGE registers then
// hold the window's final usage, from every source), in every dimension, usage_i + cost <= the
// per-window burst cap and sum of usages + cost <= the schedulable total (capacity less the
// reserve BIOS keeps for tenants coming back from idle), and the I/Os admitted in the window + 1
// <= the count gate's grant (the burst IOPS, docs/contracts.md). Every other deferral is the
// tenant's own burst or a full window at work. Counted so, a deferral is never wrongly called
// withheld: the usages at the moment of the decision were at most the final ones. It tells a
// tenant whose clients send in bursts (a closed loop whose whole queue is about one window's burst
// grant: deferred in the windows where its requests arrive together, idle in those where it waits
// on its clients; neighbours that do the same fill some windows and leave others empty) from one
// the scheduler withholds spare capacity from; the run's averages, of usage and of utilization,
// cannot.
//
// A deferral is below the tenant's base when the tenant had been admitted fewer I/Os or bytes in
// that window than its base contract's of one window (base IOPS and base MB/s times the window,
// counting the deferred I/O): the contract itself, in whole I/Os, independent of the cost vectors
// provisioning made of it (so a grant too small is seen), and of how the host schedules the
// clients (a client held off for milliseconds that then sends a window's worth at once is
// deferred at its base, not below it).
#pragma once

#include <cstdint>
#include <vector>

#include "burstgate/hal.h"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

class WithheldTally {
public:
    explicit WithheldTally(const Scenario &sc);

    // The device admitted one I/O of `size` bytes of tenant ti in the current window.
    void admitted(std::uint32_t ti, std::uint32_t size)
    {
        admitted_[ti]++;
        admitted_bytes_[ti] += size;
    }
    // The device deferred one I/O of tenant ti in the current window (every decision: a re-offer
    // deferred again counts again). Its estimated cost is the cost table's (io_cost).
    void deferred(std::uint32_t ti, std::uint32_t size, bool write);
    // The window's end, before bg_fw_window: judges the window's deferrals against the usage the
    // registers hold, the tenants' burst caps and the firmware's reserve, then starts a new window.
    // `count`: add them to the totals (burstgate-sim's warm-up is left out).
    void window_end(const bg_hal &hal, const Firmware &fw, bool count = true);

    std::uint64_t withheld(std::uint32_t ti) const { return withheld_[ti]; }
    std::uint64_t below_base(std::uint32_t ti) const { return below_base_[ti]; }

private:
    struct Deferral {
        bg_vec cost;
        std::uint32_t size;
    };
    const Scenario &sc_;
    std::vector<std::vector<Deferral>> deferrals_;  // per tenant, this window's
    std::vector<std::uint64_t> admitted_, admitted_bytes_;
    std::vector<std::uint64_t> withheld_, below_base_;
    bool any_ = false;  // a deferral this window
};

}  // namespace bg::sim
