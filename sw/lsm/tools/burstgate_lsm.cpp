// burstgate-lsm: the LSM-side reproductions of Calcspar (ATC'23) on the simulated
// cloud volume. Each figure command prints a table and, with --json, writes every run's
// report (per-operation latency percentiles, volume IOPS, cache hit ratio). The figures
// themselves are library code (burstgate/lsm/figures.hpp, figure_json.hpp); this file parses
// the command line and prints what they return.
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "args.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/experiment.hpp"
#include "burstgate/lsm/figure_json.hpp"
#include "burstgate/lsm/figures.hpp"
#include "burstgate/lsm/replay.hpp"

using namespace bg::lsm;

namespace {

const char* kUsage = R"(usage: burstgate-lsm COMMAND [options]

commands (Calcspar, ATC'23):
  fig3    the volume alone: Fig. 3's single-thread pattern, per-second latency (overdraft rule)
  fig4    the volume alone: latency vs threads above/below paid IOPS (W = L/A, Fig. 4)
  fig7    single thread, fluctuating random reads on io2: per-second offered/executed QPS, latency
  fig14   Mixgraph, read ratio 0.5..1.0: avg and P99 latency, Calcspar vs RocksDB-like vs no cache
  fig16   YCSB A-F: P99 latency, Calcspar vs RocksDB-like
  fig18   Mixgraph, 1..20 user threads: avg and P99 latency, Calcspar vs RocksDB-like
  fig18-load  Fig. 18's gap: Mixgraph at 0.6..1.0 x paid IOPS, 1 and 20 threads: Calcspar (strict
          and borrow stabilizer) vs RocksDB-like, with tokens per operation and the backlog
  fig18-cache  Fig. 18's average vs the cache: 2 % and 4 % of the data, 1 / 10 / 20 threads:
          Calcspar (FA cache), Calcspar with the static optimum of that size (a bound) and
          RocksDB-like, with tokens per operation, hit ratio and token wait per operation
  fig19   Mixgraph 5 % reads / 95 % writes: Calcspar with the allocators NA, SA (6:3:1), DA, TWA
  fig20   hit ratio of FA / passive-only / prefetch-only caches under YCSB-B and Mixgraph
  fig20-load  Fig. 20 vs load: Mixgraph at 0.3..1.0 x paid IOPS, FA / P / PP hit ratios and the
          share of time FA's passive policy is active (the 95 % switch)
  fig21   Mixgraph, cache 0.1 %..20 % of the data: avg and P99.9 latency, Calcspar vs RocksDB
  run     one run with the options below
  replay TRACE  replay a block-I/O trace (burstgate-rocksdb-record) through the volume model,
          with Calcspar's allocator (--store calcspar) or without (--store direct)

options:
  --seed N            PRNG seed (default 1)
  --duration S        simulated whole seconds per run (default 120; fig3/fig4 ignore it)
  --warmup S          whole seconds excluded from statistics (default 20)
  --keys N            keys loaded before the run (default 2000000; 272-byte entries)
  --l1-mib N          L1's target size in MiB (default 16; at least the 8 MiB SST size)
  --volume TYPE       gp2 | gp3 | io1 | io2 (default io2)
  --iops N            paid IOPS (default 1000 for io1/io2, 3000 for gp3)
  --size-gb N         volume size, sets gp2's IOPS (default 100)
  --threads N         user threads (default 10)
  --intensity X       mean offered ops/s as a multiple of paid IOPS (default 1.0, the paper's
                      "mean load = paid IOPS"; 10 for fig19, whose writes must load the volume)
  --amplitude X       mixgraph/random-read sine amplitude / mean (default 0.5)
  --period S          sine period in seconds (default 60)
  --key-ranges N      mixgraph key ranges (db_bench keyrange_num, default 30)
  --key-dist-a X      mixgraph key hotness inside a range, db_bench key_dist_a/key_dist_b:
  --key-dist-b X        both 0 = uniform (prefix_dist, default); both > 0 = power model
                        (all_dist uses 0.002312 / 0.3467)
  --token-slices N    Calcspar stabilizer releases A/N tokens every 1/N s (default 1 = the
                      paper's per-second refresh; N > 1 is our extension, docs/lsm.md)
  --stabilizer S      Calcspar stabilizer: strict (default, §4.1: no I/O beyond the second's
                      tokens) | borrow (our extension: user-aware I/O that finds no token
                      overdraws the volume's borrowing pool, mirrored, instead of waiting)
  --meta M            where filter and index blocks live: cache (default: in the block cache,
                      cache_index_and_filter_blocks = true) | memory (RocksDB's default: held by
                      the table readers, outside the cache, never read from the volume)
  --json PATH         write the reports as JSON
  --quiet             no progress line
run only:
  --store S           calcspar | rocksdb | nocache | raw (default calcspar)
  --cache C           calcspar cache: fa | passive | prefetch (default fa) | oracle (a bound, not a
                      policy: the 400 k-operation sample's most-read pages, pinned for free)
  --allocator A       calcspar allocator: twa | na | sa | da | twa-reserve (default twa;
                      twa-reserve is our extension: lower queues leave high's expected demand)
  --cache-share X     cache size / data size (default 0.02)
  --workload W        mixgraph | ycsb-a..ycsb-f | ycsb-uniform | random-read (default mixgraph)
  --read-ratio X      mixgraph Get share (default: db_bench's 0.83/0.14/0.03 mix)
replay only:
  --store S           calcspar | direct (default calcspar)
  --time-scale X      recorded times are multiplied by X (default 1)
  --max-records N     refuse a trace of more than N records (default 16777216: replay keeps
                      the trace and a latency per I/O in memory, about 72 bytes a record)
)";

[[noreturn]] void fail(const std::string& msg)
{
    std::cerr << "burstgate-lsm: " << msg << "\n(run 'burstgate-lsm --help' for usage)\n";
    std::exit(2);
}

struct Options {
    std::string command;
    std::uint64_t seed = 1;
    double duration = 120, warmup = 20;
    std::uint64_t keys = 2000000;
    std::string volume = "io2";
    std::uint32_t iops = 0, size_gb = 100;
    std::uint32_t threads = 10, slices = 1;
    double intensity = -1;  // per-command default: 10 for fig19, 1.0 (the paper's mean = paid) otherwise
    std::string json, trace;
    double time_scale = 1.0;
    std::uint64_t max_records = bg::lsm::kMaxTraceRecords;
    bool quiet = false;
    std::string store = "calcspar", cache = "fa", allocator = "twa", workload = "mixgraph", stabilizer = "strict";
    bool meta_in_memory = false;
    double cache_share = 0.02, read_ratio = -1, amplitude = 0.5, period = 60, key_dist_a = 0, key_dist_b = 0;
    std::uint32_t key_ranges = 30;
    std::uint64_t l1_mib = 0;  // 0: LsmConfig's default
};

Options parse_args(int argc, char** argv)
{
    Options o;
    std::vector<std::string> a(argv + 1, argv + argc);
    if (a.empty()) fail("missing COMMAND");
    if (a[0] == "-h" || a[0] == "--help") {
        std::cout << kUsage;
        std::exit(0);
    }
    o.command = a[0];
    static const std::vector<std::string> commands = {"fig3", "fig4", "fig7", "fig14", "fig16",
                                                      "fig18", "fig18-load", "fig18-cache", "fig19", "fig20", "fig20-load",
                                                      "fig21", "run", "replay"};
    bool known = false;
    for (const auto& c : commands) known |= c == o.command;
    if (!known) fail("unknown command '" + o.command + "'");
    std::size_t first = 1;
    if (o.command == "replay") {
        if (a.size() < 2 || a[1].rfind("--", 0) == 0) fail("replay needs a TRACE file");
        o.trace = a[1];
        first = 2;
    }
    bg::cli::ArgReader args(argc, argv, static_cast<int>(first) + 1);
    while (args.next()) {
        const std::string f = args.flag();
        if (f == "--quiet") { o.quiet = true; continue; }
        if (f == "-h" || f == "--help") { std::cout << kUsage; std::exit(0); }
        if (!args.is_option()) fail("unexpected argument '" + f + "'");
        const bool run_only = f == "--store" || f == "--cache" || f == "--allocator" || f == "--cache-share" ||
                              f == "--workload" || f == "--read-ratio";
        const bool replay_ok = (f == "--store" || f == "--allocator") && o.command == "replay";
        if (run_only && o.command != "run" && !replay_ok) fail(f + " applies to 'run' only");
        if ((f == "--time-scale" || f == "--max-records") && o.command != "replay") fail(f + " applies to 'replay' only");
        if (f == "--seed") o.seed = args.integer(0, 1'000'000'000'000'000'000ull);
        else if (f == "--duration") o.duration = static_cast<double>(args.integer(1, 36000));
        else if (f == "--warmup") o.warmup = static_cast<double>(args.integer(0, 36000));
        else if (f == "--keys") o.keys = args.integer(1000, 1'000'000'000);
        else if (f == "--l1-mib") o.l1_mib = args.integer(1, 1'000'000);
        else if (f == "--volume") o.volume = args.value();
        else if (f == "--iops") o.iops = static_cast<std::uint32_t>(args.integer(1, 10'000'000));
        else if (f == "--size-gb") o.size_gb = static_cast<std::uint32_t>(args.integer(1, 1'000'000));
        else if (f == "--threads") o.threads = static_cast<std::uint32_t>(args.integer(1, 10000));
        else if (f == "--intensity") o.intensity = args.number(0.001, 100);
        else if (f == "--json") o.json = args.value();
        else if (f == "--store") o.store = args.value();
        else if (f == "--cache") o.cache = args.value();
        else if (f == "--allocator") o.allocator = args.value();
        else if (f == "--cache-share") o.cache_share = args.number(0, 1);
        else if (f == "--workload") o.workload = args.value();
        else if (f == "--read-ratio") o.read_ratio = args.number(0, 1);
        else if (f == "--amplitude") o.amplitude = args.number(0, 1);
        else if (f == "--period") o.period = args.number(0.001, 36000);
        else if (f == "--key-ranges") o.key_ranges = static_cast<std::uint32_t>(args.integer(1, 1'000'000));
        else if (f == "--key-dist-a") o.key_dist_a = args.number(0, 1);
        else if (f == "--key-dist-b") o.key_dist_b = args.number(0, 100);
        else if (f == "--time-scale") o.time_scale = args.number(0, 1e6);
        else if (f == "--max-records") o.max_records = args.integer(1, std::uint64_t{1} << 32);
        else if (f == "--stabilizer") o.stabilizer = args.value();
        else if (f == "--meta") {
            const std::string m = args.value();
            if (m != "cache" && m != "memory") fail("--meta: cache or memory");
            o.meta_in_memory = m == "memory";
        }
        else if (f == "--token-slices") o.slices = static_cast<std::uint32_t>(args.integer(1, 1000));
        else fail("unknown option '" + f + "'");
    }
    if (o.warmup >= o.duration) fail("--warmup must be less than --duration");
    if (o.stabilizer != "strict" && o.stabilizer != "borrow") fail("--stabilizer: strict or borrow");
    if (o.stabilizer == "borrow" && o.slices != 1) fail("--stabilizer borrow needs --token-slices 1");
    if ((o.key_dist_a == 0) != (o.key_dist_b == 0)) {
        fail("--key-dist-a / --key-dist-b: both 0 (uniform inside a range) or both > 0");
    }
    if (o.key_ranges > o.keys) fail("--key-ranges: more ranges than --keys");
    if (o.intensity < 0) {
        // fig19 needs the write volume of "enough flush and compaction operations" (§5.3).
        o.intensity = o.command == "fig19" ? 10.0 : 1.0;
    }
    return o;
}

Options parse(int argc, char** argv)
{
    try {
        return parse_args(argc, argv);
    } catch (const bg::cli::UsageError& e) {
        fail(e.what());
    }
}

// ---- output -------------------------------------------------------------------------------

void row(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void row(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
}

// A --json path that cannot be written fails before minutes of simulation, not after.
void check_json(const Options& o)
{
    if (!o.json.empty() && !std::ofstream(o.json)) fail("--json: cannot write '" + o.json + "'");
}

// Writes a figure's report to --json (nothing without it).
void write_json(const Options& o, const std::string& text)
{
    if (o.json.empty()) return;
    std::ofstream f(o.json);
    if (!f) fail("--json: cannot write '" + o.json + "'");
    f << text;
    if (!f) fail("--json: write to '" + o.json + "' failed");
}

// The command line's run spec; each figure changes what it sweeps.
RunSpec base_spec(const Options& o)
{
    RunSpec s;
    s.volume = volume_preset(o.volume, o.iops, o.size_gb);
    s.lsm.keys = o.keys;
    s.threads = o.threads;
    s.intensity = o.intensity;
    s.duration = static_cast<Time>(o.duration * 1e9);
    s.warmup = static_cast<Time>(o.warmup * 1e9);
    s.seed = o.seed;
    s.workload.amplitude = o.amplitude;
    s.workload.period = static_cast<Time>(o.period * 1e9);
    s.workload.key_ranges = o.key_ranges;
    s.workload.key_dist_a = o.key_dist_a;
    s.workload.key_dist_b = o.key_dist_b;
    s.token_slices = o.slices;
    s.stabilizer = o.stabilizer;
    s.lsm.meta_in_memory = o.meta_in_memory;
    if (o.l1_mib) s.lsm.l1_bytes = o.l1_mib << 20;
    return s;
}

// A progress line per run on stderr when it is a terminal (and not --quiet).
FigureRunner runner(const Options& o)
{
    if (o.quiet || !isatty(2)) return FigureRunner(base_spec(o));
    const std::string command = o.command;
    return FigureRunner(
        base_spec(o),
        [command](const std::string& label, int index, int total, double f) {
            std::fprintf(stderr, "\r[%s] run %d/%d %-28s %3.0f%%", command.c_str(), index, total, label.c_str(), 100 * f);
            std::fflush(stderr);
        },
        [] { std::fprintf(stderr, "\r%80s\r", ""); });
}

// ---- commands -----------------------------------------------------------------------------

// Fig. 3 / Fig. 4: the volume alone. --json: the printed table's rows as numbers.
int cmd_volume(const Options& o)
{
    const VolumeSpec spec = volume_preset(o.volume, o.iops, o.size_gb);
    const std::uint32_t a = spec.paid_iops;
    std::vector<std::vector<double>> rows;
    if (o.command == "fig3") {
        check_json(o);
        const std::vector<Fig3Second> secs = fig3(spec, o.seed);
        row("Fig. 3: %s, %u paid IOPS, one thread; 'slow' = latency > 500 us\n", spec.type.c_str(), a);
        row("%6s %10s %8s %8s %10s %10s\n", "second", "submit/s", "done", "slow", "avg_us", "max_us");
        for (std::size_t s = 0; s < secs.size(); ++s) {
            const Fig3Second& x = secs[s];
            row("%6zu %10.0f %8llu %8llu %10.1f %10.1f\n", s + 1, x.submit_per_s, (unsigned long long)x.done,
                (unsigned long long)x.slow, x.avg_us, x.max_us);
            rows.push_back({static_cast<double>(s + 1), x.submit_per_s, static_cast<double>(x.done),
                            static_cast<double>(x.slow), x.avg_us, x.max_us});
        }
        if (!o.json.empty()) {
            write_json(o, table_json("fig3", spec, {"second", "submit_per_s", "done", "slow", "avg_us", "max_us"}, rows));
        }
        return 0;
    }
    row("Fig. 4: %s, %u paid IOPS; average latency vs threads (W = L/A predicts L/A above)\n", spec.type.c_str(), a);
    row("%8s %14s %14s %14s\n", "threads", "below_avg_us", "above_avg_us", "L/A_us");
    check_json(o);
    for (const Fig4Row& x : fig4(spec, o.seed)) {
        row("%8u %14.1f %14.1f %14.1f\n", x.threads, x.below_avg_us, x.above_avg_us, x.l_over_a_us);
        rows.push_back({static_cast<double>(x.threads), x.below_avg_us, x.above_avg_us, x.l_over_a_us});
    }
    if (!o.json.empty()) {
        write_json(o, table_json("fig4", spec, {"threads", "below_avg_us", "above_avg_us", "l_over_a_us"}, rows));
    }
    return 0;
}

int cmd_fig7(const Options& o)
{
    FigureRunner r = runner(o);
    const RunResult& x = fig7(r);
    row("Fig. 7: one thread, random 4 KiB reads at a sine rate (mean = %.2f x paid %u IOPS, amplitude %.0f %%, period %.0f s)\n",
        o.intensity, r.runs().back().spec.volume.paid_iops, 100 * o.amplitude, o.period);
    row("%6s %10s %10s %10s %10s %10s\n", "second", "offered", "executed", "vol_iops", "avg_us", "max_us");
    for (std::size_t i = 0; i < x.timeline.size(); ++i) {
        const auto& t = x.timeline[i];
        row("%6zu %10llu %10llu %10u %10.0f %10.0f\n", i, (unsigned long long)t.offered, (unsigned long long)t.completed,
            t.volume_tokens, t.avg_us, t.max_us);
    }
    row("overall: offered %.0f/s executed %.0f/s avg %.0f us p99 %.0f us; response incl. wait for the thread: avg %.0f us p99 %.0f us\n",
        x.offered, x.throughput, x.ops.at("all").avg_us, x.ops.at("all").p99_us, x.response.avg_us, x.response.p99_us);
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_compare(const Options& o)
{
    if (o.command == "fig18") {
        row("Fig. 18: Mixgraph on %s, latency of Get vs user threads\n", o.volume.c_str());
    } else if (o.command == "fig14") {
        row("Fig. 14: Mixgraph on %s, Get latency vs read ratio (rest Put)\n", o.volume.c_str());
    } else if (o.command == "fig16") {
        row("Fig. 16: YCSB on %s at %.2f x paid IOPS, latency of all operations\n", o.volume.c_str(), o.intensity);
    } else {
        row("Fig. 21: Mixgraph on %s, Get latency vs cache size (share of the data)\n", o.volume.c_str());
    }
    row("%-10s %-10s %10s %10s %10s %10s %9s %9s %8s\n", compare_layout(o.command).key_name.c_str(), "store", "avg_us",
        "p50_us", "p99_us", "p999_us", "ops/s", "vol_iops", "hit");
    FigureRunner r = runner(o);
    for (const CompareRow& x : compare(r, o.command).rows) {
        row("%-10s %-10s %10.0f %10.0f %10.0f %10.0f %9.0f %9.0f %8.3f\n", x.key.c_str(), x.store.c_str(), x.lat.avg_us,
            x.lat.p50_us, x.lat.p99_us, x.lat.p999_us, x.throughput, x.volume_iops, x.hit_ratio);
    }
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_fig19(const Options& o)
{
    row("Fig. 19: Mixgraph with 5 %% Get / 95 %% Put on %s, %u threads: Calcspar with four IOPS allocators\n",
        o.volume.c_str(), o.threads);
    row("%-12s %9s %10s %10s %10s %10s %12s %12s\n", "allocator", "ops/s", "avg_us", "p99_us", "p999_us",
        "get_p99_us", "compactions", "write_stalls");
    FigureRunner r = runner(o);
    for (const Fig19Row& x : fig19(r)) {
        row("%-12s %9.0f %10.0f %10.0f %10.0f %10.0f %12llu %12llu\n", x.allocator.c_str(), x.throughput, x.all.avg_us,
            x.all.p99_us, x.all.p999_us, x.get_p99_us, (unsigned long long)x.compactions,
            (unsigned long long)x.write_stalls);
    }
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_fig20(const Options& o)
{
    row("Fig. 20: hit ratio of Calcspar's cache policies (FA = fluctuation-aware, P = passive only, PP = prefetch only)\n");
    row("%-10s %8s %8s %8s   data blocks only: %6s %8s %8s\n", "workload", "FA", "P", "PP", "FA", "P", "PP");
    FigureRunner r = runner(o);
    const Fig20 f = fig20(r);
    for (const Fig20Row& x : f.rows) {
        row("%-10s %8.3f %8.3f %8.3f   %24.3f %8.3f %8.3f\n", x.workload.c_str(), x.hit[0], x.hit[1], x.hit[2],
            x.data_hit[0], x.data_hit[1], x.data_hit[2]);
    }
    row("\nHeadroom: the block reads of 400 k operations on the initial tree against caches of each size (headroom())\n");
    row("%-10s %7s %10s %12s %10s %12s %14s\n", "workload", "cache", "reads", "pages read", "LRU", "page optimum",
        "256K optimum");
    for (const Fig20HeadroomRow& x : f.headroom) {
        const Headroom& h = x.h;
        row("%-10s %6.1f%% %10llu %12llu %10.3f %12.3f %14.3f\n", x.workload.c_str(), 100 * h.share,
            (unsigned long long)h.reads, (unsigned long long)h.pages, h.lru, h.page_opt, h.block_opt);
    }
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_fig18_load(const Options& o)
{
    row("Fig. 18 vs load: Mixgraph on %s, Get latency; calcspar = §4.1 stabilizer, +borrow = our extension\n",
        o.volume.c_str());
    row("%-9s %-7s %-14s %10s %10s %11s %8s %9s %9s\n", "intensity", "threads", "store", "avg_us", "p99_us",
        "p999_us", "tok/op", "backlog", "maxwait_ms");
    FigureRunner r = runner(o);
    for (const Fig18LoadRow& x : fig18_load(r)) {
        row("%-9.2f %-7u %-14s %10.0f %10.0f %11.0f %8.2f %9llu %9.0f\n", x.load, x.threads, x.store.c_str(), x.get.avg_us,
            x.get.p99_us, x.get.p999_us, x.tokens_per_op, (unsigned long long)x.backlog, x.max_wait_ms);
    }
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_fig18_cache(const Options& o)
{
    row("Fig. 18 vs cache: Mixgraph on %s, Get latency; calcspar+oracle = the static optimum of that size "
        "(a bound, not a policy)\n", o.volume.c_str());
    row("%-6s %-7s %-16s %10s %10s %11s %8s %7s %12s %10s\n", "cache", "threads", "store", "avg_us", "p99_us",
        "p999_us", "tok/op", "hit", "wait/op_us", "overdraft");
    FigureRunner r = runner(o);
    for (const Fig18CacheRow& x : fig18_cache(r)) {
        row("%-6.2f %-7u %-16s %10.0f %10.0f %11.0f %8.2f %7.3f %12.0f %10llu\n", x.share, x.threads, x.store.c_str(),
            x.get.avg_us, x.get.p99_us, x.get.p999_us, x.tokens_per_op, x.hit, x.wait_per_op_us,
            (unsigned long long)x.overdraft);
    }
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_fig20_load(const Options& o)
{
    row("Fig. 20 vs load: Mixgraph on %s, hit ratio (all / data blocks) of FA, P, PP\n", o.volume.c_str());
    row("%-9s %13s %13s %13s %7s %9s %9s\n", "intensity", "FA", "P", "PP", "heavy", "FA-P data", "backlog");
    FigureRunner r = runner(o);
    for (const Fig20LoadRow& x : fig20_load(r)) {
        row("%-9.2f %6.3f/%6.3f %6.3f/%6.3f %6.3f/%6.3f %7.2f %+9.3f %9llu\n", x.load, x.hit[0], x.data_hit[0], x.hit[1],
            x.data_hit[1], x.hit[2], x.data_hit[2], x.heavy, x.data_hit[0] - x.data_hit[1],
            (unsigned long long)x.backlog);
    }
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_run(const Options& o)
{
    FigureRunner r = runner(o);
    RunSpec s = r.base();
    s.store = o.store;
    s.cache = o.cache;
    s.allocator = o.allocator;
    s.cache_share = o.cache_share;
    s.workload.kind = o.workload;
    s.workload.read_ratio = o.read_ratio;
    const RunResult& x = r.go("run", s, 1, 1);
    row("%-8s %8s %10s %10s %10s %10s %10s\n", "op", "count", "avg_us", "p50_us", "p99_us", "p999_us", "max_us");
    for (const auto& [op, l] : x.ops) {
        row("%-8s %8llu %10.0f %10.0f %10.0f %10.0f %10.0f\n", op.c_str(), (unsigned long long)l.count, l.avg_us, l.p50_us,
            l.p99_us, l.p999_us, l.max_us);
    }
    row("throughput %.0f ops/s (offered %.0f), volume %.0f IOPS (fast %llu, overdraft %llu, waited %llu), hit ratio %.3f "
        "(data blocks %.3f), "
        "prefetch I/Os %llu, flushes %llu, compactions %llu, write stalls %llu, %llu events; "
        "FA passive %.0f %% of the time, %llu borrowed tokens, token waits %.1f / %.1f / %.1f s (high / medium / low)\n",
        x.throughput, x.offered, x.volume_iops, (unsigned long long)x.volume.fast, (unsigned long long)x.volume.overdraft,
        (unsigned long long)x.volume.waited, x.hit_ratio, x.data_hit_ratio, (unsigned long long)x.cache.prefetch_ios,
        (unsigned long long)x.lsm.flushes, (unsigned long long)x.lsm.compactions, (unsigned long long)x.lsm.write_stalls,
        (unsigned long long)x.events, 100 * x.heavy_share, (unsigned long long)x.borrowed_tokens, x.allocator_wait_s[0],
        x.allocator_wait_s[1], x.allocator_wait_s[2]);
    write_json(o, runs_json(o.command, o.seed, r.runs()));
    return 0;
}

int cmd_replay(const Options& o)
{
    std::vector<TraceRecord> trace;
    if (!o.json.empty() && !std::ofstream(o.json)) fail("--json: cannot write '" + o.json + "'");  // before the run
    try {
        trace = read_trace(o.trace, o.max_records);
    } catch (const std::runtime_error& e) {
        fail(e.what());
    }
    ReplaySpec spec;
    spec.store = o.store == "calcspar" ? "calcspar" : o.store;
    spec.allocator = o.allocator;
    spec.volume = volume_preset(o.volume, o.iops, o.size_gb);
    spec.time_scale = o.time_scale;
    spec.seed = o.seed;
    const ReplayResult r = replay(trace, spec);
    row("replay of %zu I/Os from %s on %s (%u paid IOPS), store %s: %.3f s simulated, volume %.0f IOPS "
        "(fast %llu, overdraft %llu, waited %llu)\n",
        trace.size(), o.trace.c_str(), spec.volume.type.c_str(), spec.volume.paid_iops, spec.store.c_str(),
        static_cast<double>(r.span) / 1e9, r.volume_iops, (unsigned long long)r.volume.fast,
        (unsigned long long)r.volume.overdraft, (unsigned long long)r.volume.waited);
    row("%-11s %8s %10s %10s %10s %10s %10s\n", "source", "count", "avg_us", "p50_us", "p99_us", "p999_us", "max_us");
    for (const auto& [src, l] : r.by_source) {
        row("%-11s %8llu %10.0f %10.0f %10.0f %10.0f %10.0f\n", src.c_str(), (unsigned long long)l.count, l.avg_us,
            l.p50_us, l.p99_us, l.p999_us, l.max_us);
    }
    if (!o.json.empty()) {
        std::ofstream f(o.json);
        f << replay_json(o.trace, trace.size(), spec, r);
        if (!f) fail("--json: cannot write '" + o.json + "'");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const Options o = parse(argc, argv);
    try {
        if (o.command == "fig3" || o.command == "fig4") return cmd_volume(o);
        if (o.command == "replay") return cmd_replay(o);
        check_json(o);
        if (o.command == "fig7") return cmd_fig7(o);
        if (o.command == "fig19") return cmd_fig19(o);
        if (o.command == "fig20") return cmd_fig20(o);
        if (o.command == "fig18-load") return cmd_fig18_load(o);
        if (o.command == "fig18-cache") return cmd_fig18_cache(o);
        if (o.command == "fig20-load") return cmd_fig20_load(o);
        if (o.command == "run") return cmd_run(o);
        return cmd_compare(o);
    } catch (const std::invalid_argument& e) {
        fail(e.what());
    }
}
