// burstgate-cost: program the cost estimator model the way the firmware programs the
// hardware, cost an I/O mix with it, and show per I/O type what one SA thread could sustain
// in each dimension and which dimension is the bottleneck (BurstCBS §5.3, Fig. 16-17).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "args.hpp"
#include "burstgate/cost_table.h"
#include "burstgate/lfsr.h"
#include "burstgate/model/cost.hpp"
#include "cost_cli.hpp"

namespace {

using bg::cli::InputError;
using bg::cli::MixEntry;

// The default DPU: scenarios/example.yaml's `dpu` section.
constexpr unsigned kThreads = 2;
constexpr double kLinkGbps = 100;      // ingress_gbps and egress_gbps
constexpr double kSwlimitMBps = 3000;  // swlimit_mbps
constexpr unsigned kProfiledProducts = 2;
const bg_linear_profile kCpuProfile[kProfiledProducts][2] = {
    {{2200, 40}, {1800, 35}},  // A: read, write
    {{3000, 55}, {2500, 45}},  // B
};
// Per message (request or response): ~64 B of storage RPC header plus Ethernet/IP/UDP
// framing, rounded up. Only the link dimensions see it.
constexpr uint32_t kHeaderBytes = 128;

const char kUsage[] =
    "usage: burstgate-cost [--mix FILE] [--vop] [--random N [--seed S]] [--header BYTES]\n"
    "  Cost an I/O mix with the burstgate cost-estimator model and show, per I/O type, the\n"
    "  IOPS one SA thread sustains in each dimension and the bottleneck.\n"
    "  --mix FILE      lines 'PRODUCT OP SIZE SHARE' (e.g. 'A write 4k 0.25'; # comments);\n"
    "                  default: A and B x read/write x 4k 16k 64k 128k, equal shares\n"
    "  --vop           cost with Libra's VOP curve (Libra §4.3 example) instead of the\n"
    "                  default DPU profile\n"
    "  --random N      also cost N descriptors drawn from the mix; print aggregate cost\n"
    "  --seed S        seed of the draw (default 1)\n"
    "  --header BYTES  bytes of one request/response header on the links (default 128)\n";

struct Options {
    std::string mix_file;
    bool vop = false;
    uint64_t random = 0;
    uint32_t seed = 1;
    uint32_t header = kHeaderBytes;
};

// A dimension as the report shows it; capacity is per SA thread, in units per second.
struct Dim {
    const char *name;
    const char *unit;
    unsigned index;
    double capacity;
};

Options parse_args(int argc, char **argv, bool &help)
{
    Options opt;
    bg::cli::ArgReader args(argc, argv);
    while (args.next()) {
        const std::string &flag = args.flag();
        if (flag == "--help" || flag == "-h") {
            help = true;
        } else if (flag == "--vop") {
            opt.vop = true;
        } else if (flag == "--mix") {
            opt.mix_file = args.value();
        } else if (flag == "--random") {
            opt.random = args.integer(1, 1'000'000'000'000ull);
        } else if (flag == "--seed") {
            opt.seed = static_cast<uint32_t>(args.integer(0, UINT32_MAX));
        } else if (flag == "--header") {
            opt.header = static_cast<uint32_t>(args.integer(0, UINT32_MAX));
        } else if (args.is_option()) {
            throw bg::cli::UsageError(flag + ": unknown option (see --help)");
        } else {
            throw bg::cli::UsageError(flag + ": unexpected argument (see --help)");
        }
    }
    return opt;
}

std::vector<MixEntry> load_mix(const std::string &file)
{
    if (file.empty())
        return bg::cli::default_mix();
    std::ifstream in(file);
    if (!in || std::filesystem::is_directory(file))
        throw InputError("--mix: cannot open '" + file + "': " + (in ? "it is a folder" : std::strerror(errno)));
    return bg::cli::parse_mix(in, file);
}

// Program `est` through its HAL with the firmware's loaders; returns the dimensions to show.
std::vector<Dim> program(bg::CostEstimator &est, const Options &opt)
{
    const bg_hal hal = est.hal();
    int rc = 0;
    std::vector<Dim> dims;
    if (opt.vop) {
        rc = bg_cost_load_vop(&hal, bg_vop_libra, BG_VOP_LIBRA_POINTS, BG_DIM_CPU);
        // Libra has no SA threads: the capacity is the SSD's, shared by everything.
        dims.push_back({"vop", "mVOP", BG_DIM_CPU, BG_VOP_LIBRA_CAPACITY * 1000.0});
    } else {
        for (unsigned p = 0; p < kProfiledProducts && rc == 0; p++)
            rc = bg_cost_load_linear(&hal, p, &kCpuProfile[p][0], &kCpuProfile[p][1], opt.header);
        // Links are shared by the threads: each gets an equal part (BurstCBS §5.3).
        const double link = kLinkGbps * 1e9 / 8 / kThreads;
        dims = {{"cpu", "ns", BG_DIM_CPU, 1e9},
                {"ingress", "B", BG_DIM_INGRESS, link},
                {"egress", "B", BG_DIM_EGRESS, link},
                {"swlimit", "B", BG_DIM_SWLIMIT, kSwlimitMBps * 1e6}};
    }
    if (rc != 0)
        throw std::runtime_error("cost-table loader failed with code " + std::to_string(rc));
    return dims;
}

std::string rate(double iops)
{
    char buf[32];
    if (std::isinf(iops))
        return "-";
    if (iops >= 1e6)
        std::snprintf(buf, sizeof buf, "%.2fM", iops / 1e6);
    else if (iops >= 1e4)
        std::snprintf(buf, sizeof buf, "%.1fk", iops / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.0f", iops);
    return buf;
}

// IOPS per dimension for a (mean) cost vector, and the name of the smallest one.
std::string bottleneck(const std::vector<Dim> &dims, const std::vector<double> &cost, std::vector<double> &iops)
{
    const char *worst = "none";
    double least = std::numeric_limits<double>::infinity();
    iops.clear();
    for (size_t i = 0; i < dims.size(); i++) {
        iops.push_back(cost[i] > 0 ? dims[i].capacity / cost[i] : std::numeric_limits<double>::infinity());
        if (iops[i] < least) {
            least = iops[i];
            worst = dims[i].name;
        }
    }
    return worst;
}

void print_row(const char *label, const char *share, const std::vector<Dim> &dims,
               const std::vector<double> &cost)
{
    std::vector<double> iops;
    const std::string worst = bottleneck(dims, cost, iops);
    std::printf("%-16s %7s ", label, share);
    for (double c : cost)
        std::printf(" %11.0f", c);
    std::printf("  |");
    for (double r : iops)
        std::printf(" %9s", rate(r).c_str());
    std::printf("  | %s\n", worst.c_str());
}

void print_table(const bg::CostEstimator &est, const std::vector<MixEntry> &mix, const std::vector<Dim> &dims)
{
    double total_share = 0;
    for (const auto &e : mix)
        total_share += e.share;

    const int cost_width = static_cast<int>(12 * dims.size());
    const int iops_width = static_cast<int>(10 * dims.size());
    std::printf("\n%-16s %7s  %-*s  | %-*s | bottleneck\n", "I/O", "share", cost_width - 1, " cost per I/O",
                iops_width, dims.size() > 1 ? "IOPS one SA thread sustains" : "IOPS the SSD sustains");
    std::printf("%-16s %7s ", "", "");
    for (const auto &d : dims)
        std::printf(" %11s", (std::string(d.name) + " " + d.unit).c_str());
    std::printf("  |");
    for (const auto &d : dims)
        std::printf(" %9s", d.name);
    std::printf("  |\n");

    std::vector<double> mean(dims.size(), 0.0);
    for (const auto &e : mix) {
        const bg::CostVector v = est.estimate(e.product, e.write, e.size);
        std::vector<double> cost;
        for (size_t i = 0; i < dims.size(); i++) {
            cost.push_back(v[dims[i].index]);
            mean[i] += v[dims[i].index] * e.share / total_share;
        }
        char share[16];
        std::snprintf(share, sizeof share, "%.2f%%", 100 * e.share / total_share);
        print_row(bg::cli::describe(e).c_str(), share, dims, cost);
    }
    print_row("mix (mean)", "100%", dims, mean);
}

void run_random(const bg::CostEstimator &est, const std::vector<MixEntry> &mix, const std::vector<Dim> &dims,
                const Options &opt, unsigned threads)
{
    // Draw by share with the project's LFSR: the state is a uniform 32-bit value.
    double total_share = 0;
    for (const auto &e : mix)
        total_share += e.share;
    std::vector<uint64_t> upto;
    double cum = 0;
    for (const auto &e : mix) {
        cum += e.share;
        upto.push_back(static_cast<uint64_t>(std::ldexp(cum / total_share, 32)));
    }
    upto.back() = uint64_t{1} << 32;

    uint32_t state = bg_lfsr_seed(opt.seed);
    uint64_t sum[BG_COST_DIMS] = {};
    const auto start = std::chrono::steady_clock::now();
    for (uint64_t n = 0; n < opt.random; n++) {
        const uint32_t r = bg_lfsr_next(&state);
        size_t i = 0;
        while (r >= upto[i])
            i++;
        const bg::CostVector v = est.estimate(mix[i].product, mix[i].write, mix[i].size);
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            sum[d] += v[d];
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::printf("\nrandom: %" PRIu64 " descriptors drawn from the mix (seed %" PRIu32 ")\n", opt.random, opt.seed);
    std::vector<double> mean;
    for (const auto &d : dims) {
        std::printf("  %-8s total %20" PRIu64 " %-4s  mean %12.1f %s per I/O\n", d.name, sum[d.index], d.unit,
                    static_cast<double>(sum[d.index]) / static_cast<double>(opt.random), d.unit);
        mean.push_back(static_cast<double>(sum[d.index]) / static_cast<double>(opt.random));
    }
    std::vector<double> iops;
    const std::string worst = bottleneck(dims, mean, iops);
    double least = std::numeric_limits<double>::infinity();
    for (double r : iops)
        least = std::min(least, r);
    if (threads > 1)
        std::printf("  throughput: %s IOPS per SA thread, %s IOPS with %u threads (bottleneck: %s)\n",
                    rate(least).c_str(), rate(least * threads).c_str(), threads, worst.c_str());
    else
        std::printf("  throughput: %s IOPS (bottleneck: %s)\n", rate(least).c_str(), worst.c_str());
    std::printf("  model: %.1f ns per descriptor (%.1f M descriptors/s, draw included)\n",
                secs * 1e9 / static_cast<double>(opt.random), static_cast<double>(opt.random) / secs / 1e6);
}

int run(const Options &opt)
{
    const std::vector<MixEntry> mix = load_mix(opt.mix_file);
    bg::CostEstimator est;
    const std::vector<Dim> dims = program(est, opt);
    unsigned threads = 1;
    if (opt.vop) {
        std::printf("burstgate-cost: Libra VOP curve (Libra §4.3 example), milli-VOPs in the cpu dimension\n"
                    "  capacity %u VOP/s for the whole SSD; points:", BG_VOP_LIBRA_CAPACITY);
        for (const bg_vop_point &p : bg_vop_libra)
            std::printf(" %s read %.3f / write %.3f VOP;", bg::cli::format_size(p.size).c_str(),
                        p.read_mvop / 1000.0, p.write_mvop / 1000.0);
        std::printf("\n");
    } else {
        threads = kThreads;
        std::printf("burstgate-cost: default DPU profile (scenarios/example.yaml dpu), %u SA threads\n"
                    "  capacity per thread: cpu 1e9 ns/s (one core); ingress and egress %.0f MB/s each (%.0f Gb/s shared by %u "
                    "threads);\n  swlimit %.0f MB/s; link header %" PRIu32 " B per request and per response\n",
                    kThreads, dims[1].capacity / 1e6, kLinkGbps, kThreads, dims[3].capacity / 1e6, opt.header);
    }
    print_table(est, mix, dims);
    if (opt.random)
        run_random(est, mix, dims, opt, threads);
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    try {
        bool help = false;
        const Options opt = parse_args(argc, argv, help);
        if (help) {
            std::fputs(kUsage, stdout);
            return 0;
        }
        return run(opt);
    } catch (const InputError &e) {
        std::fprintf(stderr, "burstgate-cost: %s\n", e.what());
        return 2;
    } catch (const bg::cli::UsageError &e) {
        std::fprintf(stderr, "burstgate-cost: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "burstgate-cost: internal error: %s\n", e.what());
        return 1;
    }
}
