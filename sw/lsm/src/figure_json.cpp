// burstgate-lsm's JSON reports; see figure_json.hpp.
#include "burstgate/lsm/figure_json.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace bg::lsm {

namespace {

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

std::string run_json(const LabelledRun& r)
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
      << "], \"allocator_wait_s\": [" << num(x.allocator_wait_s[0]) << ", " << num(x.allocator_wait_s[1]) << ", "
      << num(x.allocator_wait_s[2]) << "], \"borrowed_tokens\": " << x.borrowed_tokens << ", \"heavy_share\": " << num(x.heavy_share)
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

}  // namespace

std::string runs_json(const std::string& command, std::uint64_t seed, const std::vector<LabelledRun>& runs)
{
    std::ostringstream f;
    f << "{\"command\": " << quote(command) << ", \"seed\": " << seed << ",\n  \"runs\": [\n";
    for (std::size_t i = 0; i < runs.size(); ++i) f << run_json(runs[i]) << (i + 1 < runs.size() ? ",\n" : "\n");
    f << "  ]}\n";
    return f.str();
}

std::string table_json(const std::string& figure, const VolumeSpec& spec, const std::vector<std::string>& columns,
                       const std::vector<std::vector<double>>& rows)
{
    std::ostringstream f;
    f << "{\"figure\": " << quote(figure) << ", \"volume\": " << quote(spec.type) << ", \"paid_iops\": " << spec.paid_iops
      << ",\n \"columns\": [";
    for (std::size_t i = 0; i < columns.size(); ++i) f << (i ? ", " : "") << quote(columns[i]);
    f << "],\n \"rows\": [";
    for (std::size_t r = 0; r < rows.size(); ++r) {
        f << (r ? ",\n   " : "\n   ") << "[";
        for (std::size_t i = 0; i < rows[r].size(); ++i) f << (i ? ", " : "") << num(rows[r][i]);
        f << "]";
    }
    f << "]}\n";
    return f.str();
}

std::string replay_json(const std::string& trace, std::size_t ios, const ReplaySpec& spec, const ReplayResult& r)
{
    std::ostringstream f;
    f << "{\"command\": \"replay\", \"trace\": " << quote(trace) << ", \"store\": " << quote(spec.store)
      << ", \"volume\": {\"type\": " << quote(spec.volume.type) << ", \"paid_iops\": " << spec.volume.paid_iops
      << "}, \"ios\": " << ios << ", \"span_s\": " << num(static_cast<double>(r.span) / 1e9)
      << ", \"volume_iops\": " << num(r.volume_iops) << ", \"volume_ios\": {\"fast\": " << r.volume.fast
      << ", \"overdraft\": " << r.volume.overdraft << ", \"waited\": " << r.volume.waited << "}, \"lat_us\": {";
    bool first = true;
    for (const auto& [src, l] : r.by_source) {
        f << (first ? "" : ", ") << quote(src) << ": " << lat_json(l);
        first = false;
    }
    f << "}}\n";
    return f.str();
}

}  // namespace bg::lsm
