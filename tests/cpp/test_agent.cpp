// The whole-datapath model (agent.hpp) and the firmware window loop (window.h) driving it
// through registers: decode, each scheduler's rule reached by register writes, the resource
// deferrals, completions, and what COMMIT does. Costs are set through the COST block, so every
// decision below also passes through the estimator exactly as in the RTL.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "burstgate/cost_table.h"
#include "burstgate/host/device.hpp"
#include "burstgate/lfsr.h"
#include "burstgate/model/agent.hpp"
#include "burstgate/regs.h"
#include "burstgate/window.h"
#include "agent_fixture.hpp"

namespace {

using namespace bg;

// Every I/O of product 0 costs {1000 ns, 4096, 4096, 4096}, whatever its size: class 0's base
// with zero slopes and the reset factors, so budgets below read directly as I/O counts.
constexpr bg_vec kIo{{1000, 4096, 4096, 4096}};

bg_vec ios(std::uint32_t n) { return bg_credit_from_ios(n, &kIo); }

void flat_cost(Agent &a) { ASSERT_TRUE(test::flat_cost(a.hal(), kIo)); }

using test::commit;
using test::read_vec;
using test::write_pool;
using test::write_vec;

IoDecision io(Agent &a, std::uint16_t tenant, std::uint8_t queue = 0, std::uint16_t segment = 0)
{
    IoDesc d;
    d.tag = 7;
    d.tenant = tenant;
    d.queue = queue;
    d.size = 4096;
    d.segment = segment;
    return a.io(d);
}

TEST(Agent, InfoAndRegisterDecode)
{
    Agent a(AgentParams{8, 2, 3, 12});
    EXPECT_EQ(a.read(BG_INFO_MAGIC), BG_MAP_MAGIC);
    EXPECT_EQ(a.read(BG_INFO_VERSION), BG_REGMAP_VERSION);
    EXPECT_EQ(a.read(BG_INFO_TENANTS), 8u);
    EXPECT_EQ(a.read(BG_INFO_INGRESS), 2u);
    EXPECT_EQ(a.read(BG_INFO_EGRESS), 3u);
    EXPECT_EQ(a.read(BG_INFO_SEGMENT_BITS), 12u);
    // Resets from the register map.
    EXPECT_EQ(a.read(BG_LB_DEPTH), BG_LB_DEPTH_RESET);
    EXPECT_EQ(a.read(BG_SEGMON_HOT_THRESHOLD), BG_SEGMON_HOT_THRESHOLD_RESET);
    EXPECT_EQ(a.read(BG_BPOOL_DEDICATED(1)), BG_BPOOL_DEDICATED_RESET);
    EXPECT_EQ(a.read(BG_LB_MAP(1)), 1u << 1);  // ingress i -> egress i mod E
    // rw registers keep their implemented bits; ro ones and unmapped addresses ignore writes.
    a.write(BG_CTRL_SCHEDULER, 0xFFFFFFFFu);
    EXPECT_EQ(a.read(BG_CTRL_SCHEDULER), BG_CTRL_SCHEDULER_MASK);
    a.write(BG_LB_MAP(0), 0xFFFFu);
    EXPECT_EQ(a.read(BG_LB_MAP(0)), 0x7u);  // three egress queues
    a.write(BG_CTRL_IOS, 5);
    EXPECT_EQ(a.read(BG_CTRL_IOS), 0u);
    a.write(BG_INFO_TENANTS, 1);
    EXPECT_EQ(a.read(BG_INFO_TENANTS), 8u);
    EXPECT_EQ(a.read(0x0FF0), 0u);
    // Per-tenant arrays: implemented tenants only; the address bits 1..0 are ignored.
    a.write(BG_TENANT_GRANT(7 * 4 + 2) + 3, 1234);
    EXPECT_EQ(a.read(BG_TENANT_GRANT(7 * 4 + 2)), 1234u);
    a.write(BG_TENANT_GRANT(8 * 4), 99);
    EXPECT_EQ(a.read(BG_TENANT_GRANT(8 * 4)), 0u);
    a.write(BG_TENANT_BURST_LIST(3), 0xFFFF);
    EXPECT_EQ(a.read(BG_TENANT_BURST_LIST(3)), BG_TENANT_BURST_LIST_MASK);
    EXPECT_THROW(Agent(AgentParams{0, 1, 1, 16}), std::invalid_argument);
    EXPECT_THROW(Agent(AgentParams{4, 17, 1, 16}), std::invalid_argument);
}

TEST(Agent, BiosSourcesInOrderAndCounters)
{
    Agent a(AgentParams{3, 1, 1, 16});
    flat_cost(a);
    // Tenant 0: 1 I/O of grant, base 2. Tenant 1: bursting lender with 2 I/Os to lend.
    write_vec(a, BG_TENANT_RES_BASE(0), 0, ios(2));
    write_vec(a, BG_TENANT_GRANT(0), 0, ios(1));
    write_vec(a, BG_TENANT_GRANT(0), 1, ios(3));
    write_vec(a, BG_TENANT_LEND_GRANT(0), 1, ios(1));
    a.write(BG_TENANT_BURST_LIST(0), 1);
    a.write(BG_CTRL_BURST_N, 1);
    write_pool(a, BG_CTRL_POOL(0), ios(1));
    commit(a);

    EXPECT_EQ(io(a, 0).source, BG_SRC_OWN);
    const IoDecision b = io(a, 0);
    EXPECT_EQ(b.source, BG_SRC_BORROW);
    EXPECT_EQ(b.lender, 1u);
    // Base (2) reached: no fallback, although the pool still has one I/O.
    EXPECT_EQ(io(a, 0).source, BG_SRC_DEFER);
    EXPECT_EQ(read_vec(a, BG_TENANT_LENDABLE(0), 1).d[0], 0u);
    EXPECT_EQ(read_vec(a, BG_TENANT_REMAINING(0), 1).d[0], 2000u);
    // Tenant 2 (base 0) is never allowed a fallback; tenant 1 spends its own.
    EXPECT_EQ(io(a, 2).source, BG_SRC_DEFER);
    EXPECT_EQ(io(a, 1).source, BG_SRC_OWN);
    EXPECT_EQ(a.read(BG_TENANT_THROTTLE_N(0)), 1u);
    EXPECT_EQ(a.read(BG_TENANT_SPILL_N(0)), 1u);
    EXPECT_EQ(read_vec(a, BG_TENANT_USAGE(0), 0).d[1], 2u * 4096u);
    EXPECT_EQ(read_vec(a, BG_TENANT_THROTTLE(0), 0).d[0], 1000u);
    EXPECT_EQ(a.read(BG_CTRL_DEFERRED), 2u);
    EXPECT_EQ(a.read(BG_CTRL_IOS), 5u);
    EXPECT_EQ(a.read(BG_CTRL_ACTIVE(0)), 0x7u);

    // The reserved pool pays once the lender is exhausted and base allows it.
    commit(a);
    write_vec(a, BG_TENANT_LEND_GRANT(0), 1, ios(0));
    commit(a);
    EXPECT_EQ(io(a, 0).source, BG_SRC_OWN);
    EXPECT_EQ(io(a, 0).source, BG_SRC_RESERVED);
    EXPECT_EQ(a.read(BG_CTRL_POOL_DRAWN), 1u);
    EXPECT_EQ(io(a, 0).source, BG_SRC_DEFER);
}

TEST(Agent, HotSegmentsCannotDrawThePool)
{
    Agent a(AgentParams{1, 1, 1, 16});
    flat_cost(a);
    write_vec(a, BG_TENANT_RES_BASE(0), 0, ios(100));
    write_pool(a, BG_CTRL_POOL(0), ios(100));
    a.write(BG_SEGMON_HOT_THRESHOLD, 2);  // a segment is hot from its third I/O in a window
    commit(a);
    for (int i = 0; i < 2; i++) {
        const IoDecision d = io(a, 0, 0, 5);
        EXPECT_FALSE(d.hot);
        EXPECT_EQ(d.source, BG_SRC_RESERVED);
    }
    const IoDecision hot = io(a, 0, 0, 5);
    EXPECT_TRUE(hot.hot);
    EXPECT_EQ(hot.source, BG_SRC_DEFER);
    EXPECT_EQ(io(a, 0, 0, 6).source, BG_SRC_RESERVED);  // another segment is steady
}

// The descriptor's reoffer bit reaches the segment monitor as "not counted": a deferred I/O
// offered again many times does not make its segment hot (Still Water §4.2 counts requests).
TEST(Agent, ReofferedDescriptorsAreNotCounted)
{
    Agent a(AgentParams{1, 1, 1, 16});
    flat_cost(a);
    a.write(BG_SEGMON_HOT_THRESHOLD, 2);
    commit(a);  // no grant, no pool: every I/O is deferred
    IoDesc d;
    d.size = 4096;
    d.segment = 5;
    for (int i = 0; i < 2; i++)
        EXPECT_FALSE(a.io(d).hot);
    d.reoffer = true;
    for (int i = 0; i < 8; i++) {
        const IoDecision r = a.io(d);
        EXPECT_FALSE(r.hot) << "re-offer " << i;
        EXPECT_EQ(r.source, BG_SRC_DEFER);
    }
    EXPECT_EQ(a.segments().entry(5).count, 2u);
    d.reoffer = false;
    EXPECT_TRUE(a.io(d).hot);  // the third request
    d.reoffer = true;
    EXPECT_TRUE(a.io(d).hot);  // a re-offer of a hot segment is hot
}

TEST(Agent, WildBaseAndDualBucketRules)
{
    Agent a(AgentParams{2, 1, 1, 16});
    flat_cost(a);
    a.write(BG_CTRL_SCHEDULER, BG_SCHED_WILD);
    write_vec(a, BG_TENANT_GRANT(0), 0, ios(5));
    write_vec(a, BG_TENANT_GRANT(0), 1, ios(5));
    write_pool(a, BG_CTRL_GLOBAL(0), ios(3));
    commit(a);
    int own = 0;
    for (int i = 0; i < 4; i++)
        own += io(a, static_cast<std::uint16_t>(i & 1)).source == BG_SRC_OWN;
    EXPECT_EQ(own, 3);  // the global budget binds before either limiter

    a.write(BG_CTRL_SCHEDULER, BG_SCHED_BASE);
    commit(a);
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(io(a, 0).source, BG_SRC_OWN);  // no global budget in BaseCBS
    EXPECT_EQ(io(a, 0).source, BG_SRC_DEFER);

    a.write(BG_CTRL_SCHEDULER, BG_SCHED_DUALBUCKET);
    write_pool(a, BG_CTRL_GLOBAL(0), ios(1));
    write_pool(a, BG_CTRL_POOL(0), ios(1));
    commit(a);
    EXPECT_EQ(io(a, 1).source, BG_SRC_OWN);       // main bucket, shared by all tenants
    EXPECT_EQ(io(a, 0).source, BG_SRC_RESERVED);  // cheque
    EXPECT_EQ(io(a, 0).source, BG_SRC_DEFER);
}

TEST(Agent, EgressAndBufferDeferralsChargeNothing)
{
    Agent a(AgentParams{1, 1, 2, 16});
    flat_cost(a);
    write_vec(a, BG_TENANT_GRANT(0), 0, ios(100));
    a.write(BG_LB_DEPTH, 1);
    a.write(BG_LB_MAP(0), 0x3);
    commit(a);
    const IoDecision d0 = io(a, 0), d1 = io(a, 0), d2 = io(a, 0);
    EXPECT_EQ(d0.egress, 0u);  // static: the lowest eligible member
    EXPECT_EQ(d1.egress, 1u);
    EXPECT_EQ(d2.source, BG_SRC_DEFER_EGRESS);
    EXPECT_EQ(read_vec(a, BG_TENANT_REMAINING(0), 0).d[0], 98000u);
    EXPECT_EQ(a.read(BG_TENANT_THROTTLE_N(0)), 0u);  // not the tenant's doing
    EXPECT_EQ(a.read(BG_CTRL_DEFERRED_EGRESS), 1u);
    EXPECT_EQ(a.read(BG_LB_OUT_IOS(1)), 1u);
    EXPECT_EQ(a.read(BG_LB_OUT_NS(1)), 1000u);

    a.complete(IoCompletion{0, 0, 0, 1, 1000, 5000});
    EXPECT_EQ(a.read(BG_LB_OUT_IOS(1)), 0u);
    EXPECT_EQ(a.read(BG_CTRL_HIST_ALL(bg_lh_bucket(5000))), 1u);
    EXPECT_EQ(a.read(BG_TENANT_HIST(0 * BG_HIST_BUCKETS + bg_lh_bucket(5000))), 1u);
    // Nothing outstanding on egress 1 any more: a second completion there is a host bug.
    a.complete(IoCompletion{0, 0, 0, 1, 1000, 5000});
    EXPECT_EQ(a.read(BG_CTRL_BAD_COMPLETIONS), 1u);
    EXPECT_EQ(a.read(BG_CTRL_COMPLETIONS), 1u);

    // Buffers: 1 dedicated, 1 shared. The second I/O borrows (prefill), the third waits.
    a.write(BG_LB_DEPTH, 100);
    a.complete(IoCompletion{0, 0, 0, 0, 1000, 100});
    a.write(BG_BPOOL_DEDICATED(0), 1);
    a.write(BG_BPOOL_SHARED, 1);
    EXPECT_EQ(a.read(BG_BPOOL_DEDICATED(0)), 1u);
    EXPECT_FALSE(io(a, 0).prefill);
    EXPECT_TRUE(io(a, 0).prefill);
    EXPECT_EQ(io(a, 0).source, BG_SRC_DEFER_BUFFER);
    EXPECT_EQ(a.read(BG_BPOOL_HELD(0)), 1u);
    // A configuration write while I/O is in flight is ignored.
    a.write(BG_BPOOL_SHARED, 7);
    EXPECT_EQ(a.read(BG_BPOOL_SHARED), 1u);
}

TEST(Agent, TickHoldsCommitRefillsAndClears)
{
    Agent a(AgentParams{2, 1, 1, 16});
    flat_cost(a);
    write_vec(a, BG_TENANT_GRANT(0), 0, ios(1));
    write_vec(a, BG_TENANT_LEND_GRANT(0), 0, ios(1));
    commit(a);
    EXPECT_EQ(a.read(BG_CTRL_WINDOW_INDEX), 1u);
    EXPECT_EQ(io(a, 0).source, BG_SRC_OWN);
    EXPECT_EQ(io(a, 0).source, BG_SRC_DEFER);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    EXPECT_EQ(a.read(BG_CTRL_WINDOW), 1u);
    EXPECT_THROW(io(a, 0), std::logic_error);
    EXPECT_EQ(a.read(BG_TENANT_THROTTLE_N(0)), 1u);  // counters stand still while held
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    EXPECT_EQ(a.read(BG_CTRL_WINDOW), 0u);
    EXPECT_EQ(a.read(BG_TENANT_THROTTLE_N(0)), 0u);
    EXPECT_EQ(a.read(BG_CTRL_ACTIVE(0)), 0u);
    EXPECT_EQ(read_vec(a, BG_TENANT_REMAINING(0), 0).d[0], 1000u);
    EXPECT_EQ(read_vec(a, BG_TENANT_LENDABLE(0), 0).d[0], 1000u);
    EXPECT_EQ(a.read(BG_CTRL_DEFERRED), 1u);  // cumulative counters survive
    a.write(BG_CTRL_WINDOW, 3);               // not a command
    EXPECT_EQ(a.read(BG_CTRL_WINDOW_INDEX), 2u);
}

TEST(Agent, SameSeedSameDecisionsSeedReadsBackTheState)
{
    auto run = [](std::uint32_t seed) {
        Agent a(AgentParams{4, 1, 1, 16});
        flat_cost(a);
        a.write(BG_CTRL_SEED, seed);
        for (std::uint32_t t = 0; t < 4; t++) {
            write_vec(a, BG_TENANT_RES_BASE(0), t, ios(4));
            write_vec(a, BG_TENANT_GRANT(0), t, ios(t == 0 ? 1 : 8));
            write_vec(a, BG_TENANT_LEND_GRANT(0), t, ios(t == 0 ? 0 : 4));
            a.write(BG_TENANT_BURST_LIST(t), t);
        }
        a.write(BG_CTRL_BURST_N, 4);
        a.write(BG_LB_DEPTH, 4095);
        commit(a);
        std::vector<std::uint16_t> lenders;
        for (int i = 0; i < 4; i++)
            lenders.push_back(io(a, 0).lender);
        return std::pair{lenders, a.read(BG_CTRL_SEED)};
    };
    EXPECT_EQ(run(5), run(5));
    EXPECT_NE(run(5).second, run(6).second);
    Agent a(AgentParams{1, 1, 1, 16});
    a.write(BG_CTRL_SEED, 0);
    EXPECT_EQ(a.read(BG_CTRL_SEED), bg_lfsr_seed(0));
}

// The firmware loop drives a Device exactly as it drives the model behind it.
TEST(FirmwareWindow, BiosThroughTheDeviceInterface)
{
    auto dev = open_device("model", AgentParams{2, 1, 1, 16});
    bg_hal hal = dev->hal();
    std::vector<bg_bios_tenant> t(2);
    std::vector<bg_bios_usage> u(2);
    std::vector<std::uint16_t> sched(2), burst(2);
    for (auto &x : t) {
        x.res_base = ios(2);
        x.res_burst = ios(8);
    }
    bg_fw fw{};
    bg_fw_config cfg{};
    cfg.scheduler = BG_SCHED_BIOS;
    cfg.bios = bg_bios_params{ios(10), 0, BG_BIOS_ONE / 2, 2 * BG_BIOS_ONE, BG_BIOS_ONE / 16, BG_BIOS_OPT_PROJECT, 0};
    ASSERT_EQ(bg_fw_init(&fw, &cfg, t.data(), u.data(), sched.data(), burst.data(), 2, &hal), BG_FW_OK);
    ASSERT_TRUE(test::flat_cost(hal, kIo));
    dev->write32(BG_LB_DEPTH, 4095);

    // Tenant 0 wants 6 I/Os a window, tenant 1 is idle: BIOS grows tenant 0 into the unused
    // capacity within a few windows.
    std::vector<IoDecision> out;
    for (int w = 0; w < 6; w++) {
        std::vector<IoDesc> in(6);
        out.clear();
        dev->submit(in, out);
        ASSERT_EQ(out.size(), in.size());  // one decision per descriptor, never dropped
        std::vector<IoCompletion> done;
        for (const IoDecision &d : out)
            if (d.admitted())
                done.push_back(IoCompletion{d.tag, d.tenant, d.queue, d.egress, d.cost.d[0], 100});
        dev->complete(done);
        bg_fw_window(&fw, &hal);
    }
    int admitted = 0;
    for (const IoDecision &d : out)
        admitted += d.admitted();
    EXPECT_EQ(admitted, 6);
    EXPECT_EQ(dev->read32(BG_CTRL_BURST_N), 1u);
    EXPECT_EQ(dev->read32(BG_TENANT_BURST_LIST(0)), 0u);
    EXPECT_THROW(open_device("tape", AgentParams{}), std::invalid_argument);
}

TEST(FirmwareWindow, RejectsBadConfigurationsByName)
{
    Agent a(AgentParams{1, 1, 1, 16});
    bg_hal hal = a.hal();
    bg_bios_tenant t{};
    bg_bios_usage u{};
    std::uint16_t s = 0, b = 0;
    bg_fw fw{};
    bg_fw_config cfg{};
    cfg.scheduler = 7;
    EXPECT_EQ(bg_fw_init(&fw, &cfg, &t, &u, &s, &b, 1, &hal), BG_FW_E_SCHEDULER);
    cfg.scheduler = BG_SCHED_DUALBUCKET;
    EXPECT_EQ(bg_fw_init(&fw, &cfg, &t, &u, &s, &b, 1, &hal), BG_FW_E_DUALBUCKET);
    EXPECT_NE(fw.err_field, nullptr);
    cfg.scheduler = BG_SCHED_BIOS;
    t.res_base = ios(1);
    cfg.bios.total = ios(1);
    cfg.bios.reserved_q16 = BG_BIOS_ONE / 2;  // base 1 of total 1 with half reserved
    EXPECT_EQ(bg_fw_init(&fw, &cfg, &t, &u, &s, &b, 1, &hal), BG_BIOS_E_BURST);  // burst 0 < base
    t.res_burst = ios(1);
    EXPECT_EQ(bg_fw_init(&fw, &cfg, &t, &u, &s, &b, 1, &hal), BG_BIOS_E_OVERSUB);
    cfg.scheduler = BG_SCHED_WILD;  // only BIOS reserves
    EXPECT_EQ(bg_fw_init(&fw, &cfg, &t, &u, &s, &b, 1, &hal), BG_FW_OK);
}

}  // namespace
