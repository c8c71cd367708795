// The parts burstgate-sim's engine is composed of (simulator.cpp), each on its own: the event
// order that makes a run deterministic, the reuse of I/O records, the tenants' queue and segment
// ranges, and the --csv row of one window. simulate() as a whole: test_sim_engine.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "burstgate/sim/event_queue.hpp"
#include "burstgate/sim/firmware_loop.hpp"
#include "burstgate/sim/io_table.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/sa_stages.hpp"
#include "burstgate/sim/window_series.hpp"
#include "burstgate/sim/workload_sources.hpp"

namespace {

using namespace bg::sim;

const std::string kScenario = R"(duration_ms: 100
warmup_ms: 0
scheduler: base
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}
tenants:
  - name: a
    base: {iops: 20000, mbps: 200}
    queues: 2
    workload: {mode: closed, iodepth: 4, sizes: {4k: 1}, segments: 4}
  - name: b
    base: {iops: 20000, mbps: 200}
    queues: 3
    workload: {mode: closed, iodepth: 4, sizes: {4k: 0.5, 64k: 0.5}, segments: 8, hot_segments: 2, hot_share: 0.5}
)";

// Events due at the same time come out by (kind, id), whatever order they were pushed in;
// earlier times first. Catches a heap ordered by time alone, whose ties then depend on the
// push history (a run would no longer be a function of its inputs).
TEST(SimParts, EventQueueTiesAreOrderedByKindThenId)
{
    EventQueue q;
    q.push(5, EventKind::kWindow, 0);
    q.push(5, EventKind::kComplete, 9);
    q.push(3, EventKind::kWindow, 0);
    q.push(5, EventKind::kArrival, 2);
    q.push(5, EventKind::kComplete, 1);
    q.push(5, EventKind::kStart, 7);
    q.push(5, EventKind::kArrival, 1);
    std::vector<std::string> got;
    while (!q.empty()) {
        const std::uint64_t t = q.next_time();
        const Event e = q.pop();
        EXPECT_EQ(e.t, t);
        got.push_back(std::to_string(e.t) + ":" + std::to_string(static_cast<unsigned>(e.kind())) + ":" +
                      std::to_string(e.id()));
    }
    EXPECT_EQ(got, (std::vector<std::string>{"3:6:0", "5:0:7", "5:1:1", "5:1:2", "5:5:1", "5:5:9", "5:6:0"}));
}

// A completed record's slot is reused, reset: nothing of the old I/O (its deferral, its store
// cookie) survives into the new one. Catches a reused record that keeps `deferred` (the new I/O
// would not count as a distinct deferred I/O) or `lsm` (its completion would go to the store).
TEST(SimParts, IoTableReusesSlotsReset)
{
    const Scenario sc = parse_scenario(kScenario, "t.yaml");
    IoTable ios(sc);
    const std::uint32_t a = ios.alloc(10, 0), b = ios.alloc(20, 1);
    EXPECT_NE(a, b);
    ios[a].deferred = true;
    ios[a].lsm = 5;
    ios[a].size = 4096;
    ios.release(a);
    const std::uint32_t c = ios.alloc(30, 1);
    EXPECT_EQ(c, a);
    EXPECT_FALSE(ios[c].deferred);
    EXPECT_EQ(ios[c].lsm, 0u);
    EXPECT_EQ(ios[c].size, 0u);
    EXPECT_EQ(ios[c].arrival, 30u);
    EXPECT_EQ(ios[c].tenant, 1u);
    EXPECT_EQ(ios[b].arrival, 20u);
}

// Each tenant's I/Os stay in its own vCPU queues and segments (the ranges follow the earlier
// tenants'), and a workload's hot share lands on its first hot_segments. Catches ranges that
// do not accumulate (two tenants on the same segments: the segment monitor would take one
// tenant's hot segment for the other's) and hot I/Os drawn outside the hot segments.
TEST(SimParts, WorkloadSourcesKeepTenantsApart)
{
    const Scenario sc = parse_scenario(kScenario, "t.yaml");
    const Firmware fw;  // read only for trace records
    std::vector<std::string> warnings;
    WorkloadSources src(sc, 1, Scheduler::kBase, 4, fw, warnings);
    EXPECT_EQ(src.vqueues(), 5u);
    EXPECT_EQ(src.tenant(1).queue_base, 2u);
    EXPECT_EQ(src.tenant(1).seg_base, 4u);
    IoTable ios(sc);
    unsigned hot = 0;
    const unsigned n = 4000;
    for (unsigned k = 0; k < n; k++) {
        const std::uint32_t ti = k % 2;
        const Io &io = ios[src.new_io(ti, k, ios)];
        const TenantSource &t = src.tenant(ti);
        EXPECT_EQ(io.tenant, ti);
        ASSERT_GE(io.vq, t.queue_base);
        ASSERT_LT(io.vq, t.queue_base + t.cfg->queues);
        EXPECT_EQ(io.queue, io.vq % 4);
        ASSERT_GE(io.segment, t.seg_base);
        ASSERT_LT(io.segment, t.seg_base + t.cfg->wl.segments);
        if (io.hot) {
            hot++;
            EXPECT_EQ(ti, 1u);
            EXPECT_LT(io.segment, t.seg_base + t.cfg->wl.hot_segments);
        }
        EXPECT_EQ(io.true_cpu, true_cpu_ns(sc.dpu, *t.cfg, io.size, io.write));
    }
    EXPECT_NEAR(hot, n / 4.0, 0.1 * n / 4.0);  // half of tenant b's half
    EXPECT_TRUE(warnings.empty());
}

// One window's --csv rows: per tenant its completions as IOPS and MB/s over the window, its
// deferrals and latency, then the counters start over. Catches counters that are not reset
// between windows (every later row would carry the earlier windows' I/Os).
TEST(SimParts, WindowSeriesRowsPerWindow)
{
    const Scenario sc = parse_scenario(kScenario, "t.yaml");
    auto dev = open_scenario_device(sc, "model");
    std::vector<std::string> warnings;
    FirmwareLoop fw(sc, Scheduler::kBase, 1, *dev, warnings);
    WindowSeries series(sc, Scheduler::kBase);
    std::ostringstream os;
    WindowSeries::write_header(os);
    series.completed(0, 4096, 100'000);
    series.completed(0, 4096, 300'000);
    series.deferred(1);
    // The grants written at each tick (the grant carry may still be filling its bucket in the
    // second window: it holds kCarryIos I/Os at the knee, more than one window of base).
    std::vector<std::uint32_t> cpu_grant;
    fw.window();
    series.write_window(os, 1, 1'000'000, fw);
    cpu_grant.push_back(fw.grant(0, 0));
    cpu_grant.push_back(fw.grant(1, 0));
    fw.window();
    series.write_window(os, 2, 2'000'000, fw);
    cpu_grant.push_back(fw.grant(0, 0));
    cpu_grant.push_back(fw.grant(1, 0));
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(os.str());
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> f;
        std::istringstream l(line);
        for (std::string x; std::getline(l, x, ',');) f.push_back(x);
        rows.push_back(f);
    }
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[0][0], "window");
    EXPECT_EQ(rows[0].size(), 14u);
    // window, t_ms, tenant, iops, mbps, 4 grants, deferrals, lat_avg_us, lat_max_us (sa: blank)
    const auto head = [](const std::vector<std::string> &f) {
        return std::vector<std::string>{f[0], f[1], f[2], f[3], f[4], f[9], f[10], f[11]};
    };
    EXPECT_EQ(head(rows[1]), (std::vector<std::string>{"1", "1.000", "a", "2000", "8.192", "0", "200.000", "300.000"}));
    EXPECT_EQ(head(rows[2]), (std::vector<std::string>{"1", "1.000", "b", "0", "0.000", "1", "0.000", "0.000"}));
    EXPECT_EQ(head(rows[3]), (std::vector<std::string>{"2", "2.000", "a", "0", "0.000", "0", "0.000", "0.000"}));
    EXPECT_EQ(head(rows[4]), (std::vector<std::string>{"2", "2.000", "b", "0", "0.000", "0", "0.000", "0.000"}));
    for (std::size_t r = 1; r < rows.size(); r++) EXPECT_EQ(std::stoul(rows[r][5]), cpu_grant[r - 1]);
}

}  // namespace
