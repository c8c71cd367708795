#include "burstgate/lsm/cache.hpp"

namespace bg::lsm {

bool PageLru::touch(std::uint64_t page)
{
    auto it = index_.find(page);
    if (it == index_.end()) return false;
    order_.splice(order_.begin(), order_, it->second);
    return true;
}

void PageLru::insert(std::uint64_t page)
{
    order_.push_front(page);
    index_.emplace(page, order_.begin());
}

void PageLru::erase(std::uint64_t page)
{
    auto it = index_.find(page);
    if (it == index_.end()) return;
    order_.erase(it->second);
    index_.erase(it);
}

bool LruBlockCache::lookup(std::uint64_t page)
{
    if (lru_.touch(page)) {
        ++stats_.hits;
        return true;
    }
    ++stats_.misses;
    return false;
}

void LruBlockCache::fill(std::uint64_t page)
{
    if (lru_.capacity() == 0 || lru_.touch(page)) return;  // a racing miss already filled it
    if (lru_.full()) {
        lru_.erase(lru_.lru());
        ++stats_.evictions;
    }
    lru_.insert(page);
    ++stats_.fills;
}

}  // namespace bg::lsm
