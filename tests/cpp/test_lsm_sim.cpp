// `lsm:` in burstgate-sim scenarios: the loader's keys and errors, and the store on a
// burstgate-scheduled disk (lsm_section.hpp) -- every store I/O through the agent exactly once,
// completions delivered at the simulator's time, reproducible reports, and the scheduler
// effect BurstCBS §6.7 measures.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "burstgate/sim/lsm_section.hpp"
#include "burstgate/sim/simulator.hpp"

namespace {

using namespace bg::sim;

const std::string kHead = R"(duration_ms: 200
warmup_ms: 0
dpu:
  threads: 2
  cpu_ns:
    A: {read: {base: 2200, per_kib: 40}, write: {base: 1800, per_kib: 35}}
  backend_us: {dist: lognormal, median: 30, p99: 120}
)";

// One store tenant; `extra` adds tenants, `lsm` is the section's body (indented by 2).
std::string scenario(const std::string &lsm, const std::string &extra = "", const std::string &store_base = "20000, mbps: 280")
{
    return kHead + "tenants:\n  - name: db\n    base: {iops: " + store_base + "}\n" + extra + "lsm:\n" + lsm;
}

const std::string kSmallTree = "  tree: {keys: 20000, memtable: 256k, l1: 1m, sst: 512k}\n";

std::string error_of(const std::string &text)
{
    try {
        parse_scenario(text, "s.yaml");
    } catch (const ScenarioError &e) {
        return e.what();
    }
    return "";
}

TEST(LsmSim, SectionLoadsEveryKeyWithItsMeaning)
{
    const Scenario s = parse_scenario(scenario(R"(  tenant: db
  segments: 4
  segment_size: 1m
  store: calcspar
  calcspar: {cache: passive, allocator: da, token_slices: 10}
  cache_share: 0.1
  tree: {keys: 30000, key_bytes: 24, value_bytes: 1000, sst: 2m, memtable: 512k, l1: 4m,
         level_multiplier: 8, l0_trigger: 3, l0_stop: 12, compaction_threads: 2, sync: true}
  workload: {kind: mixgraph, read_ratio: 0.7, intensity: 0.4, amplitude: 0.2, period_ms: 500, threads: 6}
)"),
                                      "s.yaml");
    ASSERT_TRUE(s.lsm);
    const LsmSection &l = *s.lsm;
    EXPECT_EQ(l.tenant, "db");
    EXPECT_EQ(l.tenant_index, 0u);
    EXPECT_EQ(l.segments, 4u);
    EXPECT_EQ(l.segment_bytes, 1u << 20);
    EXPECT_EQ(l.spec.store, "calcspar");
    EXPECT_EQ(l.spec.cache, "passive");
    EXPECT_EQ(l.spec.allocator, "da");
    EXPECT_EQ(l.spec.token_slices, 10u);
    EXPECT_DOUBLE_EQ(l.spec.cache_share, 0.1);
    EXPECT_EQ(l.spec.lsm.keys, 30000u);
    EXPECT_EQ(l.spec.lsm.key_bytes, 24u);
    EXPECT_EQ(l.spec.lsm.value_bytes, 1000u);
    EXPECT_EQ(l.spec.lsm.sst_bytes, 2u << 20);
    EXPECT_EQ(l.spec.lsm.memtable_bytes, 512u << 10);
    EXPECT_EQ(l.spec.lsm.l1_bytes, 4u << 20);
    EXPECT_EQ(l.spec.lsm.level_multiplier, 8u);
    EXPECT_EQ(l.spec.lsm.l0_trigger, 3u);
    EXPECT_EQ(l.spec.lsm.l0_stop, 12u);
    EXPECT_EQ(l.spec.lsm.compaction_threads, 2u);
    EXPECT_TRUE(l.spec.lsm.sync_wal);
    EXPECT_EQ(l.spec.workload.kind, "mixgraph");
    EXPECT_DOUBLE_EQ(l.spec.workload.read_ratio, 0.7);
    EXPECT_DOUBLE_EQ(l.spec.intensity, 0.4);
    EXPECT_DOUBLE_EQ(l.spec.workload.amplitude, 0.2);
    EXPECT_EQ(l.spec.workload.period, 500 * bg::lsm::kMs);
    EXPECT_EQ(l.spec.threads, 6u);
    // The tenant became the store's queue: segments from the section, both I/O sizes checked.
    EXPECT_EQ(s.tenants[0].wl.segments, 4u);
    EXPECT_FALSE(s.tenants[0].wl.closed);
    EXPECT_EQ(s.tenants[0].wl.rate_iops, 0.0);
}

TEST(LsmSim, OwnVolumePreset)
{
    const Scenario s = parse_scenario(kHead + R"(tenants:
  - name: t
    base: {iops: 1000, mbps: 10}
    workload: {mode: open, rate_iops: 100, sizes: {4k: 1}}
lsm:
  volume: {type: gp2, size_gb: 200}
  store: rocksdb
)",
                                      "s.yaml");
    ASSERT_TRUE(s.lsm);
    EXPECT_TRUE(s.lsm->tenant.empty());
    EXPECT_EQ(s.lsm->spec.volume.type, "gp2");
    EXPECT_EQ(s.lsm->spec.volume.paid_iops, 600u);  // 3 IOPS per GB
}

TEST(LsmSim, BadKeysNameFileLineAndPath)
{
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: ycsb-a, bogus: 1}\n")),
              "s.yaml:13: lsm.workload.bogus: unknown key (expected one of: kind, read_ratio, intensity, amplitude, "
              "period_ms, threads, file, time_scale, key_ranges, key_dist_a, key_dist_b)");
    // Mixgraph's key model: both power parameters or neither, mixgraph only, no more ranges than keys.
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: mixgraph, key_dist_a: 0.002312}\n")),
              "s.yaml:13: lsm.workload.key_dist_a: key_dist_a and key_dist_b: both 0 (uniform inside a range) or both > 0");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: mixgraph, key_dist_a: 0.5, key_dist_b: -1}\n")),
              "s.yaml:13: lsm.workload.key_dist_b: must not be negative (got -1)");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: ycsb-c, key_ranges: 10}\n")),
              "s.yaml:13: lsm.workload.key_ranges: only for kind: mixgraph");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  tree: {keys: 1000}\n  workload: {kind: mixgraph, key_ranges: 2000}\n")),
              "s.yaml:14: lsm.workload.key_ranges: more ranges than lsm.tree.keys");
    EXPECT_EQ(error_of(scenario("  tenant: nobody\n")), "s.yaml:12: lsm.tenant: no tenant is named 'nobody'");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  store: leveldb\n")),
              "s.yaml:13: lsm.store: unknown value 'leveldb' (expected calcspar | rocksdb | nocache)");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: ycsb-b, read_ratio: 0.5}\n")),
              "s.yaml:13: lsm.workload.read_ratio: only for kind: mixgraph (YCSB fixes its mix)");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  volume: {type: io2}\n")),
              "s.yaml:13: lsm.volume: not with lsm.tenant: the store's volume is that tenant's queue");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  store: rocksdb\n  calcspar: {cache: fa}\n")),
              "s.yaml:14: lsm.calcspar: only for store: calcspar");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  tree: {sst: 8x}\n")),
              "s.yaml:13: lsm.tree.sst: expected a size (4k, 8m, 1g), got '8x'");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  tree: {l0_trigger: 8, l0_stop: 4}\n")),
              "s.yaml:13: lsm.tree.l0_stop: below l0_trigger: writes would stop before L0 compacts");
    EXPECT_EQ(error_of(scenario("  volume: {type: gp2, iops: 3000}\n")),
              "s.yaml:12: lsm.volume: gp2 IOPS follow its size (3 per GB); give size, not iops");
    // A tenant without a workload is only the store's.
    EXPECT_EQ(error_of(kHead + "tenants:\n  - name: db\n    base: {iops: 1000, mbps: 10}\n"),
              "s.yaml:9: tenants[0].workload: missing");
    // The store's tenant may not keep a workload of its own.
    EXPECT_EQ(error_of(scenario("  tenant: db\n", "    workload: {mode: open, rate_iops: 10, sizes: {4k: 1}}\n")),
              "s.yaml:9: tenants[0].workload: tenant 'db' is lsm.tenant; the store's I/O is its workload, remove this one");
}

TEST(LsmSim, ProvisioningThatCanNeverAdmitAStoreIoIsRefused)
{
    // 256 KiB flush/compaction writes cost more bytes than a 100 MB/s burst grants per 1 ms window
    // (without the grant carry, which would let one through every few windows).
    try {
        Scenario sc = parse_scenario(scenario("  tenant: db\n" + kSmallTree, "", "20000, mbps: 100"), "s.yaml");
        sc.dpu.grant_carry = false;
        simulate(sc, {});
        FAIL() << "no error";
    } catch (const ScenarioError &e) {
        EXPECT_NE(std::string(e.what()).find("tenants[0].workload.sizes.256k"), std::string::npos) << e.what();
    }
}

// Every I/O the store sends to its volume is one descriptor of its tenant, and comes back once:
// the tenant's generated I/Os are the store's tokens (all its I/Os are <= 256 KiB), and what is
// not finished is in flight in the agent or still outstanding in the store.
TEST(LsmSim, EveryStoreIoGoesThroughTheAgentOnce)
{
    for (const char *store : {"rocksdb", "calcspar"}) {
        SCOPED_TRACE(store);
        const SimResult r = simulate(
            parse_scenario(scenario(std::string("  tenant: db\n  store: ") + store + "\n" + kSmallTree +
                                    "  workload: {kind: ycsb-a, intensity: 0.2}\n"),
                           "s.yaml"),
            {});
        ASSERT_TRUE(r.lsm);
        const TenantResult &t = r.tenants[0];
        const double tokens = r.lsm->run.volume_iops * 0.2;  // measured period 0..200 ms
        EXPECT_GT(t.generated, 300u);
        EXPECT_NEAR(static_cast<double>(t.generated), tokens, 0.5);
        EXPECT_EQ(t.generated - t.finished, r.in_flight + r.deferred_pending);
        EXPECT_EQ(r.bad_completions, 0u);
        // ~4000 ops/s offered for 200 ms; the store keeps up.
        EXPECT_NEAR(r.lsm->run.throughput, 4000, 400);
        EXPECT_LE(r.lsm->run.backlog, 10u);
    }
}

// A sync Put waits for its WAL write: no update can complete faster than the backend's
// fastest write plus the SA's CPU time; a completion delivered at submission would show 5 us.
TEST(LsmSim, SyncPutWaitsForTheAgentsCompletion)
{
    const SimResult r = simulate(
        parse_scenario(scenario("  tenant: db\n  store: nocache\n" +
                                std::string("  tree: {keys: 20000, memtable: 256k, l1: 1m, sst: 512k, sync: true}\n") +
                                "  workload: {kind: ycsb-a, intensity: 0.1}\n"),
                       "s.yaml"),
        {});
    ASSERT_TRUE(r.lsm);
    const auto &ops = r.lsm->run.ops;
    ASSERT_TRUE(ops.count("update"));
    // Backend lognormal median 30 us, p99 120 us (sigma 0.6): its 1 % point is ~7.5 us, plus
    // 1.8 us of CPU and 5 us of memtable insert.
    EXPECT_GT(ops.at("update").p50_us, 30.0);
    // No cache: a Get of a key not in the memtable reads one block at least (hot Zipfian keys
    // often are in it, which keeps the read median just under the backend's).
    EXPECT_GT(ops.at("read").p50_us, 15.0);
    EXPECT_EQ(r.lsm->run.lsm.wal_ios, r.lsm->run.lsm.puts);
}

TEST(LsmSim, ReportIsReproducibleAndCarriesTheStore)
{
    const std::string text = scenario("  tenant: db\n" + kSmallTree + "  workload: {kind: mixgraph, intensity: 0.2}\n");
    const std::string a = report_json(simulate(parse_scenario(text, "s.yaml"), {}));
    const std::string b = report_json(simulate(parse_scenario(text, "s.yaml"), {}));
    EXPECT_EQ(a, b);
    for (const char *k : {"\"lsm\": {\"store\": \"calcspar\", \"cache\": \"fa\", \"allocator\": \"twa\"",
                          "\"volume\": \"tenant db\", \"paid_iops\": 20000", "\"read\": {\"count\": ", "\"hit_ratio\": ",
                          "\"volume_iops\": "})
        EXPECT_NE(a.find(k), std::string::npos) << k;
    SimOptions o;
    o.seed = 5;
    EXPECT_NE(report_json(simulate(parse_scenario(text, "s.yaml"), o)), a);
}

TEST(LsmSim, StoreOnItsOwnCloudVolume)
{
    const SimResult r = simulate(parse_scenario(kHead + R"(tenants:
  - name: t
    base: {iops: 1000, mbps: 10}
    workload: {mode: open, rate_iops: 100, sizes: {4k: 1}}
lsm:
  volume: {type: io2, iops: 2000}
  store: rocksdb
  tree: {keys: 20000, memtable: 256k, l1: 1m, sst: 512k}
  workload: {kind: ycsb-c, intensity: 0.5}
)",
                                                 "s.yaml"),
                                 {});
    ASSERT_TRUE(r.lsm);
    EXPECT_EQ(r.lsm->volume, "io2");
    EXPECT_EQ(r.lsm->paid_iops, 2000u);
    EXPECT_NEAR(r.lsm->run.throughput, 1000, 150);
    EXPECT_GT(r.lsm->run.volume.fast, 0u);  // the cloud volume served it, not the agent
    EXPECT_LT(r.tenants[0].generated, 40u);  // the agent saw only tenant t's 100 IOPS
}

// BurstCBS §6.7 in small: the store's synced updates next to a neighbour bursting at iodepth 32.
// BIOS keeps the store's base share; WildCBS lets the neighbour take the SA (Fig. 26).
TEST(LsmSim, BiosShieldsTheStoreFromABurstingNeighbour)
{
    const std::string text =
        scenario("  tenant: db\n  store: rocksdb\n" +
                     std::string("  tree: {keys: 20000, memtable: 256k, l1: 1m, sst: 512k, sync: true}\n") +
                     "  workload: {kind: ycsb-a, intensity: 0.2}\n",
                 R"(  - name: bursty
    base: {iops: 20000, mbps: 200}
    burst: {iops: 1000000, mbps: 12000}
    queues: 4
    workload: {mode: closed, iodepth: 32, sizes: {4k: 0.25, 16k: 0.25, 64k: 0.25, 128k: 0.25}, read_share: 0.5}
)");
    const Scenario s = parse_scenario(text, "s.yaml");
    SimOptions wild, bios;
    wild.scheduler = Scheduler::kWild;
    bios.scheduler = Scheduler::kBios;
    const SimResult w = simulate(s, wild), b = simulate(s, bios);
    const double upd_w = w.lsm->run.ops.at("update").avg_us, upd_b = b.lsm->run.ops.at("update").avg_us;
    EXPECT_LT(upd_b, 0.5 * upd_w) << "bios " << upd_b << " us, wild " << upd_w << " us";
    EXPECT_EQ(b.tenants[0].throttled, 0u);
}

// A recorded trace replayed through the tenant: 2 threads x 40 I/Os, as fast as the agent
// completes them (time_scale 0). Every record is one descriptor; a thread's records complete in
// order, one at a time, so the per-source counts and the I/O total match the file.
TEST(LsmSim, ReplayedTraceGoesThroughTheTenant)
{
    const std::string path = ::testing::TempDir() + "lsm_sim_replay.trace";
    {
        std::ofstream f(path);
        f << "# t_ns thread op source level file offset bytes\n";
        for (int i = 0; i < 40; i++) {
            f << i * 1000 << " 1 R user 0 7 " << i * 4096 << " 4096\n";
            f << i * 1000 << " 2 W " << (i % 4 ? "compaction 1" : "flush 0") << " 9 " << i * 262144 << " 262144\n";
        }
    }
    for (const char *store : {"rocksdb", "calcspar"}) {
        SCOPED_TRACE(store);
        const std::string text = scenario(std::string("  tenant: db\n  store: ") + store +
                                          "\n  workload: {kind: replay, file: " + path + ", time_scale: 0}\n");
        const SimResult r = simulate(parse_scenario(text, "s.yaml"), {});
        ASSERT_TRUE(r.lsm);
        EXPECT_EQ(r.tenants[0].generated, 80u);
        EXPECT_EQ(r.tenants[0].finished, 80u);
        const auto &ops = r.lsm->run.ops;
        EXPECT_EQ(ops.at("all").count, 80u);
        EXPECT_EQ(ops.at("user").count, 40u);
        EXPECT_EQ(ops.at("flush").count, 10u);
        EXPECT_EQ(ops.at("compaction").count, 30u);
        // One at a time per thread: the thread of 40 reads ends after 40 reads' latency.
        EXPECT_GT(ops.at("user").avg_us, 20.0);
        EXPECT_NEAR(r.lsm->run.volume_iops, 80 / 0.2, 1e-9);
    }
    std::remove(path.c_str());
    const std::string missing = error_of(scenario("  tenant: db\n  workload: {kind: replay, file: /nonexistent/t}\n"));
    EXPECT_EQ(missing.rfind("s.yaml:13: lsm.workload.file: /nonexistent/t", 0), 0u) << missing;
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: replay, file: x, intensity: 2}\n")),
              "s.yaml:13: lsm.workload.intensity: not for kind: replay (the trace gives every I/O and its thread)");
    EXPECT_EQ(error_of(scenario("  tenant: db\n  workload: {kind: ycsb-a, time_scale: 2}\n")),
              "s.yaml:13: lsm.workload.time_scale: only for kind: replay");
}

}  // namespace
