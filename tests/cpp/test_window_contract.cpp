// The firmware's contract mechanisms (window.h, docs/contracts.md), over the model agent with a
// flat cost table: the grant carry pays out fractions of an I/O per window, and the composed
// dual-bucket holds a tenant to its contract while a neighbour bursts from the main bucket.
#include <gtest/gtest.h>

#include <vector>

#include "agent_fixture.hpp"
#include "burstgate/host/device.hpp"
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
    bg_fw fw{};

    // n tenants, each with base = burst = `contract` (per window) but tenant 1's burst
    // `burst1`; carry on or off.
    Rig(std::uint32_t n, std::uint32_t scheduler, const bg_vec &contract, const bg_vec &burst1, bool carry_on,
        bool composed = false)
        : dev(open_device("model", AgentParams{n, 1, 1, 16})), hal(dev->hal()), t(n), u(n), sched(n), burst(n),
          carry(n, kIo), granted(n)
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
        const auto n = static_cast<std::uint32_t>(t.size());
        std::vector<int> admitted(n, 0);
        for (int w = 0; w < windows; w++) {
            std::vector<IoDesc> in;
            for (std::uint32_t i = 0; i < n; i++)
                for (int k = 0; k < offer; k++) {
                    IoDesc d;
                    d.tenant = static_cast<std::uint16_t>(i);
                    d.segment = static_cast<std::uint16_t>(k % 8);
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

}  // namespace
}  // namespace bg
