// One simulated run: a workload of user threads driving a store (Calcspar, RocksDB-like, no
// cache, or raw volume reads) on a cloud volume, with the report the CLI and tests read.
//
// Arrivals are open loop (Poisson, rate = intensity * paid IOPS * the workload's rate
// factor) into one FIFO served by `threads` user threads, as db_bench's mixgraph with a rate
// limiter. An operation's latency runs from when a thread starts it to its completion (what
// db_bench and YCSB report); `response` adds the time the request waited for a free thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/fa_cache.hpp"
#include "burstgate/lsm/lsm_store.hpp"
#include "burstgate/lsm/workload.hpp"

namespace bg::lsm {

struct LatencySummary {
    std::uint64_t count = 0;
    double avg_us = 0, p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};
// Nearest-rank percentiles of the samples (sorted in place).
LatencySummary summarize(std::vector<Time>& samples);

struct RunSpec {
    std::string store = "calcspar";  // calcspar | rocksdb | nocache | raw
    // calcspar: fa | passive | prefetch | oracle (a bound, not a policy: the static optimum of
    // this size, oracle_cache.hpp)
    std::string cache = "fa";
    std::string allocator = "twa";   // calcspar: twa | na | sa | da | twa-reserve (allocator.hpp)
    std::uint32_t token_slices = 1;  // calcspar: stabilizer release slices per second (1 = paper)
    // calcspar: "strict" = §4.1 (no I/O beyond the second's tokens); "borrow" = our extension,
    // high-priority I/O overdraws the mirrored borrowing pool instead of waiting (stabilizer.hpp)
    std::string stabilizer = "strict";
    double cache_share = 0.02;       // cache size / data size (§5.1: 500 MB of 25 GB)
    VolumeSpec volume;
    LsmConfig lsm;
    WorkloadSpec workload;
    double intensity = 1.0;  // mean offered operations per second / paid IOPS
    std::uint32_t threads = 10;  // §5.1
    Time duration = 120 * kSec;
    Time warmup = 20 * kSec;
    std::uint64_t seed = 1;
    std::function<void(double)> progress;  // called with the fraction simulated
};

struct SecondSample {
    std::uint64_t offered = 0, completed = 0;
    double avg_us = 0, max_us = 0;
    std::uint32_t volume_tokens = 0;
};

struct RunResult {
    std::map<std::string, LatencySummary> ops;  // per operation type, plus "all"
    LatencySummary response;                    // "all" including the wait for a thread
    double throughput = 0;                      // operations completed per second (measured)
    double offered = 0;                         // operations arrived per second (measured)
    double volume_iops = 0;                     // tokens consumed by the volume per second
    double hit_ratio = 0;                       // user block reads served by the cache
    double data_hit_ratio = 0;                  // the same for data blocks only (no filter/index)
    std::uint64_t backlog = 0;                  // requests still waiting at the end
    VolumeStats volume;
    CacheStats cache;
    LsmStats lsm;
    std::uint64_t cache_pages = 0;
    double allocator_max_wait_us[3] = {0, 0, 0};  // calcspar: longest token wait per queue
    double allocator_wait_s[3] = {0, 0, 0};       // calcspar: summed token waits per queue, measured period
    std::uint64_t borrowed_tokens = 0;            // calcspar, borrow stabilizer: pool tokens spent
    double heavy_share = 0;                       // calcspar cache: share of the measured 10 ms ticks in passive mode
    std::vector<SecondSample> timeline;
    std::uint64_t events = 0;
};

// Throws std::invalid_argument on a bad spec.
RunResult run(const RunSpec& spec);

// One run whose event loop someone else drives: run() above is an Experiment on its own loop
// and CloudVolume. With `backing`, the store's I/O (through Calcspar's allocator when the
// store is calcspar) goes to that volume instead -- burstgate-sim's burstgate-scheduled disk
// (sw/sim, lsm_section.hpp) -- and the paid IOPS (the stabilizer's budget, the arrival rate's
// unit) are backing->paid_iops(); spec.volume is then unused. The caller runs `loop` to
// spec.duration and then asks for result(); the measured period starts at spec.warmup.
class Experiment {
public:
    // Throws std::invalid_argument on a bad spec.
    Experiment(const RunSpec& spec, EventLoop& loop, Volume* backing = nullptr);
    ~Experiment();
    Experiment(const Experiment&) = delete;
    Experiment& operator=(const Experiment&) = delete;
    // Counters at the start of the measured period; with a backing volume the loop calls it
    // itself at spec.warmup.
    void mark_warmup();
    RunResult result();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace bg::lsm
