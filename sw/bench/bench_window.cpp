// The firmware's whole window (Admission::window_tick = fw/ window.h bg_fw_window over the
// agent's register HAL): TICK, reading ACTIVE and every scheduled tenant's counters through
// the HAL, RUN_SCHEDULING, writing GRANT and LEND_GRANT, the burst list and the pool, COMMIT
// (the agent refills every tenant). This is the admission hold of §6.6 as the model has it;
// bench_bios.cpp times bg_bios_run alone. No docs/design.md target names this one: it shows what
// the register traffic adds to the 1024-tenant figure.
//
// One iteration = one window: the window's I/Os (workload.hpp admission_workload) are offered
// with the timing paused, then window_tick() is timed. Two pause/resume pairs per window cost
// about a microsecond of timer reads, outside the timed span but not free: read this as
// tens of microseconds, not to the last one.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/model/admission.hpp"
#include "workload.hpp"

namespace {

constexpr unsigned kWindows = 16;
constexpr unsigned kWarmupWindows = 16;
constexpr std::uint32_t kIosPerWindow = 16384;

void BM_FwWindowBios(benchmark::State &state)
{
    const auto n = static_cast<std::uint32_t>(state.range(0));
    const bg::bench::AdmissionWorkload wl =
        bg::bench::admission_workload(bg::Scheduler::Bios, n, kIosPerWindow, kWindows);
    bg::Admission adm(wl.cfg);
    for (unsigned k = 0; k < kWarmupWindows; k++) {
        for (const bg::bench::TenantIo &io : wl.windows[k % kWindows])
            adm.io(io.tenant, io.cost);
        adm.window_tick();
    }

    std::uint64_t scheduled = 0;
    unsigned k = 0;
    for (auto _ : state) {
        state.PauseTiming();
        for (const bg::bench::TenantIo &io : wl.windows[k])
            adm.io(io.tenant, io.cost);
        k = k + 1 == kWindows ? 0 : k + 1;
        state.ResumeTiming();
        adm.window_tick();
        scheduled += adm.scheduled();
    }
    state.counters["tenants"] = n;
    state.counters["scheduled"] = static_cast<double>(scheduled) / static_cast<double>(state.iterations());
}

BENCHMARK(BM_FwWindowBios)->ArgName("tenants")->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace
