#include "burstgate/lsm/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <stdexcept>

#include "burstgate/lsm/allocator.hpp"

namespace bg::lsm {

LatencySummary summarize(std::vector<Time>& s)
{
    LatencySummary r;
    r.count = s.size();
    if (s.empty()) return r;
    std::sort(s.begin(), s.end());
    double sum = 0;
    for (Time t : s) sum += static_cast<double>(t);
    auto pct = [&](double p) {
        const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size())));
        return static_cast<double>(s[std::clamp<std::size_t>(rank, 1, s.size()) - 1]) / 1e3;
    };
    r.avg_us = sum / static_cast<double>(s.size()) / 1e3;
    r.p50_us = pct(0.50);
    r.p99_us = pct(0.99);
    r.p999_us = pct(0.999);
    r.max_us = static_cast<double>(s.back()) / 1e3;
    return r;
}

namespace {

struct Request {
    Op op;
    Time arrived;
};

class Driver {
public:
    Driver(const RunSpec& spec, EventLoop& loop, LsmStore* store, Volume* raw, Workload& wl)
        : spec_(spec), loop_(loop), store_(store), raw_(raw), wl_(wl), rng_(spec.seed ^ 0x5eed),
          idle_(spec.threads)
    {
        base_rate_ = spec.intensity * static_cast<double>(spec.volume.paid_iops);
        timeline_.resize(static_cast<std::size_t>((spec.duration + kSec - 1) / kSec));
        schedule_arrival();
    }

    std::map<OpType, std::vector<Time>> lat;
    std::vector<Time> all, response;
    std::uint64_t offered_measured = 0;
    std::vector<SecondSample> timeline_;
    std::uint64_t backlog() const { return queue_.size(); }

private:
    void schedule_arrival()
    {
        const double rate = base_rate_ * wl_.rate_factor(loop_.now());
        const Time gap = rate <= 0 ? 10 * kMs : std::max<Time>(1, static_cast<Time>(rng_.exponential(1e9 / rate)));
        if (loop_.now() + gap >= spec_.duration) return;
        loop_.after(gap, [this] {
            arrive();
            schedule_arrival();
        });
    }

    void arrive()
    {
        Op op = wl_.next(rng_, store_ ? store_->latest_key() : 0);
        if (op.type == OpType::insert) op.key = store_ ? store_->next_insert_key() : 0;
        const std::size_t sec = static_cast<std::size_t>(loop_.now() / kSec);
        if (sec < timeline_.size()) ++timeline_[sec].offered;
        if (loop_.now() >= spec_.warmup) ++offered_measured;
        queue_.push_back(Request{op, loop_.now()});
        if (idle_ > 0) {
            --idle_;
            start_next();
        }
    }

    void start_next()
    {
        if (queue_.empty()) {
            ++idle_;
            return;
        }
        Request r = queue_.front();
        queue_.pop_front();
        const Time start = loop_.now();
        auto finish = [this, r, start] {
            record(r, start);
            start_next();
        };
        if (!store_) {
            IoRequest io;
            io.offset = rng_.below(std::uint64_t{1} << 26) * kPageBytes;
            io.bytes = kPageBytes;
            raw_->submit(io, finish);
            return;
        }
        switch (r.op.type) {
        case OpType::read: store_->get(r.op.key, finish); break;
        case OpType::update:
        case OpType::insert: store_->put(r.op.key, finish); break;
        case OpType::scan: store_->scan(r.op.key, r.op.scan_len, finish); break;
        case OpType::rmw:
            store_->get(r.op.key, [this, key = r.op.key, finish] { store_->put(key, finish); });
            break;
        }
    }

    void record(const Request& r, Time start)
    {
        const Time now = loop_.now();
        const std::size_t sec = static_cast<std::size_t>(now / kSec);
        const double us = static_cast<double>(now - start) / 1e3;
        if (sec < timeline_.size()) {
            auto& s = timeline_[sec];
            s.avg_us += us;  // a sum until the end of the run
            s.max_us = std::max(s.max_us, us);
            ++s.completed;
        }
        if (start < spec_.warmup) return;
        lat[r.op.type].push_back(now - start);
        all.push_back(now - start);
        response.push_back(now - r.arrived);
    }

    const RunSpec& spec_;
    EventLoop& loop_;
    LsmStore* store_;
    Volume* raw_;
    Workload& wl_;
    Rng rng_;
    std::uint32_t idle_;
    double base_rate_ = 0;
    std::deque<Request> queue_;
};

}  // namespace

RunResult run(const RunSpec& spec)
{
    if (spec.threads == 0) throw std::invalid_argument("threads must be > 0");
    if (spec.intensity <= 0) throw std::invalid_argument("intensity must be > 0");
    if (spec.duration <= spec.warmup) throw std::invalid_argument("duration must exceed warmup");
    if (spec.cache_share < 0 || spec.cache_share > 1) throw std::invalid_argument("cache share in [0, 1]");

    EventLoop loop;
    CloudVolume volume(loop, spec.volume, spec.seed * 7 + 3);
    const std::uint64_t data_bytes = spec.lsm.keys * (spec.lsm.key_bytes + spec.lsm.value_bytes);
    const std::uint64_t pages = static_cast<std::uint64_t>(spec.cache_share * static_cast<double>(data_bytes) / kPageBytes);

    std::unique_ptr<CongestionAwareAllocator> allocator;
    std::unique_ptr<Cache> cache;
    Volume* io = &volume;
    LsmConfig lsm = spec.lsm;
    if (spec.store == "calcspar") {
        CongestionAwareAllocator::Policy pol;
        if (spec.allocator == "twa") pol = CongestionAwareAllocator::Policy::time_window;
        else if (spec.allocator == "na") pol = CongestionAwareAllocator::Policy::no_allocation;
        else if (spec.allocator == "twa-reserve") pol = CongestionAwareAllocator::Policy::time_window_reserve;
        else if (spec.allocator == "sa") pol = CongestionAwareAllocator::Policy::static_share;
        else if (spec.allocator == "da") pol = CongestionAwareAllocator::Policy::dynamic_share;
        else throw std::invalid_argument("unknown allocator '" + spec.allocator + "' (twa, na, sa, da, twa-reserve)");
        allocator = std::make_unique<CongestionAwareAllocator>(volume, pol, spec.volume.phase, spec.token_slices);
        io = allocator.get();
        FaCacheConfig fc;
        fc.capacity_pages = pages;
        if (spec.cache == "fa") fc.variant = FaCacheConfig::Variant::fluctuation_aware;
        else if (spec.cache == "passive") fc.variant = FaCacheConfig::Variant::passive_only;
        else if (spec.cache == "prefetch") fc.variant = FaCacheConfig::Variant::prefetch_only;
        else throw std::invalid_argument("unknown cache '" + spec.cache + "' (fa, passive, prefetch)");
        cache = std::make_unique<FluctuationAwareCache>(loop, *allocator, *allocator, fc);
    } else if (spec.store == "rocksdb") {
        cache = std::make_unique<LruBlockCache>(pages);
    } else if (spec.store == "nocache" || spec.store == "raw") {
        cache = std::make_unique<NoCache>();
        lsm.meta_in_memory = true;  // RocksDB without a block cache: table readers hold them
    } else {
        throw std::invalid_argument("unknown store '" + spec.store + "' (calcspar, rocksdb, nocache, raw)");
    }
    lsm.seed = spec.seed;
    std::unique_ptr<LsmStore> store;
    if (spec.store != "raw") store = std::make_unique<LsmStore>(loop, *io, *cache, lsm);
    Workload wl(spec.workload, lsm.keys);
    Driver driver(spec, loop, store.get(), &volume, wl);

    CacheStats cache_at_warmup;
    VolumeStats vol_at_warmup;
    LsmStats lsm_at_warmup;
    for (Time t = kSec; t <= spec.duration; t += kSec) {
        loop.run_until(std::min(t, spec.duration));
        if (t == spec.warmup || (t > spec.warmup && t - kSec < spec.warmup)) {
            cache_at_warmup = cache->stats();
            vol_at_warmup = volume.stats();
            if (store) lsm_at_warmup = store->stats();
        }
        if (spec.progress) spec.progress(static_cast<double>(t) / static_cast<double>(spec.duration));
    }

    RunResult r;
    for (auto& [type, samples] : driver.lat) r.ops[to_string(type)] = summarize(samples);
    r.ops["all"] = summarize(driver.all);
    r.response = summarize(driver.response);
    const double measured_s = static_cast<double>(spec.duration - spec.warmup) / 1e9;
    r.throughput = static_cast<double>(r.ops["all"].count) / measured_s;
    r.offered = static_cast<double>(driver.offered_measured) / measured_s;
    const auto& ps = volume.tokens_per_second();
    std::uint64_t tokens = 0;
    const std::size_t end_sec = std::min(ps.size(), static_cast<std::size_t>(spec.duration / kSec));
    for (std::size_t s = static_cast<std::size_t>(spec.warmup / kSec); s < end_sec; ++s) tokens += ps[s];
    r.volume_iops = static_cast<double>(tokens) / measured_s;
    const CacheStats& c = cache->stats();
    r.cache = c;
    const std::uint64_t hits = c.hits - cache_at_warmup.hits, misses = c.misses - cache_at_warmup.misses;
    r.hit_ratio = hits + misses ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 0.0;
    r.volume = volume.stats();
    if (store) {
        r.lsm = store->stats();
        const std::uint64_t reads = r.lsm.data_reads - lsm_at_warmup.data_reads;
        const std::uint64_t ios = r.lsm.data_read_ios - lsm_at_warmup.data_read_ios;
        r.data_hit_ratio = reads ? 1.0 - static_cast<double>(ios) / static_cast<double>(reads) : 0.0;
    }
    r.cache_pages = pages;
    if (allocator) {
        for (int q = 0; q < kPriorities; ++q) {
            r.allocator_max_wait_us[q] = static_cast<double>(allocator->max_wait_ns(static_cast<Priority>(q))) / 1e3;
        }
    }
    r.backlog = driver.backlog();
    r.timeline = driver.timeline_;
    for (std::size_t s = 0; s < r.timeline.size(); ++s) {
        auto& x = r.timeline[s];
        if (x.completed) x.avg_us /= static_cast<double>(x.completed);
        x.volume_tokens = s < ps.size() ? ps[s] : 0;
    }
    r.events = loop.events_run();
    return r;
}

}  // namespace bg::lsm
