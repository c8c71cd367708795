// Workload generators: YCSB A-F operation mixes (Calcspar Table 2), Zipfian skew, Mixgraph's
// key ranges, in-range key model, Seek length and sine rate (db_bench mixgraph).
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
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

// db_bench's key-range table, restated from its definition (InitiateExpDistribution): range
// pfx = 1..n has p = 14.18 e^(-2.917 pfx) + 0.0164 e^(-0.08082 pfx), weighted floor(amplify *
// p) with amplify = floor(1 / p(n)) + 1.
std::vector<double> dbbench_shares(int n)
{
    const auto p = [](int pfx) { return 14.18 * std::exp(-2.917 * pfx) + 0.0164 * std::exp(-0.08082 * pfx); };
    const double amplify = std::floor(1 / p(n)) + 1;
    std::vector<double> w;
    double total = 0;
    for (int pfx = 1; pfx <= n; ++pfx) total += std::floor(amplify * p(pfx));
    for (int pfx = 1; pfx <= n; ++pfx) w.push_back(std::floor(amplify * p(pfx)) / total);
    return w;
}

// Mixgraph's key-range locality (db_bench prefix_dist): over 300 k keys in 30 ranges of
// 10 000, the hottest 1/30 slice of the key space draws db_bench's share for pfx 1 (80.7 %),
// the second pfx 2's (~5.6 %), at the slice where db_bench's fixed shuffle puts them; inside a
// range the keys are uniform (each tenth of the hot slice ~10 %). The rate factor is the sine
// with mean 1. Catches key-range locality missing (keys scattered or uniform over the key
// space: the top slice would draw ~3 %), db_bench's range weights misread (pfx from 0: 94 %),
// and hot keys clustered inside a range (our old u^2 offsets: the first tenth drew 32 %).
TEST(LsmWorkload, MixgraphKeyRangeLocality)
{
    WorkloadSpec spec;
    spec.kind = "mixgraph";
    spec.amplitude = 0.5;
    spec.period = 60 * kSec;
    Workload w(spec, 300000);
    ASSERT_EQ(w.range_size(), 10000u);
    const std::vector<double> want = dbbench_shares(30);
    EXPECT_NEAR(want[0], 0.807, 0.001);
    EXPECT_NEAR(want[1], 0.056, 0.002);
    const std::vector<KeyRange> table = mixgraph_key_ranges(30);
    std::uint64_t hot_pos = 0, second_pos = 0;
    for (std::size_t i = 0; i < table.size(); ++i) {
        if (table[i].pfx == 1) hot_pos = i;
        if (table[i].pfx == 2) second_pos = i;
    }
    Rng rng(11);
    std::map<std::uint64_t, int> slice;
    std::vector<int> hot_tenth(10, 0);
    const int n = 200000;
    int reads = 0, scans = 0;
    for (int i = 0; i < n; ++i) {
        const Op op = w.next(rng, 0);
        ASSERT_LT(op.key, 300000u);
        ++slice[op.key / 10000];
        if (op.key / 10000 == hot_pos) ++hot_tenth[(op.key % 10000) / 1000];
        reads += op.type == OpType::read;
        scans += op.type == OpType::scan;
    }
    EXPECT_NEAR(slice[hot_pos] / double(n), want[0], 0.01);
    EXPECT_NEAR(slice[second_pos] / double(n), want[1], 0.005);
    for (int t = 0; t < 10; ++t) EXPECT_NEAR(hot_tenth[t] / double(slice[hot_pos]), 0.1, 0.01) << "tenth " << t;
    EXPECT_NEAR(reads / double(n), 0.83, 0.01);
    EXPECT_NEAR(scans / double(n), 0.03, 0.005);
    EXPECT_NEAR(w.rate_factor(15 * kSec), 1.5, 1e-9);
    EXPECT_NEAR(w.rate_factor(45 * kSec), 0.5, 1e-9);
    double mean = 0;
    for (int i = 0; i < 600; ++i) mean += w.rate_factor(i * kSec / 10) / 600;
    EXPECT_NEAR(mean, 1.0, 1e-9);
}

// With key_dist_a/b (db_bench all_dist's 0.002312 / 0.3467) keys inside a range follow the
// power model: P(seed <= s) = a s^b, so seed 1 alone -- one key -- takes a = 0.23 % of the
// range's draws (uniform: 0.01 %), yet the hot keys are scattered by the seeded generator over
// the whole range, not packed at its start. Catches key_dist ignored, or applied as an offset.
TEST(LsmWorkload, MixgraphPowerKeysScattered)
{
    WorkloadSpec spec;
    spec.kind = "mixgraph";
    spec.key_dist_a = 0.002312;
    spec.key_dist_b = 0.3467;
    Workload w(spec, 300000);
    std::uint64_t hot_pos = 0;
    const std::vector<KeyRange> table = mixgraph_key_ranges(30);
    for (std::size_t i = 0; i < table.size(); ++i) hot_pos = table[i].pfx == 1 ? i : hot_pos;
    Rng rng(13);
    std::map<std::uint64_t, int> count;
    int in_hot = 0;
    for (int i = 0; i < 80000; ++i) {
        const Op op = w.next(rng, 0);
        if (op.key / 10000 != hot_pos) continue;
        ++in_hot;
        ++count[op.key];
    }
    std::vector<int> c;
    for (const auto& [k, v] : count) c.push_back(v);
    std::sort(c.rbegin(), c.rend());
    EXPECT_GT(c[0] / double(in_hot), 0.002);
    int top = 0;
    std::set<std::uint64_t> tenths;
    for (const auto& [k, v] : count) {
        if (v >= c[std::min<std::size_t>(19, c.size() - 1)]) {
            ++top;
            tenths.insert((k % 10000) / 1000);
        }
    }
    EXPECT_GE(top, 20);
    EXPECT_GE(tenths.size(), 6u);  // 20 hottest keys over >= 6 of the range's 10 tenths
}

// db_bench's Seek length: Pareto(k 2.517, sigma 14.236) mod 10000, at least 1. Median 27
// (u = 0.5), u = 1 gives 1, and the heavy tail wraps at 10000. Catches a fixed or uniform
// scan length, or the tail not capped.
TEST(LsmWorkload, MixgraphSeekLength)
{
    EXPECT_EQ(mixgraph_scan_len(1.0), 1u);
    EXPECT_EQ(mixgraph_scan_len(0.5), 27u);  // ceil(14.236 * (2^2.517 - 1) / 2.517)
    Rng rng(17);
    std::vector<std::uint32_t> v;
    for (int i = 0; i < 100000; ++i) v.push_back(mixgraph_scan_len(1.0 - rng.uniform()));
    std::sort(v.begin(), v.end());
    EXPECT_NEAR(v[50000], 27, 2);
    EXPECT_LT(v.back(), 10000u);
    EXPECT_GT(v[99000], 5000u);
}

TEST(LsmWorkload, BadSpecsRejected)
{
    WorkloadSpec spec;
    spec.kind = "ycsb-z";
    EXPECT_THROW(Workload(spec, 10), std::invalid_argument);
    spec.kind = "mixgraph";
    spec.amplitude = 1.5;
    EXPECT_THROW(Workload(spec, 10), std::invalid_argument);
    spec.amplitude = 0.5;
    spec.key_dist_a = 0.002312;  // b missing
    EXPECT_THROW(Workload(spec, 1000), std::invalid_argument);
    spec.key_dist_a = 2;
    spec.key_dist_b = 0.3;
    EXPECT_THROW(Workload(spec, 1000), std::invalid_argument);
    spec.key_dist_a = 0;
    spec.key_dist_b = 0;
    spec.key_ranges = 0;
    EXPECT_THROW(Workload(spec, 1000), std::invalid_argument);
}
