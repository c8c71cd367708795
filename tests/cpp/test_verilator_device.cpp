// Contract 2 and 3 through the Device interface: the same configuration, descriptors,
// completions and window commands on ModelDevice and on VerilatorDevice (the generated kernel:
// AXI4-Lite, rings, the core) give the same decision for every descriptor and the same
// counters. Built when the Verilated kernel is (every `make cpp`, BG_HAVE_VERILATOR).
#ifdef BG_HAVE_VERILATOR

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "burstgate/cost_table.h"
#include "burstgate/host/device.hpp"
#include "burstgate/regs.h"
#include "burstgate/sim/simulator.hpp"

namespace {

using namespace bg;

std::string show(const IoDecision &d)
{
    char buf[160];
    std::snprintf(buf, sizeof buf, "{tag %u tenant %u queue %u source %u lender %u egress %u hot %d prefill %d cost %u %u %u %u}",
                  d.tag, d.tenant, d.queue, d.source, d.lender, d.egress, d.hot, d.prefill, d.cost.d[0], d.cost.d[1],
                  d.cost.d[2], d.cost.d[3]);
    return buf;
}

// Both devices, every register write and read in the same order.
struct Pair {
    std::unique_ptr<Device> model, rtl;
    void write(std::uint32_t addr, std::uint32_t v)
    {
        model->write32(addr, v);
        rtl->write32(addr, v);
    }
    void expect_read(std::uint32_t addr, const char *what)
    {
        EXPECT_EQ(rtl->read32(addr), model->read32(addr)) << what << " at " << addr;
    }
};

void configure(Pair &p, std::mt19937 &rng, std::uint32_t scheduler)
{
    const AgentParams a = p.model->params();
    for (Device *d : {p.model.get(), p.rtl.get()}) {
        bg_hal hal = d->hal();
        const std::uint32_t lo[BG_COST_SIZE_LO_COUNT] = {4096, 8192, 16384, 32768, 65536, 131072, 262144};
        ASSERT_EQ(bg_cost_set_bounds(&hal, lo), 0);
        std::mt19937 table(7);  // same table on both
        for (unsigned prod = 0; prod < BG_PRODUCTS; prod++)
            for (bool w : {false, true})
                for (unsigned k = 0; k < BG_SIZE_CLASSES; k++) {
                    const std::uint32_t bytes = 4096u << k;
                    const std::uint32_t base[BG_COST_DIMS] = {static_cast<std::uint32_t>(2000 + table() % 8000), bytes,
                                                              bytes, bytes};
                    const std::uint32_t slope[BG_COST_DIMS] = {static_cast<std::uint32_t>(table() % 200), 1024, 1024,
                                                               1024};
                    ASSERT_EQ(bg_cost_set_entry(&hal, prod, w, k, base, slope), 0);
                }
    }
    p.write(BG_CTRL_SCHEDULER, scheduler);
    p.write(BG_CTRL_SEED, rng());
    p.write(BG_LB_SEED, rng());
    p.write(BG_LB_POLICY, rng() % 4);
    p.write(BG_LB_DEPTH, 8 + rng() % 24);
    p.write(BG_SEGMON_HOT_THRESHOLD, 20);
    for (std::uint32_t t = 0; t < a.tenants; t++)
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            const std::uint32_t grant = (rng() % 40) * (d == BG_DIM_CPU ? 5000u : 60000u);
            p.write(BG_TENANT_GRANT(t * BG_COST_DIMS + d), grant);
            p.write(BG_TENANT_RES_BASE(t * BG_COST_DIMS + d), grant * 2);
            p.write(BG_TENANT_LEND_GRANT(t * BG_COST_DIMS + d), grant / 2);
        }
    for (unsigned i = 0; i < 8; i++)
        p.write(BG_TENANT_BURST_LIST(i), rng() % a.tenants);
    p.write(BG_CTRL_BURST_N, 8);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        p.write(BG_CTRL_POOL(d), d == BG_DIM_CPU ? 200000 : 4000000);
        p.write(BG_CTRL_GLOBAL(d), d == BG_DIM_CPU ? 400000 : 8000000);
    }
    p.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    p.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
}

void run(std::uint32_t scheduler, unsigned seed)
{
    Pair p{open_device("model", AgentParams{}), open_device("verilator", AgentParams{})};
    ASSERT_EQ(p.rtl->engine(), "verilator");
    std::mt19937 rng(seed);
    configure(p, rng, scheduler);
    const AgentParams a = p.model->params();
    std::vector<IoDecision> outstanding;
    unsigned by_source[8] = {};
    for (int window = 0; window < 4; window++) {
        for (int batch = 0; batch < 6; batch++) {
            std::vector<IoDesc> descs(1 + rng() % 150);
            for (IoDesc &d : descs) {
                d.tag = static_cast<std::uint16_t>(rng());
                d.tenant = static_cast<std::uint16_t>(rng() % a.tenants);
                d.queue = static_cast<std::uint8_t>(rng() % a.ingress);
                d.product = static_cast<std::uint8_t>(rng() % BG_PRODUCTS);
                d.write = rng() & 1;
                d.size = 512u << (rng() % 10);
                d.segment = static_cast<std::uint16_t>(rng() % 64);
            }
            std::vector<IoDecision> want, got;
            p.model->submit(descs, want);
            p.rtl->submit(descs, got);
            ASSERT_EQ(got.size(), descs.size());
            for (std::size_t i = 0; i < descs.size(); i++)
                ASSERT_EQ(show(got[i]), show(want[i])) << "window " << window << " batch " << batch << " descriptor " << i;
            for (const IoDecision &d : want) {
                by_source[d.source & 7]++;
                if (d.admitted())
                    outstanding.push_back(d);
            }
            // Complete a random share of what is outstanding, in a random order.
            std::shuffle(outstanding.begin(), outstanding.end(), rng);
            const std::size_t k = outstanding.size() * (rng() % 100) / 100;
            std::vector<IoCompletion> done;
            for (std::size_t i = 0; i < k; i++) {
                const IoDecision &d = outstanding.back();
                done.push_back(IoCompletion{d.tag, d.tenant, d.queue, d.egress, d.cost.d[BG_DIM_CPU],
                                            static_cast<std::uint32_t>(1000 + rng() % 100000)});
                outstanding.pop_back();
            }
            p.model->complete(done);
            p.rtl->complete(done);
        }
        p.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
        for (std::uint32_t addr : {BG_CTRL_IOS, BG_CTRL_DEFERRED, BG_CTRL_DEFERRED_EGRESS, BG_CTRL_DEFERRED_BUFFER,
                                   BG_CTRL_COMPLETIONS, BG_CTRL_BAD_COMPLETIONS, BG_CTRL_POOL_DRAWN})
            p.expect_read(addr, "CTRL counter");
        for (std::uint32_t t = 0; t < a.tenants; t++) {
            p.expect_read(BG_TENANT_THROTTLE_N(t), "THROTTLE_N");
            p.expect_read(BG_TENANT_SPILL_N(t), "SPILL_N");
            for (unsigned d = 0; d < BG_COST_DIMS; d++)
                p.expect_read(BG_TENANT_USAGE(t * BG_COST_DIMS + d), "USAGE");
        }
        for (unsigned b = 0; b < BG_HIST_BUCKETS; b++)
            p.expect_read(BG_CTRL_HIST_ALL(b), "HIST_ALL");
        p.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    }
    // The comparison means something only if both outcomes occurred.
    EXPECT_GT(by_source[BG_SRC_OWN], 0u);
    EXPECT_GT(by_source[BG_SRC_DEFER] + by_source[BG_SRC_DEFER_EGRESS] + by_source[BG_SRC_DEFER_BUFFER], 0u);
    std::printf("sources: own %u borrow %u reserved %u defer %u defer_egress %u defer_buffer %u\n", by_source[0],
                by_source[1], by_source[2], by_source[4], by_source[5], by_source[6]);
}

}  // namespace

TEST(VerilatorDevice, SameDecisionsAsTheModelBios) { run(BG_SCHED_BIOS, 1); }
TEST(VerilatorDevice, SameDecisionsAsTheModelDualBucket) { run(BG_SCHED_DUALBUCKET, 2); }
TEST(VerilatorDevice, SameDecisionsAsTheModelWild) { run(BG_SCHED_WILD, 3); }

// Contract 3's own words: the simulator's report for a scenario (the normative example) is
// identical on model and verilator except the engine field -- every decision, completion,
// window command and counter read of a whole run went through the kernel.
TEST(VerilatorDevice, ScenarioReportIsIdenticalToTheModels)
{
    using namespace bg::sim;
    Scenario sc = load_scenario(std::string(BG_SOURCE_DIR) + "/scenarios/example.yaml");
    sc.duration_ns = 300'000'000;
    for (Scheduler s : {Scheduler::kBios, Scheduler::kDualBucket}) {
        SimOptions model, rtl;
        model.scheduler = rtl.scheduler = s;
        rtl.engine = "verilator";
        SimResult a = simulate(sc, model);
        const SimResult b = simulate(sc, rtl);
        EXPECT_EQ(a.engine, "model");
        EXPECT_EQ(b.engine, "verilator");
        a.engine = b.engine;  // the one field allowed to differ
        EXPECT_EQ(report_json(b), report_json(a)) << "scheduler " << a.scheduler;
        EXPECT_GT(a.tenants.at(0).completed, 0u);
    }
}

#endif  // BG_HAVE_VERILATOR
