// Workload generators: YCSB A-F operation mixes (seed 000 Table 2), Zipfian skew, Mixgraph
// key-range concentration and sine rate.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <stdexcept>

#include "burstgate/lsm/workload.hpp"

using namespace bg::lsm;

// Table 2 mixes within 1 % over 100k draws. Catches a swapped or missing operation type.
TEST(LsmWorkload, YcsbMixes)
{
    const std::map<std::string, std::map<OpType, double>> want = {
        {"ycsb-a", {{OpType::read, 0.5}, {OpType::update, 0.5}}},
        {"ycsb-b", {{OpType::read, 0.95}, {OpType::update, 0.05}}},
        {"ycsb-c", {{OpType::read, 1.0}}},
        {"ycsb-d", {{OpType::read, 0.95}, {OpType::insert, 0.05}}},
        {"ycsb-e", {{OpType::scan, 0.95}, {OpType::insert, 0.05}}},
        {"ycsb-f", {{OpType::read, 0.5}, {OpType::rmw, 0.5}}},
    };
    for (const auto& [kind, mix] : want) {
        WorkloadSpec spec;
        spec.kind = kind;
        Workload w(spec, 100000);
        Rng rng(3);
        std::map<OpType, int> got;
        const int n = 100000;
        for (int i = 0; i < n; ++i) {
            const Op op = w.next(rng, 99999);
            ++got[op.type];
            ASSERT_LT(op.key, 100000u);
            if (op.type == OpType::scan) {
                ASSERT_GE(op.scan_len, 1u);
                ASSERT_LE(op.scan_len, 100u);
            }
        }
        for (const auto& [t, share] : mix) EXPECT_NEAR(got[t] / double(n), share, 0.01) << kind << " " << to_string(t);
        EXPECT_DOUBLE_EQ(w.rate_factor(17 * kSec), 1.0);
    }
}

// Zipfian(0.99) over 1M items: the top 1 % of ranks draw ~ H(10^4)/H(10^6) of the mass
// (~0.66 for theta 0.99), and the scrambled keys are scattered (they hit many 1 %-wide
// key slices). Catches a uniform generator or an unscrambled (clustered) one.
TEST(LsmWorkload, ZipfianSkewScrambled)
{
    Zipfian z(1000000);
    Rng rng(5);
    int top = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) top += z.next(rng) < 10000;
    double h1 = 0, h2 = 0;
    for (int i = 1; i <= 1000000; ++i) {
        const double v = 1.0 / std::pow(i, 0.99);
        h2 += v;
        if (i <= 10000) h1 += v;
    }
    EXPECT_NEAR(top / double(n), h1 / h2, 0.02);
    WorkloadSpec spec;
    spec.kind = "ycsb-c";
    Workload w(spec, 1000000);
    std::set<std::uint64_t> slices;
    for (int i = 0; i < 2000; ++i) slices.insert(w.next(rng, 0).key / 10000);
    EXPECT_GT(slices.size(), 90u);
}

// Mixgraph: range 0 carries 14.196 / sum of the two-term exponential weights (~93 %) of the
// keys, all inside one 1/30 slice of the key space; the rate factor is the sine with mean 1.
// Catches a wrong key-range model or a rate that does not fluctuate.
TEST(LsmWorkload, MixgraphRangesAndSine)
{
    WorkloadSpec spec;
    spec.kind = "mixgraph";
    spec.amplitude = 0.5;
    spec.period = 60 * kSec;
    Workload w(spec, 300000);
    double total = 0, first = 0;
    for (int i = 0; i < 30; ++i) {
        const double v = 14.18 * std::exp(-2.917 * i) + 0.0164 * std::exp(-0.08082 * i);
        total += v;
        if (i == 0) first = v;
    }
    Rng rng(11);
    std::map<std::uint64_t, int> slice;
    const int n = 100000;
    int reads = 0;
    for (int i = 0; i < n; ++i) {
        const Op op = w.next(rng, 0);
        ++slice[op.key / 10000];
        reads += op.type == OpType::read;
    }
    int best = 0;
    for (const auto& [s, c] : slice) best = std::max(best, c);
    EXPECT_NEAR(best / double(n), first / total, 0.01);
    EXPECT_NEAR(reads / double(n), 0.83, 0.01);
    EXPECT_NEAR(w.rate_factor(15 * kSec), 1.5, 1e-9);
    EXPECT_NEAR(w.rate_factor(45 * kSec), 0.5, 1e-9);
    double mean = 0;
    for (int i = 0; i < 600; ++i) mean += w.rate_factor(i * kSec / 10) / 600;
    EXPECT_NEAR(mean, 1.0, 1e-9);
}

TEST(LsmWorkload, BadSpecsRejected)
{
    WorkloadSpec spec;
    spec.kind = "ycsb-z";
    EXPECT_THROW(Workload(spec, 10), std::invalid_argument);
    spec.kind = "mixgraph";
    spec.amplitude = 1.5;
    EXPECT_THROW(Workload(spec, 10), std::invalid_argument);
}
