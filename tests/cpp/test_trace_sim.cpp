// burstgate-sim's `mode: trace`: the loader's keys and their errors (file:line: field path), and
// the engine replaying exactly the trace's records: the device filter, time_scale, loop, sizes,
// and a malformed record surfacing as a ScenarioError that names the trace's FILE:LINE.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "burstgate/sim/scenario.hpp"
#include "burstgate/sim/simulator.hpp"

namespace {

using bg::sim::ScenarioError;

// A folder of its own per test, removed at the end.
class TraceSim : public ::testing::Test {
protected:
    void SetUp() override
    {
        dir_ = std::filesystem::temp_directory_path() /
               ("bg_trace_sim_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string write(const std::string &name, const std::string &text)
    {
        const std::string p = (dir_ / name).string();
        std::ofstream(p) << text;
        return p;
    }
    // Two trace tenants over one Alibaba file: `a` replays device 1, `b` device 2.
    std::string scenario(const std::string &a_extra, const std::string &b_extra = "")
    {
        return R"(name: t
duration_ms: 10
warmup_ms: 0
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}
  backend_us: {median: 30, p99: 120}
tenants:
  - name: a
    base: {iops: 20000, mbps: 200}
    workload:
      mode: trace
      trace: {file: t.csv, format: alibaba, device: "1")" +
               a_extra + R"(}
      segments: 4
  - name: b
    base: {iops: 20000, mbps: 200}
    workload:
      mode: trace
      trace: {file: t.csv, format: alibaba, device: "2")" +
               b_extra + R"(}
)";
    }
    std::filesystem::path dir_;
};

// Device 1: a 4 KiB read at 0 and an 8 KiB write at 1 ms; device 2: one 512 B read at 0.5 ms.
const char kTrace[] = "1,R,0,4096,1000\n2,R,0,512,1500\n1,W,1073741824,8192,2000\n";

TEST_F(TraceSim, ReplaysEachDevicesRecordsWithTheirSizes)
{
    write("t.csv", kTrace);
    const auto sc = bg::sim::load_scenario(write("s.yaml", scenario("")));
    EXPECT_EQ(sc.tenants[0].wl.tr.file, (dir_ / "t.csv").string());  // relative to the scenario
    const auto r = bg::sim::simulate(sc, {});
    EXPECT_EQ(r.tenants[0].generated, 2u);
    EXPECT_EQ(r.tenants[0].bytes, 4096u + 8192u);
    EXPECT_EQ(r.tenants[1].generated, 1u);
    EXPECT_EQ(r.tenants[1].bytes, 512u);
    // Directions from the trace: read data on the ingress link, write data on the egress link
    // (128 B header each; capacity 100 Gb/s x 10 ms = 1.25e8 B).
    EXPECT_NEAR(r.admitted_load[1] * 1.25e8, 3 * 128 + 4096 + 512, 1e-3);
    EXPECT_NEAR(r.admitted_load[2] * 1.25e8, 3 * 128 + 8192, 1e-3);
    EXPECT_EQ(r.bad_completions, 0u);
}

TEST_F(TraceSim, LoopRestartsAtTheLastRecordsTime)
{
    write("t.csv", kTrace);
    // Pass k arrives at k ms (4 KiB) and k+1 ms (8 KiB); before 10 ms: 10 + 9 I/Os.
    const auto r = bg::sim::simulate(bg::sim::load_scenario(write("s.yaml", scenario(", loop: true"))), {});
    EXPECT_EQ(r.tenants[0].generated, 19u);
    EXPECT_EQ(r.tenants[0].bytes, 10u * 4096 + 9u * 8192);
    // Device 1's records all at the trace's first instant: looping would never advance.
    write("t.csv", "1,R,0,4096,1000\n1,W,0,4096,1000\n2,R,0,512,1500\n");
    try {
        bg::sim::simulate(bg::sim::load_scenario(write("s2.yaml", scenario(", loop: true"))), {});
        FAIL() << "no error";
    } catch (const ScenarioError &e) {
        EXPECT_NE(std::string(e.what()).find("tenants[0].workload.trace.loop: "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("spans no time"), std::string::npos) << e.what();
    }
}

TEST_F(TraceSim, TimeScaleAndSkipMoveArrivals)
{
    write("t.csv", kTrace);
    // x10: device 1's write arrives at 10 ms, the end of the run: not generated.
    const auto r = bg::sim::simulate(bg::sim::load_scenario(write("s.yaml", scenario(", time_scale: 10"))), {});
    EXPECT_EQ(r.tenants[0].generated, 1u);
    // skip_s 0.001: the read at 0 is skipped, the write at 1 ms arrives at 0.
    const auto k = bg::sim::simulate(bg::sim::load_scenario(write("k.yaml", scenario(", skip_s: 0.001"))), {});
    EXPECT_EQ(k.tenants[0].generated, 1u);
    EXPECT_EQ(k.tenants[0].bytes, 8192u);
}

TEST_F(TraceSim, MalformedRecordIsAScenarioErrorAtTheTracesLine)
{
    write("t.csv", "1,R,0,4096,1000\n1,R,0,4096,900\n");
    try {
        bg::sim::simulate(bg::sim::load_scenario(write("s.yaml", scenario(""))), {});
        FAIL() << "no error";
    } catch (const ScenarioError &e) {
        EXPECT_EQ(std::string(e.what()).rfind((dir_ / "t.csv").string() + ":2: time goes backwards", 0), 0u) << e.what();
    }
}

TEST_F(TraceSim, RecordNoBurstGrantCoversIsAnError)
{
    // 8 MiB: more swlimit bytes than 200 MB/s grants in a 1 ms window.
    write("t.csv", "1,W,0,8388608,1000\n");
    try {
        bg::sim::simulate(bg::sim::load_scenario(write("s.yaml", scenario(""))), {});
        FAIL() << "no error";
    } catch (const ScenarioError &e) {
        EXPECT_EQ(std::string(e.what()).rfind((dir_ / "t.csv").string() + ":1: length 8388608: one write costs", 0), 0u)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("could never be admitted"), std::string::npos) << e.what();
    }
}

TEST_F(TraceSim, LoaderErrorsNameTheFieldPath)
{
    write("t.csv", kTrace);
    auto error_of = [&](const std::string &text) -> std::string {
        try {
            bg::sim::load_scenario(write("bad.yaml", text));
        } catch (const ScenarioError &e) {
            return e.what();
        }
        return "";
    };
    const std::string good = scenario("");
    auto with = [&](const std::string &from, const std::string &to) {
        std::string s = good;
        s.replace(s.find(from), from.size(), to);
        return s;
    };
    const std::string f = (dir_ / "bad.yaml").string();
    EXPECT_EQ(error_of(with("file: t.csv", "file: none.csv")).rfind(f + ":14: tenants[0].workload.trace.file: cannot open", 0), 0u)
        << error_of(with("file: t.csv", "file: none.csv"));
    EXPECT_NE(error_of(with("format: alibaba", "format: ali")).find("tenants[0].workload.trace.format: unknown trace format 'ali'"),
              std::string::npos);
    EXPECT_NE(error_of(with("device: \"1\"", "device: \"1\", time_scale: 0")).find("trace.time_scale: must be in"),
              std::string::npos);
    EXPECT_NE(error_of(with("      segments: 4\n", "      segments: 4\n      hot_segments: 1\n"))
                  .find("tenants[0].workload.hot_segments: not for mode: trace"),
              std::string::npos);
    EXPECT_NE(error_of(with("device: \"1\"", "device: \"1\", segment_size: 0")).find("trace.segment_size: size must be at least 1 byte"),
              std::string::npos);
    // --trace / --format of burstgate-host replace the file's.
    bg::sim::LoadOptions lo;
    lo.trace_file = write("other.csv", kTrace);
    lo.trace_format = "alibaba";
    lo.duration_ns = 5'000'000;
    const auto sc = bg::sim::load_scenario(write("s.yaml", with("file: t.csv", "file: none.csv")), lo);
    EXPECT_EQ(sc.tenants[0].wl.tr.file, lo.trace_file);
    EXPECT_EQ(sc.duration_ns, 5'000'000u);
    EXPECT_EQ(sc.tenants[0].wl.stop_ns, 5'000'000u);
}

}  // namespace
