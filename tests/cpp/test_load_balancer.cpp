#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "burstgate/lfsr.h"
#include "burstgate/model/load_balancer.hpp"

namespace {

using bg::LbConfig;
using bg::LbDecision;
using bg::LbPolicy;
using bg::LoadBalancer;

constexpr std::array<LbPolicy, 4> kPolicies = {LbPolicy::kStatic, LbPolicy::kRoundRobin,
                                               LbPolicy::kJsq, LbPolicy::kP2c};

LbConfig config(unsigned in, unsigned out, LbPolicy p, std::uint32_t depth,
                std::uint32_t seed = 1)
{
    LbConfig c;
    c.ingress_queues = in;
    c.egress_queues = out;
    c.policy = p;
    c.egress_depth = depth;
    c.lfsr_seed = seed;
    return c;
}

void map_all(LoadBalancer& lb)
{
    for (unsigned i = 0; i < lb.config().ingress_queues; i++)
        lb.set_map(i, 0xFFFF);
}

TEST(LoadBalancer, RejectsBadConfiguration)
{
    EXPECT_THROW(LoadBalancer(config(0, 4, LbPolicy::kStatic, 8)), std::invalid_argument);
    EXPECT_THROW(LoadBalancer(config(17, 4, LbPolicy::kStatic, 8)), std::invalid_argument);
    EXPECT_THROW(LoadBalancer(config(4, 17, LbPolicy::kStatic, 8)), std::invalid_argument);
    EXPECT_THROW(LoadBalancer(config(4, 4, LbPolicy::kStatic, 0)), std::invalid_argument);
    EXPECT_THROW(LoadBalancer(config(4, 4, LbPolicy::kStatic, bg::kLbMaxDepth + 1)),
                 std::invalid_argument);
    EXPECT_THROW(LoadBalancer(config(4, 4, static_cast<LbPolicy>(7), 8)),
                 std::invalid_argument);
    LoadBalancer lb(config(4, 4, LbPolicy::kStatic, 8));
    EXPECT_THROW(lb.dispatch(4, 1), std::out_of_range);
    EXPECT_THROW(lb.complete(4, 1), std::out_of_range);
    EXPECT_THROW(lb.complete(0, 1), std::logic_error);  // nothing outstanding
}

TEST(LoadBalancer, StaticIsTheOneToOneBaseline)
{
    LoadBalancer lb(config(16, 4, LbPolicy::kStatic, bg::kLbMaxDepth));
    std::mt19937 rng(3);
    for (unsigned i = 0; i < 16; i++)
        EXPECT_EQ(lb.map(i), 1u << (i % 4));  // reset value: Figure 10a
    for (int n = 0; n < 2000; n++) {
        const unsigned in = rng() % 16;
        const LbDecision d = lb.dispatch(in, 1000);
        ASSERT_FALSE(d.stall);
        EXPECT_EQ(d.egress, in % 4);
    }
    lb.set_map(0, 0b1010);
    EXPECT_EQ(lb.dispatch(0, 1).egress, 1u);  // the lowest member
    lb.set_map(0, 0xFFF0);                    // only bits of existing queues are kept
    EXPECT_EQ(lb.map(0), 0u);
    EXPECT_TRUE(lb.dispatch(0, 1).stall);  // an empty set stalls, never drops
}

TEST(LoadBalancer, RoundRobinSpreadsExactlyEvenly)
{
    LoadBalancer lb(config(2, 5, LbPolicy::kRoundRobin, bg::kLbMaxDepth));
    lb.set_map(0, 0b11111);
    lb.set_map(1, 0b10110);
    std::vector<unsigned> seq1;
    for (int n = 0; n < 300; n++) {
        // Interleaved: each ingress keeps its own pointer.
        ASSERT_FALSE(lb.dispatch(0, 700).stall);
        const LbDecision d = lb.dispatch(1, 700);
        ASSERT_FALSE(d.stall);
        seq1.push_back(d.egress);
    }
    EXPECT_EQ(std::vector<unsigned>(seq1.begin(), seq1.begin() + 6),
              (std::vector<unsigned>{1, 2, 4, 1, 2, 4}));
    EXPECT_EQ(lb.egress_stats(0).dispatched, 60u);
    EXPECT_EQ(lb.egress_stats(3).dispatched, 60u);
    for (unsigned e : {1u, 2u, 4u})
        EXPECT_EQ(lb.egress_stats(e).dispatched, 160u);
}

TEST(LoadBalancer, RoundRobinSkipsAFullMemberAndResumesAfterTheChoice)
{
    LoadBalancer lb(config(1, 3, LbPolicy::kRoundRobin, 1));
    map_all(lb);
    EXPECT_EQ(lb.dispatch(0, 5).egress, 0u);
    EXPECT_EQ(lb.dispatch(0, 5).egress, 1u);
    lb.complete(1, 5);
    EXPECT_EQ(lb.dispatch(0, 5).egress, 2u);
    EXPECT_EQ(lb.rr_pointer(0), 0u);           // wraps past the last queue
    EXPECT_EQ(lb.dispatch(0, 5).egress, 1u);  // 0 is full: the scan moves on
    EXPECT_EQ(lb.rr_pointer(0), 2u);
    EXPECT_TRUE(lb.dispatch(0, 5).stall);
    EXPECT_EQ(lb.rr_pointer(0), 2u);  // a stall leaves the pointer alone
}

TEST(LoadBalancer, JsqNeverPicksAMoreLoadedEligibleQueue)
{
    LoadBalancer lb(config(8, 6, LbPolicy::kJsq, 6));
    std::mt19937 rng(11);
    for (unsigned i = 0; i < 8; i++)
        lb.set_map(i, static_cast<std::uint16_t>(1 + rng() % 63));
    std::vector<std::deque<std::uint32_t>> out(6);
    for (int n = 0; n < 20000; n++) {
        if (rng() % 3 == 0) {
            const unsigned e = rng() % 6;
            if (!out[e].empty()) {
                lb.complete(e, out[e].front());
                out[e].pop_front();
            }
            continue;
        }
        const unsigned in = rng() % 8;
        const std::uint32_t cost = 100 + rng() % 9000;
        const std::uint16_t elig = lb.eligible(in);
        std::array<std::uint32_t, 6> before{};
        for (unsigned e = 0; e < 6; e++)
            before[e] = lb.outstanding_ns(e);
        const LbDecision d = lb.dispatch(in, cost);
        ASSERT_EQ(d.stall, elig == 0);
        if (d.stall)
            continue;
        ASSERT_TRUE(elig & (1u << d.egress));
        for (unsigned e = 0; e < 6; e++) {
            if (!(elig & (1u << e)))
                continue;
            ASSERT_LE(before[d.egress], before[e]);
            if (before[e] == before[d.egress]) {
                ASSERT_LE(d.egress, e);  // ties go to the lowest index
            }
        }
        out[d.egress].push_back(cost);
    }
}

// The P2C rule written out independently, as an RTL engineer would from the report.
unsigned p2c_reference(std::uint32_t* lfsr, std::uint16_t elig,
                       const std::array<std::uint32_t, 16>& load)
{
    for (int k = 0; k < 32; k++)
        bg_lfsr_next(lfsr);
    const std::uint64_t r1 = *lfsr;
    for (int k = 0; k < 32; k++)
        bg_lfsr_next(lfsr);
    const std::uint64_t r2 = *lfsr;
    std::vector<unsigned> members;
    for (unsigned e = 0; e < 16; e++)
        if (elig >> e & 1u)
            members.push_back(e);
    const auto k = static_cast<std::uint64_t>(members.size());
    const unsigned i1 = static_cast<unsigned>((r1 * k) >> 32);
    unsigned i2 = i1;
    if (k >= 2) {
        i2 = static_cast<unsigned>((r2 * (k - 1)) >> 32);
        i2 += i2 >= i1 ? 1 : 0;
    }
    const unsigned a = members[i1];
    const unsigned b = members[i2];
    return load[b] < load[a] ? b : a;
}

TEST(LoadBalancer, P2cMatchesTheWrittenRuleAndOnlyAdvancesOnDecisions)
{
    LoadBalancer lb(config(4, 7, LbPolicy::kP2c, 5, 0xBEEF));
    std::mt19937 rng(5);
    for (unsigned i = 0; i < 4; i++)
        lb.set_map(i, static_cast<std::uint16_t>(1 + rng() % 127));
    std::uint32_t ref_lfsr = bg_lfsr_seed(0xBEEF);
    std::vector<std::deque<std::uint32_t>> out(7);
    int stalls = 0;
    for (int n = 0; n < 50000; n++) {
        if (rng() % 2 == 0) {
            const unsigned e = rng() % 7;
            if (!out[e].empty()) {
                lb.complete(e, out[e].front());
                out[e].pop_front();
            }
            continue;
        }
        const unsigned in = rng() % 4;
        const std::uint32_t cost = rng() % 20000;
        const std::uint16_t elig = lb.eligible(in);
        std::array<std::uint32_t, 16> load{};
        for (unsigned e = 0; e < 7; e++)
            load[e] = lb.outstanding_ns(e);
        const LbDecision d = lb.dispatch(in, cost);
        if (elig == 0) {
            ASSERT_TRUE(d.stall);
            ASSERT_EQ(lb.lfsr_state(), ref_lfsr);  // a stall does not advance the LFSR
            stalls++;
            continue;
        }
        ASSERT_FALSE(d.stall);
        ASSERT_EQ(d.egress, p2c_reference(&ref_lfsr, elig, load));
        ASSERT_EQ(lb.lfsr_state(), ref_lfsr);
        out[d.egress].push_back(cost);
    }
    EXPECT_GT(stalls, 0);
}

TEST(LoadBalancer, P2cIsSeededDeterministic)
{
    auto run = [](std::uint32_t seed) {
        LoadBalancer lb(config(1, 16, LbPolicy::kP2c, bg::kLbMaxDepth, seed));
        map_all(lb);
        std::vector<unsigned> seq;
        for (int n = 0; n < 16; n++)
            seq.push_back(lb.dispatch(0, 1000).egress);
        return seq;
    };
    EXPECT_EQ(run(0xC0FFEE), run(0xC0FFEE));
    EXPECT_NE(run(0xC0FFEE), run(0xC0FFEF));
    LoadBalancer lb(config(1, 4, LbPolicy::kP2c, 8, 0xC0FFEE));
    lb.dispatch(0, 1);
    lb.set_seed(0);  // a register write reloads the state; zero is mapped off the lock-up
    EXPECT_EQ(lb.lfsr_state(), 0xACE1u);
    // Golden decisions for the RTL testbench, cross-checked against an independent Python
    // rendering of the rule: seed 0xC0FFEE, 16 egress all in the set, every I/O 1000 ns,
    // no completions.
    EXPECT_EQ(run(0xC0FFEE),
              (std::vector<unsigned>{1, 8, 0, 5, 9, 14, 15, 7, 5, 6, 3, 12, 2, 4, 8, 13}));
}

TEST(LoadBalancer, ChargeIsClampedSoCountersCannotOverflow)
{
    LoadBalancer lb(config(1, 1, LbPolicy::kJsq, bg::kLbMaxDepth));
    for (std::uint32_t n = 0; n < bg::kLbMaxDepth; n++)
        ASSERT_FALSE(lb.dispatch(0, std::numeric_limits<std::uint32_t>::max()).stall);
    EXPECT_EQ(lb.outstanding_ns(0), bg::kLbMaxDepth * bg::kLbMaxCharge);
    EXPECT_TRUE(lb.dispatch(0, 1).stall);
    lb.complete(0, std::numeric_limits<std::uint32_t>::max());
    EXPECT_EQ(lb.outstanding_ios(0), bg::kLbMaxDepth - 1);
}

TEST(LoadBalancer, BackpressureStallsOnlyWhenTheWholeSetIsFull)
{
    for (LbPolicy p : kPolicies) {
        SCOPED_TRACE(static_cast<int>(p));
        LoadBalancer lb(config(1, 4, p, 2));
        lb.set_map(0, 0b0111);  // egress 3 is outside the set and never used
        std::vector<unsigned> got;
        for (int n = 0; n < 6; n++) {
            const LbDecision d = lb.dispatch(0, 100);
            ASSERT_FALSE(d.stall);
            got.push_back(d.egress);
        }
        for (unsigned e = 0; e < 3; e++)
            EXPECT_EQ(lb.outstanding_ios(e), 2u);
        EXPECT_EQ(lb.outstanding_ios(3), 0u);
        for (int retry = 0; retry < 5; retry++)
            EXPECT_TRUE(lb.dispatch(0, 100).stall);
        EXPECT_EQ(lb.ingress_stats(0).stalled_ios, 1u);  // one I/O, five retries
        lb.complete(1, 100);
        const LbDecision d = lb.dispatch(0, 100);
        ASSERT_FALSE(d.stall);
        EXPECT_EQ(d.egress, 1u);  // the only member with room
    }
}

// Randomized: ingress queues hold stalled I/Os in order and retry after completions; at the
// end every offered I/O has been dispatched and completed exactly once.
TEST(LoadBalancer, NeverDropsUnderRandomBackpressure)
{
    for (LbPolicy p : kPolicies) {
        SCOPED_TRACE(static_cast<int>(p));
        LoadBalancer lb(config(6, 5, p, 3, 77));
        std::mt19937 rng(static_cast<unsigned>(p) + 100);
        for (unsigned i = 0; i < 6; i++)
            lb.set_map(i, static_cast<std::uint16_t>(1 + rng() % 31));
        std::vector<std::deque<std::uint32_t>> held(6);
        std::vector<std::deque<std::uint32_t>> out(5);
        std::uint64_t offered = 0, completed = 0;
        auto drain_held = [&] {
            for (unsigned i = 0; i < 6; i++) {
                while (!held[i].empty()) {
                    const std::uint16_t elig = lb.eligible(i);
                    const LbDecision d = lb.dispatch(i, held[i].front());
                    ASSERT_EQ(d.stall, elig == 0);
                    if (d.stall)
                        break;
                    out[d.egress].push_back(held[i].front());
                    held[i].pop_front();
                }
            }
        };
        for (int n = 0; n < 30000; n++) {
            if (rng() % 2 == 0) {
                held[rng() % 6].push_back(1 + rng() % 5000);
                offered++;
            } else {
                const unsigned e = rng() % 5;
                if (!out[e].empty()) {
                    lb.complete(e, out[e].front());
                    out[e].pop_front();
                    completed++;
                }
            }
            drain_held();
        }
        for (bool busy = true; busy;) {
            busy = false;
            for (unsigned e = 0; e < 5; e++) {
                if (!out[e].empty()) {
                    lb.complete(e, out[e].front());
                    out[e].pop_front();
                    completed++;
                    busy = true;
                }
            }
            drain_held();
        }
        EXPECT_EQ(completed, offered);
        std::uint64_t dispatched = 0;
        for (unsigned i = 0; i < 6; i++)
            dispatched += lb.ingress_stats(i).dispatched;
        EXPECT_EQ(dispatched, offered);
        for (unsigned e = 0; e < 5; e++) {
            EXPECT_EQ(lb.outstanding_ios(e), 0u);
            EXPECT_EQ(lb.outstanding_ns(e), 0u);
            EXPECT_LE(lb.egress_stats(e).peak_outstanding, 3u);
        }
    }
}

struct SkewResult {
    double max_over_mean;  // of CPU ns dispatched per egress over the run
    double mean_sojourn_us;
    double p99_sojourn_us;
    std::uint64_t stalled;
};

// 16 ingress queues, 4 SA threads, ingress 0 carries 40 % of the I/Os (the bursting disk),
// the other 15 share the rest; Poisson arrivals at `util` mean thread utilization; each
// thread serves its egress queue FIFO at 1 CPU ns per ns; every I/O is served in the end.
SkewResult skewed_run(LbPolicy p, bool one_to_one, double util)
{
    constexpr unsigned kIn = 16, kOut = 4;
    constexpr std::uint32_t kDepth = 32;
    constexpr int kIos = 200000;
    LoadBalancer lb(config(kIn, kOut, p, kDepth, 0x5EED));
    if (!one_to_one)
        map_all(lb);
    std::mt19937_64 rng(2024);
    std::exponential_distribution<double> gap(kOut * util / 5000.0);
    std::uniform_int_distribution<std::uint32_t> cost(2000, 8000);
    std::discrete_distribution<unsigned> ingress(
        {40, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4});
    struct Io {
        std::uint32_t cost;
        double arrival;
    };
    std::vector<std::deque<Io>> held(kIn), fifo(kOut);
    std::array<double, kOut> busy_until{};
    std::vector<double> sojourn;
    double now = 0, next_arrival = gap(rng);
    int arrived = 0;
    auto start_next = [&](unsigned e) {
        if (!fifo[e].empty())
            busy_until[e] = now + fifo[e].front().cost;
    };
    auto dispatch_held = [&] {
        for (unsigned i = 0; i < kIn; i++) {
            while (!held[i].empty()) {
                const LbDecision d = lb.dispatch(i, held[i].front().cost);
                if (d.stall)
                    break;
                fifo[d.egress].push_back(held[i].front());
                held[i].pop_front();
                if (fifo[d.egress].size() == 1)
                    start_next(d.egress);
            }
        }
    };
    while (sojourn.size() < kIos) {
        unsigned first = kOut;
        for (unsigned e = 0; e < kOut; e++)
            if (!fifo[e].empty() && (first == kOut || busy_until[e] < busy_until[first]))
                first = e;
        if (arrived < kIos && (first == kOut || next_arrival < busy_until[first])) {
            now = next_arrival;
            held[ingress(rng)].push_back(Io{cost(rng), now});
            arrived++;
            next_arrival = now + gap(rng);
        } else {
            now = busy_until[first];
            const Io io = fifo[first].front();
            fifo[first].pop_front();
            lb.complete(first, io.cost);
            sojourn.push_back((now - io.arrival) / 1000.0);
            start_next(first);
        }
        dispatch_held();
    }
    double mx = 0, sum = 0, total_us = 0;
    std::uint64_t stalled = 0;
    for (unsigned e = 0; e < kOut; e++) {
        const double w = static_cast<double>(lb.egress_stats(e).dispatched_ns);
        mx = std::max(mx, w);
        sum += w;
    }
    for (unsigned i = 0; i < kIn; i++)
        stalled += lb.ingress_stats(i).stalled_ios;
    for (double us : sojourn)
        total_us += us;
    std::sort(sojourn.begin(), sojourn.end());
    return SkewResult{mx / (sum / kOut), total_us / kIos,
                      sojourn[static_cast<std::size_t>(kIos * 0.99)], stalled};
}

void show(const char* name, double util, const SkewResult& r)
{
    std::printf("[ balance  ] util %.2f %-9s max/mean load %.4f  sojourn mean %9.2f us  "
                "p99 %9.2f us  stalled I/Os %llu\n",
                util, name, r.max_over_mean, r.mean_sojourn_us, r.p99_sojourn_us,
                static_cast<unsigned long long>(r.stalled));
}

TEST(LoadBalancer, P2cBeatsStaticUnderSkewedIngressLoad)
{
    for (double util : {0.4, 0.7}) {
        SCOPED_TRACE(util);
        const SkewResult st = skewed_run(LbPolicy::kStatic, true, util);
        const SkewResult rr = skewed_run(LbPolicy::kRoundRobin, false, util);
        const SkewResult jsq = skewed_run(LbPolicy::kJsq, false, util);
        const SkewResult p2c = skewed_run(LbPolicy::kP2c, false, util);
        show("static1:1", util, st);
        show("rr", util, rr);
        show("jsq", util, jsq);
        show("p2c", util, p2c);
        // Ingress 0, 4, 8 and 12 land on thread 0 under 1:1: 52 % of the load on 1 of 4.
        EXPECT_GT(st.max_over_mean, 2.0);
        EXPECT_LT(p2c.max_over_mean, 1.02);
        EXPECT_LT(p2c.mean_sojourn_us, st.mean_sojourn_us / 2);
        EXPECT_LT(p2c.p99_sojourn_us, st.p99_sojourn_us / 2);
        EXPECT_LT(p2c.mean_sojourn_us, rr.mean_sojourn_us);
        EXPECT_LE(jsq.mean_sojourn_us, p2c.mean_sojourn_us);
    }
}

}  // namespace
