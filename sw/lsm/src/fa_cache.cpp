#include "burstgate/lsm/fa_cache.hpp"

#include <algorithm>
#include <stdexcept>

namespace bg::lsm {

FluctuationAwareCache::FluctuationAwareCache(EventLoop& loop, Volume& io,
                                             CongestionAwareAllocator& allocator,
                                             const FaCacheConfig& cfg)
    : loop_(loop), io_(io), allocator_(allocator), cfg_(cfg), lru_(cfg.capacity_pages),
      next_period_(loop.now() + cfg.period)
{
    if (cfg.alpha <= 0 || cfg.alpha > 1) throw std::invalid_argument("FaCache: alpha in (0, 1]");
    if (cfg.period <= 0 || cfg.tick <= 0) throw std::invalid_argument("FaCache: period, tick > 0");
    if (cfg.heavy_share <= 0 || cfg.heavy_share > 1) {
        throw std::invalid_argument("FaCache: heavy_share in (0, 1]");
    }
    loop_.after(cfg_.tick, [this] { on_tick(); });
}

const char* FluctuationAwareCache::name() const
{
    switch (cfg_.variant) {
    case FaCacheConfig::Variant::fluctuation_aware: return "fa";
    case FaCacheConfig::Variant::passive_only: return "passive";
    case FaCacheConfig::Variant::prefetch_only: return "prefetch";
    }
    return "?";
}

bool FluctuationAwareCache::heavy()
{
    switch (cfg_.variant) {
    case FaCacheConfig::Variant::passive_only: return true;
    case FaCacheConfig::Variant::prefetch_only: return false;
    case FaCacheConfig::Variant::fluctuation_aware: break;
    }
    const bool h = allocator_.high_share_now() >= cfg_.heavy_share ||
                   allocator_.high_share_prev() >= cfg_.heavy_share;
    if (h != was_heavy_) {
        was_heavy_ = h;
        ++switches_;
    }
    return h;
}

double FluctuationAwareCache::hotness(std::uint64_t ebs_block) const
{
    auto it = blocks_.find(ebs_block);
    return it == blocks_.end() ? 0.0 : it->second.h;
}

bool FluctuationAwareCache::lookup(std::uint64_t page)
{
    auto it = blocks_.find(block_of(page));
    if (it != blocks_.end()) ++it->second.count;
    if (lru_.touch(page)) {
        ++stats_.hits;
        return true;
    }
    ++stats_.misses;
    return false;
}

void FluctuationAwareCache::fill(std::uint64_t page)
{
    if (lru_.capacity() == 0 || lru_.touch(page)) return;
    insert(page, !heavy());
}

void FluctuationAwareCache::evict_one(bool hotness_aware)
{
    std::uint64_t victim = lru_.lru();
    if (hotness_aware) {
        double coldest = -1;
        std::uint32_t seen = 0;
        for (auto it = lru_.order().rbegin(); it != lru_.order().rend() && seen < cfg_.eviction_scan;
             ++it, ++seen) {
            const double h = hotness(block_of(*it));
            if (coldest < 0 || h < coldest) {
                coldest = h;
                victim = *it;
            }
        }
    }
    lru_.erase(victim);
    auto it = blocks_.find(block_of(victim));
    if (it != blocks_.end() && it->second.cached) --it->second.cached;
    ++stats_.evictions;
}

void FluctuationAwareCache::insert(std::uint64_t page, bool hotness_aware)
{
    if (lru_.full()) evict_one(hotness_aware);
    lru_.insert(page);
    auto it = blocks_.find(block_of(page));
    if (it != blocks_.end()) ++it->second.cached;
    ++stats_.fills;
}

bool FluctuationAwareCache::make_room_for(double h)
{
    if (!lru_.full()) return true;
    // Only evict colder data than what the prefetch brings (§4.3: only hot data is loaded).
    std::uint32_t seen = 0;
    for (auto it = lru_.order().rbegin(); it != lru_.order().rend() && seen < cfg_.eviction_scan;
         ++it, ++seen) {
        if (hotness(block_of(*it)) < h) {
            evict_one(true);
            return true;
        }
    }
    return false;
}

void FluctuationAwareCache::file_created(const FileExtent& f)
{
    const std::uint64_t per = kEbsBlockBytes / kPageBytes;
    for (std::uint64_t b = block_of(f.first_page); b <= block_of(f.first_page + f.pages - 1); ++b) {
        Block blk;
        blk.first_page = std::max(b * per, f.first_page);
        const std::uint64_t end = std::min((b + 1) * per, f.first_page + f.pages);
        blk.pages = static_cast<std::uint32_t>(end - blk.first_page);
        blocks_[b] = blk;
    }
    // Rewarm the top of the tree: every lookup through L0/L1 reads these files' filter and
    // index blocks, which sit after the data pages.
    if (f.level <= 1 && cfg_.variant != FaCacheConfig::Variant::passive_only) {
        for (std::uint64_t b = block_of(f.first_page + f.data_pages);
             b <= block_of(f.first_page + f.pages - 1); ++b) {
            rewarm_.push_back(b);
        }
    }
}

void FluctuationAwareCache::file_deleted(const FileExtent& f)
{
    for (std::uint64_t p = f.first_page; p < f.first_page + f.pages; ++p) lru_.erase(p);
    for (std::uint64_t b = block_of(f.first_page); b <= block_of(f.first_page + f.pages - 1); ++b) {
        blocks_.erase(b);
    }
}

void FluctuationAwareCache::end_period()
{
    ranking_.clear();
    for (auto& [id, blk] : blocks_) {
        blk.h = cfg_.alpha * blk.count + (1.0 - cfg_.alpha) * blk.h;
        blk.count = 0;
        if (blk.h >= cfg_.min_hotness) ranking_.push_back(id);
    }
    std::sort(ranking_.begin(), ranking_.end(), [this](std::uint64_t a, std::uint64_t b) {
        const double ha = blocks_.at(a).h, hb = blocks_.at(b).h;
        return ha != hb ? ha > hb : a < b;  // ties by address: deterministic
    });
    // Hot blocks beyond what the cache can hold would only evict each other.
    const std::uint64_t per = kEbsBlockBytes / kPageBytes;
    const std::uint64_t keep = lru_.capacity() / per + 1;
    if (ranking_.size() > keep) ranking_.resize(keep);
}

void FluctuationAwareCache::issue_prefetch(std::uint64_t id)
{
    Block& blk = blocks_.at(id);
    blk.inflight = true;
    ++inflight_;
    ++stats_.prefetch_ios;
    IoRequest io;
    io.offset = blk.first_page * kPageBytes;
    io.bytes = blk.pages * kPageBytes;
    io.op = IoOp::read;
    io.source = IoSource::prefetch;
    io_.submit(io, [this, id] {
        --inflight_;
        auto it = blocks_.find(id);
        if (it == blocks_.end()) return;  // the file was compacted away meanwhile
        it->second.inflight = false;
        const double h = it->second.h;
        const std::uint64_t first = it->second.first_page, n = it->second.pages;
        for (std::uint64_t p = first; p < first + n; ++p) {
            if (lru_.touch(p)) continue;
            if (!make_room_for(h)) break;
            insert(p, true);
            ++stats_.prefetch_pages;
        }
    });
}

void FluctuationAwareCache::prefetch_step()
{
    if (lru_.capacity() == 0 || heavy()) return;
    while (inflight_ < cfg_.max_inflight && !rewarm_.empty()) {
        const std::uint64_t id = rewarm_.front();
        rewarm_.pop_front();
        auto it = blocks_.find(id);
        if (it == blocks_.end() || it->second.inflight || it->second.cached == it->second.pages) continue;
        // Rewarmed metadata is as hot as the hottest tracked block: it is read on every probe.
        if (!ranking_.empty()) it->second.h = std::max(it->second.h, hotness(ranking_.front()));
        issue_prefetch(id);
    }
    for (std::uint64_t id : ranking_) {
        if (inflight_ >= cfg_.max_inflight) break;
        auto it = blocks_.find(id);
        if (it == blocks_.end() || it->second.inflight) continue;
        // Worth a token only when most of the block is missing.
        if (it->second.cached * 2 >= it->second.pages) continue;
        // Would the block survive? The least-recent pages must include something colder.
        if (lru_.full() && hotness(block_of(lru_.lru())) >= it->second.h) {
            bool colder = false;
            std::uint32_t seen = 0;
            for (auto p = lru_.order().rbegin(); p != lru_.order().rend() && seen < cfg_.eviction_scan;
                 ++p, ++seen) {
                if (hotness(block_of(*p)) < it->second.h) { colder = true; break; }
            }
            if (!colder) continue;
        }
        issue_prefetch(id);
    }
}

void FluctuationAwareCache::on_tick()
{
    if (loop_.now() >= next_period_) {
        end_period();
        next_period_ += cfg_.period;
    }
    ++ticks_;
    if (heavy()) ++heavy_ticks_;
    prefetch_step();
    loop_.after(cfg_.tick, [this] { on_tick(); });
}

}  // namespace bg::lsm
