// Block caches: the RocksDB-like LRU baseline and Calcspar's fluctuation-aware cache (§4.3):
// exponential-smoothing hotness ranking, the 95 % switch, hotness-aware eviction, and
// prefetch only with spare tokens in the low-priority queue.
#include <gtest/gtest.h>

#include "burstgate/lsm/allocator.hpp"
#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/fa_cache.hpp"

using namespace bg::lsm;

namespace {
constexpr std::uint64_t kPer = kEbsBlockBytes / kPageBytes;  // 64 pages per EBS block

struct Rig {
    EventLoop loop;
    CloudVolume vol{loop, volume_preset("io2", 1000), 1};
    CongestionAwareAllocator alloc{vol};
    FluctuationAwareCache cache;
    explicit Rig(std::uint64_t pages, FaCacheConfig::Variant v = FaCacheConfig::Variant::fluctuation_aware,
                 double alpha = 0.5)
        : cache(loop, alloc, alloc, [&] {
              FaCacheConfig c;
              c.capacity_pages = pages;
              c.variant = v;
              c.alpha = alpha;
              c.period = 1000 * kSec;  // tests end periods by hand
              return c;
          }())
    {
    }
    void use_high(int n)
    {
        IoRequest io;
        for (int i = 0; i < n; ++i) alloc.submit(io, [] {});
    }
};
}  // namespace

// Strict LRU: a touched page survives, the least recent goes. Catches FIFO eviction.
TEST(LsmLruCache, EvictsLeastRecentlyUsed)
{
    LruBlockCache c(3);
    for (std::uint64_t p : {1, 2, 3}) {
        EXPECT_FALSE(c.lookup(p));
        c.fill(p);
    }
    EXPECT_TRUE(c.lookup(1));
    c.fill(4);  // evicts 2
    EXPECT_TRUE(c.lookup(1));
    EXPECT_FALSE(c.lookup(2));
    EXPECT_TRUE(c.lookup(3));
    EXPECT_TRUE(c.lookup(4));
    EXPECT_EQ(c.stats().hits, 4u);
    EXPECT_EQ(c.stats().misses, 4u);
    EXPECT_EQ(c.stats().evictions, 1u);
}

// Exponential smoothing: h <- a*count + (1-a)*h. A block hot long ago decays below a block
// that is moderately hot now. Catches plain cumulative counts (old hot spots never fade) or
// only-last-period counts (one burst outranks a steady hot block).
TEST(LsmFaCache, ExponentialSmoothingRanking)
{
    Rig r(1000 * kPer, FaCacheConfig::Variant::fluctuation_aware, 0.5);
    r.cache.file_created(FileExtent{0, 3 * kPer, 3 * kPer, 3});
    auto hit = [&](std::uint64_t block, int n) { for (int i = 0; i < n; ++i) r.cache.lookup(block * kPer); };
    hit(0, 100);
    r.cache.end_period();
    EXPECT_DOUBLE_EQ(r.cache.hotness(0), 50.0);
    hit(1, 30);
    r.cache.end_period();  // block 0: 25, block 1: 15
    hit(1, 30);
    r.cache.end_period();  // block 0: 12.5, block 1: 22.5
    EXPECT_DOUBLE_EQ(r.cache.hotness(0), 12.5);
    EXPECT_DOUBLE_EQ(r.cache.hotness(1), 22.5);
    ASSERT_GE(r.cache.ranking().size(), 2u);
    EXPECT_EQ(r.cache.ranking()[0], 1u);
    EXPECT_EQ(r.cache.ranking()[1], 0u);
}

// The switch (§4.3): heavy (passive LRU) once the high-priority queue has taken >= 95 % of
// the paid tokens; light (prefetch) below. Catches a wrong threshold or reading the wrong
// queue's share.
TEST(LsmFaCache, SwitchAtNinetyFivePercent)
{
    Rig r(64);
    r.use_high(949);
    EXPECT_FALSE(r.cache.heavy());
    r.use_high(1);
    EXPECT_TRUE(r.cache.heavy());
    r.loop.run_until(kSec + 1);
    EXPECT_TRUE(r.cache.heavy());  // the previous second was heavy
    r.loop.run_until(2 * kSec + 1);
    EXPECT_FALSE(r.cache.heavy());
    // Medium/low usage does not count toward the switch.
    IoRequest c;
    c.source = IoSource::compaction;
    c.level = 3;
    for (int i = 0; i < 990; ++i) r.alloc.submit(c, [] {});
    EXPECT_FALSE(r.cache.heavy());
}

// Light load: the hottest block is prefetched with one 256 KiB read through the low queue;
// heavy load: no prefetch at all; passive-only never prefetches. Catches prefetching that
// ignores load (stealing user tokens) or 4 KiB prefetch reads.
TEST(LsmFaCache, PrefetchOnlyWhenLight)
{
    for (auto v : {FaCacheConfig::Variant::fluctuation_aware, FaCacheConfig::Variant::passive_only}) {
        Rig r(4 * kPer, v);
        r.cache.file_created(FileExtent{0, 4 * kPer, 4 * kPer, 3});
        for (int i = 0; i < 10; ++i) r.cache.lookup(2 * kPer + 5);
        r.cache.end_period();
        r.cache.prefetch_step();
        r.loop.run_until(kSec / 2);
        if (v == FaCacheConfig::Variant::passive_only) {
            EXPECT_EQ(r.cache.stats().prefetch_ios, 0u);
            continue;
        }
        EXPECT_EQ(r.cache.stats().prefetch_ios, 1u);
        EXPECT_EQ(r.vol.stats().bytes, kEbsBlockBytes);
        EXPECT_EQ(r.alloc.allocated_now(Priority::low), 1u);
        EXPECT_EQ(r.cache.cached_pages(), kPer);
        EXPECT_TRUE(r.cache.lookup(2 * kPer + 63));
        // Heavy: the same situation for another block issues nothing.
        for (int i = 0; i < 10; ++i) r.cache.lookup(3 * kPer);
        r.cache.end_period();
        r.use_high(960);
        r.cache.prefetch_step();
        EXPECT_EQ(r.cache.stats().prefetch_ios, 1u);
    }
}

// Hotness-aware eviction in light mode keeps the hot block's pages over colder ones even if
// they were touched less recently; heavy mode is plain LRU. Catches LRU in both modes.
TEST(LsmFaCache, EvictionByModes)
{
    for (bool heavy : {false, true}) {
        Rig r(2);
        r.cache.file_created(FileExtent{0, 3 * kPer, 3 * kPer, 3});
        for (int i = 0; i < 20; ++i) r.cache.lookup(0);  // block 0 hot
        r.cache.end_period();
        if (heavy) r.use_high(1000);
        r.cache.fill(0);         // hot block's page, least recent after the next fill
        r.cache.fill(kPer);      // block 1 (cold)
        r.cache.fill(2 * kPer);  // block 2 (cold): must evict one
        const bool kept_hot = r.cache.lookup(0);
        const bool kept_cold = r.cache.lookup(kPer);
        EXPECT_EQ(kept_hot, !heavy) << heavy;
        EXPECT_EQ(kept_cold, heavy) << heavy;
    }
}

// Compaction deletes a file: its pages leave the cache and its blocks the hot table.
// Catches dead pages occupying the cache and being ranked for prefetch.
TEST(LsmFaCache, DeletedFilesForgotten)
{
    Rig r(4 * kPer);
    const FileExtent f{0, 2 * kPer, 2 * kPer, 2};
    r.cache.file_created(f);
    for (int i = 0; i < 10; ++i) r.cache.lookup(3);
    r.cache.fill(3);
    r.cache.end_period();
    EXPECT_EQ(r.cache.ranking().size(), 1u);
    r.cache.file_deleted(f);
    EXPECT_EQ(r.cache.cached_pages(), 0u);
    EXPECT_EQ(r.cache.hotness(0), 0.0);
    r.cache.end_period();
    EXPECT_TRUE(r.cache.ranking().empty());
}
