// Per-I/O admission (THROTTLE_IO) for bios, base and wild against the paper's examples
// (BurstCBS Fig. 13, 14, 24), credit burst, and randomized properties.
//
// Mapping of the paper's IOPS examples: one "IOPS" in Fig. 13/14 is one I/O per window, and
// every I/O costs kIo = {1000 ns CPU, 4 KiB ingress, 4 KiB egress, 4 KiB swlimit}. Every
// provisioning and capacity below is a whole multiple of kIo (ios(n)), so all four dimensions
// bind at the same I/O count and admitted I/Os per window read directly as the paper's IOPS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "burstgate/lfsr.h"
#include "burstgate/model/admission.hpp"

namespace {

using namespace bg;

constexpr bg_vec kIo{{1000, 4096, 4096, 4096}};

bg_vec ios(std::uint32_t n) { return bg_credit_from_ios(n, &kIo); }

struct Rng {  // xorshift64: the tests' own randomness, independent of the admission LFSR
    std::uint64_t s;
    std::uint32_t operator()(std::uint32_t n)
    {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return n ? static_cast<std::uint32_t>(s % n) : 0u;
    }
};

template <class T>
void shuffle(std::vector<T> &v, Rng &rng)
{
    for (std::size_t k = v.size(); k > 1; k--)
        std::swap(v[k - 1], v[rng(static_cast<std::uint32_t>(k))]);
}

struct Offer {
    std::uint32_t tenant;
    bg_vec cost;
    std::uint64_t id;
    std::uint64_t arrived;  // window of the first offer
};

Decision oracle(const Admission &a, std::uint32_t k, const bg_vec &c);

// Offers I/Os window by window: last window's deferred I/Os first (in deferral order), then
// the window's new arrivals in the order given; `on` sees each decision as it is made.
struct Driver {
    Admission &a;
    std::vector<Offer> retry;
    std::function<void(const Offer &, const Decision &)> on = [](const Offer &, const Decision &) {};
    std::uint64_t next_id = 0;
    std::vector<std::uint32_t> admitted_times;  // per id: 0 = not yet, else admissions
    std::vector<std::uint64_t> admitted_now;    // per tenant, this window
    bg_vec admitted_cost{};                     // this window, all tenants
    bool check_oracle = false;                  // compare every decision with oracle()

    explicit Driver(Admission &adm) : a(adm), admitted_now(adm.tenants()) {}

    Offer make(std::uint32_t tenant, bg_vec cost)
    {
        admitted_times.push_back(0);
        return Offer{tenant, cost, next_id++, a.window()};
    }
    void add(std::vector<Offer> &v, std::uint32_t tenant, std::uint32_t n, bg_vec cost = kIo)
    {
        while (n--)
            v.push_back(make(tenant, cost));
    }

    void window(const std::vector<Offer> &fresh)
    {
        std::vector<Offer> offers = std::exchange(retry, {});
        offers.insert(offers.end(), fresh.begin(), fresh.end());
        admitted_now.assign(a.tenants(), 0);
        admitted_cost = bg_vec{};
        for (Offer &o : offers) {
            const Decision want = check_oracle ? oracle(a, o.tenant, o.cost) : Decision{};
            const Decision d = a.io(o.tenant, o.cost);
            if (check_oracle) {
                EXPECT_EQ(d.source, want.source) << "I/O " << o.id;
                EXPECT_EQ(d.lender, want.lender) << "I/O " << o.id;
            }
            on(o, d);
            if (d.admitted()) {
                admitted_times[o.id]++;
                admitted_now[o.tenant]++;
                bg_vec_add_sat(&admitted_cost, &o.cost);
            } else {
                retry.push_back(o);
            }
        }
    }
};

AdmissionConfig paper_three_vms(Scheduler s, std::uint32_t scale)
{
    AdmissionConfig c;
    c.scheduler = s;
    c.total = ios(3 * scale);
    c.reserved_q16 = 0;  // sum(base) is the whole capacity in the paper's example
    c.tenants.assign(3, TenantSpec{ios(scale), ios(3 * scale)});
    return c;
}

// Fig. 14: VM1 at base (1 I/O per window), VM2 bursting to 3 with its I/Os first, VM3 idle.
// "late": not admitted in the window it arrived, i.e. delayed by at least one window.
struct Fig14 {
    std::uint64_t vm1_io = 0, vm1_deferred = 0, vm1_late = 0, vm1_own = 0;
};
Fig14 run_fig14(Scheduler s, std::uint32_t options = 0)
{
    AdmissionConfig c = paper_three_vms(s, 1);
    c.options = options;
    Admission a(c);
    Driver drv(a);
    drv.check_oracle = s == Scheduler::Bios;
    Fig14 r;
    drv.on = [&](const Offer &o, const Decision &d) {
        if (o.tenant == 0) {
            r.vm1_deferred += !d.admitted();
            r.vm1_late += !d.admitted() && o.arrived == a.window();
            r.vm1_own += d.source == Source::Own;
        }
    };
    for (int w = 0; w < 40; w++, r.vm1_io++, a.window_tick())
        drv.window({drv.make(1, kIo), drv.make(1, kIo), drv.make(1, kIo), drv.make(0, kIo)});
    return r;
}

TEST(AdmissionFig14, WildDelaysTheBaseTenantBiosDoesNot)
{
    const Fig14 wild = run_fig14(Scheduler::Wild);
    EXPECT_EQ(wild.vm1_late, wild.vm1_io);  // every VM1 I/O waits at least one window
    EXPECT_GE(wild.vm1_deferred, wild.vm1_io);
    // With line 7 clamped at usage (the project's variation) VM1 keeps its 1 I/O per window.
    const Fig14 bios = run_fig14(Scheduler::Bios, BG_BIOS_OPT_USAGE_CLAMP);
    EXPECT_EQ(bios.vm1_deferred, 0u);
    EXPECT_EQ(bios.vm1_late, 0u);
    EXPECT_EQ(bios.vm1_own, bios.vm1_io);  // from its own allocation, every window
    EXPECT_EQ(run_fig14(Scheduler::Base).vm1_deferred, 0u);
    // Algorithm 1 as printed: line 7 halves VM1's grant below its one I/O (it was neither
    // bursting nor throttled), reclaim finds VM2's surplus spent (its I/Os come first) and
    // the pool is empty (the bases are the whole capacity in this example), so VM1 defers;
    // line 4 then restores its base, but the deferred I/O and the new one need two. The
    // printed algorithm delays a tenant running exactly at base when the pool cannot cover
    // it (docs/results.md, "BIOS variations"); catches the clamp leaking into the default.
    const Fig14 printed = run_fig14(Scheduler::Bios);
    EXPECT_GT(printed.vm1_late, printed.vm1_io / 2);
}

// Fig. 13: VM2 bursts while VM3 idles. BaseCBS holds VM2 at one I/O per window.
std::vector<std::uint64_t> run_fig13(Scheduler s, std::uint32_t scale, bool vm1_at_base, std::uint32_t floor_q16)
{
    AdmissionConfig c = paper_three_vms(s, scale);
    c.floor_q16 = floor_q16;
    // With a floor, the project's other variations too (bios.h); without, Algorithm 1 as printed.
    c.options = floor_q16 ? BG_BIOS_OPT_PROJECT : 0u;
    Admission a(c);
    Driver drv(a);
    drv.check_oracle = s == Scheduler::Bios;
    std::vector<std::uint64_t> vm2;
    drv.on = [](const Offer &o, const Decision &d) { ASSERT_TRUE(o.tenant != 0 || d.admitted()) << "VM1 deferred"; };
    for (int w = 0; w < 30; w++) {
        std::vector<Offer> fresh;
        drv.add(fresh, 1, 3 * scale);
        drv.add(fresh, 0, vm1_at_base ? scale : 0);
        drv.window(fresh);
        vm2.push_back(drv.admitted_now[1]);
        a.window_tick();
    }
    return vm2;
}

TEST(AdmissionFig13, BaseCbsHoldsTheBurstAtBaseBiosLetsItBurst)
{
    using V = std::vector<std::uint64_t>;
    auto settled = [](const V &v) { return V(v.begin() + 16, v.end()); };  // after 16 windows
    const std::uint32_t floor_q16 = BG_BIOS_ONE / 16;  // the project's floor variation
    EXPECT_EQ(run_fig13(Scheduler::Base, 1, true, 0), V(30, 1));
    EXPECT_EQ(run_fig13(Scheduler::Base, 1, false, 0), V(30, 1));
    EXPECT_EQ(run_fig13(Scheduler::Base, 10, true, 0), V(30, 10));
    // VM1 and VM3 idle with a zero floor (§6.5: "allocation drops to zero"): VM2 reaches its
    // burst provisioning, 3 I/Os per window, and never more, once the idle grants have halved
    // to zero (13 windows for the 4 KiB byte dimensions at alpha = 0.5).
    const V alone = run_fig13(Scheduler::Bios, 1, false, 0);
    EXPECT_LE(*std::max_element(alone.begin(), alone.end()), 3u);
    EXPECT_EQ(settled(alone), V(14, 3));
    // The 1/16 floor keeps 2 x 62 ns of the idle tenants' base, so VM2's 2876 ns
    // fall just short of a third 1000 ns I/O at this granularity.
    EXPECT_EQ(settled(run_fig13(Scheduler::Bios, 1, false, floor_q16)), V(14, 2));
    // Ten times finer, VM1 at base: VM2 takes VM3's idle base (never VM1's), 19 of the 20
    // free I/Os (VM3's floor and VM1's proportional share keep the rest), BaseCBS 10.
    const V shared = settled(run_fig13(Scheduler::Bios, 10, true, floor_q16));
    EXPECT_GE(*std::min_element(shared.begin(), shared.end()), 19u);
    EXPECT_LE(*std::max_element(shared.begin(), shared.end()), 20u);
}

// Fig. 24's claim: a tenant idle until its allocation has dropped to zero (Algorithm 1 as
// printed) resumes at any rate up to base with zero deferrals, while two neighbours burst as
// hard as they can.
TEST(AdmissionRecovery, IdleTenantResumesWithinBaseWithoutDeferrals)
{
    for (const bool bursters_first : {true, false}) {
        AdmissionConfig c;
        c.total = ios(100);  // the pool: two tenants' base, 30 I/Os (§5.2, the default)
        c.tenants.assign(4, TenantSpec{ios(15), ios(60)});
        Admission a(c);
        Driver drv(a);
        drv.check_oracle = true;
        Rng rng{0x5eed};
        std::uint64_t resumed_deferrals = 0, fallback = 0, burst_io = 0, windows = 0;
        drv.on = [&](const Offer &o, const Decision &d) {
            if (o.tenant == 0) {
                resumed_deferrals += !d.admitted();
                fallback += d.source == Source::Borrow || d.source == Source::Reserved;
            }
        };
        auto run_window = [&](std::uint32_t resume_rate) {
            std::vector<Offer> fresh;
            drv.add(fresh, 1, 60);
            drv.add(fresh, 2, 60);
            drv.add(fresh, 3, 10);
            for (std::uint32_t i = 0; i < resume_rate; i++) {
                const std::uint32_t at = bursters_first ? static_cast<std::uint32_t>(fresh.size())
                                                        : rng(static_cast<std::uint32_t>(fresh.size()) + 1);
                fresh.insert(fresh.begin() + at, drv.make(0, kIo));
            }
            drv.window(fresh);
            burst_io += drv.admitted_now[1] + drv.admitted_now[2];
            windows++;
            a.window_tick();
            drv.retry.clear();  // bursters' backlog is not the subject here; tenant 0 never defers
        };
        for (std::uint32_t rate = 1; rate <= 15; rate++) {
            int idle = 0;
            do {  // idle until the grant has decayed to zero and the tenant left the list
                run_window(0);
                ASSERT_LT(++idle, 40);
            } while (a.scheduled() == 4u);
            for (unsigned d = 0; d < BG_COST_DIMS; d++)
                EXPECT_EQ(a.grant(0).d[d], 0u);
            for (int w = 0; w < 4; w++)
                run_window(rate);
        }
        EXPECT_EQ(resumed_deferrals, 0u);
        EXPECT_GT(fallback, 0u);               // the fast-recovery path did the work
        EXPECT_GT(burst_io, windows * 2 * 15);  // while the neighbours burst above base
    }
}

// Credit burst (Table 1, EBS gp2): credits accrue below base, pay for burst above it, and
// bursting stops when they run out; a paid tenant in the same place keeps bursting.
TEST(AdmissionCredit, AccrueSpendExhaust)
{
    for (const bool credit : {true, false}) {
        AdmissionConfig c;
        c.total = ios(40);
        c.tenants.push_back(TenantSpec{ios(10), ios(30), credit, ios(0), ios(100)});
        c.tenants.push_back(TenantSpec{ios(20), ios(20)});  // idle neighbour
        Admission a(c);
        Driver drv(a);
        auto window = [&](std::uint32_t n) {
            std::vector<Offer> fresh;
            drv.add(fresh, 0, n);
            drv.window(fresh);
            drv.retry.clear();
            a.window_tick();
            return drv.admitted_now[0];
        };
        std::vector<std::uint32_t> credits;  // after 10 and 20 windows at 4 of base 10: 6 each
        for (int w = 1; w <= 20; w++) {
            EXPECT_EQ(window(4), 4u);
            if (w % 10 == 0)
                credits.push_back(a.credits(0).d[BG_DIM_CPU]);
        }
        std::vector<std::uint64_t> got;
        for (int w = 0; w < 8; w++)
            got.push_back(window(30));
        credits.push_back(a.credits(0).d[BG_DIM_CPU]);
        using V = std::vector<std::uint64_t>;
        using C = std::vector<std::uint32_t>;
        EXPECT_EQ(got, (credit ? V{30, 30, 30, 30, 30, 10, 10, 10} : V(8, 30)));  // 100 credits = 5 x 20
        EXPECT_EQ(credits, (credit ? C{ios(60).d[0], ios(100).d[0], 0} : C{0, 0, 0}));  // capped at 100
    }
}

// One admission draw as documented: the LFSR state after 32 single steps (computed the slow
// way, independently of the model's leap tables).
std::uint32_t draw32(std::uint32_t &l)
{
    for (int i = 0; i < 32; i++)
        bg_lfsr_next(&l);
    return l;
}

// The documented rule, re-derived from the model's visible state, for one bios I/O.
Decision oracle(const Admission &a, std::uint32_t k, const bg_vec &c)
{
    std::uint32_t l = a.lfsr_state();
    const std::uint32_t r1 = draw32(l), r2 = draw32(l);
    const bg_vec rem_k = a.remaining(k), pool = a.pool();
    if (bg_vec_covers(&rem_k, &c))
        return {Source::Own, 0};
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        if (std::uint64_t{a.window_counters(k).usage.d[d]} + c.d[d] > a.config().tenants[k].base.d[d])
            return {};
    const auto list = a.burst_list();
    if (!list.empty()) {
        const std::uint16_t b1 = list[(std::uint64_t{r1} * list.size()) >> 32];
        const std::uint16_t b2 = list[(std::uint64_t{r2} * list.size()) >> 32];
        auto ok = [&](std::uint16_t b) {
            const bg_vec rem = a.remaining(b), lend = a.lendable(b);
            return bg_vec_covers(&rem, &c) && bg_vec_covers(&lend, &c);
        };
        if (ok(b1) && ok(b2))
            return {Source::Borrow, a.lendable(b2).d[BG_DIM_CPU] > a.lendable(b1).d[BG_DIM_CPU] ? b2 : b1};
        if (ok(b1) || ok(b2))
            return {Source::Borrow, ok(b1) ? b1 : b2};
    }
    if (bg_vec_covers(&pool, &c))
        return {Source::Reserved, 0};
    return {};
}

// Randomized tenants, costs and interleavings. Checks, every decision and window: the bios
// decision equals the oracle; admitted cost never exceeds capacity; grants never exceed the
// burst cap; bios grants sum to at most total - reserve and, with the pool, to total; the
// window throttle counter equals the deferrals; after draining, every I/O was admitted once.
TenantTotals property(Scheduler s, std::uint64_t seed)
{
    Rng rng{seed};
    AdmissionConfig c;
    c.scheduler = s;
    c.seed = static_cast<std::uint32_t>(seed);
    const std::uint32_t n = 8 + rng(40);  // sum(base) about n / (n + 4) of total
    c.total = bg_vec{{2000000, 40000000, 40000000, 20000000}};
    for (std::uint32_t i = 0; i < n; i++) {
        TenantSpec t;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            t.base.d[d] = c.total.d[d] / (n + 4) - rng(1000);
            t.burst.d[d] = t.base.d[d] * (1 + rng(5));
            t.credit_max.d[d] = t.base.d[d] * 8;
        }
        t.credit = rng(3) == 0;
        c.tenants.push_back(t);
    }
    Admission a(c);
    Driver drv(a);
    drv.check_oracle = s == Scheduler::Bios;
    std::vector<std::uint32_t> deferred;
    drv.on = [&](const Offer &o, const Decision &d) { deferred[o.tenant] += !d.admitted(); };
    for (int w = 0; w < 300; w++) {
        std::vector<Offer> fresh;
        for (std::uint32_t i = 0; i < n && w < 240; i++) {  // then 60 windows to drain
            const std::uint32_t mood = rng(4);  // idle, light, near base, bursting
            const std::uint32_t count = mood == 0 ? 0 : mood == 1 ? rng(4) : mood == 2 ? 6 + rng(6) : 10 + rng(40);
            for (std::uint32_t k = 0; k < count; k++) {
                bg_vec cost;
                for (unsigned d = 0; d < BG_COST_DIMS; d++)
                    cost.d[d] = 1 + rng(c.tenants[i].base.d[d] / 8);
                fresh.push_back(drv.make(i, cost));
            }
        }
        shuffle(fresh, rng);
        deferred.assign(n, 0);
        drv.window(fresh);
        for (std::uint32_t i = 0; i < n; i++) {
            EXPECT_EQ(a.window_counters(i).throttle_n, deferred[i]);
            const bg_vec g = a.grant(i);
            EXPECT_TRUE(bg_vec_covers(&c.tenants[i].burst, &g));
        }
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            EXPECT_LE(drv.admitted_cost.d[d], c.total.d[d]) << "window " << w;
            std::uint64_t granted = 0;
            for (std::uint32_t i = 0; i < n; i++)
                granted += a.grant(i).d[d];
            if (s == Scheduler::Bios) {
                EXPECT_LE(granted, c.total.d[d] - (std::uint64_t{c.total.d[d]} * c.reserved_q16 >> 16));
                EXPECT_EQ(granted + a.pool_granted().d[d], c.total.d[d]);
            }
        }
        a.window_tick();
    }
    EXPECT_TRUE(drv.retry.empty());
    const auto once = std::count(drv.admitted_times.begin(), drv.admitted_times.end(), 1u);
    EXPECT_EQ(static_cast<std::uint64_t>(once), drv.next_id);  // every I/O admitted exactly once
    TenantTotals sum;
    for (std::uint32_t i = 0; i < n; i++) {
        const TenantTotals &t = a.totals(i);
        EXPECT_EQ(t.offered, t.own + t.borrowed + t.reserved + t.deferred);
        sum.offered += t.offered, sum.deferred += t.deferred, sum.lent += t.lent;
        sum.borrowed += t.borrowed, sum.reserved += t.reserved;
    }
    EXPECT_EQ(sum.offered, drv.next_id + sum.deferred);  // offered once plus once per deferral
    EXPECT_EQ(sum.lent, sum.borrowed);
    return sum;
}

TEST(AdmissionProperty, NothingLostCapacityAndCapsHold)
{
    TenantTotals bios;
    for (std::uint64_t seed = 1; seed <= 6; seed++) {
        property(Scheduler::Base, seed);
        property(Scheduler::Wild, seed);
        const TenantTotals t = property(Scheduler::Bios, seed);
        bios.borrowed += t.borrowed, bios.reserved += t.reserved;
    }
    EXPECT_TRUE(bios.borrowed > 0 && bios.reserved > 0);  // every path was exercised
}

// Steady tenants at or below base are never deferred while hard bursters run, as long as at
// most two of them step up in a window (the reserved pool holds two tenants' base, §5.2).
// BaseCBS gives the same guarantee statically; WildCBS does not.
std::uint64_t steady_deferrals(Scheduler s, std::uint64_t seed, std::uint32_t options = 0)
{
    Rng rng{seed};
    const std::uint32_t n = 24, steady = 16;
    AdmissionConfig c;
    c.scheduler = s;
    c.seed = static_cast<std::uint32_t>(seed);
    c.options = options;
    std::vector<bg_vec> cost(n);
    std::vector<std::uint32_t> k(n);
    std::uint64_t sum[BG_COST_DIMS] = {};
    std::uint64_t pool_want[BG_COST_DIMS] = {};
    for (std::uint32_t i = 0; i < n; i++) {
        cost[i] = bg_vec{{500 + rng(1000), 2048 + rng(65536), 2048 + rng(65536), 2048 + rng(65536)}};
        k[i] = 4 + rng(9);
        const std::uint32_t burst = i < steady ? 1 + rng(3) : 3 + rng(3);
        c.tenants.push_back(TenantSpec{bg_credit_from_ios(k[i], &cost[i]), bg_credit_from_ios(k[i] * burst, &cost[i])});
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            sum[d] += c.tenants[i].base.d[d];
    }
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        c.total.d[d] = static_cast<std::uint32_t>(sum[d] * 10 / 7 + sum[d] / 100);
        std::uint32_t top[2] = {};
        for (const TenantSpec &t : c.tenants)
            if (t.base.d[d] > top[1])
                top[1] = t.base.d[d] > top[0] ? std::exchange(top[0], t.base.d[d]) : t.base.d[d];
        pool_want[d] = top[0] + top[1];
    }
    Admission a(c);
    if (s == Scheduler::Bios) {  // the premise: the pool holds the two largest bases
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            EXPECT_GE(a.pool_granted().d[d], pool_want[d]) << "dimension " << d;
    }
    Driver drv(a);
    drv.check_oracle = s == Scheduler::Bios;
    std::vector<std::uint32_t> level(steady, 0);
    std::uint64_t deferred = 0;
    drv.on = [&](const Offer &o, const Decision &d) { deferred += o.tenant < steady && !d.admitted(); };
    for (int w = 0; w < 400; w++) {
        for (std::uint32_t i = 0; i < steady; i++)
            if (rng(8) == 0)
                level[i] = rng(level[i] + 1);  // down (or unchanged) at will
        for (int up = 0; up < 2; up++) {
            const std::uint32_t i = rng(steady);
            level[i] = level[i] + rng(k[i] - level[i] + 1);  // at most two step-ups
        }
        std::vector<Offer> fresh;
        for (std::uint32_t i = 0; i < n; i++)
            drv.add(fresh, i, i < steady ? level[i] : k[i] + 1 + rng(6 * k[i]), cost[i]);
        shuffle(fresh, rng);
        drv.window(fresh);
        drv.retry.clear();
        a.window_tick();
    }
    return deferred;
}

TEST(AdmissionProperty, WithinBaseNeverDeferred)
{
    std::uint64_t wild = 0, printed = 0, spill = 0;
    for (std::uint64_t seed = 11; seed <= 15; seed++) {
        // The guarantee holds with line 7 clamped at usage (the project's variation): a steady
        // tenant keeps the allocation it uses, so only step-ups draw on the pool.
        EXPECT_EQ(steady_deferrals(Scheduler::Bios, seed, BG_BIOS_OPT_USAGE_CLAMP), 0u) << "seed " << seed;
        printed += steady_deferrals(Scheduler::Bios, seed);
        spill += steady_deferrals(Scheduler::Bios, seed, BG_BIOS_OPT_SPILL_BASE);
        EXPECT_EQ(steady_deferrals(Scheduler::Base, seed), 0u) << "seed " << seed;
        wild += steady_deferrals(Scheduler::Wild, seed);
    }
    EXPECT_GT(wild, 0u);
    // As printed, line 7 halves every steady tenant's grant each window it was not throttled,
    // so all sixteen live partly on the pool and it runs dry now and then: a few deferrals,
    // far fewer than WildCBS's (measured: printed / spill_base / WildCBS in the message).
    EXPECT_LT(printed * 20, wild) << printed << " / " << spill << " / " << wild;
    EXPECT_LT(spill * 20, wild) << printed << " / " << spill << " / " << wild;
    std::printf("steady deferrals over seeds 11-15: printed %llu, spill_base %llu, WildCBS %llu\n",
                static_cast<unsigned long long>(printed), static_cast<unsigned long long>(spill),
                static_cast<unsigned long long>(wild));
}

// Same seed, config and stream: same decisions; the LFSR makes exactly two 32-step draws per
// I/O, whatever the path (no feedback from the decision into the random stream).
TEST(AdmissionDeterminism, SameSeedSameDecisionsTwoDrawsPerIo)
{
    AdmissionConfig c;
    c.total = ios(100);
    c.tenants.assign(6, TenantSpec{ios(10), ios(40)});
    c.seed = 99;
    Admission a(c), b(c);
    Rng rng{7};
    std::uint32_t l = bg_lfsr_seed(99);
    for (int w = 0; w < 50; w++, a.window_tick(), b.window_tick())
        for (std::uint32_t i = 0, m = rng(200); i < m; i++) {
            const std::uint32_t t = rng(6) == 0 ? rng(6) : rng(2);
            const Decision x = a.io(t, kIo), y = b.io(t, kIo);
            ASSERT_TRUE(x.source == y.source && x.lender == y.lender);
            draw32(l), draw32(l);
            ASSERT_EQ(a.lfsr_state(), l);
        }
}

TEST(AdmissionConfigErrors, NamesTheField)
{
    AdmissionConfig c;
    c.total = ios(3);
    c.tenants = {TenantSpec{ios(1), ios(3)}, TenantSpec{ios(2), ios(1)}};
    try {
        Admission{c};
        FAIL() << "burst below base accepted";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("tenants[1].burst"), std::string::npos) << e.what();
    }
    c.tenants = {TenantSpec{ios(1), ios(3)}, TenantSpec{ios(2), ios(3)}};  // 3 of 3, 5 % reserved
    c.reserve_tenants = 0;  // the pool as a share (the two-tenant pool takes what the bases leave)
    EXPECT_THROW(Admission{c}, std::invalid_argument);
    c.scheduler = Scheduler::Wild;  // WildCBS does not reserve
    Admission ok(c);
    EXPECT_THROW(ok.io(2, kIo), std::out_of_range);
    c.tenants.clear();
    EXPECT_THROW(Admission{c}, std::invalid_argument);
}

}  // namespace
