// Block caches the LSM store reads through. Pages are 4 KiB volume pages (page number =
// byte offset / 4096); an SST file starts on a 256 KiB EBS-block boundary, so every EBS block
// belongs to one file.
//
//   NoCache       -- every block read goes to the volume (the "no cache" baseline).
//   LruBlockCache -- RocksDB's block cache: 4 KiB blocks, filled on a miss, strict LRU, no
//                    prefetching and no IOPS awareness (the "RocksDB-like" baseline).
//   FluctuationAwareCache (fa_cache.hpp) -- Calcspar §4.3.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

namespace bg::lsm {

struct CacheStats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t fills = 0;
    std::uint64_t evictions = 0;
    std::uint64_t prefetch_ios = 0;    // 256 KiB prefetch reads issued
    std::uint64_t prefetch_pages = 0;  // pages they brought in
    double hit_ratio() const
    {
        const std::uint64_t n = hits + misses;
        return n ? static_cast<double>(hits) / static_cast<double>(n) : 0.0;
    }
};

// A file the LSM store created or deleted, for caches that track EBS blocks.
struct FileExtent {
    std::uint64_t first_page = 0;
    std::uint32_t pages = 0;       // data + filter + index pages
    std::uint32_t data_pages = 0;  // the first data_pages pages are data blocks
    int level = 0;
};

class Cache {
public:
    virtual ~Cache() = default;
    // A foreground (user) read of `page`: true on a hit. Counts the access.
    virtual bool lookup(std::uint64_t page) = 0;
    // The miss read of `page` completed: insert it.
    virtual void fill(std::uint64_t page) = 0;
    virtual void file_created(const FileExtent&) {}
    virtual void file_deleted(const FileExtent&) {}
    virtual const char* name() const = 0;
    const CacheStats& stats() const { return stats_; }

protected:
    CacheStats stats_;
};

class NoCache final : public Cache {
public:
    bool lookup(std::uint64_t) override { ++stats_.misses; return false; }
    void fill(std::uint64_t) override {}
    const char* name() const override { return "none"; }
};

// The page store both real caches use: a recency list plus an index. Eviction is chosen by
// the owner (LRU tail, or a hotness-aware pick near the tail).
class PageLru {
public:
    explicit PageLru(std::uint64_t capacity_pages) : capacity_(capacity_pages) {}
    bool contains(std::uint64_t page) const { return index_.count(page) != 0; }
    // Moves a present page to the most-recent end; false when absent.
    bool touch(std::uint64_t page);
    // Inserts an absent page at the most-recent end (no eviction; check full() first).
    void insert(std::uint64_t page);
    void erase(std::uint64_t page);
    bool full() const { return index_.size() >= capacity_; }
    std::uint64_t size() const { return index_.size(); }
    std::uint64_t capacity() const { return capacity_; }
    // Least-recent pages, oldest first: iterate with rbegin()/rend() of the list.
    const std::list<std::uint64_t>& order() const { return order_; }
    std::uint64_t lru() const { return order_.back(); }

private:
    std::uint64_t capacity_;
    std::list<std::uint64_t> order_;  // front = most recent
    std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> index_;
};

class LruBlockCache final : public Cache {
public:
    explicit LruBlockCache(std::uint64_t capacity_pages) : lru_(capacity_pages) {}
    bool lookup(std::uint64_t page) override;
    void fill(std::uint64_t page) override;
    const char* name() const override { return "lru"; }
    const PageLru& pages() const { return lru_; }

private:
    PageLru lru_;
};

}  // namespace bg::lsm
