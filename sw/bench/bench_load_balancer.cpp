// Load-balancer decision per I/O (bg::LoadBalancer, BurstCBS §5.1 queue scaling) for each
// policy, 16 ingress queues each spread over all 16 egress queues (the widest set, so JSQ
// scans and P2C draws over 16 members).
//
// One iteration = one dispatch of a new I/O and the completion of the I/O dispatched
// kInFlight iterations earlier: a closed loop with kInFlight I/Os outstanding (16 per egress
// on average, below the depth of 64, so a decision stalls only when the policy itself piles
// I/Os onto few queues: static fills egress 0, then 1, ...). Ingress queue and CPU ns of
// every I/O are drawn before the timed loop.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <vector>

#include "burstgate/model/load_balancer.hpp"
#include "workload.hpp"

namespace {

using bg::bench::Rng;

constexpr unsigned kQueues = 16;
constexpr unsigned kInFlight = 256;
constexpr unsigned kDraws = 4096;  // a power of two: the index wraps with a mask

struct Arrival {
    std::uint32_t ingress;
    std::uint32_t cpu_ns;
};

void BM_LbDispatchComplete(benchmark::State &state, bg::LbPolicy policy)
{
    bg::LbConfig cfg;
    cfg.ingress_queues = kQueues;
    cfg.egress_queues = kQueues;
    cfg.policy = policy;
    cfg.egress_depth = 64;
    cfg.lfsr_seed = 11;
    bg::LoadBalancer lb(cfg);
    for (unsigned i = 0; i < kQueues; i++)
        lb.set_map(i, 0xFFFF);

    const std::vector<bg_vec> types = bg::bench::io_type_costs();
    Rng rng(0x1B);
    std::vector<Arrival> arrivals(kDraws);
    for (Arrival &a : arrivals)
        a = {rng.below(kQueues), types[rng.below(static_cast<std::uint32_t>(types.size()))].d[BG_DIM_CPU]};

    struct Slot {
        bool busy;
        std::uint8_t egress;
        std::uint32_t cpu_ns;
    };
    std::array<Slot, kInFlight> ring{};
    std::uint64_t i = 0, stalls = 0;
    for (auto _ : state) {
        Slot &s = ring[i % kInFlight];
        if (s.busy)
            lb.complete(s.egress, s.cpu_ns);
        const Arrival &a = arrivals[i % kDraws];
        const bg::LbDecision d = lb.dispatch(a.ingress, a.cpu_ns);
        s = {!d.stall, d.egress, a.cpu_ns};
        stalls += d.stall;
        i++;
    }
    benchmark::DoNotOptimize(ring);
    state.SetItemsProcessed(state.iterations());
    state.counters["stall_frac"] = static_cast<double>(stalls) / static_cast<double>(state.iterations());
}

BENCHMARK_CAPTURE(BM_LbDispatchComplete, static, bg::LbPolicy::kStatic);
BENCHMARK_CAPTURE(BM_LbDispatchComplete, rr, bg::LbPolicy::kRoundRobin);
BENCHMARK_CAPTURE(BM_LbDispatchComplete, jsq, bg::LbPolicy::kJsq);
BENCHMARK_CAPTURE(BM_LbDispatchComplete, p2c, bg::LbPolicy::kP2c);

}  // namespace
