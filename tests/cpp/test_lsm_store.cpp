// The LSM read/write path model: initial tree shape, the block reads of a Get (filter, index,
// data per probed SST), flush and compaction I/O, write stalls, scans.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/lsm_store.hpp"
#include "lsm_fixture.hpp"

using namespace bg::lsm;
using bg::lsm::test::RecordingVolume;
using bg::lsm::test::small_tree;

// 200k keys x 272 B: L1 target 2 MiB = 7710 keys, L2 77 100, L3 the rest -> 3 levels, each
// filled to 90 % of its target except the last, every key in exactly one level, files of
// <= 1 MiB. Catches a loader that drops keys or overfills upper levels (which would start
// compactions before the run).
TEST(LsmStore, InitialTreeShape)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    NoCache cache;
    LsmStore s(loop, vol, cache, small_tree());
    EXPECT_EQ(s.entries_per_block(), 15u);
    std::uint64_t total = 0;
    for (int l = 1; l <= 3; ++l) total += s.level_keys(l);
    EXPECT_EQ(total, 200000u);
    EXPECT_EQ(s.level_keys(4), 0u);
    EXPECT_LT(s.level_keys(1), s.level_target_keys(1));
    EXPECT_LT(s.level_keys(2), s.level_target_keys(2));
    EXPECT_NEAR(static_cast<double>(s.level_keys(1)), 0.9 * 7710, 0.9 * 7710 * 0.1);
    EXPECT_EQ(s.files(1), 2u);  // 6.9k keys at 3855 keys/file
    EXPECT_EQ(s.l0_files(), 0u);
}

// A Get for a key in the deepest level reads, for every level above it, only a filter block
// (unless the bloom filter lies, ~1 %), then filter + index + data of its own level; with
// meta in memory only the data block. Catches a read path that skips levels (too few I/Os)
// or reads data blocks of levels that do not have the key (no bloom filter).
TEST(LsmStore, GetPlanFilterIndexData)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    NoCache cache;
    LsmStore s(loop, vol, cache, small_tree());
    std::map<int, std::pair<std::uint64_t, std::uint64_t>> by_level;  // level -> (gets, pages)
    for (std::uint64_t k = 0; k < 20000; ++k) {
        const int l = s.level_of(k);
        auto& e = by_level[l];
        ++e.first;
        e.second += s.get_plan(k).size();
    }
    // Level l: (l - 1) filters above + 3 own, plus ~1 % false positives x 2.
    for (int l = 1; l <= 3; ++l) {
        const double per_get = static_cast<double>(by_level[l].second) / static_cast<double>(by_level[l].first);
        EXPECT_NEAR(per_get, (l - 1) + 3, 0.05 + 0.02 * (l - 1)) << "level " << l;
    }
    LsmConfig c = small_tree();
    c.meta_in_memory = true;
    LsmStore m(loop, vol, cache, c);
    for (std::uint64_t k = 0; k < 1000; ++k) EXPECT_GE(m.get_plan(k).size(), 1u);
    std::uint64_t pages = 0;
    for (std::uint64_t k = 0; k < 20000; ++k) pages += m.get_plan(k).size();
    EXPECT_NEAR(static_cast<double>(pages) / 20000.0, 1.0, 0.03);
}

// Every Get performs its plan: one volume read per missed block, issued sequentially.
// Catches reads that bypass the cache or complete before their I/O.
TEST(LsmStore, GetIssuesPlannedReadsThroughCache)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    LruBlockCache cache(1 << 20);
    LsmStore s(loop, vol, cache, small_tree());
    const auto plan = s.get_plan(12345);
    Time done = -1;
    s.get(12345, [&] { done = loop.now(); });
    loop.run_until(kSec);
    EXPECT_EQ(vol.ios.size(), plan.size());
    EXPECT_EQ(done, 5 * kUs + static_cast<Time>(plan.size()) * 100 * kUs);
    s.get(12345, [&] { done = loop.now(); });
    const Time start = loop.now();
    loop.run_until(2 * kSec);
    EXPECT_EQ(vol.ios.size(), plan.size());  // all hits now
    EXPECT_EQ(done - start, 5 * kUs + static_cast<Time>(plan.size()) * kUs);
}

// Writes: a full memtable is flushed to an L0 file with 256 KiB writes; the key is then read
// from L0; 4 L0 files trigger an L0 -> L1 compaction whose reads and writes are tagged level 0
// and which moves every L0 key into L1. Catches flushes without I/O, compactions that lose
// keys, and wrong compaction levels (the opportunistic priority depends on them).
TEST(LsmStore, FlushAndCompaction)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    NoCache cache;
    LsmStore s(loop, vol, cache, small_tree());
    const std::uint64_t per_mem = (256 << 10) / 272;  // 963 entries
    std::uint64_t key = 7;
    auto put_n = [&](std::uint64_t n) {
        for (std::uint64_t i = 0; i < n; ++i) {
            s.put(key, [] {});
            key = (key + 7919) % 200000;
            loop.run_until(loop.now() + 10 * kUs);
        }
    };
    put_n(per_mem + 1);  // one switch -> one flush
    EXPECT_EQ(s.level_of(7), -1);
    loop.run_until(loop.now() + kSec);
    EXPECT_EQ(s.stats().flushes, 1u);
    EXPECT_EQ(s.l0_files(), 1u);
    EXPECT_EQ(s.level_of(7), 0);
    EXPECT_GE(vol.count(IoSource::flush, IoOp::write), 1u);
    for (const auto& io : vol.ios) {
        if (io.source == IoSource::flush) {
            EXPECT_LE(io.bytes, kEbsBlockBytes);
        }
    }
    const std::uint64_t before = s.level_keys(1) + s.level_keys(2) + s.level_keys(3);
    put_n(3 * per_mem);
    loop.run_until(loop.now() + 5 * kSec);
    EXPECT_EQ(s.stats().flushes, 4u);
    EXPECT_GE(s.stats().compactions, 1u);
    EXPECT_EQ(s.l0_files(), 0u);
    EXPECT_GE(s.level_of(7), 1);  // L1, or L2 if L1 overflowed and compacted on
    std::uint64_t l0_reads = 0;
    for (const auto& io : vol.ios) l0_reads += io.source == IoSource::compaction && io.level == 0 && io.op == IoOp::read;
    EXPECT_GT(l0_reads, 0u);
    // Keys are conserved: each distinct key lives in exactly one "newest" place, and levels
    // only gained the keys that were newly written.
    const std::uint64_t after = s.level_keys(1) + s.level_keys(2) + s.level_keys(3);
    EXPECT_GE(after, before);
    for (std::uint64_t k = 0; k < 200000; k += 997) EXPECT_GE(s.level_of(k), -1) << k;
}

// A second full memtable while the first is still flushing stalls the writer until the
// flush completes (RocksDB's max_write_buffer_number = 2). Catches unbounded memtables.
TEST(LsmStore, WriteStallWhileFlushing)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    NoCache cache;
    LsmConfig c = small_tree();
    LsmStore s(loop, vol, cache, c);
    const std::uint64_t per_mem = (256 << 10) / 272;
    int done = 0;
    for (std::uint64_t i = 0; i < 2 * per_mem + 1; ++i) s.put(i, [&] { ++done; });
    EXPECT_GE(s.stats().write_stalls, 1u);
    loop.run_until(loop.now() + 10 * kUs);
    EXPECT_EQ(done, static_cast<int>(2 * per_mem));
    loop.run_until(loop.now() + 2 * kSec);
    EXPECT_EQ(done, static_cast<int>(2 * per_mem + 1));
}

// A scan reads, per level, the index block of its start and the data blocks covering the
// range: a 300-key scan looks up ~300/15 deepest-level blocks, not one (the volume sees fewer
// I/Os: readahead, test_lsm_layout.cpp). Catches scans costed as point lookups.
TEST(LsmStore, ScanReadsRangeBlocks)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    NoCache cache;
    LsmConfig c = small_tree();
    c.meta_in_memory = true;
    LsmStore s(loop, vol, cache, c);
    s.scan(100000, 1, [] {});
    loop.run_until(kSec);
    const std::uint64_t one = s.stats().block_reads;
    EXPECT_LE(one, 3u);
    s.scan(100000, 300, [] {});
    loop.run_until(2 * kSec);
    const std::uint64_t many = s.stats().block_reads - one;
    EXPECT_GE(many, 300u / 15);
    EXPECT_LE(many, 300u / 15 + 3 * 3);
    EXPECT_LT(vol.ios.size(), one + many);  // readahead served some blocks without an I/O
}
