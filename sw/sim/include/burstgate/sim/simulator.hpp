// burstgate-sim's engine: a discrete-event simulation of a DPU storage agent whose datapath is
// any bg::Device (docs/design.md contract 3) and whose control plane is the firmware window loop
// (fw/include/burstgate/window.h), run every window over device->hal().
//
// One I/O, in simulated integer nanoseconds:
//   arrival (closed loop: a completion or the start; open loop: Poisson)
//   -> device decision (submit, one descriptor)
//        deferred: parked in a FIFO and re-offered right after the next window's COMMIT, in
//                  deferral order (dualbucket.reoffer: steady_first puts the I/Os deferred as
//                  steady first), again and again until admitted (never dropped)
//        admitted: to the SA thread the load balancer chose
//   -> SA thread: one server, its queued I/Os served round robin over the tenants' vCPU queues
//      (dpu.sa_discipline: rr) or in arrival order (fifo); service = the TRUE CPU time
//      (dpu.cpu_ns; the estimator's table holds true / estimate_error)
//   -> software rate limiter (one server shared by all threads, in the same order as a thread),
//      then the egress link (request + write data, FIFO); service = bytes / rate
//   -> backend: lognormal delay (median, p99), no queueing; excluded from the SA delay
//   -> ingress link (response + read data): FIFO server
//   -> completion: device.complete with sa_delay = completion - admission - backend;
//      the tenant's latency = completion - first arrival (deferral time included).
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "burstgate/sim/hist.hpp"
#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

struct LsmResult;  // lsm_section.hpp

struct SimOptions {
    std::string engine = "model";
    std::optional<Scheduler> scheduler;  // overrides the scenario's
    std::optional<std::uint64_t> seed;   // overrides the scenario's
    bool progress = false;               // a progress line on stderr
    std::ostream *csv = nullptr;         // per-window time series, when set
};

struct TenantResult {
    std::string name;
    // Measured period [warmup, duration]:
    std::uint64_t completed = 0, bytes = 0;
    double iops = 0, mbps = 0;
    LatencyHist lat;                              // completion - first arrival, every I/O
    std::unique_ptr<LatencyHist> lat_hot, lat_steady;  // split by the workload's hot segments
    std::uint64_t throttled = 0;     // deferral decisions (an I/O deferred twice counts twice)
    std::uint64_t deferred_ios = 0;  // distinct I/Os deferred at least once
    // Deferral decisions on an I/O that both the tenant's burst (beside all it used in that
    // window) and the window's unused capacity would have covered: capacity withheld from a
    // tenant with demand; and those in a window in which the tenant had been admitted less than
    // its base entitlement of the window (base IOPS and MB/s), the deferred I/O counted
    // (withheld.hpp: the gateway's and the simulator's one rule).
    std::optional<std::uint64_t> deferred_withheld;
    std::optional<std::uint64_t> deferred_below_base;
    std::uint64_t admitted_by[4] = {};  // own, borrow, reserved, (unused)
    std::uint64_t buffer_borrows = 0;   // admissions whose buffer came from the shared pool (prefilled)
    // Decisions on I/Os to the workload's steady segments that the segment monitor took as
    // hot (so no cheque): all of them, and those on a new I/O's first offer. The monitor
    // counts offers, and a deferred I/O is offered again every window (docs/results.md).
    std::uint64_t steady_as_hot = 0, steady_new_as_hot = 0;
    // Hot-segment I/Os decided on their first offer, and those the monitor took as hot.
    std::uint64_t hot_new = 0, hot_new_as_hot = 0;
    // Whole run:
    std::uint64_t generated = 0, finished = 0;
};

struct SimResult {
    std::string scenario, engine, scheduler, file;
    std::uint64_t seed = 0, duration_ns = 0, warmup_ns = 0, window_ns = 0;
    std::vector<TenantResult> tenants;
    // Over the measured period, per dimension, as a share of capacity: the work the SA's
    // servers finished (0..1, the contract's utilization) and the true cost of what admission
    // let in (above 1 when admission overcommits the SA, e.g. with estimate_error > 1).
    std::array<double, 4> utilization{}, admitted_load{};
    std::uint64_t events = 0, windows = 0;
    // The gateway only (real clock): windows its loop had to skip because the host fell behind.
    std::optional<std::uint64_t> window_overruns;
    // The gateway only: its SA delay by class, one `"sa_delay_us": {...}` member (engine.cpp).
    std::string gateway_json;
    std::uint64_t generated = 0, finished = 0, in_flight = 0, deferred_pending = 0;
    std::uint64_t bad_completions = 0;  // CTRL.BAD_COMPLETIONS: must be 0
    std::vector<std::uint64_t> thread_completed;  // measured period: I/Os completed per SA thread
    // dpu.sa_loop only: the SA threads' loops and the I/O-unrelated tasks they ran (whole run).
    std::optional<std::array<std::uint64_t, 2>> sa_loop;
    std::array<std::uint32_t, 4> final_factor{};  // COST.FACTOR at the end (Q4.12)
    std::uint32_t burst_factor = 1u << 12;        // provision.hpp burst_factor() at the end (Q4.12)
    double burst_factor_mean = 1.0;               // provision.hpp burst_factor_mean()
    std::vector<std::string> warnings;  // scenario warnings (file:line: path: message)
    double wall_s = 0, cpu_s = 0;       // not in the report (they would break reproducibility)
    std::shared_ptr<const LsmResult> lsm;  // the scenario's lsm: store, when it has one
};

// Runs the scenario. Throws ScenarioError for a scenario the firmware rejects (e.g. base
// provisioning above capacity), std::invalid_argument / std::runtime_error from open_device.
SimResult simulate(const Scenario &sc, const SimOptions &opt);

// The JSON report (contract 4 fields first), deterministic: same inputs -> same bytes.
std::string report_json(const SimResult &r);

}  // namespace bg::sim
