// THROTTLE_IO (bg::Admission::io, BurstCBS Algorithm 1): the per-I/O admission decision of
// the schedulers bios, base and wild. Target (DESIGN.md): <= 30 ns per I/O.
//
// Admission::io is the agent's datapath with costs given (agent.hpp io_costed: segment
// monitor, two LFSR draws, the scheduler's source, load-balancer dispatch, buffer acquire)
// plus the immediate completion Admission issues for every admitted I/O (load balancer and
// buffer release, two histogram records) and the per-tenant totals. That whole call is what
// a study of admission pays per I/O, so that is what is timed.
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

void BM_ThrottleIo(benchmark::State &state, bg::Scheduler scheduler)
{
    const auto n = static_cast<std::uint32_t>(state.range(0));
    const bg::bench::AdmissionWorkload wl = bg::bench::admission_workload(scheduler, n, kIosPerWindow, kWindows);
    bg::Admission adm(wl.cfg);
    for (unsigned k = 0; k < kWarmupWindows; k++) {
        for (const bg::bench::TenantIo &io : wl.windows[k % kWindows])
            adm.io(io.tenant, io.cost);
        adm.window_tick();
    }

    std::uint64_t ios = 0;
    unsigned k = 0;
    for (auto _ : state) {
        const std::vector<bg::bench::TenantIo> &w = wl.windows[k];
        for (const bg::bench::TenantIo &io : w) {
            bg::Decision d = adm.io(io.tenant, io.cost);
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

#define BG_THROTTLE_IO(name, sched) \
    BENCHMARK_CAPTURE(BM_ThrottleIo, name, sched)->ArgName("tenants")->Arg(4)->Arg(64)->Arg(1024)

BG_THROTTLE_IO(bios, bg::Scheduler::Bios);
BG_THROTTLE_IO(base, bg::Scheduler::Base);
BG_THROTTLE_IO(wild, bg::Scheduler::Wild);

}  // namespace
