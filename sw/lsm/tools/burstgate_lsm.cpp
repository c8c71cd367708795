// burstgate-lsm: the LSM-side reproductions of Calcspar (ATC'23) on the simulated
// cloud volume. Each figure command prints a table and, with --json, writes every run's
// report (per-operation latency percentiles, volume IOPS, cache hit ratio).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "args.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/experiment.hpp"
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
  --cache C           calcspar cache: fa | passive | prefetch (default fa)
  --allocator A       calcspar allocator: twa | na | sa | da | twa-reserve (default twa;
                      twa-reserve is our extension: lower queues leave high's expected demand)
  --cache-share X     cache size / data size (default 0.02)
  --workload W        mixgraph | ycsb-a..ycsb-f | ycsb-uniform | random-read (default mixgraph)
  --read-ratio X      mixgraph Get share (default: db_bench's 0.83/0.14/0.03 mix)
replay only:
  --store S           calcspar | direct (default calcspar)
  --time-scale X      recorded times are multiplied by X (default 1)
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
    bool quiet = false;
    std::string store = "calcspar", cache = "fa", allocator = "twa", workload = "mixgraph", stabilizer = "strict";
    bool meta_in_memory = false;
    double cache_share = 0.02, read_ratio = -1, amplitude = 0.5, period = 60, key_dist_a = 0, key_dist_b = 0;
    std::uint32_t key_ranges = 30;
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
                                                      "fig18", "fig18-load", "fig19", "fig20", "fig20-load",
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
        if (f == "--time-scale" && o.command != "replay") fail(f + " applies to 'replay' only");
        if (f == "--seed") o.seed = args.integer(0, 1'000'000'000'000'000'000ull);
        else if (f == "--duration") o.duration = static_cast<double>(args.integer(1, 36000));
        else if (f == "--warmup") o.warmup = static_cast<double>(args.integer(0, 36000));
        else if (f == "--keys") o.keys = args.integer(1000, 1'000'000'000);
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

// ---- JSON ---------------------------------------------------------------------------------

std::string num(double x)
{
    if (!std::isfinite(x)) return "null";
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", x);
    return b;
}

std::string lat_json(const LatencySummary& l)
{
    return "{\"count\": " + std::to_string(l.count) + ", \"avg\": " + num(l.avg_us) + ", \"p50\": " + num(l.p50_us) +
           ", \"p99\": " + num(l.p99_us) + ", \"p999\": " + num(l.p999_us) + ", \"max\": " + num(l.max_us) + "}";
}

std::string quote(const std::string& s)
{
    std::string o = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o + "\"";
}

struct Report {
    std::string label;
    RunSpec spec;
    RunResult result;
};

std::string report_json(const Report& r)
{
    const RunSpec& s = r.spec;
    const RunResult& x = r.result;
    std::ostringstream o;
    o << "    {\"label\": " << quote(r.label) << ", \"store\": " << quote(s.store) << ", \"cache\": " << quote(s.cache)
      << ", \"allocator\": " << quote(s.allocator) << ", \"workload\": " << quote(s.workload.kind)
      << ", \"volume\": {\"type\": " << quote(s.volume.type) << ", \"paid_iops\": " << s.volume.paid_iops << "}"
      << ", \"threads\": " << s.threads << ", \"intensity\": " << num(s.intensity)
      << ", \"cache_share\": " << num(s.cache_share) << ", \"token_slices\": " << s.token_slices
      << ", \"stabilizer\": " << quote(s.stabilizer)
      << ", \"meta\": " << quote(s.lsm.meta_in_memory || s.store == "nocache" ? "memory" : "cache")
      << ", \"seed\": " << s.seed << ",\n     \"lat_us\": {";
    bool first = true;
    for (const auto& [op, l] : x.ops) {
        o << (first ? "" : ", ") << quote(op) << ": " << lat_json(l);
        first = false;
    }
    o << "},\n     \"response_us\": " << lat_json(x.response) << ", \"throughput\": " << num(x.throughput)
      << ", \"offered\": " << num(x.offered) << ", \"volume_iops\": " << num(x.volume_iops)
      << ", \"hit_ratio\": " << num(x.hit_ratio) << ", \"data_hit_ratio\": " << num(x.data_hit_ratio)
      << ", \"backlog\": " << x.backlog
      << ",\n     \"volume_ios\": {\"fast\": " << x.volume.fast << ", \"overdraft\": " << x.volume.overdraft
      << ", \"waited\": " << x.volume.waited << "}, \"allocator_max_wait_us\": [" << num(x.allocator_max_wait_us[0])
      << ", " << num(x.allocator_max_wait_us[1]) << ", " << num(x.allocator_max_wait_us[2])
      << "], \"borrowed_tokens\": " << x.borrowed_tokens << ", \"heavy_share\": " << num(x.heavy_share)
      << ", \"prefetch_ios\": " << x.cache.prefetch_ios
      << ", \"flushes\": " << x.lsm.flushes << ", \"compactions\": " << x.lsm.compactions
      << ", \"write_stalls\": " << x.lsm.write_stalls << ",\n     \"timeline\": [";
    for (std::size_t i = 0; i < x.timeline.size(); ++i) {
        const auto& t = x.timeline[i];
        o << (i ? ", " : "") << "[" << t.offered << ", " << t.completed << ", " << num(t.avg_us) << ", "
          << t.volume_tokens << "]";
    }
    o << "]}";
    return o.str();
}

// ---- runs ---------------------------------------------------------------------------------

class Runner {
public:
    explicit Runner(const Options& o) : o_(o), tty_(!o.quiet && isatty(2))
    {
        // Fail before minutes of simulation, not after.
        if (!o.json.empty() && !std::ofstream(o.json)) fail("--json: cannot write '" + o.json + "'");
    }

    RunSpec base() const
    {
        RunSpec s;
        s.volume = volume_preset(o_.volume, o_.iops, o_.size_gb);
        s.lsm.keys = o_.keys;
        s.threads = o_.threads;
        s.intensity = o_.intensity;
        s.duration = static_cast<Time>(o_.duration * 1e9);
        s.warmup = static_cast<Time>(o_.warmup * 1e9);
        s.seed = o_.seed;
        s.workload.amplitude = o_.amplitude;
        s.workload.period = static_cast<Time>(o_.period * 1e9);
        s.workload.key_ranges = o_.key_ranges;
        s.workload.key_dist_a = o_.key_dist_a;
        s.workload.key_dist_b = o_.key_dist_b;
        s.token_slices = o_.slices;
        s.stabilizer = o_.stabilizer;
        s.lsm.meta_in_memory = o_.meta_in_memory;
        return s;
    }

    const RunResult& go(const std::string& label, RunSpec s, int index, int total)
    {
        if (tty_) {
            s.progress = [&, index, total](double f) {
                std::fprintf(stderr, "\r[%s] run %d/%d %-28s %3.0f%%", o_.command.c_str(), index, total,
                             label.c_str(), 100 * f);
                std::fflush(stderr);
            };
        }
        reports_.push_back(Report{label, s, run(s)});
        if (tty_) std::fprintf(stderr, "\r%80s\r", "");
        return reports_.back().result;
    }

    void write_json(const std::string& extra = "") const
    {
        if (o_.json.empty()) return;
        std::ofstream f(o_.json);
        if (!f) fail("--json: cannot write '" + o_.json + "'");
        f << "{\"command\": " << quote(o_.command) << ", \"seed\": " << o_.seed << (extra.empty() ? "" : ", ")
          << extra << ",\n  \"runs\": [\n";
        for (std::size_t i = 0; i < reports_.size(); ++i) f << report_json(reports_[i]) << (i + 1 < reports_.size() ? ",\n" : "\n");
        f << "  ]}\n";
        if (!f) fail("--json: write to '" + o_.json + "' failed");
    }

private:
    const Options& o_;
    bool tty_;
    std::vector<Report> reports_;
};

void row(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void row(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
}

// Fig. 3 / Fig. 4: the volume alone, driven by paced single-thread or closed-loop threads.
// fig3 / fig4 --json: the printed table's rows as numbers, {"figure", "volume", "paid_iops",
// "columns", "rows"}; fails (exit 2) before the run when PATH cannot be written.
class TableJson {
public:
    TableJson(const Options& o, std::string figure, const VolumeSpec& spec, std::vector<std::string> columns)
        : path_(o.json), figure_(std::move(figure)), spec_(spec), columns_(std::move(columns))
    {
        if (!path_.empty() && !std::ofstream(path_)) fail("--json: cannot write '" + path_ + "'");
    }
    void add(std::vector<double> row) { rows_.push_back(std::move(row)); }
    void write() const
    {
        if (path_.empty()) return;
        std::ofstream f(path_);
        f << "{\"figure\": " << quote(figure_) << ", \"volume\": " << quote(spec_.type)
          << ", \"paid_iops\": " << spec_.paid_iops << ",\n \"columns\": [";
        for (std::size_t i = 0; i < columns_.size(); ++i) f << (i ? ", " : "") << quote(columns_[i]);
        f << "],\n \"rows\": [";
        for (std::size_t r = 0; r < rows_.size(); ++r) {
            f << (r ? ",\n   " : "\n   ") << "[";
            for (std::size_t i = 0; i < rows_[r].size(); ++i) f << (i ? ", " : "") << num(rows_[r][i]);
            f << "]";
        }
        f << "]}\n";
        if (!f) fail("--json: write to '" + path_ + "' failed");
    }

private:
    std::string path_, figure_;
    VolumeSpec spec_;
    std::vector<std::string> columns_;
    std::vector<std::vector<double>> rows_;
};

int cmd_volume(const Options& o)
{
    const VolumeSpec spec = volume_preset(o.volume, o.iops, o.size_gb);
    const std::uint32_t a = spec.paid_iops;
    if (o.command == "fig3") {
        // Calcspar Fig. 3 (§2.2 Experiment #3): one thread, a per-second submit quota of 1.0A,
        // 1.6A, 1.0A, 1.0A, 2.0A, then 1.0A, a pause in second 14, 1.0A again.
        std::vector<double> pattern = {1.0, 1.6, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0};
        TableJson json(o, "fig3", spec, {"second", "submit_per_s", "done", "slow", "avg_us", "max_us"});
        EventLoop loop;
        CloudVolume vol(loop, spec, o.seed);
        struct Sec { std::uint64_t n = 0, slow = 0; double sum = 0, max = 0; };
        std::vector<Sec> secs(pattern.size());
        // Each second the thread sends that second's quota back to back, one I/O at a time
        // (synchronous), then idles until the next second.
        std::vector<std::uint64_t> sent(pattern.size(), 0);
        std::function<void(std::size_t)> issue = [&](std::size_t s) {
            if (s >= pattern.size()) return;
            const Time t = loop.now();
            if (static_cast<double>(sent[s]) >= pattern[s] * a || t >= (static_cast<Time>(s) + 1) * kSec) {
                const std::size_t next = std::max<std::size_t>(s + 1, static_cast<std::size_t>(t / kSec));
                loop.at(std::max(t, static_cast<Time>(next) * kSec), [&, next] { issue(next); });
                return;
            }
            ++sent[s];
            vol.submit(IoRequest{}, [&, t, s] {
                const double us = static_cast<double>(loop.now() - t) / 1e3;
                secs[s].n++;
                secs[s].sum += us;
                secs[s].max = std::max(secs[s].max, us);
                if (us > 500) secs[s].slow++;
                issue(s);
            });
        };
        issue(0);
        loop.run_until(static_cast<Time>(pattern.size()) * kSec + 5 * kSec);
        row("Fig. 3: %s, %u paid IOPS, one thread; 'slow' = latency > 500 us\n", spec.type.c_str(), a);
        row("%6s %10s %8s %8s %10s %10s\n", "second", "submit/s", "done", "slow", "avg_us", "max_us");
        for (std::size_t s = 0; s < secs.size(); ++s) {
            const double avg = secs[s].n ? secs[s].sum / static_cast<double>(secs[s].n) : 0.0;
            row("%6zu %10.0f %8llu %8llu %10.1f %10.1f\n", s + 1, pattern[s] * a, (unsigned long long)secs[s].n,
                (unsigned long long)secs[s].slow, avg, secs[s].max);
            json.add({static_cast<double>(s + 1), pattern[s] * a, static_cast<double>(secs[s].n),
                      static_cast<double>(secs[s].slow), avg, secs[s].max});
        }
        json.write();
        return 0;
    }
    // fig4: L closed-loop threads; "above" = unthrottled (offered >> A), "below" = paced to 0.8A.
    row("Fig. 4: %s, %u paid IOPS; average latency vs threads (W = L/A predicts L/A above)\n", spec.type.c_str(), a);
    row("%8s %14s %14s %14s\n", "threads", "below_avg_us", "above_avg_us", "L/A_us");
    TableJson json(o, "fig4", spec, {"threads", "below_avg_us", "above_avg_us", "l_over_a_us"});
    for (std::uint32_t l : {1u, 2u, 4u, 8u, 16u, 32u}) {
        double res[2];
        for (int above = 0; above < 2; ++above) {
            EventLoop loop;
            CloudVolume vol(loop, spec, o.seed + l);
            double sum = 0;
            std::uint64_t n = 0;
            const Time pace = above ? 0 : static_cast<Time>(kSec * l / (0.8 * a));
            std::function<void(Time)> thread = [&](Time t) {
                loop.at(t, [&, t] {
                    vol.submit(IoRequest{}, [&, t] {
                        if (t >= 5 * kSec) { sum += static_cast<double>(loop.now() - t); ++n; }
                        thread(std::max(loop.now(), t + pace));
                    });
                });
            };
            for (std::uint32_t i = 0; i < l; ++i) thread(static_cast<Time>(i) * (pace / l));
            loop.run_until(20 * kSec);
            res[above] = n ? sum / static_cast<double>(n) / 1e3 : 0;
        }
        row("%8u %14.1f %14.1f %14.1f\n", l, res[0], res[1], 1e6 * l / a);
        json.add({static_cast<double>(l), res[0], res[1], 1e6 * l / a});
    }
    json.write();
    return 0;
}

int cmd_fig7(const Options& o, Runner& r)
{
    RunSpec s = r.base();
    s.store = "raw";
    s.threads = 1;
    s.workload.kind = "random-read";
    s.warmup = 0;
    const RunResult& x = r.go("raw io2, 1 thread", s, 1, 1);
    row("Fig. 7: one thread, random 4 KiB reads at a sine rate (mean = %.2f x paid %u IOPS, amplitude %.0f %%, period %.0f s)\n",
        o.intensity, s.volume.paid_iops, 100 * o.amplitude, o.period);
    row("%6s %10s %10s %10s %10s %10s\n", "second", "offered", "executed", "vol_iops", "avg_us", "max_us");
    for (std::size_t i = 0; i < x.timeline.size(); ++i) {
        const auto& t = x.timeline[i];
        row("%6zu %10llu %10llu %10u %10.0f %10.0f\n", i, (unsigned long long)t.offered, (unsigned long long)t.completed,
            t.volume_tokens, t.avg_us, t.max_us);
    }
    row("overall: offered %.0f/s executed %.0f/s avg %.0f us p99 %.0f us; response incl. wait for the thread: avg %.0f us p99 %.0f us\n",
        x.offered, x.throughput, x.ops.at("all").avg_us, x.ops.at("all").p99_us, x.response.avg_us, x.response.p99_us);
    r.write_json();
    return 0;
}

void lat_header(const char* key)
{
    row("%-10s %-10s %10s %10s %10s %10s %9s %9s %8s\n", key, "store", "avg_us", "p50_us", "p99_us", "p999_us",
        "ops/s", "vol_iops", "hit");
}

void lat_row(const std::string& key, const std::string& store, const RunResult& x, const char* op = "all")
{
    const auto it = x.ops.find(op);
    const LatencySummary l = it == x.ops.end() ? LatencySummary{} : it->second;
    row("%-10s %-10s %10.0f %10.0f %10.0f %10.0f %9.0f %9.0f %8.3f\n", key.c_str(), store.c_str(), l.avg_us, l.p50_us,
        l.p99_us, l.p999_us, x.throughput, x.volume_iops, x.hit_ratio);
}

int cmd_compare(const Options& o, Runner& r)
{
    const std::vector<std::string> stores = o.command == "fig14" ? std::vector<std::string>{"calcspar", "rocksdb", "nocache"}
                                                                 : std::vector<std::string>{"calcspar", "rocksdb"};
    std::vector<std::string> keys;
    std::function<void(RunSpec&, const std::string&)> apply;
    const char* op = "read";
    if (o.command == "fig18") {
        keys = {"1", "2", "5", "10", "20"};
        apply = [](RunSpec& s, const std::string& k) { s.threads = static_cast<std::uint32_t>(std::stoul(k)); };
        row("Fig. 18: Mixgraph on %s, latency of Get vs user threads\n", o.volume.c_str());
    } else if (o.command == "fig14") {
        keys = {"0.5", "0.6", "0.7", "0.8", "0.9", "1.0"};
        apply = [](RunSpec& s, const std::string& k) { s.workload.read_ratio = std::stod(k); };
        row("Fig. 14: Mixgraph on %s, Get latency vs read ratio (rest Put)\n", o.volume.c_str());
    } else if (o.command == "fig16") {
        keys = {"ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"};
        apply = [](RunSpec& s, const std::string& k) { s.workload.kind = k; };
        op = "all";
        row("Fig. 16: YCSB on %s at %.2f x paid IOPS, latency of all operations\n", o.volume.c_str(), o.intensity);
    } else {  // fig21
        keys = {"0.001", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2"};
        apply = [](RunSpec& s, const std::string& k) { s.cache_share = std::stod(k); };
        row("Fig. 21: Mixgraph on %s, Get latency vs cache size (share of the data)\n", o.volume.c_str());
    }
    lat_header(o.command == "fig18" ? "threads" : o.command == "fig14" ? "read" : o.command == "fig16" ? "workload" : "cache");
    const int total = static_cast<int>(keys.size() * stores.size());
    int i = 0;
    for (const auto& k : keys) {
        for (const auto& st : stores) {
            RunSpec s = r.base();
            s.store = st;
            apply(s, k);
            const RunResult& x = r.go(o.command + " " + k + " " + st, s, ++i, total);
            lat_row(k, st, x, op);
        }
    }
    r.write_json();
    return 0;
}

int cmd_fig19(const Options& o, Runner& r)
{
    row("Fig. 19: Mixgraph with 5 %% Get / 95 %% Put on %s, %u threads: Calcspar with four IOPS allocators\n",
        o.volume.c_str(), o.threads);
    row("%-12s %9s %10s %10s %10s %10s %12s %12s\n", "allocator", "ops/s", "avg_us", "p99_us", "p999_us",
        "get_p99_us", "compactions", "write_stalls");
    int i = 0;
    for (const std::string a : {"na", "sa", "da", "twa"}) {
        RunSpec s = r.base();
        s.allocator = a;
        s.workload.read_ratio = 0.05;
        const RunResult& x = r.go("fig19 " + a, s, ++i, 4);
        const auto& all = x.ops.at("all");
        const auto g = x.ops.find("read");
        row("%-12s %9.0f %10.0f %10.0f %10.0f %10.0f %12llu %12llu\n", a.c_str(), x.throughput, all.avg_us, all.p99_us,
            all.p999_us, g == x.ops.end() ? 0.0 : g->second.p99_us, (unsigned long long)x.lsm.compactions,
            (unsigned long long)x.lsm.write_stalls);
    }
    r.write_json();
    return 0;
}

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

std::vector<Headroom> headroom(const RunSpec& spec, const std::vector<double>& shares)
{
    EventLoop loop;
    CloudVolume volume(loop, spec.volume, 1);
    NoCache none;
    LsmConfig cfg = spec.lsm;
    cfg.seed = spec.seed;
    LsmStore store(loop, volume, none, cfg);
    Workload wl(spec.workload, cfg.keys);
    Rng rng(spec.seed ^ 0x4ead);
    const std::uint64_t data_bytes = cfg.keys * (cfg.key_bytes + cfg.value_bytes);
    std::vector<std::uint64_t> caps;
    std::vector<std::unique_ptr<LruBlockCache>> lrus;
    for (double sh : shares) {
        caps.push_back(static_cast<std::uint64_t>(sh * static_cast<double>(data_bytes) / kPageBytes));
        lrus.push_back(std::make_unique<LruBlockCache>(caps.back()));
    }
    std::vector<std::uint64_t> hits(shares.size(), 0);
    std::unordered_map<std::uint64_t, std::uint64_t> freq;
    std::uint64_t reads = 0;
    for (int i = 0; i < 400000; ++i) {
        const Op op = wl.next(rng, store.latest_key());
        std::vector<std::uint64_t> plan;
        if (op.type == OpType::read || op.type == OpType::rmw) plan = store.get_plan(op.key);
        else if (op.type == OpType::scan) plan = store.scan_plan(op.key, op.scan_len);
        for (std::uint64_t p : plan) {
            ++reads;
            ++freq[p];
            for (std::size_t c = 0; c < lrus.size(); ++c) {
                if (lrus[c]->lookup(p)) ++hits[c];
                else lrus[c]->fill(p);
            }
        }
    }
    std::vector<std::uint64_t> f;
    std::unordered_map<std::uint64_t, std::uint64_t> per_block;
    for (const auto& [p, n] : freq) {
        f.push_back(n);
        per_block[p * kPageBytes / kEbsBlockBytes] += n;
    }
    std::sort(f.rbegin(), f.rend());
    std::vector<std::uint64_t> b;
    for (const auto& [blk, n] : per_block) b.push_back(n);
    std::sort(b.rbegin(), b.rend());
    const auto ratio = [&](std::uint64_t x) { return reads ? static_cast<double>(x) / static_cast<double>(reads) : 0.0; };
    std::vector<Headroom> out;
    for (std::size_t c = 0; c < shares.size(); ++c) {
        Headroom h;
        h.share = shares[c];
        h.reads = reads;
        h.pages = freq.size();
        h.lru = ratio(hits[c]);
        std::uint64_t top = 0;
        for (std::size_t i = 0; i < f.size() && i < caps[c]; ++i) top += f[i];
        h.page_opt = ratio(top);
        top = 0;
        const std::uint64_t blocks = caps[c] / (kEbsBlockBytes / kPageBytes);
        for (std::size_t i = 0; i < b.size() && i < blocks; ++i) top += b[i];
        h.block_opt = ratio(top);
        out.push_back(h);
    }
    return out;
}

int cmd_fig20(const Options& o, Runner& r)
{
    (void)o;
    row("Fig. 20: hit ratio of Calcspar's cache policies (FA = fluctuation-aware, P = passive only, PP = prefetch only)\n");
    row("%-10s %8s %8s %8s   data blocks only: %6s %8s %8s\n", "workload", "FA", "P", "PP", "FA", "P", "PP");
    int i = 0;
    for (const std::string wl : {"ycsb-b", "mixgraph"}) {
        double h[3], d[3];
        int j = 0;
        for (const std::string c : {"fa", "passive", "prefetch"}) {
            RunSpec s = r.base();
            s.workload.kind = wl;
            s.cache = c;
            const RunResult& x = r.go("fig20 " + wl + " " + c, s, ++i, 6);
            h[j] = x.hit_ratio;
            d[j++] = x.data_hit_ratio;
        }
        row("%-10s %8.3f %8.3f %8.3f   %24.3f %8.3f %8.3f\n", wl.c_str(), h[0], h[1], h[2], d[0], d[1], d[2]);
    }
    row("\nHeadroom: the block reads of 400 k operations on the initial tree against caches of each size (headroom())\n");
    row("%-10s %7s %10s %12s %10s %12s %14s\n", "workload", "cache", "reads", "pages read", "LRU", "page optimum",
        "256K optimum");
    for (const std::string wl : {"ycsb-b", "mixgraph"}) {
        RunSpec s = r.base();
        s.workload.kind = wl;
        const std::vector<double> shares =
            wl == "mixgraph" ? std::vector<double>{0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2} : std::vector<double>{0.02};
        for (const Headroom& h : headroom(s, shares)) {
            row("%-10s %6.1f%% %10llu %12llu %10.3f %12.3f %14.3f\n", wl.c_str(), 100 * h.share,
                (unsigned long long)h.reads, (unsigned long long)h.pages, h.lru, h.page_opt, h.block_opt);
        }
    }
    r.write_json();
    return 0;
}

// Fig. 18's gap, measured: the paper's load is "mean = paid IOPS" in operations; what the
// store needs per operation in volume tokens decides whether that load leaves the volume
// light between the sine's peaks. tok/op = volume IOPS / throughput; backlog = operations
// still queued for a thread at the end (growing: the load exceeds what the volume serves).
int cmd_fig18_load(const Options& o, Runner& r)
{
    row("Fig. 18 vs load: Mixgraph on %s, Get latency; calcspar = §4.1 stabilizer, +borrow = our extension\n",
        o.volume.c_str());
    row("%-9s %-7s %-14s %10s %10s %11s %8s %9s %9s\n", "intensity", "threads", "store", "avg_us", "p99_us",
        "p999_us", "tok/op", "backlog", "maxwait_ms");
    const std::vector<double> loads = {0.6, 0.7, 0.8, 0.9, 1.0};
    const int total = static_cast<int>(loads.size()) * 2 * 3;
    int i = 0;
    for (double load : loads) {
        for (std::uint32_t t : {1u, 20u}) {
            for (const std::string st : {"calcspar", "calcspar+borrow", "rocksdb"}) {
                RunSpec s = r.base();
                s.intensity = load;
                s.threads = t;
                s.store = st == "rocksdb" ? "rocksdb" : "calcspar";
                s.stabilizer = st == "calcspar+borrow" ? "borrow" : "strict";
                char label[96];
                std::snprintf(label, sizeof label, "fig18-load %.2f %u %s", load, t, st.c_str());
                const RunResult& x = r.go(label, s, ++i, total);
                const auto it = x.ops.find("read");
                const LatencySummary l = it == x.ops.end() ? LatencySummary{} : it->second;
                row("%-9.2f %-7u %-14s %10.0f %10.0f %11.0f %8.2f %9llu %9.0f\n", load, t, st.c_str(), l.avg_us,
                    l.p99_us, l.p999_us, x.throughput > 0 ? x.volume_iops / x.throughput : 0.0,
                    (unsigned long long)x.backlog, x.allocator_max_wait_us[0] / 1e3);
            }
        }
    }
    r.write_json();
    return 0;
}

// Fig. 20 vs load: where the fluctuation-aware cache's advantage over passive LRU appears.
// heavy = share of the measured 10 ms ticks in which FA's passive policy was active (the high
// queue took >= 95 % of the paid tokens in the current or the previous second, §4.3).
int cmd_fig20_load(const Options& o, Runner& r)
{
    row("Fig. 20 vs load: Mixgraph on %s, hit ratio (all / data blocks) of FA, P, PP\n", o.volume.c_str());
    row("%-9s %13s %13s %13s %7s %9s %9s\n", "intensity", "FA", "P", "PP", "heavy", "FA-P data", "backlog");
    const std::vector<double> loads = {0.3, 0.5, 0.7, 0.8, 0.9, 1.0};
    const int total = static_cast<int>(loads.size()) * 3;
    int i = 0;
    for (double load : loads) {
        double h[3], d[3], heavy = 0;
        std::uint64_t backlog = 0;
        int j = 0;
        for (const std::string c : {"fa", "passive", "prefetch"}) {
            RunSpec s = r.base();
            s.intensity = load;
            s.cache = c;
            char label[64];
            std::snprintf(label, sizeof label, "fig20-load %.2f %s", load, c.c_str());
            const RunResult& x = r.go(label, s, ++i, total);
            if (j == 0) {
                heavy = x.heavy_share;
                backlog = x.backlog;
            }
            h[j] = x.hit_ratio;
            d[j++] = x.data_hit_ratio;
        }
        row("%-9.2f %6.3f/%6.3f %6.3f/%6.3f %6.3f/%6.3f %7.2f %+9.3f %9llu\n", load, h[0], d[0], h[1], d[1], h[2], d[2],
            heavy, d[0] - d[1], (unsigned long long)backlog);
    }
    r.write_json();
    return 0;
}

int cmd_run(const Options& o, Runner& r)
{
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
        "FA passive %.0f %% of the time, %llu borrowed tokens\n",
        x.throughput, x.offered, x.volume_iops, (unsigned long long)x.volume.fast, (unsigned long long)x.volume.overdraft,
        (unsigned long long)x.volume.waited, x.hit_ratio, x.data_hit_ratio, (unsigned long long)x.cache.prefetch_ios,
        (unsigned long long)x.lsm.flushes, (unsigned long long)x.lsm.compactions, (unsigned long long)x.lsm.write_stalls,
        (unsigned long long)x.events, 100 * x.heavy_share, (unsigned long long)x.borrowed_tokens);
    r.write_json();
    return 0;
}

int cmd_replay(const Options& o)
{
    std::vector<TraceRecord> trace;
    if (!o.json.empty() && !std::ofstream(o.json)) fail("--json: cannot write '" + o.json + "'");  // before the run
    try {
        trace = read_trace(o.trace);
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
        f << "{\"command\": \"replay\", \"trace\": " << quote(o.trace) << ", \"store\": " << quote(spec.store)
          << ", \"volume\": {\"type\": " << quote(spec.volume.type) << ", \"paid_iops\": " << spec.volume.paid_iops
          << "}, \"ios\": " << trace.size() << ", \"span_s\": " << num(static_cast<double>(r.span) / 1e9)
          << ", \"volume_iops\": " << num(r.volume_iops) << ", \"volume_ios\": {\"fast\": " << r.volume.fast
          << ", \"overdraft\": " << r.volume.overdraft << ", \"waited\": " << r.volume.waited << "}, \"lat_us\": {";
        bool first = true;
        for (const auto& [src, l] : r.by_source) {
            f << (first ? "" : ", ") << quote(src) << ": " << lat_json(l);
            first = false;
        }
        f << "}}\n";
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
        Runner r(o);
        if (o.command == "fig7") return cmd_fig7(o, r);
        if (o.command == "fig19") return cmd_fig19(o, r);
        if (o.command == "fig20") return cmd_fig20(o, r);
        if (o.command == "fig18-load") return cmd_fig18_load(o, r);
        if (o.command == "fig20-load") return cmd_fig20_load(o, r);
        if (o.command == "run") return cmd_run(o, r);
        return cmd_compare(o, r);
    } catch (const std::invalid_argument& e) {
        fail(e.what());
    }
}
