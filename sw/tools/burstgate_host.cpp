// burstgate-host: real block traces in (issues 6 and 9).
//   replay       a trace through burstgate-sim's engine, tenants and provisioning from a scenario
//   trace2iolog  a trace as fio iolog v3, one file per device, so stock fio replays it
// Exit 0 on success, 2 for bad input (the message names FILE:LINE, and the field path for the
// tenants file), 1 when an engine cannot start or an output cannot be written.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "burstgate/sim/simulator.hpp"
#include "burstgate/trace/trace.hpp"

namespace {

// One usage per command, so that `burstgate-host trace2iolog --help` (and `burstgate
// trace2iolog --help`) describes only the command asked about.
const char kReplayUsage[] =
    "usage: burstgate-host replay --trace FILE --format F --tenants CONFIG.yaml\n"
    "                      [--engine model|verilator|xrt] [--scheduler NAME] [--out REPORT.json]\n"
    "                      [--duration-ms N] [--quiet]\n"
    "  Replay a block trace through an engine. CONFIG is a burstgate-sim scenario; its tenants\n"
    "  with `workload: {mode: trace, trace: {device: DEV, time_scale: S, ...}}` replay the\n"
    "  records of device DEV (every record without `device`) from --trace, read as --format.\n"
    "  Writes the JSON report of docs/design.md contract 4 to --out (default stdout); progress\n"
    "  on stderr when a terminal.\n";
const char kTrace2iologUsage[] =
    "usage: burstgate-host trace2iolog --trace FILE --format F --out-dir DIR\n"
    "                      [--device-map DEV=NAME[,DEV=NAME...]] [--only-mapped]\n"
    "  Convert a block trace to fio iolog v3 (timestamps in microseconds): DIR/NAME.iolog per\n"
    "  device, NAME the device or its --device-map name; replay one with\n"
    "    fio --name=t --read_iolog=DIR/NAME.iolog --replay_redirect=/dev/YOURDEV\n";
const char kFormats[] = "  F: cloudphysics | alibaba | tencent | msr | iolog2 | iolog3.\n";

using bg::cli::UsageError;

struct Args {
    std::string cmd, trace, format, tenants, engine = "model", out, out_dir, device_map;
    std::optional<bg::sim::Scheduler> scheduler;
    std::uint64_t duration_ns = 0;
    bool quiet = false, only_mapped = false;
};

std::uint64_t parse_ms(const std::string &s)
{
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || errno == ERANGE || !(v > 0) || v > 1e9)
        throw UsageError("--duration-ms: expected a positive number of milliseconds, got '" + s + "'");
    return static_cast<std::uint64_t>(std::llround(v * 1e6));
}

Args parse_args(int argc, char **argv)
{
    Args a;
    if (argc < 2)
        throw UsageError("no command given (replay or trace2iolog; see --help)");
    a.cmd = argv[1];
    if (a.cmd != "replay" && a.cmd != "trace2iolog")
        throw UsageError(a.cmd + ": unknown command (replay or trace2iolog; see --help)");
    const bool replay = a.cmd == "replay";
    bg::cli::ArgReader args(argc, argv, 2);
    while (args.next()) {
        const std::string &flag = args.flag();
        if (flag == "--trace") {
            a.trace = args.value();
        } else if (flag == "--format") {
            a.format = args.value();
            try {
                bg::trace::parse_format(a.format);
            } catch (const std::invalid_argument &e) {
                throw UsageError(std::string("--format: ") + e.what());
            }
        } else if (replay && flag == "--tenants") {
            a.tenants = args.value();
        } else if (replay && flag == "--engine") {
            a.engine = args.value();
        } else if (replay && flag == "--scheduler") {
            try {
                a.scheduler = bg::sim::parse_scheduler(args.value());
            } catch (const std::invalid_argument &e) {
                throw UsageError(std::string("--scheduler: ") + e.what());
            }
        } else if (replay && flag == "--out") {
            a.out = args.value();
        } else if (replay && flag == "--duration-ms") {
            a.duration_ns = parse_ms(args.value());
        } else if (replay && (flag == "--quiet" || flag == "-q")) {
            a.quiet = true;
        } else if (!replay && flag == "--out-dir") {
            a.out_dir = args.value();
        } else if (!replay && flag == "--device-map") {
            a.device_map = args.value();
        } else if (!replay && flag == "--only-mapped") {
            a.only_mapped = true;
        } else {
            throw UsageError(flag + ": unknown option of '" + a.cmd + "' (see --help)");
        }
    }
    if (a.trace.empty() || a.format.empty())
        throw UsageError(a.cmd + ": --trace and --format are required");
    if (a.cmd == "replay" && a.tenants.empty())
        throw UsageError("replay: --tenants is required");
    if (a.cmd == "trace2iolog" && a.out_dir.empty())
        throw UsageError("trace2iolog: --out-dir is required");
    return a;
}

int replay(const Args &a)
{
    bg::sim::LoadOptions lo;
    lo.trace_file = a.trace;
    lo.trace_format = a.format;
    lo.duration_ns = a.duration_ns;
    const bg::sim::Scenario sc = bg::sim::load_scenario(a.tenants, lo);
    bool any = false;
    for (const bg::sim::Tenant &t : sc.tenants)
        any = any || t.wl.trace;
    if (!any)
        throw bg::sim::ScenarioError(a.tenants + ":1: tenants: no tenant has workload.mode: trace, so the trace would not be replayed");
    // The output is opened before the run, so a bad path fails now and not after it.
    std::ofstream out_file;
    if (!a.out.empty()) {
        out_file.open(a.out);
        if (!out_file)
            throw UsageError("--out: cannot write '" + a.out + "': " + std::strerror(errno));
    }
    bg::sim::SimOptions opt;
    opt.engine = a.engine;
    opt.scheduler = a.scheduler;
    opt.progress = !a.quiet && isatty(STDERR_FILENO);
    const bg::sim::SimResult r = bg::sim::simulate(sc, opt);
    if (!a.quiet)
        for (const std::string &w : r.warnings)
            std::fprintf(stderr, "burstgate-host: warning: %s\n", w.c_str());
    const std::string json = bg::sim::report_json(r);
    if (a.out.empty()) {
        std::fputs(json.c_str(), stdout);
    } else {
        if (!(out_file << json) || !out_file.flush())
            throw std::runtime_error("--out: cannot write '" + a.out + "': " + std::strerror(errno));
    }
    if (!a.quiet) {
        std::uint64_t generated = 0;
        for (const auto &t : r.tenants)
            generated += t.generated;
        std::fprintf(stderr, "burstgate-host: %s/%s: %llu I/Os replayed or generated, %llu events, %.2f s wall\n",
                     r.engine.c_str(), r.scheduler.c_str(), static_cast<unsigned long long>(generated),
                     static_cast<unsigned long long>(r.events), r.wall_s);
    }
    return r.bad_completions == 0 ? 0 : 1;
}

// DEV=NAME,DEV=NAME. NAME becomes a file name and the name on every iolog line.
std::map<std::string, std::string> parse_device_map(const std::string &text)
{
    std::map<std::string, std::string> m;
    std::size_t start = 0;
    while (start <= text.size() && !text.empty()) {
        std::size_t end = text.find(',', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string item = text.substr(start, end - start);
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            throw UsageError("--device-map: expected DEV=NAME, got '" + item + "'");
        const std::string name = item.substr(eq + 1);
        if (name.find_first_of("/ \t") != std::string::npos || name == "." || name == "..")
            throw UsageError("--device-map: NAME '" + name + "' must be a plain file name");
        if (!m.emplace(item.substr(0, eq), name).second)
            throw UsageError("--device-map: device '" + item.substr(0, eq) + "' mapped twice");
        start = end + 1;
    }
    return m;
}

int trace2iolog(const Args &a)
{
    const auto map = parse_device_map(a.device_map);
    std::error_code ec;
    std::filesystem::create_directories(a.out_dir, ec);
    if (ec || !std::filesystem::is_directory(a.out_dir))
        throw UsageError("--out-dir: cannot create '" + a.out_dir + "': " + (ec ? ec.message() : "not a folder"));
    struct Out {
        std::string path;
        std::unique_ptr<std::ofstream> file;
        std::unique_ptr<bg::trace::IologV3Writer> log;
    };
    std::map<std::string, Out> outs;
    constexpr std::size_t kMaxFiles = 256;  // below the usual 1024 open files
    bg::trace::TraceReader rd(a.trace, bg::trace::parse_format(a.format));
    bg::trace::Record r;
    std::uint64_t unmapped = 0;
    while (rd.next(r)) {
        auto it = outs.find(r.device);
        if (it == outs.end()) {
            const auto m = map.find(r.device);
            if (m == map.end() && a.only_mapped) {
                unmapped++;
                continue;
            }
            std::string name = m != map.end() ? m->second : r.device;
            for (char &c : name)  // fio file names such as /dev/sdb
                if (c == '/' || c == ' ' || c == '\t')
                    c = '_';
            if (outs.size() == kMaxFiles)
                throw std::runtime_error(rd.name() + ":" + std::to_string(r.line) + ": more than " + std::to_string(kMaxFiles) +
                                         " devices: choose some with --device-map DEV=NAME,... --only-mapped");
            Out o;
            o.path = a.out_dir + "/" + name + ".iolog";
            o.file = std::make_unique<std::ofstream>(o.path);
            if (!*o.file)
                throw std::runtime_error("cannot write '" + o.path + "': " + std::strerror(errno));
            o.log = std::make_unique<bg::trace::IologV3Writer>(*o.file, name);
            it = outs.emplace(r.device, std::move(o)).first;
        }
        it->second.log->write(r);
    }
    for (auto &[dev, o] : outs) {
        o.log->close();
        o.file->flush();
        if (!*o.file)
            throw std::runtime_error("cannot write '" + o.path + "': " + std::strerror(errno));
        std::fprintf(stderr, "burstgate-host: device %s: %llu I/Os -> %s%s\n", dev.c_str(),
                     static_cast<unsigned long long>(o.log->written()), o.path.c_str(),
                     o.log->skipped() ? (" (" + std::to_string(o.log->skipped()) + " sync/trim skipped)").c_str() : "");
    }
    if (unmapped && !outs.empty())
        std::fprintf(stderr, "burstgate-host: %llu records of unmapped devices skipped (--only-mapped)\n",
                     static_cast<unsigned long long>(unmapped));
    if (outs.empty()) {
        // Nothing written is not a success: an empty or header-only trace, or a map that
        // matched no device, leaves the user with no iolog to replay.
        std::fprintf(stderr, "burstgate-host: %s: no %s; nothing written\n", a.trace.c_str(),
                     unmapped ? "record of a mapped device (--only-mapped)" : "I/O record in the trace");
        return 2;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
            const bool t2i = argc > 1 && !std::strcmp(argv[1], "trace2iolog");
            const bool rep = argc > 1 && !std::strcmp(argv[1], "replay");
            if (!t2i)
                std::fputs(kReplayUsage, stdout);
            if (!rep)
                std::fputs(kTrace2iologUsage, stdout);
            std::fputs(kFormats, stdout);
            return 0;
        }
    Args a;
    try {
        a = parse_args(argc, argv);
    } catch (const UsageError &e) {
        std::fprintf(stderr, "burstgate-host: %s\n", e.what());
        return 2;
    }
    try {
        return a.cmd == "replay" ? replay(a) : trace2iolog(a);
    } catch (const UsageError &e) {
        std::fprintf(stderr, "burstgate-host: %s\n", e.what());
        return 2;
    } catch (const bg::trace::TraceError &e) {
        std::fprintf(stderr, "burstgate-host: %s\n", e.what());
        return 2;
    } catch (const bg::sim::ScenarioError &e) {
        std::fprintf(stderr, "burstgate-host: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument &e) {  // open_device: unknown engine
        std::fprintf(stderr, "burstgate-host: %s%s\n", a.cmd == "replay" ? "--engine: " : "", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "burstgate-host: %s\n", e.what());
        return 1;
    }
}
