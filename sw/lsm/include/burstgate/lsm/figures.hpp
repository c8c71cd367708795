// The Calcspar (ATC'23) reproductions behind burstgate-lsm's figure commands, as functions that
// return what each figure shows, so tests can hold the figures' properties without running the
// CLI (tests/cpp/test_lsm_figures.cpp). burstgate-lsm prints the tables and writes the JSON
// (figure_json.hpp); the numbers are in docs/results.md ("Calcspar: the LSM side").
//
// The figures of whole runs (fig7 on) take a FigureRunner: it builds each run from one base
// spec (the command line's), runs it and keeps every run for the report.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/experiment.hpp"

namespace bg::lsm {

// One run of a figure, named as the progress line and the JSON report name it.
struct LabelledRun {
    std::string label;
    RunSpec spec;
    RunResult result;
};

class FigureRunner {
public:
    // During each run: the run's label, its index (from 1) among `total`, the fraction simulated.
    using Progress = std::function<void(const std::string& label, int index, int total, double fraction)>;
    // `progress` (when set) is told about each run as it goes, `done` after each run.
    explicit FigureRunner(RunSpec base, Progress progress = {}, std::function<void()> done = {});

    // A copy of the base spec, for a figure to change what it sweeps.
    RunSpec base() const { return base_; }
    // Runs `s` (throws std::invalid_argument on a bad spec) and keeps it; the result is valid
    // until the next go().
    const RunResult& go(const std::string& label, RunSpec s, int index, int total);
    const std::vector<LabelledRun>& runs() const { return runs_; }

private:
    RunSpec base_;
    Progress progress_;
    std::function<void()> done_;
    std::vector<LabelledRun> runs_;
};

// ---- the volume alone (Calcspar §2.2) -----------------------------------------------------

// Fig. 3 (Experiment #3): one synchronous thread submitting, second by second, a quota of 1.0A,
// 1.6A, 1.0A, 1.0A, 2.0A, then 1.0A, a pause in second 14, 1.0A again (A = paid IOPS).
struct Fig3Second {
    double submit_per_s = 0;  // the second's quota
    std::uint64_t done = 0;   // I/Os issued in the second and completed
    std::uint64_t slow = 0;   // of which with latency > 500 us (past the overdraft)
    double avg_us = 0, max_us = 0;
};
std::vector<Fig3Second> fig3(const VolumeSpec& spec, std::uint64_t seed);

// Fig. 4: L closed-loop threads, "above" unthrottled (offered >> A) and "below" paced to 0.8A;
// above A the average latency is L/A (Little's law, W = L/A).
struct Fig4Row {
    std::uint32_t threads = 0;
    double below_avg_us = 0, above_avg_us = 0, l_over_a_us = 0;
};
std::vector<Fig4Row> fig4(const VolumeSpec& spec, std::uint64_t seed);

// ---- whole runs ---------------------------------------------------------------------------

// Fig. 7: one thread, random 4 KiB reads at a sine rate straight on the volume (store raw,
// no warmup); the per-second table is the run's timeline.
const RunResult& fig7(FigureRunner& r);

// Fig. 14, 16, 18, 21: Calcspar against the RocksDB-like store (and no cache, for fig14) over
// one swept key: read ratio, YCSB workload, user threads, cache share.
struct CompareRow {
    std::string key, store;
    LatencySummary lat;  // of Comparison::op
    double throughput = 0, volume_iops = 0, hit_ratio = 0;
};
struct Comparison {
    std::string key_name;  // the swept key's column: read | workload | threads | cache
    std::string op;        // the operation whose latency the figure shows: read (Get) | all
    std::vector<std::string> stores;
    std::vector<CompareRow> rows;  // key-major, stores in `stores` order
};
// `figure`: fig14 | fig16 | fig18 | fig21 (std::invalid_argument otherwise).
Comparison compare(FigureRunner& r, const std::string& figure);
// The swept key's column and the figure's operation without running anything (the table
// header can be printed before the runs).
Comparison compare_layout(const std::string& figure);

// Fig. 19: 5 % Get / 95 % Put, Calcspar with the allocators NA, SA (6:3:1), DA, TWA.
struct Fig19Row {
    std::string allocator;
    double throughput = 0;
    LatencySummary all;
    double get_p99_us = 0;  // 0 when no Get completed
    std::uint64_t compactions = 0, write_stalls = 0;
};
std::vector<Fig19Row> fig19(FigureRunner& r);

// Room above LRU: the user block-read stream of 400 k operations on the initial tree (the
// filter, index and data pages of each Get as get_plan gives them, the blocks of each Seek as
// scan_plan does; Puts read nothing), against caches of the given sizes. LRU is what P does;
// the static optimum keeps the most-read pages (an upper bound for any policy without future
// knowledge of this stream, since it is fitted to it); the 256 KiB optimum keeps the most-read
// whole EBS blocks, what a prefetcher that loads whole blocks can at best hold. When LRU is
// already near the page optimum no policy has room to beat it; when the block optimum is
// below LRU, whole-block prefetch displaces better pages than it brings.
struct Headroom {
    double share = 0, lru = 0, page_opt = 0, block_opt = 0;
    std::uint64_t reads = 0, pages = 0;
};
std::vector<Headroom> headroom(const RunSpec& spec, const std::vector<double>& shares);

// Fig. 20: hit ratio (all blocks, data blocks) of FA (fluctuation-aware), P (passive only)
// and PP (prefetch only) under YCSB-B and Mixgraph, then each workload's headroom.
struct Fig20Row {
    std::string workload;
    double hit[3] = {}, data_hit[3] = {};  // FA, P, PP
};
struct Fig20HeadroomRow {
    std::string workload;
    Headroom h;
};
struct Fig20 {
    std::vector<Fig20Row> rows;
    std::vector<Fig20HeadroomRow> headroom;
};
Fig20 fig20(FigureRunner& r);

// Fig. 18's gap, measured: Mixgraph at 0.6..1.0 x paid IOPS, 1 and 20 threads, Calcspar
// (strict and borrow stabilizer) vs RocksDB-like. tok/op = volume IOPS / throughput (what the
// store needs per operation in volume tokens); backlog = operations still queued for a thread
// at the end (growing: the load exceeds what the volume serves).
struct Fig18LoadRow {
    double load = 0;
    std::uint32_t threads = 0;
    std::string store;  // calcspar | calcspar+borrow | rocksdb
    LatencySummary get;
    double tokens_per_op = 0;
    std::uint64_t backlog = 0;
    double max_wait_ms = 0;  // the allocator's longest wait in its high queue
};
std::vector<Fig18LoadRow> fig18_load(FigureRunner& r);

// Fig. 18's average against the cache (docs/results.md): Mixgraph at the base intensity, cache
// 2 % and 4 % of the data, 1 / 10 / 20 threads, Calcspar with its fluctuation-aware cache,
// Calcspar with the static optimum of the same size (`oracle`, oracle_cache.hpp: a bound, not
// a policy) and the RocksDB-like store. Per row: Get latency, tokens per operation, hit ratio,
// the high queue's token wait per operation (0 for the RocksDB-like store), overdraft I/Os.
struct Fig18CacheRow {
    double share = 0;
    std::uint32_t threads = 0;
    std::string store;  // calcspar | calcspar+oracle | rocksdb
    LatencySummary get;
    double tokens_per_op = 0, hit = 0;
    double wait_per_op_us = 0;  // high-queue token waits / operations (a Seek's reads each wait)
    std::uint64_t overdraft = 0;
};
std::vector<Fig18CacheRow> fig18_cache(FigureRunner& r);

// Fig. 20 vs load: Mixgraph at 0.3..1.0 x paid IOPS, FA / P / PP hit ratios, and (of the FA
// run) the share of measured 10 ms ticks in which FA's passive policy was active (the high
// queue took >= 95 % of the paid tokens in the current or the previous second, §4.3).
struct Fig20LoadRow {
    double load = 0;
    double hit[3] = {}, data_hit[3] = {};  // FA, P, PP
    double heavy = 0;
    std::uint64_t backlog = 0;
};
std::vector<Fig20LoadRow> fig20_load(FigureRunner& r);

}  // namespace bg::lsm
