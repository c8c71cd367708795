// burstgate-sim's engine: workload statistics, conservation of I/Os through deferrals,
// reproducibility, the histogram's accuracy, and the scheduler effect the simulator exists for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "burstgate/sim/rng.hpp"
#include "burstgate/sim/simulator.hpp"

namespace {

using namespace bg::sim;

const std::string kDpu = R"(dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}
  backend_us: {dist: lognormal, median: 30, p99: 120}
)";

SimResult run(const std::string &yaml, SimOptions opt = {})
{
    return simulate(parse_scenario(yaml, "t.yaml"), opt);
}

TEST(SimEngine, OpenLoopRateIsPoisson)
{
    const SimResult r = run("duration_ms: 1000\nwarmup_ms: 0\nscheduler: base\n" + kDpu + R"(tenants:
  - name: o
    base: {iops: 100000, mbps: 1000}
    workload: {mode: open, rate_iops: 20000, sizes: {4k: 1}, start_ms: 100, stop_ms: 600}
)");
    // 10000 expected arrivals in 500 ms; Poisson sigma is 100, so 4 sigma is 4 %.
    EXPECT_NEAR(static_cast<double>(r.tenants[0].generated), 10000.0, 400.0);
    EXPECT_EQ(r.tenants[0].throttled, 0u);
    EXPECT_EQ(r.tenants[0].finished, r.tenants[0].generated);
}

TEST(SimEngine, ClosedLoopKeepsExactlyIodepthOutstanding)
{
    // A tight base makes the tenant defer: deferred I/Os still count as outstanding.
    const SimResult r = run("duration_ms: 500\nwarmup_ms: 50\nscheduler: base\n" + kDpu + R"(tenants:
  - name: c
    base: {iops: 5000, mbps: 100}
    workload: {mode: closed, iodepth: 7, sizes: {4k: 0.5, 64k: 0.5}, read_share: 0.3}
)");
    const TenantResult &t = r.tenants[0];
    EXPECT_EQ(t.generated - t.finished, 7u);
    EXPECT_EQ(r.in_flight + r.deferred_pending, 7u);
    EXPECT_GT(t.throttled, 0u);
    // Little's law over the measured period: iops x mean latency ~ iodepth.
    EXPECT_NEAR(t.iops * t.lat.mean() / 1e9, 7.0, 0.2);
}

TEST(SimEngine, EveryIoCompletesOnceThroughDeferrals)
{
    for (const char *sched : {"bios", "wild", "base", "dualbucket"}) {
        SCOPED_TRACE(sched);
        const SimResult r = run("duration_ms: 400\nwarmup_ms: 0\nscheduler: " + std::string(sched) + "\n" + kDpu + R"(tenants:
  - name: small
    base: {iops: 2000, mbps: 8}
    workload: {mode: closed, iodepth: 16, sizes: {4k: 1}, stop_ms: 50}
  - name: big
    base: {iops: 2000, mbps: 50}
    burst: {iops: 100000, mbps: 6000}
    workload: {mode: open, rate_iops: 40000, sizes: {128k: 1}, segments: 4, hot_segments: 1, hot_share: 0.9, stop_ms: 50}
)");
        EXPECT_GT(r.tenants[0].throttled + r.tenants[1].throttled, 0u) << "the test must exercise deferrals";
        EXPECT_EQ(r.finished, r.generated);
        EXPECT_EQ(r.in_flight, 0u);
        EXPECT_EQ(r.deferred_pending, 0u);
        EXPECT_EQ(r.bad_completions, 0u);
        for (const TenantResult &t : r.tenants)
            EXPECT_EQ(t.lat.count(), t.finished);
    }
}

TEST(SimEngine, SameSeedSameBytes)
{
    const Scenario sc = load_scenario(std::string(BG_SOURCE_DIR) + "/scenarios/example.yaml");
    Scenario shorter = sc;
    shorter.duration_ns = 300'000'000;
    const std::string a = report_json(simulate(shorter, {}));
    const std::string b = report_json(simulate(shorter, {}));
    EXPECT_EQ(a, b);
    SimOptions other;
    other.seed = 8;
    EXPECT_NE(a, report_json(simulate(shorter, other)));
}

TEST(SimEngine, HistogramPercentilesWithinBucketError)
{
    Rng rng(5);
    LatencyHist h;
    std::vector<std::uint64_t> v;
    for (int i = 0; i < 200000; i++) {
        const auto x = static_cast<std::uint64_t>(std::exp(11.0 + 1.2 * rng.normal()));
        v.push_back(x);
        h.record(x);
    }
    std::sort(v.begin(), v.end());
    for (double q : {0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0}) {
        const std::uint64_t exact = v[static_cast<std::size_t>(std::ceil(q * v.size())) - 1];
        EXPECT_NEAR(h.quantile(q), static_cast<double>(exact), 1.0 + exact / 512.0) << q;
    }
    for (std::uint64_t x : {0ull, 255ull, 256ull, 1000ull, 123456789ull})
        EXPECT_TRUE(LatencyHist::lower(LatencyHist::bucket(x)) <= x && x <= LatencyHist::upper(LatencyHist::bucket(x))) << x;
}

TEST(SimEngine, BiosProtectsIodepthOneVictimFromBpsNeighbour)
{
    // BurstCBS Fig. 19 in miniature: under WildCBS the neighbour drains the global budget and
    // the victim waits for the next window; BIOS gives the victim its own allocation.
    const std::string yaml = "duration_ms: 100\nwarmup_ms: 20\n" + kDpu + R"(tenants:
  - name: victim
    base: {iops: 20000, mbps: 200}
    workload: {mode: closed, iodepth: 1, sizes: {4k: 1}}
  - name: bursty
    base: {iops: 20000, mbps: 200}
    burst: {iops: 1000000, mbps: 12000}
    workload: {mode: closed, iodepth: 64, sizes: {4k: 0.25, 16k: 0.25, 64k: 0.25, 128k: 0.25}, read_share: 0.5}
)";
    SimOptions wild, bios;
    wild.scheduler = Scheduler::kWild;
    bios.scheduler = Scheduler::kBios;
    const double w = run(yaml, wild).tenants[0].lat.mean(), b = run(yaml, bios).tenants[0].lat.mean();
    EXPECT_LT(b, 0.4 * w) << "bios " << b << " ns vs wild " << w << " ns";
}

// Still Water in miniature: two clients whose closed loops send 80 % of their 4 KiB I/Os to 2 of
// 10 segments and saturate a main bucket at 0.56 of the SA's capacity. Steady I/Os are 20 % of
// what is served, the cheque's size, so with deferred I/Os re-offered in deferral order the
// steady ones that miss a cheque wait behind the hot backlog for main tokens. Re-offered first,
// they take the refilled main bucket before it. A re-offer that ignored the setting, or
// partitioned by the I/O's true segment instead of the monitor's verdict, or applied it under
// another scheduler, fails here.
TEST(SimEngine, SteadyFirstReofferKeepsSteadyIosOutOfTheHotBacklog)
{
    const std::string yaml = "duration_ms: 150\nwarmup_ms: 30\nscheduler: dualbucket\nwindow_us: 100\n" + kDpu +
                             R"(dualbucket: {hot_threshold_iops: 50000, steady_intervals: 50, cheque_share: 0.2, main_share: 0.56, alpha: 166000, headroom_mbps: 3718}
tenants:
  - name: c1
    base: {iops: 20000, mbps: 100}
    burst: {iops: 1000000, mbps: 12000}
    workload: {mode: closed, iodepth: 64, sizes: {4k: 1}, segments: 10, hot_segments: 2, hot_share: 0.8}
  - name: c2
    base: {iops: 20000, mbps: 100}
    burst: {iops: 1000000, mbps: 12000}
    workload: {mode: closed, iodepth: 64, sizes: {4k: 1}, segments: 10, hot_segments: 2, hot_share: 0.8}
)";
    Scenario fifo = parse_scenario(yaml, "t.yaml"), steady = fifo;
    steady.db.steady_first = true;
    const SimResult f = simulate(fifo, {}), s = simulate(steady, {});
    for (int i = 0; i < 2; i++) {
        SCOPED_TRACE(i);
        const double pf = f.tenants[i].lat_steady->quantile(0.99), ps = s.tenants[i].lat_steady->quantile(0.99);
        EXPECT_LT(ps, 0.5 * pf) << "steady P99 " << ps << " ns (steady_first) vs " << pf << " ns (fifo)";
        EXPECT_GT(s.tenants[i].lat_hot->quantile(0.5), s.tenants[i].lat_steady->quantile(0.99));
    }
    EXPECT_EQ(s.finished + s.in_flight + s.deferred_pending, s.generated);  // the re-order loses none
    EXPECT_EQ(s.in_flight + s.deferred_pending, 128u);
    // Only the dualbucket scheduler reads the setting: under wild both give the same bytes.
    SimOptions wild;
    wild.scheduler = Scheduler::kWild;
    EXPECT_EQ(report_json(simulate(fifo, wild)), report_json(simulate(steady, wild)));
}

// The SA's round robin goes over vCPU queues, not tenants (BurstCBS §5.1-5.2: one ingress
// queue per vCPU, the WRR "iterates through all ingress queues"): on one saturated thread, a
// tenant with 4 queues gets 4 turns for every turn of a tenant with 1, i.e. 80 % of the I/Os.
// A round robin keyed by tenant (or a FIFO, by the closed loops' symmetry) gives 50 %.
TEST(SimEngine, RoundRobinTurnsArePerVcpuQueue)
{
    const std::string yaml = "duration_ms: 100\nwarmup_ms: 20\nscheduler: wild\n" + kDpu + R"(tenants:
  - name: one
    base: {iops: 20000, mbps: 100}
    burst: {iops: 2000000, mbps: 12000}
    queues: 1
    workload: {mode: closed, iodepth: 64, sizes: {4k: 1}}
  - name: four
    base: {iops: 20000, mbps: 100}
    burst: {iops: 2000000, mbps: 12000}
    queues: 4
    workload: {mode: closed, iodepth: 64, sizes: {4k: 1}}
)";
    Scenario sc = parse_scenario(yaml, "t.yaml");
    sc.dpu.threads = 1;
    sc.dpu.estimate_error = 4.0;  // admission prices a quarter of the truth: nothing waits but at the SA
    const SimResult r = simulate(sc, {});
    ASSERT_EQ(r.tenants[0].throttled + r.tenants[1].throttled, 0u);
    const double share = r.tenants[1].iops / (r.tenants[0].iops + r.tenants[1].iops);
    EXPECT_NEAR(share, 0.8, 0.03) << r.tenants[0].iops << " vs " << r.tenants[1].iops << " IOPS";
    sc.dpu.sa_round_robin = false;
    const SimResult f = simulate(sc, {});
    EXPECT_NEAR(f.tenants[1].iops / (f.tenants[0].iops + f.tenants[1].iops), 0.5, 0.03);
}

TEST(SimEngine, OversubscribedBaseIsAScenarioError)
{
    try {
        run("duration_ms: 10\n" + kDpu + R"(tenants:
  - name: a
    base: {iops: 1000000, mbps: 4000}
    workload: {mode: closed, iodepth: 1, sizes: {4k: 1}}
)");
        FAIL() << "expected ScenarioError";
    } catch (const ScenarioError &e) {
        // 1M IOPS of 4000 B (the knee) cost 2.36 CPU s/s, the two threads have 2.
        EXPECT_EQ(std::string(e.what()).rfind("t.yaml:8: tenants: the bases cannot all be honoured", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("cpu units per window"), std::string::npos) << e.what();
    }
}

TEST(SimEngine, UtilizationIsTheTrueResourceUse)
{
    // 50000 4 KiB writes/s of product A: true CPU 1800 + 35 * 4 = 1940 ns each on 2 threads,
    // 4096 B to the limiter and 4096 + 128 B on the egress link, a 128 B header back.
    const SimResult r = run("duration_ms: 1000\nwarmup_ms: 100\nscheduler: base\n" + kDpu + R"(tenants:
  - name: w
    base: {iops: 200000, mbps: 2000}
    workload: {mode: open, rate_iops: 50000, sizes: {4k: 1}, read_share: 0}
)");
    const double iops = r.tenants[0].iops;
    EXPECT_NEAR(iops, 50000, 1000);
    EXPECT_NEAR(r.utilization[0], iops * 1940 / 2e9, 0.002);
    EXPECT_NEAR(r.utilization[1], iops * 128 / 12.5e9, 0.0002);
    EXPECT_NEAR(r.utilization[2], iops * 4224 / 12.5e9, 0.001);
    EXPECT_NEAR(r.utilization[3], iops * 4096 / 3e9, 0.002);
}

TEST(SimEngine, EstimateErrorCostsTheEstimatorNotTheThread)
{
    // 2 threads x 20 us per I/O: the SA serves 100k IOPS. 150k IOPS are offered under WildCBS,
    // whose global budget is the capacity in estimated units: an exact estimator defers the
    // excess; one that undercosts by 2x admits all of it and the threads (true cost) saturate.
    // (60 ms keeps the SA backlog below the egress depth, which would defer it too.)
    const std::string yaml = R"(duration_ms: 60
warmup_ms: 10
scheduler: wild
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 20000, per_kib: 0}, write: {base: 20000, per_kib: 0}}
  backend_us: {dist: lognormal, median: 10, p99: 20}
  estimate_error: ERR
tenants:
  - name: c
    base: {iops: 10000, mbps: 100}
    burst: {iops: 1000000, mbps: 10000}
    workload: {mode: open, rate_iops: 150000, sizes: {4k: 1}}
)";
    auto with = [&](const char *err) {
        std::string y = yaml;
        y.replace(y.find("ERR"), 3, err);
        return run(y);
    };
    const SimResult exact = with("1.0"), under = with("2.0");
    EXPECT_GT(exact.tenants[0].throttled, 1000u);
    EXPECT_NEAR(exact.tenants[0].iops, 100000, 3000);
    EXPECT_EQ(under.tenants[0].throttled, 0u);
    EXPECT_GT(under.admitted_load[0], 1.4);  // admitted 1.5x what the threads can do
    EXPECT_NEAR(under.utilization[0], 1.0, 0.01);
    EXPECT_NEAR(exact.admitted_load[0], exact.utilization[0], 0.03);
}

TEST(SimEngine, CreditBurstNeedsCredits)
{
    // burst_mode credit: no credits -> capped at base; credits -> up to the burst provisioning.
    // The contracts' knee is 4 KiB, where the cost cap is exactly the IOPS (docs/contracts.md).
    const std::string yaml = "duration_ms: 300\nwarmup_ms: 50\nscheduler: bios\n" + kDpu + R"(tenants:
  - name: c
    base: {iops: 10000, mbps: 40.96}
    burst: {iops: 30000, mbps: 122.88}
    burst_mode: credit
    burst_credits: CREDITS
    workload: {mode: closed, iodepth: 64, sizes: {4k: 1}}
)";
    auto with = [&](const char *credits) {
        std::string y = yaml;
        y.replace(y.find("CREDITS"), 7, credits);
        return run(y).tenants[0].iops;
    };
    EXPECT_NEAR(with("0"), 10000, 500);
    EXPECT_GT(with("100000000"), 25000);
}

TEST(SimEngine, IoLargerThanAnyGrantIsAScenarioError)
{
    // 200 MB/s + 100k headers/s with 1 ms windows grant 212800 link bytes per window, and the
    // grant carry adds at most one 1 MiB write's 1048704: a 2 MiB write (plus its header) would
    // wait forever. Up to 1 MiB the contract holds at every size (docs/contracts.md).
    const std::string yaml = "duration_ms: 10\n" + kDpu + R"(tenants:
  - name: a
    base: {iops: 50000, mbps: 100}
    burst: {iops: 100000, mbps: 200}
    workload: {mode: closed, iodepth: 1, sizes: {4k: 0.5, 2m: 0.5}}
)";
    try {
        run(yaml);
        FAIL() << "expected ScenarioError";
    } catch (const ScenarioError &e) {
        EXPECT_EQ(std::string(e.what()),
                  "t.yaml:8: tenants[0].workload.sizes.2m: one write costs 2097280 egress units, more than the "
                  "tenant's burst provisioning grants per window with the grant carry (1261504): it could never be "
                  "admitted; raise burst or window_us");
    }
    // A 1 MiB write is admitted with the carry; without it (dpu.grant_carry: false) never.
    std::string one_mib = yaml;
    one_mib.replace(one_mib.find("2m: 0.5"), 7, "1m: 0.5");
    EXPECT_GT(run(one_mib).tenants[0].finished, 0u);
    std::string no_carry = one_mib;
    no_carry.replace(no_carry.find("dpu:\n"), 5, "dpu:\n  grant_carry: false\n");
    try {
        run(no_carry);
        FAIL() << "expected ScenarioError";
    } catch (const ScenarioError &e) {
        EXPECT_NE(std::string(e.what()).find("sizes.1m: one write costs 1048704 egress units, more than the tenant's "
                                             "burst provisioning grants per window (212800)"),
                  std::string::npos)
            << e.what();
    }
    // Within burst but above base: a warning (such I/Os wait for a burst share), not an error.
    std::string within = yaml;
    within.replace(within.find("mbps: 200}"), 10, "mbps: 2000}");
    const SimResult w = run(within);
    ASSERT_EQ(w.warnings.size(), 1u);
    EXPECT_EQ(w.warnings[0].rfind("t.yaml:8: tenants[0].workload.sizes.2m: one write costs 2097280 egress units, more "
                                  "than the base grant per window with the grant carry (1155104)", 0), 0u) << w.warnings[0];
    EXPECT_GT(w.tenants[0].finished, 0u);
    // Dual-bucket as Still Water prints it admits from the shared main bucket: no per-tenant
    // ceiling. Composed with the tenants' contracts (the default) the same check applies.
    SimOptions db;
    db.scheduler = Scheduler::kDualBucket;
    EXPECT_THROW(run(yaml, db), ScenarioError);
    Scenario seg = parse_scenario(yaml, "t.yaml");
    seg.db.tenant_contracts = false;
    EXPECT_GT(simulate(seg, db).tenants[0].finished, 0u);
}

}  // namespace
