// Verilated bg_kernel throughput: simulated cycles per CPU second (and per wall second) while
// descriptors stream through the rings (docs/results.md, "Verilated kernel throughput"). Not a
// test: a benchmark.
//
//   build/<dir>/cmake/sim/bg_kernel_bench [descriptors]   descriptors through the rings
//   build/<dir>/cmake/sim/bg_kernel_bench idle [cycles]   the clock alone (no host, no traffic)
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <string>

#include "burstgate/host/kernel_sim.hpp"
#include "burstgate/host/verilator_device.hpp"

namespace {

int idle(std::uint64_t cycles)
{
    bg::verilator::KernelSim sim(1 << 16);
    const std::clock_t cpu0 = std::clock();
    sim.run(cycles);
    const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::printf("idle cycles %llu  cpu %.3f s: %.2f M cycles/s\n", static_cast<unsigned long long>(cycles), cpu,
                static_cast<double>(cycles) / cpu / 1e6);
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "idle")
        return idle(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000);
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
    bg::VerilatorDevice dev;
    const bg::AgentParams p = dev.params();
    std::mt19937 rng(1);
    std::vector<bg::IoDesc> descs(n);
    for (std::size_t i = 0; i < n; i++) {
        descs[i].tag = static_cast<std::uint16_t>(i);
        descs[i].tenant = static_cast<std::uint16_t>(rng() % p.tenants);
        descs[i].queue = static_cast<std::uint8_t>(rng() % p.ingress);
        descs[i].product = static_cast<std::uint8_t>(rng() % BG_PRODUCTS);
        descs[i].write = rng() & 1;
        descs[i].size = 512u << (rng() % 9);
        descs[i].segment = static_cast<std::uint16_t>(rng());
    }
    // Sized up front, as a caller that knows its batch does: RingDevice::submit reserves
    // exactly size() + batch on every call, so a growing vector is reallocated (and its new
    // pages faulted in) per 4096-descriptor batch: a fifth of the CPU time at 300 k descriptors.
    std::vector<bg::IoDecision> out;
    out.reserve(n);
    const std::uint64_t c0 = dev.cycles();
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    for (std::size_t at = 0; at < n; at += 4096)
        dev.submit(std::span(descs).subspan(at, std::min<std::size_t>(4096, n - at)), out);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // CPU seconds too: on a shared machine wall time counts other people's work.
    const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    const double cycles = static_cast<double>(dev.cycles() - c0);
    std::printf("descriptors %zu  cycles %.0f  descriptors/cycle %.3f\n"
                "wall %.3f s: %.2f M cycles/s, %.2f M descriptors/s\n"
                "cpu  %.3f s: %.2f M cycles/s, %.2f M descriptors/s\n",
                n, cycles, static_cast<double>(n) / cycles, s, cycles / s / 1e6, static_cast<double>(n) / s / 1e6, cpu,
                cycles / cpu / 1e6, static_cast<double>(n) / cpu / 1e6);
    return out.size() == n ? 0 : 1;
}
