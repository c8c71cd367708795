#include "burstgate/lsm/oracle_cache.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "burstgate/lsm/cloud_volume.hpp"

namespace bg::lsm {

StaticCache::StaticCache(const std::vector<std::uint64_t>& ranked, std::uint64_t capacity)
    : ranked_(ranked), capacity_(capacity)
{
    if (ranked_.size() > capacity_) ranked_.resize(capacity_);
    pages_.insert(ranked_.begin(), ranked_.end());
}

void StaticCache::file_created(const FileExtent& f)
{
    if (!armed_) return;
    for (std::uint64_t p = f.first_page + f.data_pages; p < f.first_page + f.pages; ++p) {
        if (capacity_ == 0 || !pages_.insert(p).second) continue;
        // Make room by dropping the least-read fitted page still held (never a pinned one).
        while (pages_.size() > capacity_ && !ranked_.empty()) {
            pages_.erase(ranked_.back());
            ranked_.pop_back();
        }
        if (pages_.size() > capacity_) pages_.erase(p);  // only pinned pages left: keep the older ones
    }
}

bool StaticCache::lookup(std::uint64_t page)
{
    if (pages_.count(page)) {
        ++stats_.hits;
        return true;
    }
    ++stats_.misses;
    return false;
}

void StaticCache::file_deleted(const FileExtent& f)
{
    // A compacted-away file's pages are never read again; keeping them would only hide that
    // the set has shrunk.
    for (std::uint64_t p = f.first_page; p < f.first_page + f.pages; ++p) pages_.erase(p);
}

std::vector<std::uint64_t> most_read_pages(const LsmConfig& cfg, const WorkloadSpec& wl, std::uint64_t seed,
                                           std::uint64_t capacity, std::uint32_t ops)
{
    EventLoop loop;
    CloudVolume volume(loop, volume_preset("io2", 1000), 1);  // never submitted to: only plans are read
    NoCache none;
    LsmStore store(loop, volume, none, cfg);
    Workload w(wl, cfg.keys);
    Rng rng(seed ^ 0x04ac1e);
    std::unordered_map<std::uint64_t, std::uint64_t> freq;
    for (std::uint32_t i = 0; i < ops; ++i) {
        const Op op = w.next(rng, store.latest_key());
        std::vector<std::uint64_t> plan;
        if (op.type == OpType::read || op.type == OpType::rmw) plan = store.get_plan(op.key);
        else if (op.type == OpType::scan) plan = store.scan_plan(op.key, op.scan_len);
        for (std::uint64_t p : plan) ++freq[p];
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranked(freq.begin(), freq.end());
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (ranked.size() > capacity) ranked.resize(capacity);
    std::vector<std::uint64_t> out;
    out.reserve(ranked.size());
    for (const auto& [page, n] : ranked) out.push_back(page);
    return out;
}

}  // namespace bg::lsm
