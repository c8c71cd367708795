// Calcspar's fluctuation-aware cache (§4.3).
//
// One page store, two policies, only one active at a time:
//   * light load -- hotspot-aware proactive prefetching. A global table tracks the hotness of
//     each 256 KiB EBS block by exponential smoothing of its per-period access count,
//     h <- alpha * count + (1 - alpha) * h. Spare tokens are spent on 256 KiB prefetch reads of
//     the hottest blocks not yet cached (low-priority queue, §4.2), and the L0/L1 files' filter
//     and index blocks are rewarmed when those files are created ("periodically and
//     proactively rewarms the LSM top layer"). Eviction is hotness-aware: the victim is the
//     page of the coldest block among the least-recent pages, and a prefetch never evicts a
//     page of a block at least as hot as the one it brings in.
//   * heavy load -- shift-aware passive caching: 4 KiB LRU, no prefetch I/O at all.
// Heavy load = the high-priority queue took >= 95 % of the paid tokens in the current or the
// previous second (the paper's switch).
//
// Variant passive_only / prefetch_only are the P-Cache and PP-Cache of §5.4 (Fig. 20).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "burstgate/lsm/allocator.hpp"
#include "burstgate/lsm/cache.hpp"

namespace bg::lsm {

struct FaCacheConfig {
    std::uint64_t capacity_pages = 0;
    double heavy_share = 0.95;         // §4.3: high queue's share of tokens that means "heavy"
    double alpha = 0.5;                // smoothing weight of the newest period (our choice)
    Time period = 1 * kSec;            // smoothing period = the token period (our choice)
    Time tick = 10 * kMs;              // how often prefetch looks for spare tokens
    std::uint32_t max_inflight = 4;    // prefetch reads outstanding at once
    std::uint32_t eviction_scan = 64;  // least-recent pages examined for a hotness victim
    double min_hotness = 1.0;          // blocks colder than this are never prefetched
    enum class Variant { fluctuation_aware, passive_only, prefetch_only } variant =
        Variant::fluctuation_aware;
};

class FluctuationAwareCache final : public Cache {
public:
    // `io` is where prefetch reads go (the allocator: they must take a low-priority token);
    // `allocator` is read for the 95 % switch. Starts its own periodic tick on `loop`.
    FluctuationAwareCache(EventLoop& loop, Volume& io, CongestionAwareAllocator& allocator,
                          const FaCacheConfig& cfg);

    bool lookup(std::uint64_t page) override;
    void fill(std::uint64_t page) override;
    void file_created(const FileExtent& f) override;
    void file_deleted(const FileExtent& f) override;
    const char* name() const override;

    bool heavy();  // the passive policy is active now
    double hotness(std::uint64_t ebs_block) const;
    // Live EBS blocks ranked by smoothed hotness, hottest first (rebuilt each period).
    const std::vector<std::uint64_t>& ranking() const { return ranking_; }
    std::uint64_t cached_pages() const { return lru_.size(); }
    std::uint64_t mode_switches() const { return switches_; }
    // Prefetch ticks so far, and of them those that found the passive policy active.
    std::uint64_t ticks() const { return ticks_; }
    std::uint64_t heavy_ticks() const { return heavy_ticks_; }
    // Ends the smoothing period now (the periodic tick does this; tests call it directly).
    void end_period();
    // One prefetch attempt now (the periodic tick does this).
    void prefetch_step();

private:
    struct Block {
        double h = 0;
        std::uint32_t count = 0;   // accesses in the current period
        std::uint32_t pages = 0;   // pages of the file inside this block
        std::uint32_t cached = 0;  // of which cached
        std::uint64_t first_page = 0;
        bool inflight = false;
    };
    static std::uint64_t block_of(std::uint64_t page) { return page / (kEbsBlockBytes / kPageBytes); }
    void insert(std::uint64_t page, bool hotness_aware);
    void evict_one(bool hotness_aware);
    bool make_room_for(double h);
    void issue_prefetch(std::uint64_t block);
    void on_tick();

    EventLoop& loop_;
    Volume& io_;
    CongestionAwareAllocator& allocator_;
    FaCacheConfig cfg_;
    PageLru lru_;
    std::unordered_map<std::uint64_t, Block> blocks_;  // live EBS blocks
    std::vector<std::uint64_t> ranking_;
    std::deque<std::uint64_t> rewarm_;  // L0/L1 metadata blocks to load first
    std::uint32_t inflight_ = 0;
    Time next_period_;
    bool was_heavy_ = false;
    std::uint64_t switches_ = 0;
    std::uint64_t ticks_ = 0, heavy_ticks_ = 0;
};

}  // namespace bg::lsm
