// THROTTLE_IO (BurstCBS Algorithm 1) for the schedulers bios, base and wild, two ways.
// Target (docs/design.md): <= 30 ns per I/O.
//
// BM_ThrottleIo times THROTTLE_IO itself, Admission::throttle_io -> Agent::throttle_io: the
// two LFSR draws, the source (own allocation -> power of two choices among the bursting
// tenants -> reserved pool -> defer; base and wild: their rules) and its charge (rem, lend or
// pool, usage, spill; on deferral the throttle counters), plus Admission's per-tenant totals.
// That is the decision the 30 ns target is about; the test of test_throttle_io.cpp holds it to
// the same decisions and state as the full path.
//
// BM_ThrottleIoAgentPath times Admission::io, the whole per-I/O agent path with costs given
// (agent.hpp io_costed: segment monitor, the same decision, the egress and buffer checks,
// load-balancer dispatch, buffer acquire) plus the immediate completion Admission issues for
// every admitted I/O (load balancer and buffer release, two histogram records). That is what
// a study of admission through the datapath pays per I/O; the 30 ns target is not its.
//
// One iteration = one window of the workload (workload.hpp admission_workload): every I/O
// of the window is offered in turn, then the firmware window runs with the timing paused
// (it is bench_window.cpp's subject). Per-I/O time = CPU time / I/Os: the JSON's
// items_per_second is I/Os per second. The counters give each decision path's share; a
// deferred I/O is not re-offered here, as the replayed windows are fixed.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/model/admission.hpp"
#include "workload.hpp"

namespace {

constexpr unsigned kWindows = 16;
constexpr unsigned kWarmupWindows = 16;
constexpr std::uint32_t kIosPerWindow = 16384;

// What one offered I/O runs: the decision alone or the whole agent path (a template
// argument, so the timed loop holds no branch on it).
enum class Path { Decision, Agent };

template <Path path>
bg::Decision offer(bg::Admission &adm, const bg::bench::TenantIo &io)
{
    if constexpr (path == Path::Decision)
        return adm.throttle_io(io.tenant, io.cost);
    else
        return adm.io(io.tenant, io.cost);
}

template <Path path>
void BM_Admission(benchmark::State &state, bg::Scheduler scheduler)
{
    const auto n = static_cast<std::uint32_t>(state.range(0));
    const bg::bench::AdmissionWorkload wl = bg::bench::admission_workload(scheduler, n, kIosPerWindow, kWindows);
    bg::Admission adm(wl.cfg);
    for (unsigned k = 0; k < kWarmupWindows; k++) {
        for (const bg::bench::TenantIo &io : wl.windows[k % kWindows])
            offer<path>(adm, io);
        adm.window_tick();
    }

    std::uint64_t ios = 0;
    unsigned k = 0;
    for (auto _ : state) {
        const std::vector<bg::bench::TenantIo> &w = wl.windows[k];
        for (const bg::bench::TenantIo &io : w) {
            bg::Decision d = offer<path>(adm, io);
            benchmark::DoNotOptimize(d);
        }
        ios += w.size();
        state.PauseTiming();  // once per window of ~16k I/Os: well under 0.1 ns per I/O
        adm.window_tick();
        k = k + 1 == kWindows ? 0 : k + 1;
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(ios));
    state.counters["ios_per_window"] = static_cast<double>(ios) / static_cast<double>(state.iterations());
    // Which paths the decisions took (warm-up included): a bios run without BORROW or
    // RESERVED decisions would not measure the fallback path.
    bg::TenantTotals all;
    for (std::uint32_t i = 0; i < n; i++) {
        const bg::TenantTotals &x = adm.totals(i);
        all.offered += x.offered;
        all.own += x.own;
        all.borrowed += x.borrowed;
        all.reserved += x.reserved;
        all.deferred += x.deferred;
    }
    const auto offered = static_cast<double>(all.offered);
    state.counters["own"] = static_cast<double>(all.own) / offered;
    state.counters["borrow"] = static_cast<double>(all.borrowed) / offered;
    state.counters["reserved"] = static_cast<double>(all.reserved) / offered;
    state.counters["deferred"] = static_cast<double>(all.deferred) / offered;
}

void BM_ThrottleIo(benchmark::State &state, bg::Scheduler scheduler) { BM_Admission<Path::Decision>(state, scheduler); }
void BM_ThrottleIoAgentPath(benchmark::State &state, bg::Scheduler scheduler)
{
    BM_Admission<Path::Agent>(state, scheduler);
}

#define BG_ADMISSION(fn, name, sched) \
    BENCHMARK_CAPTURE(fn, name, sched)->ArgName("tenants")->Arg(4)->Arg(64)->Arg(1024)

BG_ADMISSION(BM_ThrottleIo, bios, bg::Scheduler::Bios);
BG_ADMISSION(BM_ThrottleIo, base, bg::Scheduler::Base);
BG_ADMISSION(BM_ThrottleIo, wild, bg::Scheduler::Wild);
BG_ADMISSION(BM_ThrottleIoAgentPath, bios, bg::Scheduler::Bios);
BG_ADMISSION(BM_ThrottleIoAgentPath, base, bg::Scheduler::Base);
BG_ADMISSION(BM_ThrottleIoAgentPath, wild, bg::Scheduler::Wild);

}  // namespace
