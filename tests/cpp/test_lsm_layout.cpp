// Where the LSM store puts SST files on the volume, and how a scan reads them: the spatial
// locality Calcspar's 256 KiB prefetcher (§4.3) depends on. An SST is a sorted run
// written front to back into its own 256 KiB-aligned extent, so the data blocks of
// neighbouring keys of a level share an EBS block; a scan uses RocksDB's iterator readahead.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/lsm_store.hpp"
#include "lsm_fixture.hpp"

using namespace bg::lsm;
using bg::lsm::test::RecordingVolume;
using bg::lsm::test::small_tree;

namespace {

constexpr std::uint64_t kPagesPerEbsBlock = kEbsBlockBytes / kPageBytes;

// NoCache that also records the extents the store announces.
class ExtentCache final : public Cache {
public:
    bool lookup(std::uint64_t) override
    {
        ++stats_.misses;
        return false;
    }
    void fill(std::uint64_t) override {}
    void file_created(const FileExtent& f) override { created.push_back(f); }
    const char* name() const override { return "extents"; }
    std::vector<FileExtent> created;
};

}  // namespace

// Every SST the store creates -- loaded, flushed, compacted -- starts on a 256 KiB boundary,
// no two overlap, and its flush/compaction writes cover its extent front to back in
// consecutive I/Os of at most 256 KiB (all full but the last); no such write lands outside
// the file it belongs to. Catches SSTs written non-contiguously (scattered or interleaved
// pages, extents reused while live) and misaligned files, either of which splits a run of
// keys over EBS blocks that also hold other files.
TEST(LsmLayout, SstsWrittenContiguously)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    ExtentCache cache;
    LsmStore s(loop, vol, cache, small_tree());
    const std::size_t loaded = cache.created.size();
    ASSERT_GT(loaded, 10u);
    std::uint64_t key = 7;
    for (int i = 0; i < 5000; ++i) {  // ~5 memtables: flushes and an L0 -> L1 compaction
        s.put(key, [] {});
        key = (key + 7919) % 200000;
        loop.run_until(loop.now() + 20 * kUs);
    }
    loop.run_until(loop.now() + 10 * kSec);
    ASSERT_GE(s.stats().flushes, 4u);
    ASSERT_GE(s.stats().compactions, 1u);
    ASSERT_GT(cache.created.size(), loaded + 4);

    std::vector<FileExtent> all = cache.created;
    std::sort(all.begin(), all.end(), [](const FileExtent& a, const FileExtent& b) { return a.first_page < b.first_page; });
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(all[i].first_page % kPagesPerEbsBlock, 0u) << "file at page " << all[i].first_page;
        EXPECT_GT(all[i].pages, all[i].data_pages);  // data, then filter and index partitions
        if (i) {
            EXPECT_GE(all[i].first_page, all[i - 1].first_page + all[i - 1].pages) << "overlap at " << all[i].first_page;
        }
    }
    // Writes per file, in submission order.
    std::map<std::uint64_t, std::vector<const IoRequest*>> writes;  // first_page -> writes
    std::uint64_t bg_writes = 0;
    for (const auto& io : vol.ios) {
        if (io.op != IoOp::write || (io.source != IoSource::flush && io.source != IoSource::compaction)) continue;
        ++bg_writes;
        const std::uint64_t page = io.offset / kPageBytes;
        auto it = std::upper_bound(all.begin(), all.end(), page,
                                   [](std::uint64_t p, const FileExtent& f) { return p < f.first_page; });
        ASSERT_NE(it, all.begin()) << "write at page " << page << " before every file";
        const FileExtent& f = *(it - 1);
        ASSERT_LT(page, f.first_page + f.pages) << "write at page " << page << " outside every file";
        writes[f.first_page].push_back(&io);
    }
    EXPECT_GT(bg_writes, 0u);
    std::size_t written_files = 0;
    for (std::size_t i = loaded; i < cache.created.size(); ++i) {
        const FileExtent& f = cache.created[i];
        const auto& w = writes[f.first_page];
        ASSERT_FALSE(w.empty()) << "file at page " << f.first_page << " never written";
        ++written_files;
        std::uint64_t at = f.first_page * kPageBytes;
        for (std::size_t j = 0; j < w.size(); ++j) {
            EXPECT_EQ(w[j]->offset, at) << "file at page " << f.first_page << ", write " << j;
            EXPECT_LE(w[j]->bytes, kEbsBlockBytes);
            if (j + 1 < w.size()) {
                EXPECT_EQ(w[j]->bytes, kEbsBlockBytes);
            }
            at = w[j]->offset + w[j]->bytes;
        }
        EXPECT_EQ(at, (f.first_page + f.pages) * kPageBytes) << "file at page " << f.first_page << " not fully written";
    }
    EXPECT_EQ(written_files, cache.created.size() - loaded);
}

// A level is a sorted run: walking the keys of the deepest level in key order, the data
// block a Get reads never goes back and advances by at most one page, except where one
// file ends and the next begins; so almost every pair of neighbouring keys shares a 256 KiB
// EBS block. Catches data blocks placed by hash or in insertion order, which would leave a
// key-range workload (Mixgraph) no spatial locality to prefetch.
TEST(LsmLayout, NeighbouringKeysShareEbsBlocks)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    ExtentCache cache;
    const LsmConfig c = small_tree();
    LsmStore s(loop, vol, cache, c);
    const int deepest = 3;
    ASSERT_GT(s.files(deepest), 2u);
    std::uint64_t prev = 0, pairs = 0, same_block = 0, jumps = 0;
    bool have = false;
    for (std::uint64_t k = 0; k < c.keys; ++k) {
        if (s.level_of(k) != deepest) continue;
        const std::uint64_t page = s.get_plan(k).back();  // the data block, where the key is found
        if (have) {
            ++pairs;
            same_block += page / kPagesPerEbsBlock == prev / kPagesPerEbsBlock;
            if (page != prev && page != prev + 1) ++jumps;
        }
        prev = page;
        have = true;
    }
    EXPECT_LE(jumps, s.files(deepest) - 1);
    EXPECT_GT(static_cast<double>(same_block) / static_cast<double>(pairs), 0.98);
}

// A long scan of one file reads single blocks twice, then RocksDB's auto-readahead takes
// over: 8 KiB, 16 KiB, ... up to 256 KiB per read, and the blocks in the buffer cost no I/O
// (they still miss the block cache). A 1000-key scan of the deepest level thus takes a
// handful of I/Os per file instead of one per block. Catches scans that read block by block
// (no readahead: ~66 I/Os) or readahead that never ramps or exceeds 256 KiB.
TEST(LsmLayout, ScanReadaheadRamps)
{
    EventLoop loop;
    RecordingVolume vol(loop);
    ExtentCache cache;
    LsmConfig c = small_tree();
    c.meta_in_memory = true;
    LsmStore s(loop, vol, cache, c);
    s.scan(100000, 1000, [] {});
    loop.run_until(kSec);
    std::map<std::uint64_t, std::vector<std::uint32_t>> per_file;  // EBS-aligned file start -> read sizes
    const auto& f = cache.created;
    for (const auto& io : vol.ios) {
        ASSERT_EQ(io.op, IoOp::read);
        const std::uint64_t page = io.offset / kPageBytes;
        const auto it = std::find_if(f.begin(), f.end(), [&](const FileExtent& e) {
            return page >= e.first_page && page < e.first_page + e.data_pages;
        });
        ASSERT_NE(it, f.end());
        ASSERT_LE(page + io.bytes / kPageBytes, it->first_page + it->data_pages) << "readahead past the file's data";
        per_file[it->first_page].push_back(io.bytes);
    }
    bool ramped = false;
    for (const auto& [first, sizes] : per_file) {
        for (std::size_t j = 0; j < sizes.size(); ++j) {
            const std::uint32_t want = j < 2 ? kPageBytes : static_cast<std::uint32_t>(std::min<std::uint64_t>(kEbsBlockBytes, 8192u << (j - 2)));
            if (j + 1 < sizes.size()) {
                EXPECT_EQ(sizes[j], want) << "file at page " << first << ", read " << j;
            } else {
                EXPECT_LE(sizes[j], want);  // the last one is cut at the scan's end
            }
        }
        ramped |= sizes.size() >= 4;
    }
    EXPECT_TRUE(ramped);
    // 1000 keys ~ 67 data blocks in the deepest level alone; the readahead reads far fewer.
    EXPECT_LE(vol.ios.size(), 3u * 8u);
    EXPECT_GE(s.stats().readahead_pages, 40u);
    EXPECT_EQ(s.stats().read_ios, s.stats().block_reads);  // every block missed the (empty) cache
}
