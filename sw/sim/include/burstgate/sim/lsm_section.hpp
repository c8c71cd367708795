// The `lsm:` section of a burstgate-sim scenario (docs/lsm.md): an LSM key-value store
// (sw/lsm: the store, its block cache, Calcspar's allocator, YCSB / Mixgraph users) whose
// I/O either
//   * goes through burstgate: every I/O the store (or Calcspar's allocator) sends to its
//     volume becomes a descriptor of the tenant `lsm.tenant` names, is costed, admitted or
//     deferred by the agent, served by the SA threads and the backend of the simulator, and
//     completes the store's request when the simulator completes it ("a burstgate-scheduled
//     disk", BurstCBS §6.7) -- the tenant's provisioning and the firmware's per-window
//     grants are the scenario's, unchanged; or
//   * without `tenant`, goes to a cloud volume of its own (Calcspar §2.3; `lsm.volume`),
//     next to the agent's run.
// The two event loops (burstgate-sim's, the store's) interleave by time: the simulator runs
// the store's events due before its own next event (LsmTenant::next_time / run_at), and a
// completion is an event of the store's loop at the simulator's time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "burstgate/lsm/experiment.hpp"
#include "burstgate/lsm/replay.hpp"

namespace YAML {
class Node;
}

namespace bg::sim {

struct Scenario;

struct LsmSection {
    int line = 1;              // of the `lsm:` mapping
    std::string tenant;        // empty: the store runs on its own cloud volume (spec.volume)
    std::uint32_t tenant_index = 0;
    std::uint64_t segment_bytes = 1ull << 30;  // I/O offset -> the tenant's segment
    std::uint32_t segments = 1;
    // store, cache, allocator, cache share, tree, workload, intensity, threads, volume.
    // duration, warmup and seed are the scenario's (set by simulate()).
    bg::lsm::RunSpec spec;
    // workload kind: replay -- a recorded block-I/O trace (burstgate-rocksdb-record) instead of
    // the store: its threads issue their I/Os in order, each when the previous completed and not
    // before its recorded time x time_scale; store calcspar puts Calcspar's allocator in front.
    std::shared_ptr<const std::vector<bg::lsm::TraceRecord>> trace;
    std::string trace_file;
    double time_scale = 1.0;
};

struct LsmResult {
    std::string store, cache, allocator, workload, volume;  // volume: "tenant NAME" or "io2"
    // run.ops: per operation type; with workload replay per recorded source (user, wal, flush,
    // compaction) and "all", each an I/O of the trace; throughput then counts those I/Os.
    std::uint32_t paid_iops = 0;
    bg::lsm::RunResult run;
};

// Parses `lsm:` into s.lsm and turns the named tenant into the store's queue. Every problem is
// a ScenarioError "FILE:LINE: lsm.field.path: message". Called by parse_scenario after the
// tenants; a tenant without `workload:` is only allowed when `lsm.tenant` names it.
void load_lsm_section(const YAML::Node &n, const std::string &file, Scenario &s);
// Without an `lsm:` section: every tenant must have a workload (the same message as before).
void check_tenant_workloads(const Scenario &s);

// The store driven by burstgate-sim's event loop, its I/O going to tenant `lsm.tenant`.
class LsmTenant {
public:
    struct Io {
        std::uint64_t offset = 0;
        std::uint32_t bytes = 0;
        bool write = false;
        std::uint32_t cookie = 0;  // give it back to complete()
    };
    LsmTenant(const Scenario &sc, std::uint64_t seed, std::uint64_t duration_ns, std::uint64_t warmup_ns);
    ~LsmTenant();
    LsmTenant(const LsmTenant &) = delete;
    LsmTenant &operator=(const LsmTenant &) = delete;
    // The store's next event (UINT64_MAX: none).
    std::uint64_t next_time() const;
    // Runs the store's events due at t (>= every earlier call's t); the I/Os they submit are
    // appended to `out`, in submission order, all at time t.
    void run_at(std::uint64_t t, std::vector<Io> &out);
    // The I/O `cookie` completed at t (>= the last run_at's t); the store hears of it at t.
    void complete(std::uint32_t cookie, std::uint64_t t);
    std::shared_ptr<const LsmResult> finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A section without a tenant: the store on its own cloud volume for the scenario's duration.
std::shared_ptr<const LsmResult> run_lsm_on_cloud_volume(const Scenario &sc, std::uint64_t seed);

// `"lsm": {...}` for the JSON report (two-space indent, no trailing comma or newline).
std::string lsm_report_json(const LsmResult &r);

}  // namespace bg::sim
