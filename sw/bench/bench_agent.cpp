// The agent's per-descriptor datapath (bg::Agent::io, agent.hpp): cost estimate, segment
// monitor, two LFSR draws, the BIOS source, load-balancer dispatch, buffer acquire -- the
// model of what the gateware does per descriptor, and what the RTL is verified against.
// Target (docs/design.md): model admission decision <= 30 ns per I/O.
//
// The agent is set up through its registers as the firmware leaves it in a window: BIOS,
// every tenant granted its base, one tenant in eight bursting with a lendable surplus on the
// burst list, three in eight decayed below base, a reserved pool. Descriptors follow the admission workload (workload.hpp: who
// offers how much in which window), with I/O types from io_types(), four ingress queues and
// random segments. Every admitted I/O is completed, 32 at a time (a completion ring drained
// in batches, as a host driver would), and those completions are inside the timed loop:
// per-I/O time = (io + its share of complete) / I/Os. At each window's end (timing paused)
// the rest is completed and TICK, COMMIT refill the grants.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "burstgate/cost_table.h"
#include "burstgate/model/agent.hpp"
#include "burstgate/regs.h"
#include "workload.hpp"

namespace {

using bg::bench::Rng;

constexpr unsigned kWindows = 16;
constexpr unsigned kWarmupWindows = 4;
constexpr std::uint32_t kIosPerWindow = 16384;
constexpr unsigned kQueues = 4;
constexpr unsigned kCompletionBatch = 32;

// CPU ns per I/O = base + per KiB (as workload.cpp's estimator).
constexpr bg_linear_profile kProfile[2][2] = {
    {{2200, 40}, {1800, 35}},
    {{3000, 55}, {2500, 45}},
};

void write_vec(bg::Agent &a, std::uint32_t first, std::uint32_t t, const bg_vec &v)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        a.write(first + 4u * (t * BG_COST_DIMS + d), v.d[d]);
}

struct Completions {
    std::vector<bg::IoCompletion> ring;
    void add(const bg::IoDecision &x)
    {
        ring.push_back(bg::IoCompletion{x.tag, x.tenant, x.queue, x.egress, x.cost.d[BG_DIM_CPU], 1000});
    }
    void drain(bg::Agent &a)
    {
        for (const bg::IoCompletion &c : ring)
            a.complete(c);
        ring.clear();
    }
};

void window(bg::Agent &a, Completions &done)
{
    done.drain(a);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
}

void BM_AgentIo(benchmark::State &state)
{
    const auto n = static_cast<std::uint32_t>(state.range(0));
    const bg::bench::AdmissionWorkload wl =
        bg::bench::admission_workload(bg::Scheduler::Bios, n, kIosPerWindow, kWindows);
    bg::Agent a(bg::AgentParams{n, kQueues, kQueues, BG_SEGMENT_BITS});
    bg_hal hal = a.hal();
    for (unsigned p = 0; p < 2; p++)
        if (bg_cost_load_linear(&hal, p, &kProfile[p][0], &kProfile[p][1], 128) != BG_COST_OK) {
            state.SkipWithError("cost-table loader rejected the profile");
            return;
        }
    std::uint32_t n_burst = 0;
    for (std::uint32_t i = 0; i < n; i++) {
        const bg_vec &base = wl.cfg.tenants[i].base;
        bg_vec lend{};
        if (i % 8 == 0) {  // a burst tenant: granted 2x base, the surplus lendable
            for (unsigned d = 0; d < BG_COST_DIMS; d++)
                lend.d[d] = base.d[d];
            a.write(BG_TENANT_BURST_LIST(n_burst++), i);
        }
        // Three in eight have decayed toward their floor (a quarter of base): on turning on
        // they run out of their own grant below base and take BORROW or RESERVED.
        const bool decayed = i % 8 >= 1 && i % 8 <= 3;
        bg_vec grant;
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            grant.d[d] = (decayed ? base.d[d] / 4 : base.d[d]) + lend.d[d];
        write_vec(a, BG_TENANT_RES_BASE(0), i, base);
        write_vec(a, BG_TENANT_GRANT(0), i, grant);
        write_vec(a, BG_TENANT_LEND_GRANT(0), i, lend);
    }
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        a.write(BG_CTRL_POOL(d), wl.cfg.total.d[d] / 20);
    a.write(BG_CTRL_BURST_N, n_burst);
    a.write(BG_CTRL_SCHEDULER, BG_SCHED_BIOS);
    a.write(BG_CTRL_SEED, 7);

    const std::vector<bg::bench::Descriptor> types = bg::bench::io_types();
    Rng rng(0xA6E7 + n);
    std::vector<std::vector<bg::IoDesc>> win(kWindows);
    for (unsigned k = 0; k < kWindows; k++)
        for (const bg::bench::TenantIo &io : wl.windows[k]) {
            const bg::bench::Descriptor &t = types[rng.below(static_cast<std::uint32_t>(types.size()))];
            bg::IoDesc d;
            d.tag = static_cast<std::uint16_t>(win[k].size());
            d.tenant = static_cast<std::uint16_t>(io.tenant);
            d.queue = static_cast<std::uint8_t>(io.tenant % kQueues);
            d.product = static_cast<std::uint8_t>(t.product);
            d.write = t.write;
            d.size = t.size;
            d.segment = static_cast<std::uint16_t>(rng.below(1u << BG_SEGMENT_BITS));
            win[k].push_back(d);
        }

    Completions done;
    done.ring.reserve(kIosPerWindow * 2);
    window(a, done);
    for (unsigned k = 0; k < kWarmupWindows; k++) {
        for (const bg::IoDesc &d : win[k % kWindows])
            if (const bg::IoDecision x = a.io(d); x.admitted())
                done.add(x);
        window(a, done);
    }

    std::uint64_t ios = 0, paths[BG_SRC_DEFER_BUFFER + 1] = {};
    unsigned k = 0;
    for (auto _ : state) {
        for (const bg::IoDesc &d : win[k]) {
            const bg::IoDecision x = a.io(d);
            paths[x.source]++;
            if (x.admitted()) {
                done.add(x);
                if (done.ring.size() == kCompletionBatch)
                    done.drain(a);
            }
        }
        ios += win[k].size();
        state.PauseTiming();  // once per window of ~16k I/Os
        window(a, done);
        k = k + 1 == kWindows ? 0 : k + 1;
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(ios));
    const auto all = static_cast<double>(ios);
    state.counters["own"] = static_cast<double>(paths[BG_SRC_OWN]) / all;
    state.counters["borrow"] = static_cast<double>(paths[BG_SRC_BORROW]) / all;
    state.counters["reserved"] = static_cast<double>(paths[BG_SRC_RESERVED]) / all;
    state.counters["deferred"] = static_cast<double>(paths[BG_SRC_DEFER]) / all;
    state.counters["def_egress"] = static_cast<double>(paths[BG_SRC_DEFER_EGRESS]) / all;
    state.counters["def_buffer"] = static_cast<double>(paths[BG_SRC_DEFER_BUFFER]) / all;
}

BENCHMARK(BM_AgentIo)->ArgName("tenants")->Arg(4)->Arg(64)->Arg(1024);

}  // namespace
