// Cost estimator per descriptor (bg::CostEstimator::estimate, BurstCBS §5.3): class lookup,
// table read and the per-dimension slope and factor multiplies of every I/O.
//
// Descriptors (product, direction, size) are drawn before the timed loop: products 0..3
// (A and B programmed by the firmware loader, C and D at reset values: same work), sizes
// uniform in 512 B..1 MiB so the size class is unpredictable, as in a mixed workload.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/model/cost.hpp"
#include "workload.hpp"

namespace {

using bg::bench::Descriptor;
using bg::bench::Rng;

constexpr unsigned kDraws = 4096;  // a power of two: the index wraps with a mask

void BM_CostEstimate(benchmark::State &state)
{
    const bg::CostEstimator est = bg::bench::programmed_estimator();
    Rng rng(0xC057);
    std::vector<Descriptor> desc(kDraws);
    for (Descriptor &x : desc)
        x = {rng.below(BG_PRODUCTS), rng.below(2) != 0, 512 + rng.below((1u << 20) - 511)};

    std::uint32_t i = 0;
    for (auto _ : state) {
        const Descriptor &x = desc[i++ & (kDraws - 1)];
        bg::CostVector c = est.estimate(x.product, x.write, x.size);
        benchmark::DoNotOptimize(c);
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_CostEstimate);

}  // namespace
