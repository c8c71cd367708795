// burstgate-sim: run a scenario through a Device engine with the firmware window loop and
// write the report of docs/design.md contract 4. Exit 0 on success, 2 for bad input (scenario or
// options; the message names file:line and the field path), 1 when an engine cannot start.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "args.hpp"
#include "burstgate/sim/profile.hpp"
#include "burstgate/sim/replay_arrivals.hpp"
#include "burstgate/sim/simulator.hpp"

namespace {

const char kUsage[] =
    "usage: burstgate-sim SCENARIO.yaml [--engine model|verilator|xrt] [--scheduler NAME]\n"
    "                     [--out REPORT.json] [--csv SERIES.csv] [--seed N] [--profile HOST.yaml] [--quiet]\n"
    "                     [--arrivals IOLOG] [--duration-ms MS]\n"
    "  Simulate the scenario (format: scenarios/example.yaml, docs/simulator.md) and write the JSON\n"
    "  report to --out (default: stdout). --scheduler (bios | wild | base | dualbucket | ddrr) and\n"
    "  --seed override the file. --csv writes a per-window time series per tenant. Progress\n"
    "  goes to stderr when it is a terminal, unless --quiet. --profile puts a host profile\n"
    "  (make calibrate) in place of the scenario's SA threads, CPU costs and software limit.\n"
    "  --arrivals replays what burstgate-gateway --arrivals recorded as every tenant's workload\n"
    "  (open loop at the recorded times); --duration-ms overrides duration_ms.\n";

using bg::cli::UsageError;

}  // namespace

int main(int argc, char **argv)
{
    std::string scenario, out, csv, profile, arrivals;
    bg::sim::LoadOptions lo;
    bg::sim::SimOptions opt;
    bool quiet = false;
    try {
        bg::cli::ArgReader args(argc, argv);
        while (args.next()) {
            const std::string &flag = args.flag();
            if (flag == "-h" || flag == "--help") {
                std::fputs(kUsage, stdout);
                return 0;
            } else if (flag == "--engine") {
                opt.engine = args.value();
            } else if (flag == "--scheduler") {
                try {
                    opt.scheduler = bg::sim::parse_scheduler(args.value());
                } catch (const std::invalid_argument &e) {
                    throw UsageError(std::string("--scheduler: ") + e.what());
                }
            } else if (flag == "--out") {
                out = args.value();
            } else if (flag == "--csv") {
                csv = args.value();
            } else if (flag == "--seed") {
                opt.seed = args.integer(0, UINT32_MAX);
            } else if (flag == "--profile") {
                profile = args.value();
            } else if (flag == "--arrivals") {
                arrivals = args.value();
            } else if (flag == "--duration-ms") {
                lo.duration_ns = args.integer(1, 1000000000) * 1000000;
            } else if (flag == "--quiet" || flag == "-q") {
                quiet = true;
            } else if (args.is_option()) {
                throw UsageError(flag + ": unknown option (see --help)");
            } else if (scenario.empty()) {
                scenario = flag;
            } else {
                throw UsageError(flag + ": only one scenario file is accepted");
            }
        }
        if (scenario.empty())
            throw UsageError("no scenario file given (see --help)");
    } catch (const UsageError &e) {
        std::fprintf(stderr, "burstgate-sim: %s\n", e.what());
        return 2;
    }

    try {
        bg::sim::Scenario sc = bg::sim::load_scenario(scenario, lo);
        if (!profile.empty())
            bg::sim::apply_profile(sc, profile);
        if (!arrivals.empty())
            bg::sim::replay_arrivals(sc, arrivals);
        // Outputs are opened before the run, so a bad path fails now and not after it.
        std::ofstream out_file;
        if (!out.empty()) {
            out_file.open(out);
            if (!out_file)
                throw bg::sim::ScenarioError("--out: cannot write '" + out + "': " + std::strerror(errno));
        }
        std::ofstream csv_file;
        if (!csv.empty()) {
            csv_file.open(csv);
            if (!csv_file)
                throw bg::sim::ScenarioError("--csv: cannot write '" + csv + "': " + std::strerror(errno));
            opt.csv = &csv_file;
        }
        opt.progress = !quiet && isatty(STDERR_FILENO);
        const bg::sim::SimResult r = bg::sim::simulate(sc, opt);
        if (!quiet) {
            for (std::size_t i = 0; i < r.warnings.size() && i < 5; i++)
                std::fprintf(stderr, "burstgate-sim: warning: %s\n", r.warnings[i].c_str());
            if (r.warnings.size() > 5)
                std::fprintf(stderr, "burstgate-sim: warning: ... and %zu more like these\n", r.warnings.size() - 5);
        }
        const std::string json = bg::sim::report_json(r);
        if (out.empty()) {
            std::fputs(json.c_str(), stdout);
        } else {
            if (!(out_file << json) || !out_file.flush())
                throw bg::sim::ScenarioError("--out: cannot write '" + out + "': " + std::strerror(errno));
        }
        if (!quiet)
            // Per CPU second as well: on a shared machine wall time includes other jobs.
            std::fprintf(stderr, "burstgate-sim: %s/%s: %llu events in %.2f s wall, %.2f s CPU (%.2f M events/s wall, %.2f M/CPU-s)\n",
                         r.engine.c_str(), r.scheduler.c_str(), static_cast<unsigned long long>(r.events), r.wall_s,
                         r.cpu_s, r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s / 1e6 : 0.0,
                         r.cpu_s > 0 ? static_cast<double>(r.events) / r.cpu_s / 1e6 : 0.0);
        return r.bad_completions == 0 ? 0 : 1;
    } catch (const bg::sim::ScenarioError &e) {
        std::fprintf(stderr, "burstgate-sim: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument &e) {  // unknown engine
        std::fprintf(stderr, "burstgate-sim: --engine: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "burstgate-sim: %s\n", e.what());
        return 1;
    }
}
