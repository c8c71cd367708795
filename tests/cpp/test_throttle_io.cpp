// Agent::throttle_io (THROTTLE_IO alone, the decision the benchmark's ThrottleIoDecision rows
// time) against the whole datapath: fed the same I/Os, with the egress queues and buffers
// never full, it must make every decision io_costed makes and leave every register of the
// admission state the same, under each scheduler.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>

#include "agent_fixture.hpp"
#include "burstgate/model/admission.hpp"
#include "burstgate/model/agent.hpp"
#include "burstgate/regs.h"

namespace {

using namespace bg;
using test::commit;
using test::read_pool;
using test::read_vec;
using test::write_pool;
using test::write_vec;

constexpr std::uint32_t kTenants = 12;

bg_vec draw_vec(std::mt19937 &rng, std::uint32_t hi)
{
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = std::uniform_int_distribution<std::uint32_t>(0, hi)(rng);
    return v;
}

// One window's grants, lendable surplus, pool and global budget, written to both agents.
void program_window(Agent &a, Agent &b, std::mt19937 &rng, std::uint32_t burst_n)
{
    const std::mt19937 start = rng;
    for (Agent *x : {&a, &b}) {
        std::mt19937 &r = rng;
        r = start;  // the same draws for both
        for (std::uint32_t t = 0; t < kTenants; t++) {
            write_vec(*x, BG_TENANT_RES_BASE(0), t, draw_vec(r, 6000));
            write_vec(*x, BG_TENANT_GRANT(0), t, draw_vec(r, 8000));
            write_vec(*x, BG_TENANT_LEND_GRANT(0), t, draw_vec(r, 4000));
            x->write(BG_TENANT_BURST_LIST(t), r() % (kTenants + 2));  // some name no tenant
        }
        x->write(BG_CTRL_BURST_N, burst_n);
        write_pool(*x, BG_CTRL_POOL(0), draw_vec(r, 20000));
        write_pool(*x, BG_CTRL_GLOBAL(0), draw_vec(r, 60000));
        commit(*x);
    }
}

void expect_same_state(const Agent &a, const Agent &b, std::uint32_t window)
{
    for (std::uint32_t t = 0; t < kTenants; t++) {
        for (std::uint32_t arr : {BG_TENANT_REMAINING(0), BG_TENANT_LENDABLE(0), BG_TENANT_USAGE(0),
                                  BG_TENANT_THROTTLE(0)}) {
            const bg_vec va = read_vec(a, arr, t), vb = read_vec(b, arr, t);
            for (unsigned d = 0; d < BG_COST_DIMS; d++)
                ASSERT_EQ(va.d[d], vb.d[d]) << "window " << window << " tenant " << t << " array 0x" << std::hex
                                            << arr << " dim " << d;
        }
        ASSERT_EQ(a.read(BG_TENANT_THROTTLE_N(t)), b.read(BG_TENANT_THROTTLE_N(t))) << "tenant " << t;
        ASSERT_EQ(a.read(BG_TENANT_SPILL_N(t)), b.read(BG_TENANT_SPILL_N(t))) << "tenant " << t;
    }
    for (std::uint32_t arr : {BG_CTRL_POOL(0), BG_CTRL_GLOBAL(0)}) {
        const bg_vec va = read_pool(a, arr), vb = read_pool(b, arr);
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            ASSERT_EQ(va.d[d], vb.d[d]) << "window " << window << " pool/global 0x" << std::hex << arr;
    }
    for (std::uint32_t reg : {BG_CTRL_SEED, BG_CTRL_IOS, BG_CTRL_DEFERRED, BG_CTRL_POOL_DRAWN, BG_CTRL_ACTIVE(0)})
        ASSERT_EQ(a.read(reg), b.read(reg)) << "window " << window << " register 0x" << std::hex << reg;
}

class ThrottleIo : public ::testing::TestWithParam<std::uint32_t> {};

// Catches a throttle_io that drifts from io_costed: a missed or doubled LFSR draw (the lender
// picks and the SEED register diverge), a charge to the wrong budget or a missing usage,
// spill or throttle count, a deferral not counted, a hot I/O allowed the pool.
TEST_P(ThrottleIo, SameDecisionsAndStateAsTheDatapath)
{
    const std::uint32_t sched = GetParam();
    const AgentParams p{kTenants, 1, 1, 4};
    Agent a(p), b(p);
    for (Agent *x : {&a, &b}) {
        x->write(BG_CTRL_SCHEDULER, sched);
        x->write(BG_CTRL_SEED, 0x1234567u + sched);
        x->write(BG_LB_DEPTH, BG_LB_DEPTH_MASK);
        x->write(BG_SEGMON_HOT_THRESHOLD, 3);  // 16 segments, ~2 I/Os each per window: some hot
    }
    std::mt19937 rng(77 + sched);
    std::uint32_t admitted = 0, deferred = 0, borrowed = 0, reserved = 0, hot = 0;
    for (std::uint32_t w = 0; w < 12; w++) {
        program_window(a, b, rng, w % 4 == 3 ? 0u : 1u + rng() % kTenants);
        for (int i = 0; i < 40; i++) {
            IoDesc d;
            d.tenant = static_cast<std::uint16_t>(rng() % kTenants);
            d.segment = static_cast<std::uint16_t>(rng() % 16);
            const bg_vec cost = draw_vec(rng, 900);
            const IoDecision x = a.io_costed(d, cost);
            ASSERT_LT(x.source, BG_SRC_DEFER_EGRESS) << "the egress and buffers must never defer here";
            if (x.admitted())
                a.complete(IoCompletion{0, x.tenant, x.queue, x.egress, x.cost.d[BG_DIM_CPU], 0});
            const IoDecision y = b.throttle_io(d.tenant, cost, x.hot);
            ASSERT_EQ(y.source, x.source) << "window " << w << " I/O " << i;
            ASSERT_EQ(y.lender, x.lender) << "window " << w << " I/O " << i;
            admitted += x.admitted();
            deferred += !x.admitted();
            borrowed += x.source == BG_SRC_BORROW;
            reserved += x.source == BG_SRC_RESERVED;
            hot += x.hot;
        }
        expect_same_state(a, b, w);
    }
    // The comparison covered every path the scheduler has.
    EXPECT_GT(admitted, 0u);
    EXPECT_GT(deferred, 0u);
    EXPECT_GT(hot, 0u);
    if (sched == BG_SCHED_BIOS) {
        EXPECT_GT(borrowed, 0u);
    }
    if (sched == BG_SCHED_BIOS || sched == BG_SCHED_DUALBUCKET) {
        EXPECT_GT(reserved, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, ThrottleIo,
                         ::testing::Values(BG_SCHED_BIOS, BG_SCHED_BASE, BG_SCHED_WILD, BG_SCHED_DUALBUCKET));

// Admission::throttle_io against Admission::io over firmware-driven windows (RUN_SCHEDULING
// between them, bursts, credit tenants, idle tenants dropped and woken): catches a
// throttle_io whose state diverges from io()'s (the next window's grants, burst list and
// pool would differ), or totals not counted as io() counts them.
TEST(ThrottleIoAdmission, SameDecisionsGrantsAndTotalsAsIo)
{
    for (Scheduler s : {Scheduler::Bios, Scheduler::Base, Scheduler::Wild}) {
        AdmissionConfig cfg;
        cfg.scheduler = s;
        cfg.seed = 99;
        cfg.total = bg_vec{{100000, 400000, 400000, 400000}};
        for (std::uint32_t t = 0; t < 10; t++) {
            const std::uint32_t b = 1000 * (1 + t % 4);
            cfg.tenants.push_back(TenantSpec{bg_vec{{b, 4 * b, 4 * b, 4 * b}}, bg_vec{{4 * b, 16 * b, 16 * b, 16 * b}},
                                             t % 2 == 1, bg_vec{{b, b, b, b}}, bg_vec{{8 * b, 32 * b, 32 * b, 32 * b}}});
        }
        Admission a(cfg), b(cfg);
        std::mt19937 rng(5);
        std::uint32_t borrowed = 0, deferred = 0;
        for (std::uint32_t w = 0; w < 30; w++) {
            const std::uint32_t busy = rng() % 10;  // tenants 0..busy offer I/Os this window
            for (int i = 0; i < 120; i++) {
                const std::uint32_t t = rng() % (busy + 1);
                const bg_vec c = draw_vec(rng, 700);
                const Decision x = a.io(t, c), y = b.throttle_io(t, c);
                ASSERT_EQ(static_cast<int>(x.source), static_cast<int>(y.source)) << "window " << w << " I/O " << i;
                ASSERT_EQ(x.lender, y.lender) << "window " << w << " I/O " << i;
                borrowed += x.source == Source::Borrow;
                deferred += x.source == Source::Deferred;
            }
            a.window_tick();
            b.window_tick();
            for (std::uint32_t t = 0; t < a.tenants(); t++) {
                for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                    ASSERT_EQ(a.grant(t).d[d], b.grant(t).d[d]) << "window " << w << " tenant " << t;
                    ASSERT_EQ(a.lendable(t).d[d], b.lendable(t).d[d]) << "window " << w << " tenant " << t;
                }
                const TenantTotals &ta = a.totals(t), &tb = b.totals(t);
                ASSERT_EQ(ta.offered, tb.offered);
                ASSERT_EQ(ta.own, tb.own);
                ASSERT_EQ(ta.borrowed, tb.borrowed);
                ASSERT_EQ(ta.reserved, tb.reserved);
                ASSERT_EQ(ta.deferred, tb.deferred);
                ASSERT_EQ(ta.lent, tb.lent);
            }
            for (unsigned d = 0; d < BG_COST_DIMS; d++)
                ASSERT_EQ(a.pool().d[d], b.pool().d[d]) << "window " << w;
            ASSERT_EQ(a.lfsr_state(), b.lfsr_state());
            ASSERT_EQ(a.scheduled(), b.scheduled());
        }
        EXPECT_GT(deferred, 0u);
        if (s == Scheduler::Bios) {
            EXPECT_GT(borrowed, 0u);
        }
    }
}

TEST(ThrottleIoChecks, SameErrorsAsTheDatapath)
{
    Agent a(AgentParams{2, 1, 1, 4});
    EXPECT_THROW(a.throttle_io(2, bg_vec{}, false), std::invalid_argument);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    EXPECT_THROW(a.throttle_io(0, bg_vec{}, false), std::logic_error);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    EXPECT_EQ(a.throttle_io(0, bg_vec{}, false).source, BG_SRC_OWN);  // a zero cost fits any grant
}

}  // namespace
