// A burstgate-sim scenario (docs/design.md contract 4): the format of scenarios/example.yaml,
// every key with that meaning, plus the additions marked "added" below. Times are kept in
// integer nanoseconds from here on so the event engine never rounds.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "burstgate/model/load_balancer.hpp"
#include "burstgate/trace/trace.hpp"

namespace bg::sim {

// A bad scenario. what() is "FILE:LINE: field.path: message".
struct ScenarioError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline constexpr unsigned kProducts = 4;  // A..D; BG_PRODUCTS in regs.h (checked in scenario.cpp)

struct CpuProfile {
    std::uint32_t base_ns = 0;     // CPU ns of an I/O of 0 bytes on one SA thread
    std::uint32_t per_kib_ns = 0;  // plus this per KiB of data
};

enum class Scheduler { kBios, kBase, kWild, kDualBucket, kDdrr };
using bg::LbPolicy;  // the model's: its values are LB.POLICY's

// dpu.sa_loop: the SA thread as an event loop that also runs I/O-unrelated tasks ("Come Hell or
// Still Water" §3.2, §4.3; bg::TaskLoop). Without the key (kNone) the thread serves I/Os only.
enum class SaLoop : std::uint8_t { kNone, kFifo, kPriority };

// One periodic I/O-unrelated task of every SA thread: due every period_ns from t = period_ns.
struct SaTask {
    std::uint64_t period_ns = 0, duration_ns = 0;
    bool offload = false;  // moved off the SA thread by the thread split (sa_loop.offload)
};

enum class CostAdjust : std::uint8_t { kOff, kCost, kBurst };

struct Dpu {
    std::uint32_t threads = 2;
    LbPolicy lb_policy = LbPolicy::kJsq;
    // cpu[product][0 = read, 1 = write]; `defined` marks products the scenario profiles.
    std::array<std::array<CpuProfile, 2>, kProducts> cpu{};
    std::array<bool, kProducts> defined{};
    double ingress_gbps = 100, egress_gbps = 100;
    double swlimit_mbps = 3000;      // MB/s (10^6 B/s), one limiter shared by all threads
    double backend_median_us = 150, backend_p99_us = 600;  // lognormal
    double reserved_share = 0.05;
    double target_delay_us = 200;
    double adjust_max = 8;           // the adjustment's ceiling (costadj.h factor_max), 1 .. ~16
    double estimate_error = 1.0;
    // added
    bool sa_round_robin = true;      // sa_discipline: rr (SA polls tenants' queues) | fifo
    // Delay-based cost adjustment toward target_delay_us (BurstCBS §5.3): off, the cost of
    // every I/O as printed, or only what bios grants above a base (window.h BG_FW_COSTADJ_*).
    CostAdjust cost_adjust = CostAdjust::kOff;
    bool envelope = true;            // provision: envelope (docs/contracts.md); false: io4k, the 4 KiB CPU price
    bool grant_carry = true;         // the firmware's grant carry (window.h)
    bool iops_cap = true;            // the datapath's IOPS cap, TENANT.COUNT_GRANT (window.h); docs/contracts.md
    std::uint32_t queue_depth = 4095;   // LB.DEPTH: outstanding I/Os per SA thread
    std::uint32_t header_bytes = 128;   // per request/response message on the links
    double bios_alpha = 0.5;            // BIOS line-7 decay
    double bios_weight_throttle = 2.0;  // BIOS line-10 weight of throttled cost
    // dpu.buffers: the two-tier buffer pool (BurstCBS §5.1, Fig. 12), BPOOL registers.
    // dedicated = 0: not programmed (the reset values: 4095 per queue, no shared pool).
    std::uint32_t buf_dedicated = 0, buf_shared = 0, buf_borrow_cap = 0xFFFF, buf_quiet = 1;
    // dpu.sa_loop (docs/simulator.md): policy, the thread split, §4.3's LT and alpha, the tasks.
    SaLoop sa_loop = SaLoop::kNone;
    int sa_loop_line = 0;  // of the sa_loop mapping, for the gateway's refusal
    bool sa_offload = false;
    std::uint64_t sa_lt_ns = 10000;        // §4.3: LT = 10 us
    std::uint32_t sa_alpha_permille = 1200;  // §4.3: alpha = 1.2
    std::uint64_t sa_per_io_ns = 0;        // each I/O spawns one I/O-unrelated task this long
    bool sa_gate_literal = false;          // gate: start_before_deadline (§4.3's rule read literally)
    std::vector<SaTask> sa_tasks;
    // dpu.vop_curve: Libra's VOP cost model (§4.3) in the estimator's CPU dimension in place of
    // the products' affine CPU profiles: {size bytes, read, write milli-VOPs} points, piecewise
    // linear between them (bg_cost_load_vop), and the capacity in VOP/s. Empty: the profiles.
    std::vector<std::array<std::uint32_t, 3>> vop_points;
    double vop_per_s = 0;
};

// `bios:` BIOS's variations of Algorithm 1 (fw/include/burstgate/bios.h); every default is
// the algorithm as printed (BurstCBS §5.2), each key one named project variation.
struct BiosCfg {
    double floor_share = 0;          // floor of a decayed allocation / base (line 7 decays to 0)
    bool usage_clamp = false;        // line 7: max(alloc_hist * alpha, usage)
    bool spill_base = false;         // line 4 also fires on a spilled tenant
    std::uint32_t reserve_tenants = 2;  // reserve: two_tenants (2) | share (0: dpu.reserved_share)
    bool reserve_shortfall = false;  // the window's pool at most the allocations' shortfall below base
    bool share_refill = false;       // line 11's leftover shared again among tenants below their cap
};

// `libra:` Libra's resource policy ("Libra: From application requests to virtual IOPs", §4.1,
// §4.2), read under `scheduler: ddrr` (fw/include/burstgate/libra.h); `admission: floor` also
// applies §4.2's floor to the admission of any other scheduler's tenant set.
struct LibraCfg {
    double floor_share = 18.0 / 37.5;  // §4.2: provisionable = the capacity curve's floor (18 of 37.5 kop/s)
    double ewma_weight = 0.5;          // §4.1 names an EWMA and prints no weight
    double policy_ms = 1000;           // §4.1: "once per second in our prototype"; 0: profiles off
    bool admit_floor = false;          // admission: floor (true) | envelope (false, the default rule)
    bool vop = true;                   // unit: vop (one scalar per tenant, §4.3) | vector (per dimension)
    // swap: Libra Fig. 12's events: each pair of tenants swaps workloads (I/O mix) at
    // swap_workloads_ns and reservations (v, r) at swap_reservations_ns (burstgate-sim only).
    std::uint64_t swap_workloads_ns = UINT64_MAX, swap_reservations_ns = UINT64_MAX;
    std::vector<std::array<std::string, 2>> swap_names;
    int swap_line = 1;
    std::vector<std::array<std::uint32_t, 2>> swap_pairs;  // tenant indices, resolved at load
};

struct DualBucketCfg {
    double hot_threshold_iops = 2000;  // R per segment, as a rate
    // `monitor_unit`: what the segment monitor counts (SEGMON.UNIT): requests (false, Still
    // Water §4.2's "I/O request rate") or bytes (true, its "volume of requests" read as bytes),
    // then against hot_threshold_bps (negative: hot_threshold_iops x 4 KiB, the 4 KiB figures
    // unchanged).
    bool monitor_bytes = false;
    double hot_threshold_bps = -1;
    std::uint32_t steady_intervals = 5;
    double cheque_share = 0.2;
    // added (Still Water §4.2 production values unless noted)
    std::uint32_t alpha = 8000;
    double percentile = 0.95;
    std::uint32_t headroom_mbps = 330;
    std::uint32_t mu_mbps = 0;  // 0: the software limit in Mbps (swlimit_mbps * 8)
    // Main bucket issuance per interval as a share of the SA's capacity: Still Water's proxy limit
    // (1.2 GB/s) against what the server serves (2.13 GB/s, Fig. 6); 1: issue the capacity.
    double main_share = 1.0;
    // `main_slices` k: the main bucket's tokens of a window released in k equal slices across
    // it (fw bg_db_main_slice / bg_fw_db_meter); 1: all at the window's tick.
    std::uint32_t main_slices = 1;
    int main_slices_line = 0;  // for the gateway's refusal
    // Order in which the host re-offers deferred I/Os at the next interval (`reoffer`): false
    // (`fifo`): deferral order; true (`steady_first`): the I/Os the monitor last saw as steady,
    // then the hot ones, each in deferral order. Applies under the dualbucket scheduler only.
    bool steady_first = false;
    // `tenant_contracts`: the buckets on top of the tenants' contracts (docs/contracts.md,
    // window.h db_contracts); false: Still Water as printed, the segment-level buckets alone.
    bool tenant_contracts = true;
};

// added: `mode: trace` replays a block trace (bg_trace) open loop: each read or write record
// arrives at start + (its time since the trace's first record - skip) * time_scale, with its size and
// direction, on segment (offset / segment_bytes) mod segments. Records of other devices (when
// `device` is set) and records moving no data (sync, trim) are skipped.
struct TraceSpec {
    std::string file;      // resolved: relative to the scenario file's folder
    bg::trace::Format format = bg::trace::Format::kCloudPhysics;
    std::string device;    // only this device's records; empty: every record
    double time_scale = 1.0;
    std::uint64_t skip_ns = 0;  // records earlier than this (trace time) are skipped; later ones shift down by it
    bool loop = false;     // start over at the last record's time when the trace ends
    std::uint64_t segment_bytes = 1ull << 30;
    int line = 1;          // of the `trace` mapping
};

struct Workload {
    bool trace = false;    // added: mode: trace (then `closed` is false and `tr` applies)
    TraceSpec tr;
    bool closed = true;
    std::uint32_t iodepth = 1;
    double rate_iops = 0;
    std::vector<std::pair<std::uint32_t, double>> sizes;  // bytes, share (sums to 1)
    double read_share = 0;
    std::uint32_t segments = 1, hot_segments = 0;
    double hot_share = 0;
    std::uint64_t start_ns = 0, stop_ns = 0;
};

struct Provision {
    double iops = 0, mbps = 0;
};

struct Tenant {
    std::string name;
    int line = 1;                   // of the tenant's entry, for messages found after loading
    unsigned product = 0;
    Provision base, burst;
    bool credit = false;            // burst_mode: credit (else paid)
    std::uint64_t burst_credits = 0;  // I/Os
    std::uint32_t queues = 1;
    std::uint32_t max_conns = 0;    // burstgate-gateway only: NBD connections at once (0: --max-conns)
    Workload wl;
};

struct LsmSection;  // lsm_section.hpp

struct Scenario {
    std::string file;  // as given, for messages
    std::string name;
    std::uint64_t seed = 1;
    std::uint64_t duration_ns = 0, warmup_ns = 0;
    Scheduler scheduler = Scheduler::kBios;
    std::uint64_t window_ns = 1'000'000;
    Dpu dpu;
    DualBucketCfg db;
    BiosCfg bios;
    LibraCfg libra;
    std::vector<Tenant> tenants;
    std::shared_ptr<const LsmSection> lsm;  // added: `lsm:` (lsm_section.hpp), when present
};

// Parse and validate. Throws ScenarioError (file:line: path: message) for every problem the
// format can have: unknown key, wrong type, negative or out-of-range value, stop before start,
// shares that do not sum to 1, a bad size, a product without a CPU profile, duplicate names.
// added: what a command line may impose on a scenario (burstgate-host replay).
struct LoadOptions {
    std::string trace_file, trace_format;  // for every `mode: trace` tenant, instead of the file's
    std::uint64_t duration_ns = 0;         // instead of duration_ms, when not 0
};
Scenario load_scenario(const std::string &path, const LoadOptions &opt = {});
Scenario parse_scenario(const std::string &yaml_text, const std::string &file_name, const LoadOptions &opt = {});

const char *scheduler_name(Scheduler s);
// Throws std::invalid_argument for an unknown name.
Scheduler parse_scheduler(const std::string &name);

}  // namespace bg::sim
