// Buffer pool per I/O (bg::BufferPool, BurstCBS §5.1 Figure 12): one acquire when an I/O
// starts and one release when an earlier one finishes, with a window tick every
// kIosPerWindow I/Os (16 queues, a few ns per tick: inside the loop, under 0.01 ns per I/O).
//
// 16 queues with 32 dedicated buffers each and a 512-buffer shared pool; kInFlight = 384
// I/Os outstanding in a closed loop. Every kIosPerPhase I/Os another queue takes half of
// the traffic (about 200 in flight, above its 32), so it borrows, keeps its extra buffers
// while bursting and, once the burst moves on, returns them after quiet_windows quiet
// windows (argument; 0 = return on every release, the design the paper moved away from).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <vector>

#include "burstgate/model/buffer_pool.hpp"
#include "workload.hpp"

namespace {

using bg::bench::Rng;

constexpr unsigned kQueues = 16;
constexpr unsigned kInFlight = 384;
constexpr unsigned kIosPerWindow = 1024;
constexpr unsigned kIosPerPhase = 8192;
constexpr unsigned kDraws = 1u << 16;  // a power of two: the index wraps with a mask

void BM_BufferPoolAcquireRelease(benchmark::State &state)
{
    const auto quiet = static_cast<std::uint32_t>(state.range(0));
    bg::BufferPool pool(bg::BufferPoolConfig::uniform(kQueues, 32, 512, quiet));
    Rng rng(0xBF + quiet);
    std::vector<std::uint8_t> queue(kDraws);
    for (unsigned k = 0; k < kDraws; k++) {
        const unsigned bursting = (k / kIosPerPhase) % kQueues;
        queue[k] = static_cast<std::uint8_t>(rng.below(2) ? bursting : rng.below(kQueues));
    }

    struct Slot {
        bool busy;
        std::uint8_t queue;
    };
    std::array<Slot, kInFlight> ring{};
    std::uint32_t i = 0;
    std::uint64_t stalls = 0;
    for (auto _ : state) {
        Slot &s = ring[i % kInFlight];
        if (s.busy)
            pool.release(s.queue);
        const std::uint8_t q = queue[i & (kDraws - 1)];
        const bg::Acquire a = pool.acquire(q);
        s = {a != bg::Acquire::kStall, q};
        stalls += a == bg::Acquire::kStall;
        if (++i % kIosPerWindow == 0)
            pool.tick();
    }
    benchmark::DoNotOptimize(ring);
    if (!pool.conserved())
        state.SkipWithError("buffer pool lost or duplicated a buffer");
    state.SetItemsProcessed(state.iterations());
    const auto iters = static_cast<double>(state.iterations());
    state.counters["borrow_per_io"] = static_cast<double>(pool.stats().borrowed) / iters;
    state.counters["stall_frac"] = static_cast<double>(stalls) / iters;
}

BENCHMARK(BM_BufferPoolAcquireRelease)->ArgName("quiet_windows")->Arg(0)->Arg(1);

}  // namespace
