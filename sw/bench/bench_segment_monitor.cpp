// Segment monitor per I/O (bg::SegmentMonitor::on_io, Still Water §4.2): one read-modify-write
// of a segment's entry, with the lazy roll-forward on the first I/O of an interval.
//
// Segment ids are drawn before the timed loop, uniform over `span` segments: 65536 touches
// the whole 64K-entry table (512 KiB, the hardware's RAM), 4096 stays in L2. With R = 4 and
// kIosPerInterval I/Os per interval, 4096 segments see 4 I/Os each per interval on average
// (most turn hot), 65536 see 0.25 (almost none does). The interval ticks inside the loop:
// tick() is one increment, and it makes the roll-forward path run once per segment and
// interval.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/model/segment_monitor.hpp"
#include "workload.hpp"

namespace {

using bg::bench::Rng;

constexpr unsigned kDraws = 1u << 16;  // a power of two: the index wraps with a mask
constexpr std::uint32_t kIosPerInterval = 16384;

void BM_SegmentMonitorOnIo(benchmark::State &state)
{
    const auto span = static_cast<std::uint32_t>(state.range(0));
    bg::SegmentMonitor mon(/*hot_threshold=*/4, /*steady_intervals=*/5);
    Rng rng(0x5E6 + span);
    std::vector<std::uint16_t> seg(kDraws);
    for (std::uint16_t &s : seg)
        s = static_cast<std::uint16_t>(rng.below(span));

    std::uint32_t i = 0;
    std::uint64_t hot = 0;
    for (auto _ : state) {
        const bool h = mon.on_io(seg[i & (kDraws - 1)], true, 4096);
        hot += h;
        if (++i % kIosPerInterval == 0)
            mon.tick();
    }
    benchmark::DoNotOptimize(hot);
    state.SetItemsProcessed(state.iterations());
    state.counters["hot_frac"] = static_cast<double>(hot) / static_cast<double>(state.iterations());
}

BENCHMARK(BM_SegmentMonitorOnIo)->ArgName("segments")->Arg(4096)->Arg(65536);

}  // namespace
