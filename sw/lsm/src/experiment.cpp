#include "burstgate/lsm/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <stdexcept>

#include "burstgate/lsm/allocator.hpp"
#include "burstgate/lsm/oracle_cache.hpp"

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
    Driver(const RunSpec& spec, EventLoop& loop, LsmStore* store, Volume* raw, Workload& wl, std::uint32_t paid_iops)
        : spec_(spec), loop_(loop), store_(store), raw_(raw), wl_(wl), rng_(spec.seed ^ 0x5eed),
          idle_(spec.threads)
    {
        base_rate_ = spec.intensity * static_cast<double>(paid_iops);
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

// A backing volume's IOPS tokens per second, counted at submission (a CloudVolume counts
// them itself, when it spends them).
class TokenCounter final : public Volume {
public:
    TokenCounter(Volume& v, Time warmup) : v_(v), warmup_(warmup) {}
    void submit(const IoRequest& io, Completion done) override
    {
        const auto sec = static_cast<std::size_t>(v_.loop().now() / kSec);
        if (sec >= per_second_.size()) per_second_.resize(sec + 1);
        per_second_[sec] += io_tokens(io.bytes);
        if (v_.loop().now() >= warmup_) measured_ += io_tokens(io.bytes);
        v_.submit(io, std::move(done));
    }
    std::uint32_t paid_iops() const override { return v_.paid_iops(); }
    EventLoop& loop() override { return v_.loop(); }
    const std::vector<std::uint32_t>& tokens_per_second() const { return per_second_; }
    std::uint64_t measured() const { return measured_; }  // tokens submitted at or after warmup

private:
    Volume& v_;
    Time warmup_;
    std::uint64_t measured_ = 0;
    std::vector<std::uint32_t> per_second_;
};

}  // namespace

struct Experiment::Impl {
    RunSpec spec;
    EventLoop& loop;
    std::unique_ptr<CloudVolume> volume;    // without a backing volume
    std::unique_ptr<TokenCounter> counter;  // with one
    std::unique_ptr<CongestionAwareAllocator> allocator;
    std::unique_ptr<Cache> cache;
    std::unique_ptr<LsmStore> store;
    std::unique_ptr<Workload> wl;
    std::unique_ptr<Driver> driver;
    std::uint64_t pages = 0;
    CacheStats cache_at_warmup;
    VolumeStats vol_at_warmup;
    LsmStats lsm_at_warmup;
    FluctuationAwareCache* fa = nullptr;
    std::uint64_t ticks_at_warmup = 0, heavy_at_warmup = 0;
    Time wait_at_warmup[kPriorities] = {0, 0, 0};

    Impl(const RunSpec& s, EventLoop& l) : spec(s), loop(l) {}
    const std::vector<std::uint32_t>& tokens_per_second() const
    {
        return volume ? volume->tokens_per_second() : counter->tokens_per_second();
    }
};

Experiment::Experiment(const RunSpec& spec, EventLoop& loop, Volume* backing) : impl_(std::make_unique<Impl>(spec, loop))
{
    if (spec.threads == 0) throw std::invalid_argument("threads must be > 0");
    if (spec.intensity <= 0) throw std::invalid_argument("intensity must be > 0");
    if (spec.duration <= spec.warmup) throw std::invalid_argument("duration must exceed warmup");
    if (spec.cache_share < 0 || spec.cache_share > 1) throw std::invalid_argument("cache share in [0, 1]");
    Impl& m = *impl_;
    Volume* base;
    if (backing) {
        if (&backing->loop() != &loop) throw std::invalid_argument("the backing volume runs on another event loop");
        if (backing->paid_iops() == 0) throw std::invalid_argument("the backing volume pays for 0 IOPS");
        m.counter = std::make_unique<TokenCounter>(*backing, spec.warmup);
        base = m.counter.get();
    } else {
        m.volume = std::make_unique<CloudVolume>(loop, spec.volume, spec.seed * 7 + 3);
        base = m.volume.get();
    }
    const std::uint64_t data_bytes = spec.lsm.keys * (spec.lsm.key_bytes + spec.lsm.value_bytes);
    m.pages = static_cast<std::uint64_t>(spec.cache_share * static_cast<double>(data_bytes) / kPageBytes);

    Volume* io = base;
    LsmConfig lsm = spec.lsm;
    lsm.seed = spec.seed;
    if (spec.store == "calcspar") {
        CongestionAwareAllocator::Policy pol;
        if (spec.allocator == "twa") pol = CongestionAwareAllocator::Policy::time_window;
        else if (spec.allocator == "na") pol = CongestionAwareAllocator::Policy::no_allocation;
        else if (spec.allocator == "twa-reserve") pol = CongestionAwareAllocator::Policy::time_window_reserve;
        else if (spec.allocator == "sa") pol = CongestionAwareAllocator::Policy::static_share;
        else if (spec.allocator == "da") pol = CongestionAwareAllocator::Policy::dynamic_share;
        else throw std::invalid_argument("unknown allocator '" + spec.allocator + "' (twa, na, sa, da, twa-reserve)");
        if (spec.stabilizer != "strict" && spec.stabilizer != "borrow") {
            throw std::invalid_argument("unknown stabilizer '" + spec.stabilizer + "' (strict, borrow)");
        }
        m.allocator = std::make_unique<CongestionAwareAllocator>(*base, pol, spec.volume.phase, spec.token_slices,
                                                                 spec.stabilizer == "borrow");
        io = m.allocator.get();
        if (spec.cache == "oracle") {
            // The static optimum of this size (oracle_cache.hpp): a bound, not a policy.
            m.cache = std::make_unique<StaticCache>(most_read_pages(lsm, spec.workload, spec.seed, m.pages, 400000), m.pages);
        }
        FaCacheConfig fc;
        fc.capacity_pages = m.pages;
        if (spec.cache == "fa") fc.variant = FaCacheConfig::Variant::fluctuation_aware;
        else if (spec.cache == "passive") fc.variant = FaCacheConfig::Variant::passive_only;
        else if (spec.cache == "prefetch") fc.variant = FaCacheConfig::Variant::prefetch_only;
        else if (spec.cache != "oracle") {
            throw std::invalid_argument("unknown cache '" + spec.cache + "' (fa, passive, prefetch, oracle)");
        }
        if (!m.cache) {
            auto fa = std::make_unique<FluctuationAwareCache>(loop, *m.allocator, *m.allocator, fc);
            m.fa = fa.get();
            m.cache = std::move(fa);
        }
    } else if (spec.store == "rocksdb") {
        m.cache = std::make_unique<LruBlockCache>(m.pages);
    } else if (spec.store == "nocache" || spec.store == "raw") {
        m.cache = std::make_unique<NoCache>();
        lsm.meta_in_memory = true;  // RocksDB without a block cache: table readers hold them
    } else {
        throw std::invalid_argument("unknown store '" + spec.store + "' (calcspar, rocksdb, nocache, raw)");
    }
    if (spec.store != "raw") m.store = std::make_unique<LsmStore>(loop, *io, *m.cache, lsm);
    if (auto* oracle = dynamic_cast<StaticCache*>(m.cache.get())) oracle->arm();
    m.wl = std::make_unique<Workload>(spec.workload, lsm.keys);
    m.driver = std::make_unique<Driver>(m.spec, loop, m.store.get(), base, *m.wl, base->paid_iops());
    if (backing) loop.at(spec.warmup, [this] { mark_warmup(); });
}

Experiment::~Experiment() = default;

void Experiment::mark_warmup()
{
    Impl& m = *impl_;
    m.cache_at_warmup = m.cache->stats();
    if (m.volume) m.vol_at_warmup = m.volume->stats();
    if (m.store) m.lsm_at_warmup = m.store->stats();
    if (m.allocator) {
        for (int q = 0; q < kPriorities; ++q) m.wait_at_warmup[q] = m.allocator->wait_ns(static_cast<Priority>(q));
    }
    if (m.fa) {
        m.ticks_at_warmup = m.fa->ticks();
        m.heavy_at_warmup = m.fa->heavy_ticks();
    }
}

RunResult Experiment::result()
{
    Impl& m = *impl_;
    const RunSpec& spec = m.spec;
    Driver& driver = *m.driver;
    RunResult r;
    for (auto& [type, samples] : driver.lat) r.ops[to_string(type)] = summarize(samples);
    r.ops["all"] = summarize(driver.all);
    r.response = summarize(driver.response);
    const double measured_s = static_cast<double>(spec.duration - spec.warmup) / 1e9;
    r.throughput = static_cast<double>(r.ops["all"].count) / measured_s;
    r.offered = static_cast<double>(driver.offered_measured) / measured_s;
    const auto& ps = m.tokens_per_second();
    // Whole seconds of the measured period; a run shorter than a second (burstgate-sim's
    // scenarios) counts the tokens of [warmup, duration) at their rate.
    double tokens = 0;
    if (spec.duration - spec.warmup >= kSec) {
        const std::size_t end_sec = std::min(ps.size(), static_cast<std::size_t>(spec.duration / kSec));
        for (std::size_t s = static_cast<std::size_t>(spec.warmup / kSec); s < end_sec; ++s) tokens += ps[s];
    } else if (m.counter) {
        tokens = static_cast<double>(m.counter->measured());
    } else {
        tokens = static_cast<double>(m.volume->stats().tokens - m.vol_at_warmup.tokens);
    }
    r.volume_iops = tokens / measured_s;
    const CacheStats& c = m.cache->stats();
    r.cache = c;
    const std::uint64_t hits = c.hits - m.cache_at_warmup.hits, misses = c.misses - m.cache_at_warmup.misses;
    r.hit_ratio = hits + misses ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 0.0;
    if (m.volume) r.volume = m.volume->stats();
    if (m.store) {
        r.lsm = m.store->stats();
        const std::uint64_t reads = r.lsm.data_reads - m.lsm_at_warmup.data_reads;
        const std::uint64_t ios = r.lsm.data_read_ios - m.lsm_at_warmup.data_read_ios;
        r.data_hit_ratio = reads ? 1.0 - static_cast<double>(ios) / static_cast<double>(reads) : 0.0;
    }
    r.cache_pages = m.pages;
    if (m.allocator) {
        for (int q = 0; q < kPriorities; ++q) {
            r.allocator_max_wait_us[q] = static_cast<double>(m.allocator->max_wait_ns(static_cast<Priority>(q))) / 1e3;
            r.allocator_wait_s[q] =
                static_cast<double>(m.allocator->wait_ns(static_cast<Priority>(q)) - m.wait_at_warmup[q]) / 1e9;
        }
    }
    if (m.allocator) r.borrowed_tokens = m.allocator->borrowed();
    if (m.fa && m.fa->ticks() > m.ticks_at_warmup) {
        r.heavy_share = static_cast<double>(m.fa->heavy_ticks() - m.heavy_at_warmup) /
                        static_cast<double>(m.fa->ticks() - m.ticks_at_warmup);
    }
    r.backlog = driver.backlog();
    r.timeline = driver.timeline_;
    for (std::size_t s = 0; s < r.timeline.size(); ++s) {
        auto& x = r.timeline[s];
        if (x.completed) x.avg_us /= static_cast<double>(x.completed);
        x.volume_tokens = s < ps.size() ? ps[s] : 0;
    }
    r.events = m.loop.events_run();
    return r;
}

RunResult run(const RunSpec& spec)
{
    EventLoop loop;
    Experiment exp(spec, loop);
    for (Time t = kSec; t <= spec.duration; t += kSec) {
        loop.run_until(std::min(t, spec.duration));
        if (t == spec.warmup || (t > spec.warmup && t - kSec < spec.warmup)) exp.mark_warmup();
        if (spec.progress) spec.progress(static_cast<double>(t) / static_cast<double>(spec.duration));
    }
    return exp.result();
}

}  // namespace bg::lsm
