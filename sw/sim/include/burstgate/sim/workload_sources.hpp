// burstgate-sim's I/O generators, one per tenant: closed loop (iodepth I/Os at the start, a new
// one at each completion), open loop (Poisson arrivals at rate_iops) and trace replay
// (`mode: trace`, scenario.hpp TraceSpec). Each tenant draws from its own Rng stream
// (seed, tenant + 1), so one tenant's workload does not move when another's changes. The
// sources make I/O records and say when the next one arrives; the simulator's event loop
// (simulator.cpp) decides when to ask.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "burstgate/sim/rng.hpp"
#include "burstgate/sim/scenario.hpp"
#include "burstgate/trace/trace.hpp"

namespace bg::sim {

class IoTable;
struct Firmware;

struct TenantSource {
    const Tenant *cfg = nullptr;
    Rng rng{0};
    // The tenant's first vCPU queue and first segment among all tenants'.
    std::uint32_t queue_base = 0, seg_base = 0;
    std::vector<double> size_cdf;
    // mode: trace. `next` is the record that arrives next, at `next_at`.
    std::unique_ptr<bg::trace::TraceReader> reader;
    bg::trace::Record next;
    std::uint64_t next_at = 0, pass_base = 0, last_time = 0, pass_records = 0;
    bool base_warned = false;
    // libra.swap: the tenant whose I/O mix this one issues from swap_workloads_ns on (itself if none).
    std::uint32_t partner = 0;
};

class WorkloadSources {
public:
    // `ingress`: the build's ingress queues (a vCPU queue q enters ingress q mod ingress).
    // `fw`: the firmware's per-window grants, which every trace record's cost is checked against
    // when it is read (only during the run: init_firmware may fill them after this is built).
    // Trace warnings are appended to `warnings`.
    WorkloadSources(const Scenario &sc, std::uint64_t seed, Scheduler sched, std::uint32_t ingress, const Firmware &fw,
                    std::vector<std::string> &warnings);

    std::size_t size() const { return t_.size(); }
    const TenantSource &tenant(std::uint32_t ti) const { return t_[ti]; }
    // The vCPU queues of all tenants (sum of tenants[i].queues): the SA's round-robin turns.
    std::uint32_t vqueues() const { return vqueues_; }

    // mode: trace, at the tenant's start: opens its trace and reads the first record; false
    // (with a warning) when no read or write of it arrives before stop_ms.
    bool open_trace(std::uint32_t ti);
    // Reads the tenant's next read or write record; its arrival time is tenant(ti).next_at.
    // False when the trace (and every loop over it) ends before the workload stops.
    bool trace_next(std::uint32_t ti);
    // Open loop: the next Poisson arrival after `now` (the caller compares it with stop_ns).
    std::uint64_t next_poisson(std::uint32_t ti, std::uint64_t now);
    // A new I/O of tenant ti arriving at `now`: from the trace's current record, or drawn from
    // the size, direction, queue and (hot) segment distributions.
    std::uint32_t new_io(std::uint32_t ti, std::uint64_t now, IoTable &ios);

private:
    void check_trace_record(std::uint32_t ti, const bg::trace::Record &r);

    const Scenario &sc_;
    Scheduler sched_;
    std::uint32_t ingress_;
    const Firmware &fw_;
    std::vector<std::string> &warnings_;
    std::vector<TenantSource> t_;
    std::uint32_t vqueues_ = 0;
};

}  // namespace bg::sim
