// The firmware's contract mechanisms (window.h, docs/contracts.md), over the model agent with a
// flat cost table: the grant carry pays out fractions of an I/O per window, and the composed
// dual-bucket holds a tenant to its contract while a neighbour bursts from the main bucket.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "agent_fixture.hpp"
#include "burstgate/host/device.hpp"
#include "burstgate/costadj.h"
#include "burstgate/window.h"

namespace bg {
namespace {

constexpr bg_vec kIo{{1000, 4096, 4096, 4096}};
bg_vec ios(std::uint32_t n) { return bg_credit_from_ios(n, &kIo); }
bg_vec scaled(const bg_vec &v, std::uint32_t num, std::uint32_t den)
{
    bg_vec r;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        r.d[d] = v.d[d] * num / den;
    return r;
}

struct Rig {
    std::unique_ptr<Device> dev;
    bg_hal hal{};
    std::vector<bg_bios_tenant> t;
    std::vector<bg_bios_usage> u;
    std::vector<std::uint16_t> sched, burst;
    std::vector<bg_vec> carry, granted;
    std::vector<std::uint64_t> count_q16;  // the IOPS cap, off when empty
    std::vector<std::uint64_t> count_have;
    bg_fw fw{};

    // n tenants, each with base = burst = `contract` (per window) but tenant 1's burst
    // `burst1`; carry on or off.
    Rig(std::uint32_t n, std::uint32_t scheduler, const bg_vec &contract, const bg_vec &burst1, bool carry_on,
        bool composed = false, std::vector<std::uint64_t> count = {}, std::uint32_t costadj = 0)
        : dev(open_device("model", AgentParams{n, 1, 1, 16})), hal(dev->hal()), t(n), u(n), sched(n), burst(n),
          carry(n, kIo), granted(n), count_q16(std::move(count)), count_have(count_q16.size())
    {
        for (std::uint32_t i = 0; i < n; i++) {
            t[i].res_base = contract;
            t[i].res_burst = i == 1 ? burst1 : contract;
        }
        bg_fw_config cfg{};
        cfg.scheduler = scheduler;
        cfg.bios = bg_bios_params{ios(100), 0, BG_BIOS_ONE / 2, 2 * BG_BIOS_ONE, BG_BIOS_ONE / 16, 0, 0};
        if (carry_on) {
            cfg.carry_max = carry.data();
            cfg.granted = granted.data();
        }
        if (!count_q16.empty()) {
            cfg.count_q16 = count_q16.data();
            cfg.count_have = count_have.data();
            cfg.count_header = kIo.d[BG_DIM_INGRESS] / 2;  // flat table: 4096 + 4096 - 4096 per I/O
        }
        // Every completion reports 100 ns of SA delay (run()): above this target, so with the
        // adjustment on every window with 16 completions raises the factor.
        cfg.costadj = costadj;
        bg_ca_default_config(&cfg.ca, 50);
        if (scheduler == BG_SCHED_DUALBUCKET) {
            cfg.db.main_size = ios(50);
            cfg.db.capacity = ios(100);
            cfg.db.cheque_share_q16 = BG_DB_ONE / 5;
            cfg.db.alpha = 8000;
            cfg.db.pct_ppm = 950000;
            cfg.db.headroom_mbps = 330;
            cfg.db.mu_mbps = 24000;
            cfg.db.interval_us = 1000;
            cfg.db.min_samples = 16;
            cfg.db.hist_mode = BG_LH_INTERP;
            cfg.db_contracts = composed ? 1u : 0u;
        }
        EXPECT_EQ(bg_fw_init(&fw, &cfg, t.data(), u.data(), sched.data(), burst.data(), n, &hal), BG_FW_OK);
        EXPECT_TRUE(test::flat_cost(hal, kIo));
        dev->write32(BG_LB_DEPTH, 4095);
    }

    // `windows` windows in which every tenant offers `offer` I/Os; admitted I/Os per tenant.
    std::vector<int> run(int windows, int offer)
    {
        return run(windows, [offer](int, std::uint32_t) { return offer; });
    }

    // The same with offer(window, tenant) I/Os, the k-th of them shaped by `shape` (its
    // size and direction; the flat table charges every I/O alike).
    std::vector<int> run(int windows, const std::function<int(int, std::uint32_t)> &offer,
                         const std::function<void(IoDesc &, int)> &shape = {})
    {
        const auto n = static_cast<std::uint32_t>(t.size());
        std::vector<int> admitted(n, 0);
        for (int w = 0; w < windows; w++) {
            std::vector<IoDesc> in;
            for (std::uint32_t i = 0; i < n; i++)
                for (int k = 0; k < offer(w, i); k++) {
                    IoDesc d;
                    d.tenant = static_cast<std::uint16_t>(i);
                    d.segment = static_cast<std::uint16_t>(k % 8);
                    if (shape)
                        shape(d, k);
                    in.push_back(d);
                }
            std::vector<IoDecision> out;
            dev->submit(in, out);
            std::vector<IoCompletion> done;
            for (const IoDecision &d : out)
                if (d.admitted()) {
                    admitted[d.tenant]++;
                    done.push_back(IoCompletion{d.tag, d.tenant, d.queue, d.egress, d.cost.d[0], 100});
                }
            dev->complete(done);
            bg_fw_window(&fw, &hal);
        }
        return admitted;
    }
};

// A base of 2.5 I/Os per window admits 2 a window without the carry (the datapath refills a
// grant without carry-over) and 2.5 on average with it, under bios, base and wild alike.
TEST(WindowContract, CarryPaysFractionalIosPerWindow)
{
    const bg_vec contract = scaled(kIo, 5, 2);
    for (std::uint32_t sched : {BG_SCHED_BIOS, BG_SCHED_BASE, BG_SCHED_WILD}) {
        Rig without(2, sched, contract, contract, false);
        EXPECT_EQ(without.run(100, 10)[0], 200) << "scheduler " << sched;
        Rig with(2, sched, contract, contract, true);
        const int got = with.run(100, 10)[0];
        EXPECT_GE(got, 249) << "scheduler " << sched;
        EXPECT_LE(got, 251) << "scheduler " << sched;
    }
}

// A tenant that offers its base on average but unevenly -- 2 I/Os in one window, 4 in the next
// (base 3), as a closed loop of low depth whose round trip is near the window does -- beside a
// neighbour bursting into everything lent: BIOS decays the allocation of a window in which
// nothing of its was deferred (line 7, alpha 0.5) and lends the rest. With only the unspent
// grant carried it got 2550 of 3000, the decayed part of its base neither spent
// nor carried; with the unspent base carried too (window_bios) it gets its base. Its bucket
// (carry_max) is deep, as a small-I/O tenant's is (one 1 MiB I/O).
TEST(WindowContract, CarryKeepsTheBaseBiosLendsFromAnUnevenTenant)
{
    Rig r(2, BG_SCHED_BIOS, ios(3), ios(90), true);
    r.carry[0] = ios(6);
    const std::vector<int> got = r.run(1000, [](int w, std::uint32_t i) { return i ? 200 : w % 2 ? 4 : 2; });
    EXPECT_GE(got[0], 3000 - 6);
    EXPECT_LE(got[0], 3000);
    EXPECT_GT(got[1], 80 * 1000);  // the neighbour still bursts
}

// The carry never lets a tenant that spends its whole grant exceed it: a tenant asking for
// more than its burst every window gets its burst, no more.
TEST(WindowContract, CarryDoesNotLiftABusyTenantAboveItsGrant)
{
    Rig r(2, BG_SCHED_WILD, ios(3), ios(3), true);
    EXPECT_EQ(r.run(50, 10)[0], 150);
}

// Under dualbucket as Still Water prints it, tenant 0 (contract: 2 I/Os a window) takes what the
// shared main bucket gives; composed with the contracts it gets 2 a window while tenant 1
// still bursts from the main bucket.
TEST(WindowContract, ComposedDualBucketHoldsATenantToItsContract)
{
    Rig seg(2, BG_SCHED_DUALBUCKET, ios(2), ios(40), true, false);
    const std::vector<int> a = seg.run(50, 30);
    EXPECT_GT(a[0], 10 * 50);
    Rig comp(2, BG_SCHED_DUALBUCKET, ios(2), ios(40), true, true);
    const std::vector<int> b = comp.run(50, 30);
    EXPECT_GE(b[0], 2 * 50 - 2);
    EXPECT_LE(b[0], 2 * 50 + 2);
    EXPECT_GT(b[1], 20 * 50);
}

// The delay-based adjustment with the SA delay above target every window: its factor climbs to
// its ceiling. As BurstCBS §5.3 prints it (COST.FACTOR) every I/O then costs that many times its
// estimate, and tenant 0, offering its base of 3 I/Os a window, gets a fraction of it beside a
// bursting neighbour. BG_FW_COSTADJ_BURST leaves the cost at 1.0 and divides only the neighbour's grant
// above its base (and the surplus it lends): tenant 0 gets its base, the neighbour its base
// and an eighth of the rest. Catches the BURST mode writing COST.FACTOR, scaling a base, or
// not scaling the grant above the base (the neighbour would keep about 90 a window).
TEST(WindowContract, BurstAdjustmentCutsTheBurstNotTheBase)
{
    const int windows = 300;
    Rig cost(2, BG_SCHED_BIOS, ios(3), ios(90), true, false, {}, BG_FW_COSTADJ_COST);
    const std::vector<int> c = cost.run(windows, [](int, std::uint32_t i) { return i ? 200 : 3; });
    // It stops near 5.8, where the window's admissions fall below the 16 samples a move needs.
    EXPECT_GT(cost.dev->read32(BG_COST_FACTOR(BG_DIM_CPU)), 4u * BG_CA_ONE);
    EXPECT_LT(c[0], 3 * windows / 2);

    Rig burst(2, BG_SCHED_BIOS, ios(3), ios(90), true, false, {}, BG_FW_COSTADJ_BURST);
    const std::vector<int> b = burst.run(windows, [](int, std::uint32_t i) { return i ? 200 : 3; });
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        EXPECT_EQ(burst.dev->read32(BG_COST_FACTOR(d)), BG_CA_ONE) << d;
        EXPECT_EQ(burst.fw.ca.factor[d], 8u * BG_CA_ONE) << d;
    }
    EXPECT_GE(b[0], 3 * windows - 3);
    // Settled (the factor is 8 after ~34 windows): 3 + (the rest of 100) / 8 a window at most.
    const std::vector<int> late = burst.run(100, [](int, std::uint32_t i) { return i ? 200 : 3; });
    EXPECT_EQ(late[0], 300);
    EXPECT_GE(late[1], 3 * 100);
    EXPECT_LE(late[1], (3 + 97 / 8 + 1) * 100);

    Rig plain(2, BG_SCHED_BIOS, ios(3), ios(90), true);
    EXPECT_GT(plain.run(100, [](int, std::uint32_t i) { return i ? 200 : 3; })[1], 80 * 100);
}

// The registers themselves, without the carry (so a grant is exactly what the window wrote):
// under BG_FW_COSTADJ_BURST the bursting tenant's GRANT is its base plus floor(surplus / f) and
// its LEND_GRANT floor(lend / f), f the adjustment's factor and alloc, lend BIOS's own; the
// within-base tenant's GRANT is BIOS's allocation untouched. Catches dividing the whole grant
// (base included), leaving the lend undivided (a borrower could then reach the lender's base),
// or zeroing it.
TEST(WindowContract, BurstAdjustmentWritesBasePlusTheDividedSurplus)
{
    Rig r(2, BG_SCHED_BIOS, ios(3), ios(90), false, false, {}, BG_FW_COSTADJ_BURST);
    r.run(60, [](int, std::uint32_t i) { return i ? 200 : 3; });
    const std::uint32_t f = r.fw.ca.factor[BG_DIM_CPU];
    ASSERT_GT(f, 4u * BG_CA_ONE);
    bool surplus = false, lends = false;
    for (std::uint32_t i = 0; i < 2; i++)
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            const bg_bios_tenant &t = r.t[i];
            const std::uint64_t above = t.alloc.d[d] > t.res_base.d[d] ? t.alloc.d[d] - t.res_base.d[d] : 0;
            const std::uint64_t want = std::min(t.alloc.d[d], t.res_base.d[d]) + (above << 12) / f;
            EXPECT_EQ(r.dev->read32(BG_TENANT_GRANT(i * BG_COST_DIMS + d)), want) << i << " " << d;
            EXPECT_EQ(r.dev->read32(BG_TENANT_LEND_GRANT(i * BG_COST_DIMS + d)),
                      (std::uint64_t{t.lend.d[d]} << 12) / f) << i << " " << d;
            surplus |= i == 1 && above > 0;
            lends |= i == 1 && t.lend.d[d] > 0;
        }
    EXPECT_TRUE(surplus && lends);  // the neighbour is bursting: the check is not vacuous
}

// The exact IOPS cap (TENANT.COUNT_GRANT): tenant 0's cost vector buys 10 I/Os a window, but
// its IOPS figure is 2.288 I/Os a window (2288 IOPS in 1 ms windows). Offering 10 a window it
// gets 2288 in 1000 windows -- not 2000 (the fraction carried), not 10000 (the cost vector) --
// under every scheduler, including composed dual-bucket, where the main bucket would pay more;
// offering 2 a window, within the cap, it is never deferred.
TEST(WindowContract, CountCapIsExactWithItsFractionCarried)
{
    const std::uint64_t cap = 2288ull * 65536 / 1000;  // 2.288 I/Os in 1/65536, rounded down
    struct Case {
        std::uint32_t sched;
        bool composed;
    };
    for (const Case c : {Case{BG_SCHED_BIOS, false}, Case{BG_SCHED_BASE, false}, Case{BG_SCHED_WILD, false},
                         Case{BG_SCHED_DUALBUCKET, true}}) {
        Rig capped(2, c.sched, ios(10), ios(40), true, c.composed, {cap, UINT64_MAX});
        const int got = capped.run(1000, 10)[0];
        EXPECT_GE(got, 2287) << "scheduler " << c.sched;
        EXPECT_LE(got, 2288) << "scheduler " << c.sched;
        Rig within(2, c.sched, ios(10), ios(40), true, c.composed, {cap, UINT64_MAX});
        EXPECT_EQ(within.run(1000, 2)[0], 2000) << "scheduler " << c.sched;
        EXPECT_EQ(within.dev->read32(BG_TENANT_THROTTLE_N(0)), 0u) << "scheduler " << c.sched;
        Rig plain(2, c.sched, ios(10), ios(40), true, c.composed);
        EXPECT_GT(plain.run(1000, 10)[0], 5000) << "scheduler " << c.sched;
    }
}

// The count a window leaves unused carries: capped at 5 I/Os a window (its cost vector buys 10),
// a tenant offering 10 every other window and nothing in between gets 10 in each busy window
// (5 + the 5 the idle one left), 5 a window on average -- with only the fraction carried it
// got 5 in each busy window, half its IOPS. Under every scheduler.
TEST(WindowContract, CountCapCarriesTheCountAWindowLeaves)
{
    const std::uint64_t cap = 5ull << 16;
    for (const std::uint32_t sched : {BG_SCHED_BIOS, BG_SCHED_BASE, BG_SCHED_WILD}) {
        Rig r(2, sched, ios(10), ios(40), true, false, {cap, UINT64_MAX});
        const int got = r.run(1000, [](int w, std::uint32_t) { return w % 2 ? 0 : 10; })[0];
        EXPECT_EQ(got, 5 + 499 * 10) << "scheduler " << sched;  // window 0 has nothing carried
    }
}

// The carry is bounded: idle for 20 windows, then asking for 100 a window, a tenant capped at
// 5 a window gets 5 + 5 (count_carry_max NULL: one window's worth) in its first busy window
// and 5 in each after; with count_carry_max 12, 5 + 12. Over the k busy windows: 5 k + the bound.
TEST(WindowContract, CountCarryIsBounded)
{
    const std::uint64_t cap = 5ull << 16;
    for (const std::uint64_t most : {std::uint64_t{0}, std::uint64_t{12} << 16}) {
        Rig r(2, BG_SCHED_BASE, ios(40), ios(40), true, false, {cap, UINT64_MAX});
        std::vector<std::uint64_t> carry_max{most, most};
        if (most)
            r.fw.cfg.count_carry_max = carry_max.data();
        const int extra = most ? 12 : 5;
        EXPECT_EQ(r.run(20, 0)[0], 0);
        EXPECT_EQ(r.run(1, 100)[0], 5 + extra);
        EXPECT_EQ(r.run(30, 100)[0], 5 * 30);
    }
}

// The count comes from USAGE through the cost table's header bytes: with a linear table
// (bg_cost_load_linear, 128-byte headers), reads and writes of 512 B to 4 KiB (odd sizes
// included) and the link and limiter factors at 1.0, 1.5 (128 x 1.5 whole: exact) and
// 4097/4096 and 1.22 (not whole: each I/O charges 2 x 128 or 2 x 156, plus 0 or 1, and fewer than
// 256 I/Os a window are still counted exactly), a tenant capped at 7.5 a window offering 3 and
// 20 by turns gets 3 + 12 (7.5 + the 4.5 the quiet window left) per two windows. A wrong header
// (count_header 64: twice the count read) carries 1.5, not 4.5.
TEST(WindowContract, CountFromUsageHoldsForReadsWritesSizesAndFactors)
{
    const std::uint64_t cap = 15ull << 15;  // 7.5 I/Os a window
    const bg_linear_profile prof{100, 0};
    auto shape = [](IoDesc &d, int k) {
        static constexpr std::uint32_t kSizes[] = {512, 1000, 4096, 3000};
        d.size = kSizes[k % 4];
        d.write = (k / 4) % 2 != 0;
    };
    auto offer = [](int w, std::uint32_t) { return w % 2 ? 3 : 20; };
    for (const std::uint32_t factor : {4096u, 6144u, 4097u, 5000u}) {
        for (const std::uint32_t header : {128u, 64u}) {
            Rig r(2, BG_SCHED_BIOS, ios(40), ios(40), true, false, {cap, UINT64_MAX});
            ASSERT_EQ(bg_cost_load_linear(&r.hal, 0, &prof, &prof, 128), BG_COST_OK);
            for (unsigned d = BG_DIM_INGRESS; d <= BG_DIM_SWLIMIT; d++)
                ASSERT_EQ(bg_cost_set_factor(&r.hal, d, factor), BG_COST_OK);
            r.fw.cfg.count_header = header;
            const int got = r.run(400, offer, shape)[0];
            if (header == 128) {
                EXPECT_GE(got, 15 * 200 - 8) << "factor " << factor;  // the first window carries nothing
                EXPECT_LE(got, 15 * 200) << "factor " << factor;
            } else {
                EXPECT_LT(got, 13 * 200) << "factor " << factor;
            }
        }
    }
}

// The model's gate itself, register by register: COUNT_GRANT I/Os a window from any source
// (here a BIOS lender: the tenant has no grant of its own), the rest deferred and counted, COMMIT restarting the count.
TEST(WindowContract, CountGateInTheAgent)
{
    Agent a(AgentParams{2, 1, 1, 16});
    const bg_hal hal = a.hal();
    ASSERT_TRUE(test::flat_cost(hal, kIo));
    a.write(BG_LB_DEPTH, 4095);
    EXPECT_EQ(a.read(BG_TENANT_COUNT_GRANT(0)), BG_TENANT_COUNT_GRANT_RESET);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    a.write(BG_CTRL_SCHEDULER, BG_SCHED_BIOS);
    test::write_vec(a, BG_TENANT_RES_BASE(0), 0, ios(100));
    test::write_vec(a, BG_TENANT_GRANT(0), 0, bg_vec{});      // nothing of its own:
    test::write_vec(a, BG_TENANT_GRANT(0), 1, ios(100));
    test::write_vec(a, BG_TENANT_LEND_GRANT(0), 1, ios(100));  // it borrows from tenant 1
    a.write(BG_TENANT_BURST_LIST(0), 1);
    a.write(BG_CTRL_BURST_N, 1);
    test::write_pool(a, BG_CTRL_POOL(0), ios(100));
    a.write(BG_TENANT_COUNT_GRANT(0), 5);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    for (int w = 0; w < 2; w++) {
        int admitted = 0;
        for (int k = 0; k < 12; k++) {
            IoDesc d;
            d.tenant = 0;
            const IoDecision x = a.io(d);
            if (x.admitted()) {
                admitted++;
                EXPECT_EQ(x.source, BG_SRC_BORROW);
                a.complete_admitted(x, 0);
            } else {
                EXPECT_EQ(x.source, BG_SRC_DEFER);
            }
        }
        EXPECT_EQ(admitted, 5) << "window " << w;
        EXPECT_EQ(a.read(BG_TENANT_THROTTLE_N(0)), 7u) << "window " << w;
        EXPECT_EQ(a.read(BG_TENANT_SPILL_N(0)), 5u) << "window " << w;
        test::commit(a);
    }
}

}  // namespace
}  // namespace bg
