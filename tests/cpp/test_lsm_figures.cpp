// burstgate-lsm's figures called as library functions (burstgate/lsm/figures.hpp) on small
// configurations: each test holds a property the figure shows, and names the bug it catches.
// The base spec is the command line's (burstgate-lsm's defaults) with a smaller tree and shorter
// runs: `burstgate-lsm FIG --duration 20 --warmup 5 --keys 100000` prints the same numbers.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "burstgate/lsm/figure_json.hpp"
#include "burstgate/lsm/figures.hpp"

using namespace bg::lsm;

namespace {

RunSpec small_base(double intensity = 1.0)
{
    RunSpec s;
    s.volume = volume_preset("io2", 0);  // 1000 paid IOPS
    s.lsm.keys = 100000;
    s.threads = 10;
    s.intensity = intensity;
    s.duration = 20 * kSec;
    s.warmup = 5 * kSec;
    s.seed = 1;
    return s;
}

}  // namespace

// Fig. 3: second 2 submits 1.6 x paid IOPS: the first 1000 are fast, the 600 beyond the second's
// tokens overdraw at ~1/IOPS; second 5 (2.0 x) completes fewer than it submits; the idle second
// 14 clears the overdraft, so second 15 is fast again. Catches a changed quota pattern, a volume
// whose overdraft is not slow, and an idle second that does not reset the overdraft.
TEST(LsmFigures, Fig3OverdraftAndItsReset)
{
    const std::vector<Fig3Second> s = fig3(volume_preset("io2", 0), 1);
    ASSERT_EQ(s.size(), 17u);
    EXPECT_EQ(s[1].submit_per_s, 1600);
    EXPECT_EQ(s[1].done, 1600u);
    EXPECT_EQ(s[1].slow, 600u);
    EXPECT_NEAR(s[1].max_us, 1000, 50);
    EXPECT_EQ(s[4].submit_per_s, 2000);
    EXPECT_LT(s[4].done, 2000u);
    EXPECT_EQ(s[13].submit_per_s, 0);
    EXPECT_EQ(s[13].done, 0u);
    EXPECT_EQ(s[14].slow, 0u);
    EXPECT_LT(s[14].avg_us, 200);
}

// Fig. 4: above paid IOPS the average latency of L closed-loop threads is L/A (W = L/A); paced
// below it, latency stays flat at the volume's service time. Catches a volume that queues
// without Little's law or a pacing that does not stay below A.
TEST(LsmFigures, Fig4LittlesLawAboveFlatBelow)
{
    const std::vector<Fig4Row> rows = fig4(volume_preset("io2", 0), 1);
    ASSERT_EQ(rows.size(), 6u);
    for (const Fig4Row& r : rows) {
        SCOPED_TRACE(r.threads);
        EXPECT_DOUBLE_EQ(r.l_over_a_us, 1000.0 * r.threads);
        EXPECT_NEAR(r.above_avg_us, r.l_over_a_us, 0.01 * r.l_over_a_us);
        EXPECT_LT(r.below_avg_us, 150);
    }
}

// Fig. 18 at the paper's load: key-major rows, Calcspar then RocksDB-like, each row its own run.
// At one thread Calcspar's Get P99 is far below the RocksDB-like store's (measured 475 vs
// 4005 us), the RocksDB-like P99 grows with threads (W = L/A: 4005 -> 80000 us at 20), and
// Calcspar never draws more than the paid IOPS. Catches rows whose store or thread count is
// not the run's (a swapped apply), a stabilizer that lets the store overdraw, and a volume
// without the overdraft queue.
TEST(LsmFigures, Fig18CalcsparP99BelowRocksDbAndFlat)
{
    FigureRunner r(small_base());
    const Comparison c = compare(r, "fig18");
    EXPECT_EQ(c.key_name, "threads");
    EXPECT_EQ(c.op, "read");
    ASSERT_EQ(c.rows.size(), 10u);
    ASSERT_EQ(r.runs().size(), 10u);
    const std::vector<std::string> threads = {"1", "2", "5", "10", "20"};
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
        const CompareRow& row = c.rows[i];
        const LabelledRun& run = r.runs()[i];
        EXPECT_EQ(row.key, threads[i / 2]);
        EXPECT_EQ(row.store, i % 2 ? "rocksdb" : "calcspar");
        EXPECT_EQ(run.label, "fig18 " + row.key + " " + row.store);
        EXPECT_EQ(run.spec.store, row.store);
        EXPECT_EQ(std::to_string(run.spec.threads), row.key);
        EXPECT_EQ(row.lat.p99_us, run.result.ops.at("read").p99_us);
        if (row.store == "calcspar") {
            EXPECT_LE(row.volume_iops, 1000.0);
        }
    }
    const CompareRow &c1 = c.rows[0], &r1 = c.rows[1], &r20 = c.rows[9];
    EXPECT_LT(c1.lat.p99_us, r1.lat.p99_us / 4) << c1.lat.p99_us << " vs " << r1.lat.p99_us;
    EXPECT_GT(r20.lat.p99_us, 10 * r1.lat.p99_us) << r1.lat.p99_us << " -> " << r20.lat.p99_us;
}

// Fig. 14 compares three stores; the no-cache store has no cache to hit. Catches the store list
// losing nocache and a nocache store that caches.
TEST(LsmFigures, Fig14HasANoCacheStoreThatNeverHits)
{
    RunSpec base = small_base();
    base.duration = 8 * kSec;
    base.warmup = 2 * kSec;
    FigureRunner r(base);
    const Comparison c = compare(r, "fig14");
    ASSERT_EQ(c.stores, (std::vector<std::string>{"calcspar", "rocksdb", "nocache"}));
    ASSERT_EQ(c.rows.size(), 18u);
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
        EXPECT_EQ(c.rows[i].store, c.stores[i % 3]);
        EXPECT_EQ(r.runs()[i].spec.workload.read_ratio, std::stod(c.rows[i].key));
        if (c.rows[i].store == "nocache") {
            EXPECT_EQ(c.rows[i].hit_ratio, 0.0);
        } else {
            EXPECT_GT(c.rows[i].hit_ratio, 0.3);
        }
    }
    EXPECT_THROW(compare(r, "fig99"), std::invalid_argument);
}

// Fig. 19 (5 % Get / 95 % Put): the static 6:3:1 split (SA) starves user reads behind the
// write-heavy queues (Get P99 in the token wait, measured 976 ms) where TWA serves them as fast
// as no allocator (NA; 521 vs 574 us). Catches the allocator not reaching the run (all four
// rows equal) and a TWA that does not favour user reads.
TEST(LsmFigures, Fig19StaticSplitStarvesReadsTwaDoesNot)
{
    FigureRunner r(small_base(10.0));  // burstgate-lsm fig19's default load
    const std::vector<Fig19Row> rows = fig19(r);
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0].allocator, "na");
    EXPECT_EQ(rows[1].allocator, "sa");
    EXPECT_EQ(rows[2].allocator, "da");
    EXPECT_EQ(rows[3].allocator, "twa");
    for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(r.runs()[i].spec.allocator, rows[i].allocator);
    EXPECT_GT(rows[1].get_p99_us, 100 * rows[3].get_p99_us);
    EXPECT_LE(rows[3].get_p99_us, rows[0].get_p99_us);
    EXPECT_GT(rows[3].compactions, 0u);
}

// The headroom table's bounds: the page optimum holds at least what the whole-block optimum of
// the same size holds and at least what LRU does on this stationary stream, and every column
// grows with the cache. Catches an optimum sorted the wrong way (it would fall below LRU) and
// caches sized from the wrong share.
TEST(LsmFigures, HeadroomOptimaBoundLru)
{
    RunSpec s = small_base();
    s.lsm.keys = 20000;
    const std::vector<double> shares = {0.01, 0.05, 0.2};
    const std::vector<Headroom> h = headroom(s, shares);
    ASSERT_EQ(h.size(), 3u);
    for (std::size_t i = 0; i < h.size(); ++i) {
        SCOPED_TRACE(h[i].share);
        EXPECT_EQ(h[i].share, shares[i]);
        EXPECT_GT(h[i].reads, 0u);
        EXPECT_EQ(h[i].reads, h[0].reads);
        EXPECT_GE(h[i].page_opt, h[i].block_opt);
        EXPECT_GE(h[i].page_opt, h[i].lru);
        if (i) {
            EXPECT_GT(h[i].lru, h[i - 1].lru);
            EXPECT_GT(h[i].page_opt, h[i - 1].page_opt);
            EXPECT_GE(h[i].block_opt, h[i - 1].block_opt);
        }
    }
}

// Fig. 18 vs load: the borrow stabilizer never makes a user read wait for the next second's
// tokens, the strict one does once the load reaches paid IOPS (measured 888 ms at one thread);
// tok/op is the run's volume IOPS per operation. Catches "calcspar+borrow" rows run with the
// strict stabilizer and a tok/op from another run.
TEST(LsmFigures, Fig18LoadBorrowNeverWaitsStrictDoes)
{
    FigureRunner r(small_base());
    const std::vector<Fig18LoadRow> rows = fig18_load(r);
    ASSERT_EQ(rows.size(), 30u);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Fig18LoadRow& x = rows[i];
        const LabelledRun& run = r.runs()[i];
        SCOPED_TRACE(run.label);
        EXPECT_EQ(run.spec.intensity, x.load);
        EXPECT_EQ(run.spec.threads, x.threads);
        EXPECT_EQ(run.spec.stabilizer, x.store == "calcspar+borrow" ? "borrow" : "strict");
        EXPECT_DOUBLE_EQ(x.tokens_per_op, run.result.volume_iops / run.result.throughput);
        if (x.store == "calcspar+borrow") {
            EXPECT_EQ(x.max_wait_ms, 0.0);
        }
    }
    EXPECT_EQ(rows.back().load, 1.0);
    EXPECT_EQ(rows[24].store, "calcspar");  // 1.0 x, one thread, strict
    EXPECT_GT(rows[24].max_wait_ms, 100.0);
}

// Fig. 20 vs load: FA's passive policy is active all the time at paid load (heavy = 1, and FA's
// data hit ratio is P's), never at 0.3 x (heavy = 0, FA above P). heavy is the FA run's own.
// Catches heavy read from the P or PP run (P is passive all the time: its share is 1 at every
// load) and the cache kind not reaching the run.
TEST(LsmFigures, Fig20LoadFaTurnsPassiveUnderLoad)
{
    FigureRunner r(small_base());
    const std::vector<Fig20LoadRow> rows = fig20_load(r);
    ASSERT_EQ(rows.size(), 6u);
    ASSERT_EQ(r.runs().size(), 18u);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(r.runs()[3 * i].spec.cache, "fa");
        EXPECT_EQ(r.runs()[3 * i + 1].spec.cache, "passive");
        EXPECT_EQ(r.runs()[3 * i + 2].spec.cache, "prefetch");
        EXPECT_EQ(rows[i].heavy, r.runs()[3 * i].result.heavy_share);
        EXPECT_EQ(rows[i].data_hit[1], r.runs()[3 * i + 1].result.data_hit_ratio);
    }
    EXPECT_EQ(rows.front().load, 0.3);
    EXPECT_EQ(rows.front().heavy, 0.0);
    EXPECT_GT(rows.front().data_hit[0], rows.front().data_hit[1] + 0.03);
    EXPECT_EQ(rows.back().heavy, 1.0);
    EXPECT_NEAR(rows.back().data_hit[0], rows.back().data_hit[1], 0.01);
}

// The fig3 / fig4 JSON, byte for byte: burstgate's Python side and tests/unit/test_lsm_cli.py
// read it. Catches a changed key order, number format, or non-finite numbers not written null.
TEST(LsmFigures, TableJsonFormat)
{
    const std::string j = table_json("fig4", volume_preset("io2", 0), {"threads", "avg_us"},
                                     {{1, 104.041}, {2, std::numeric_limits<double>::infinity()}, {4, 1234567}});
    EXPECT_EQ(j,
              "{\"figure\": \"fig4\", \"volume\": \"io2\", \"paid_iops\": 1000,\n"
              " \"columns\": [\"threads\", \"avg_us\"],\n"
              " \"rows\": [\n   [1, 104.041],\n   [2, null],\n   [4, 1.23457e+06]]}\n");
}

// The runs report keeps every run in order with its label and spec. Catches a report that
// drops or reorders runs, or labels them with another run's name.
TEST(LsmFigures, RunsJsonHoldsEveryRunInOrder)
{
    RunSpec base = small_base();
    base.lsm.keys = 20000;
    base.duration = 3 * kSec;
    base.warmup = 1 * kSec;
    FigureRunner r(base);
    fig7(r);
    RunSpec s = r.base();
    s.store = "rocksdb";
    r.go("second \"run\"", s, 2, 2);
    const std::string j = runs_json("fig7", 1, r.runs());
    EXPECT_EQ(j.rfind("{\"command\": \"fig7\", \"seed\": 1,\n  \"runs\": [\n    {\"label\": \"raw io2, 1 thread\", "
                      "\"store\": \"raw\"",
                      0),
              0u);
    const std::size_t second = j.find("{\"label\": \"second \\\"run\\\"\", \"store\": \"rocksdb\"");
    ASSERT_NE(second, std::string::npos);
    EXPECT_GT(second, j.find("raw io2"));
    EXPECT_EQ(j.substr(j.size() - 8), "]}\n  ]}\n");
}
