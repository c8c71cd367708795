// Calcspar Fig. 18's average and Fig. 20's policy order, held at a small scale (200 k keys,
// 40 s simulated; docs/results.md, "Calcspar Fig. 18" and "Fig. 20"). The numbers in the
// comments are what these specs measured when the tests were written.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/experiment.hpp"
#include "burstgate/lsm/lsm_store.hpp"
#include "burstgate/lsm/oracle_cache.hpp"

using namespace bg::lsm;

namespace {
RunSpec small(const std::string& store, std::uint32_t threads, double cache_share)
{
    RunSpec s;
    s.store = store;
    s.threads = threads;
    s.cache_share = cache_share;
    s.volume = volume_preset("io2", 1000);
    s.lsm.keys = 200000;
    s.lsm.sst_bytes = 1 << 20;
    s.lsm.l1_bytes = 2 << 20;
    s.lsm.memtable_bytes = 256 << 10;
    s.intensity = 1.0;  // the paper's: mean operations = paid IOPS
    s.duration = 40 * kSec;
    s.warmup = 10 * kSec;
    s.workload.period = 20 * kSec;
    s.seed = 4;
    return s;
}

RunResult calcspar(const char* cache, std::uint32_t threads, double share)
{
    RunSpec s = small("calcspar", threads, share);
    s.cache = cache;
    return run(s);
}

double read_avg(const RunResult& x) { return x.ops.at("read").avg_us; }
double read_p99(const RunResult& x) { return x.ops.at("read").p99_us; }
double tokens_per_op(const RunResult& x) { return x.volume_iops / x.throughput; }
}  // namespace

// The oracle cache holds exactly its pages: fitted pages hit, others miss, reads never fill,
// a created file's filter and index pages are pinned once armed (dropping the least-read
// fitted pages to stay within the size), and a deleted file's pages go. Catches an oracle that
// grows past its size (it would stop being "a cache of this size"), evicts pinned metadata
// for fitted pages, or pins the initial tree's metadata on top of the fitted set.
TEST(LsmFidelity, StaticCacheHoldsItsSetAndItsSize)
{
    StaticCache c({10, 11, 12, 13}, 4);
    EXPECT_TRUE(c.lookup(10));
    EXPECT_FALSE(c.lookup(99));
    c.fill(99);
    EXPECT_FALSE(c.lookup(99));
    EXPECT_EQ(c.stats().hits, 1u);
    EXPECT_EQ(c.stats().misses, 2u);
    FileExtent f;
    f.first_page = 640;
    f.pages = 6;
    f.data_pages = 4;  // pages 644 and 645 are filter and index
    c.file_created(f);  // not armed: the initial tree
    EXPECT_FALSE(c.holds(644));
    c.arm();
    c.file_created(f);
    EXPECT_EQ(c.size(), 4u);
    EXPECT_TRUE(c.holds(644) && c.holds(645));
    EXPECT_FALSE(c.holds(640));                 // data pages are not pinned
    EXPECT_FALSE(c.holds(13) || c.holds(12));  // the least-read fitted pages made room
    EXPECT_TRUE(c.holds(10) && c.holds(11));
    c.file_deleted(f);
    EXPECT_FALSE(c.holds(644));
    EXPECT_EQ(c.size(), 2u);
}

// most_read_pages() ranks the pages by how often the workload reads them: on a fresh stream of
// the same workload, its 500 pages serve many times the reads that the 500 least-read pages
// of its ranking serve. Catches a ranking in the wrong order or a set larger than asked for.
TEST(LsmFidelity, MostReadPagesAreTheMostRead)
{
    RunSpec s = small("calcspar", 1, 0.02);
    s.lsm.seed = s.seed;
    const auto top = most_read_pages(s.lsm, s.workload, 7, 500, 20000);
    const auto all = most_read_pages(s.lsm, s.workload, 7, 1u << 30, 20000);
    ASSERT_EQ(top.size(), 500u);
    ASSERT_GT(all.size(), 1000u);
    EXPECT_TRUE(std::equal(top.begin(), top.end(), all.begin()));
    StaticCache best(top, 500), worst(std::vector<std::uint64_t>(all.end() - 500, all.end()), 500);
    EventLoop loop;
    CloudVolume volume(loop, s.volume, 1);
    NoCache none;
    LsmStore store(loop, volume, none, s.lsm);
    Workload w(s.workload, s.lsm.keys);
    Rng rng(99);  // another stream than the one the ranking was fitted to
    for (int i = 0; i < 20000; ++i) {
        const Op op = w.next(rng, store.latest_key());
        if (op.type != OpType::read) continue;
        for (std::uint64_t p : store.get_plan(op.key)) {
            best.lookup(p);
            worst.lookup(p);
        }
    }
    EXPECT_GT(best.stats().hits, 5 * worst.stats().hits) << best.stats().hits << " vs " << worst.stats().hits;
}

// Fig. 18's average (paper: Calcspar ~175 us at every thread count, well below the others at
// 10 and 20) appears in this model only with the cache advantage the paper's result needs.
// At a cache where the RocksDB-like store overdraws in the sine's peaks (5 % of the data
// here), Calcspar with the static optimum of that size (`--cache oracle`: 0.53 tokens per
// operation against LRU's 0.62) keeps its Get average flat and far below the RocksDB-like
// store's (measured 58 and 58 us at 2 and 20 threads vs 145 -> 384) and its P99 flat (242 us;
// RocksDB-like 2.0 -> 10.4 ms); Calcspar with its own fluctuation-aware cache (0.59 tokens per
// operation) does not: its peaks still run out of tokens and its average at 20 threads is
// above the RocksDB-like store's (497 vs 384 us). Catches a change that closes the gap
// (FA's average below 0.8x RocksDB's: the paper's Fig. 18 would then be reproduced and the
// results page must say so) or breaks the bound (an oracle no better than FA).
TEST(LsmFidelity, Figure18AverageNeedsTheStaticOptimumsHitRatio)
{
    const double share = 0.05;
    const RunResult o2 = calcspar("oracle", 2, share), o20 = calcspar("oracle", 20, share);
    const RunResult fa20 = calcspar("fa", 20, share);
    const RunResult r2 = run(small("rocksdb", 2, share)), r20 = run(small("rocksdb", 20, share));
    EXPECT_GT(r20.volume.overdraft, 0u);
    EXPECT_GT(read_p99(r20), 3 * read_p99(r2));
    // The paper's shape, with the optimum: flat and far below.
    EXPECT_LT(read_avg(o20), 1.5 * read_avg(o2)) << read_avg(o2) << " -> " << read_avg(o20);
    EXPECT_LT(read_avg(o20), 0.3 * read_avg(r20)) << read_avg(o20) << " vs " << read_avg(r20);
    EXPECT_LT(read_avg(o20), 175.0);
    EXPECT_LT(read_p99(o20), 1000.0);
    EXPECT_LT(tokens_per_op(o20), 0.95 * tokens_per_op(fa20));
    // The gap, with the paper's cache as built.
    EXPECT_GE(read_avg(fa20), 0.8 * read_avg(r20)) << read_avg(fa20) << " vs " << read_avg(r20);
    EXPECT_GT(fa20.allocator_wait_s[0], 1.0);  // user reads waited for the next second's tokens
    EXPECT_LT(read_p99(fa20), 1000.0);         // ... few enough to keep P99 flat (Fig. 18's P99 holds)
}

// At the paper's cache share (2 %) no cache of that size fits the peaks: even the static
// optimum needs more tokens per operation than the sine's peak (1.5x the mean) leaves
// (measured 1.04 with filter and index blocks in the cache), so its user reads wait for tokens
// and its Get average at 20 threads is milliseconds (14.6 ms), not ~175 us. The static
// optimum's hit ratio bounds the fluctuation-aware cache's and LRU's (0.741 vs 0.708 / 0.705).
// Catches a 2 % cache, a workload or a layout change that would move this regime.
TEST(LsmFidelity, Figure18NoCacheOfThePapersShareFitsThePeaks)
{
    const double share = 0.02;
    const RunResult o = calcspar("oracle", 20, share), fa = calcspar("fa", 20, share);
    const RunResult r = run(small("rocksdb", 20, share));
    EXPECT_GT(tokens_per_op(o) * 1.5, 1.0);
    EXPECT_GT(o.allocator_wait_s[0], 10.0);
    EXPECT_GT(read_avg(o), 1000.0);
    EXPECT_GT(o.hit_ratio, fa.hit_ratio);
    EXPECT_GT(o.hit_ratio, r.hit_ratio);
}

// Fig. 20's order of the single policies per workload (paper: P > PP under YCSB, whose hot
// keys are scattered; PP > P under Mixgraph, whose hot keys are clustered), at 0.7x paid IOPS
// where the sine's troughs leave spare tokens for prefetching. Measured: YCSB-B P 0.693 vs
// PP 0.671; Mixgraph PP 0.714 vs P 0.706 (data blocks 0.262 vs 0.206). Catches a prefetcher
// that stops prefetching (PP would equal a hotness-aware LRU and lose its Mixgraph lead), or
// a layout or workload change that breaks the spatial locality the order rests on.
TEST(LsmFidelity, Figure20PassiveWinsYcsbPrefetchWinsMixgraph)
{
    auto with = [](const char* wl, const char* cache) {
        RunSpec s = small("calcspar", 10, 0.02);
        s.workload.kind = wl;
        s.cache = cache;
        s.intensity = 0.7;
        return run(s);
    };
    const RunResult yp = with("ycsb-b", "passive"), ypp = with("ycsb-b", "prefetch");
    const RunResult mp = with("mixgraph", "passive"), mpp = with("mixgraph", "prefetch");
    EXPECT_GE(yp.hit_ratio, ypp.hit_ratio + 0.01) << yp.hit_ratio << " vs " << ypp.hit_ratio;
    EXPECT_GE(mpp.hit_ratio, mp.hit_ratio + 0.004) << mpp.hit_ratio << " vs " << mp.hit_ratio;
    EXPECT_GE(mpp.data_hit_ratio, mp.data_hit_ratio + 0.03);
    EXPECT_GT(mpp.cache.prefetch_ios, 100u);
}
