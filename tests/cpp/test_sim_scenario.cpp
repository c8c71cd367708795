// burstgate-sim scenario loader: every bad input is reported with file:line and the field
// path, and the normative example loads with its meaning.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "burstgate/model/agent.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/scenario.hpp"

namespace {

using bg::sim::parse_scenario;
using bg::sim::ScenarioError;

const std::string kGood = R"(name: t
seed: 3
duration_ms: 100
warmup_ms: 10
scheduler: wild
window_us: 500
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}
tenants:
  - name: one
    product: A
    base: {iops: 1000, mbps: 10}
    burst: {iops: 2000, mbps: 20}
    workload:
      mode: open
      rate_iops: 500
      sizes: {4k: 0.5, 128k: 0.25, 1m: 0.25}
      read_share: 0.5
      segments: 10
      hot_segments: 2
      hot_share: 0.8
      start_ms: 5
      stop_ms: 50
)";

// The example scenario of this checkout (scenarios/example.yaml).
std::string example_scenario() { return std::string(BG_SOURCE_DIR) + "/scenarios/example.yaml"; }

// The message parse_scenario throws for `text`, or "" when it loads.
std::string error_of(const std::string &text)
{
    try {
        parse_scenario(text, "s.yaml");
    } catch (const ScenarioError &e) {
        return e.what();
    }
    return "";
}

std::string replace(std::string s, const std::string &from, const std::string &to)
{
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
}

TEST(SimScenario, LoadsEveryFieldWithItsMeaning)
{
    const bg::sim::Scenario s = parse_scenario(kGood, "s.yaml");
    EXPECT_EQ(s.seed, 3u);
    EXPECT_EQ(s.duration_ns, 100'000'000u);
    EXPECT_EQ(s.warmup_ns, 10'000'000u);
    EXPECT_EQ(s.window_ns, 500'000u);
    EXPECT_EQ(s.scheduler, bg::sim::Scheduler::kWild);
    EXPECT_EQ(s.dpu.cpu[0][1].base_ns, 1800u);
    EXPECT_EQ(s.dpu.cpu[0][0].per_kib_ns, 40u);
    ASSERT_EQ(s.tenants.size(), 1u);
    const auto &w = s.tenants[0].wl;
    EXPECT_FALSE(w.closed);
    EXPECT_EQ(w.rate_iops, 500);
    ASSERT_EQ(w.sizes.size(), 3u);
    EXPECT_EQ(w.sizes[0].first, 4096u);
    EXPECT_EQ(w.sizes[1].first, 131072u);
    EXPECT_EQ(w.sizes[2].first, 1048576u);
    EXPECT_EQ(w.start_ns, 5'000'000u);
    EXPECT_EQ(w.stop_ns, 50'000'000u);
    EXPECT_EQ(s.tenants[0].burst.mbps, 20);
}

TEST(SimScenario, LbPolicyNamesAreTheRegisterValues)
{
    // The scenario's names map to LB.POLICY's values (the model's enum), least_ios included.
    const std::pair<const char *, std::uint32_t> names[] = {
        {"static", 0}, {"rr", 1}, {"jsq", 2}, {"p2c", 3}, {"least_ios", 4}};
    for (const auto &[name, value] : names) {
        const auto s = parse_scenario(replace(kGood, "threads: 2", std::string("threads: 2\n  lb_policy: ") + name), "s.yaml");
        EXPECT_EQ(static_cast<std::uint32_t>(s.dpu.lb_policy), value) << name;
    }
    EXPECT_THROW(parse_scenario(replace(kGood, "threads: 2", "threads: 2\n  lb_policy: lru"), "s.yaml"),
                 bg::sim::ScenarioError);
}

TEST(SimScenario, NormativeExampleLoads)
{
    const bg::sim::Scenario s = bg::sim::load_scenario(example_scenario());
    EXPECT_EQ(s.name, "bps-burst-neighbor");
    ASSERT_EQ(s.tenants.size(), 3u);
    EXPECT_TRUE(s.tenants[2].credit);
    EXPECT_EQ(s.tenants[1].wl.hot_segments, 6u);
    EXPECT_EQ(s.db.steady_intervals, 5u);
    EXPECT_EQ(s.dpu.backend_p99_us, 600);
}

TEST(SimScenario, UnknownKeyNamesPathAndLine)
{
    EXPECT_EQ(error_of(replace(kGood, "      read_share: 0.5", "      read_shar: 0.5")).rfind(
                  "s.yaml:20: tenants[0].workload.read_shar: unknown key", 0),
              0u);
    EXPECT_EQ(error_of(replace(kGood, "  threads: 2", "  thread: 2")).rfind("s.yaml:8: dpu.thread: unknown key", 0), 0u);
}

TEST(SimScenario, WrongTypeNamesPath)
{
    EXPECT_EQ(error_of(replace(kGood, "duration_ms: 100", "duration_ms: long")),
              "s.yaml:3: duration_ms: expected a number, got 'long'");
    EXPECT_EQ(error_of(replace(kGood, "      segments: 10", "      segments: 2.5")),
              "s.yaml:21: tenants[0].workload.segments: expected an integer, got '2.5'");
    EXPECT_EQ(error_of(replace(kGood, "    product: A", "    product: [A]")),
              "s.yaml:13: tenants[0].product: expected a string");
}

TEST(SimScenario, NegativeRate)
{
    EXPECT_EQ(error_of(replace(kGood, "rate_iops: 500", "rate_iops: -5")),
              "s.yaml:18: tenants[0].workload.rate_iops: must not be negative (got -5)");
}

TEST(SimScenario, StopBeforeStart)
{
    EXPECT_EQ(error_of(replace(kGood, "stop_ms: 50", "stop_ms: 4")), "s.yaml:25: tenants[0].workload.stop_ms: stop before start");
}

TEST(SimScenario, SharesMustSumToOne)
{
    EXPECT_EQ(error_of(replace(kGood, "4k: 0.5,", "4k: 0.4,")).rfind("s.yaml:19: tenants[0].workload.sizes: shares sum to 0.9", 0),
              0u);
}

TEST(SimScenario, BadSize)
{
    EXPECT_EQ(error_of(replace(kGood, "128k: 0.25", "128q: 0.25")).rfind("s.yaml:19: tenants[0].workload.sizes.128q: bad size", 0),
              0u);
    EXPECT_EQ(error_of(replace(kGood, "1m: 0.25", "16m: 0.25")).rfind("s.yaml:19: tenants[0].workload.sizes.16m: size '16m' is too large", 0),
              0u);
}

TEST(SimScenario, CrossFieldRules)
{
    EXPECT_EQ(error_of(replace(kGood, "    product: A", "    product: B")),
              "s.yaml:13: tenants[0].product: product B has no dpu.cpu_ns profile");
    EXPECT_EQ(error_of(replace(kGood, "burst: {iops: 2000", "burst: {iops: 900")),
              "s.yaml:15: tenants[0].burst: burst provisioning below base");
    EXPECT_EQ(error_of(replace(kGood, "hot_segments: 2", "hot_segments: 11")),
              "s.yaml:22: tenants[0].workload.hot_segments: more hot segments than segments");
    EXPECT_EQ(error_of(replace(kGood, "scheduler: wild", "scheduler: fair")).rfind("s.yaml:5: scheduler: unknown scheduler 'fair'", 0), 0u);
    EXPECT_EQ(error_of(replace(kGood, "      rate_iops: 500", "      rate_iops: 500\n      iodepth: 4")),
              "s.yaml:19: tenants[0].workload.iodepth: only for mode: closed");
    EXPECT_EQ(error_of(replace(kGood, "warmup_ms: 10", "warmup_ms: 100")), "s.yaml:4: warmup_ms: must be shorter than duration_ms");
    EXPECT_EQ(error_of(kGood + "  - name: one\n    base: {iops: 1, mbps: 1}\n    workload: {mode: closed, iodepth: 1, sizes: {4k: 1}}\n"),
              "s.yaml:26: tenants[1].name: duplicate tenant name 'one'");
}

// dualbucket.reoffer: the host's re-offer order under dualbucket. A loader that ignored the
// key or accepted a misspelt value (silently fifo) fails here.
TEST(SimScenario, ReofferIsFifoOrSteadyFirst)
{
    EXPECT_FALSE(parse_scenario(kGood, "s.yaml").db.steady_first);
    const std::string db = kGood + "dualbucket:\n  reoffer: steady_first\n";
    EXPECT_TRUE(parse_scenario(db, "s.yaml").db.steady_first);
    EXPECT_FALSE(parse_scenario(replace(db, "steady_first", "fifo"), "s.yaml").db.steady_first);
    EXPECT_EQ(error_of(replace(db, "steady_first", "steady")),
              "s.yaml:27: dualbucket.reoffer: unknown value 'steady' (expected fifo | steady_first)");
}

// dualbucket.main_slices: parsed and handed to the firmware (provision.cpp); 1 by default (the
// whole issuance at the tick, as before). A loader or provisioning that dropped it fails here.
TEST(SimScenario, MainSlicesReachTheFirmware)
{
    EXPECT_EQ(parse_scenario(kGood, "s.yaml").db.main_slices, 1u);
    const std::string db = kGood + "dualbucket:\n  main_slices: 100\n";
    const bg::sim::Scenario sc = parse_scenario(db, "s.yaml");
    EXPECT_EQ(sc.db.main_slices, 100u);
    EXPECT_EQ(error_of(replace(db, "main_slices: 100", "main_slices: 0")).rfind("s.yaml:27: dualbucket.main_slices: ", 0), 0u);
    EXPECT_EQ(error_of(replace(db, "main_slices: 100", "main_slices: 1025")).rfind("s.yaml:27: dualbucket.main_slices: ", 0), 0u);
    bg::Agent agent(bg::AgentParams{});
    const bg_hal hal = agent.hal();
    bg::sim::Firmware fw;
    std::vector<std::string> warnings;
    // Without the meter (the gateway's call) the firmware would issue slice 0 alone: refused.
    EXPECT_THROW(bg::sim::init_firmware(sc, bg::sim::Scheduler::kDualBucket, hal, fw, warnings), bg::sim::ScenarioError);
    bg::sim::init_firmware(sc, bg::sim::Scheduler::kDualBucket, hal, fw, warnings, true);
    EXPECT_EQ(fw.fw.cfg.db.main_slices, 100u);
}

// dualbucket.main_share: Still Water's main bucket issues the proxy's limit, below capacity. A
// loader that dropped the key, or a provisioning that still issued the whole capacity (or sized
// the cheque's delta_p / mu from the main issuance: capacity left 0), fails here.
TEST(SimScenario, MainShareSetsTheMainBucketBelowCapacity)
{
    EXPECT_EQ(parse_scenario(kGood, "s.yaml").db.main_share, 1.0);
    const std::string db = kGood + "dualbucket:\n  main_share: 0.5\n";
    const bg::sim::Scenario sc = parse_scenario(db, "s.yaml");
    EXPECT_EQ(sc.db.main_share, 0.5);
    EXPECT_EQ(error_of(replace(db, "main_share: 0.5", "main_share: 0")),
              "s.yaml:27: dualbucket.main_share: must be above 0: the main bucket would admit nothing");
    EXPECT_EQ(error_of(replace(db, "main_share: 0.5", "main_share: 1.5")).rfind("s.yaml:27: dualbucket.main_share: ", 0), 0u);

    bg::Agent agent(bg::AgentParams{});
    const bg_hal hal = agent.hal();
    bg::sim::Firmware fw;
    std::vector<std::string> warnings;
    bg::sim::init_firmware(sc, bg::sim::Scheduler::kDualBucket, hal, fw, warnings);
    const bg_db_config &c = fw.fw.cfg.db;
    // 500 us windows, 2 SA threads: 1 000 000 CPU ns of capacity, half of it issued.
    EXPECT_EQ(c.capacity.d[BG_DIM_CPU], 1000000u);
    EXPECT_EQ(c.main_size.d[BG_DIM_CPU], 500000u);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        EXPECT_GT(c.capacity.d[d], 0u) << d;
        EXPECT_NEAR(double(c.main_size.d[d]), c.capacity.d[d] / 2.0, 1.0) << d;
    }
}

// Provisioning and the admissibility checks price an I/O with bg::sim::io_cost; admission
// charges what the programmed COST table says. They must be one source: a second,
// floating-point formula (what io_cost used to be) differs by rounding once estimate_error
// does not divide the profile (2200 / 3 ns + 40 / 3 ns per KiB: 787 vs the table's 785 at 4 KiB).
TEST(SimScenario, ProvisioningPricesAnIoAsAdmissionCharges)
{
    const bg::sim::Scenario sc = parse_scenario(replace(kGood, "  threads: 2", "  threads: 2\n  estimate_error: 3"), "s.yaml");
    bg::Agent agent(bg::AgentParams{});
    const bg_hal hal = agent.hal();
    bg::sim::program_device(sc, bg::sim::Scheduler::kWild, 1, hal, agent.params().ingress);
    for (std::uint32_t size : {512u, 4096u, 12288u, 131072u, 1u << 20}) {
        for (bool write : {false, true}) {
            bg::IoDesc d;
            d.size = size;
            d.write = write;
            const bg::IoDecision x = agent.io(d);
            const bg_vec c = bg::sim::io_cost(sc.dpu, sc.tenants[0], size, write);
            for (unsigned k = 0; k < BG_COST_DIMS; k++)
                EXPECT_EQ(c.d[k], x.cost.d[k]) << size << (write ? " write" : " read") << " dim " << k;
            EXPECT_EQ(bg::sim::est_io_cpu(sc.dpu, sc.tenants[0], size, write), double(x.cost.d[BG_DIM_CPU]));
        }
    }
}

TEST(SimScenario, SyntaxErrorHasLine)
{
    EXPECT_EQ(error_of("name: x\nseed: [1\n").rfind("s.yaml:", 0), 0u);
}

}  // namespace
