#include "burstgate/lsm/lsm_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "burstgate/lsm/event_loop.hpp"

namespace bg::lsm {

namespace {
__extension__ typedef unsigned __int128 u128;
constexpr std::uint64_t kPagesPerEbsBlock = kEbsBlockBytes / kPageBytes;
constexpr std::uint64_t kWalBase = std::uint64_t{1} << 50;  // WAL lives far from the SSTs
constexpr std::uint64_t kMeta = std::uint64_t{1} << 62;     // plan entry is a filter/index page
constexpr std::uint64_t kRunStart = std::uint64_t{1} << 61; // first data page of a scan in one file

bool test_bit(const std::vector<std::uint64_t>& bits, std::uint64_t k)
{
    return (bits[k >> 6] >> (k & 63)) & 1u;
}
void set_bit(std::vector<std::uint64_t>& bits, std::uint64_t k) { bits[k >> 6] |= std::uint64_t{1} << (k & 63); }
void clear_bit(std::vector<std::uint64_t>& bits, std::uint64_t k)
{
    bits[k >> 6] &= ~(std::uint64_t{1} << (k & 63));
}
}  // namespace

struct LsmStore::File {
    std::uint32_t id = 0;
    int level = 0;
    std::uint64_t lo = 0, hi = 0;   // key range [lo, hi)
    std::uint64_t nkeys = 0;
    std::vector<std::uint64_t> keys;  // L0 only: sorted keys
    std::uint64_t first_page = 0;
    std::uint32_t data_pages = 0;
    std::uint32_t parts = 0;         // filter partitions = index partitions
    std::uint32_t pages() const { return data_pages + 2 * parts; }
    FileExtent extent() const { return FileExtent{first_page, pages(), data_pages, level}; }
};

struct LsmStore::Job {
    int level = -1;  // input level; -1 = memtable flush
    std::vector<std::shared_ptr<File>> upper, lower;
    std::vector<std::shared_ptr<File>> outputs;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> reads, writes;  // (offset, bytes)
    std::size_t ri = 0, wi = 0;
    std::uint64_t lo = 0, hi = 0;
};

// The block reads of one operation, in order. A scan's data pages come in runs, one per file
// it crosses; `run_left[i]` is how many pages of its run start at i (0 for single reads), and
// the readahead state is per run, as RocksDB keeps it per table iterator.
struct LsmStore::ReadPlan {
    std::vector<std::uint64_t> pages;  // kMeta-tagged
    std::vector<std::uint32_t> run_left;
    std::uint32_t file_reads = 0;            // volume reads in the current run
    std::uint32_t readahead = 0;             // next readahead, pages
    std::uint64_t buf_lo = 0, buf_hi = 0;    // pages [buf_lo, buf_hi) are in the readahead buffer
    // pages[i] & kRunStart: a run starts there (a new table iterator, fresh readahead state)
};

namespace {
constexpr std::uint32_t kReadaheadStartReads = 2;          // RocksDB: kMinNumFileReadsToStartAutoReadahead
constexpr std::uint32_t kReadaheadInitialPages = 8192 / kPageBytes;      // 8 KiB initial_auto_readahead_size
constexpr std::uint32_t kReadaheadMaxPages = kEbsBlockBytes / kPageBytes;  // 256 KiB max_auto_readahead_size
}  // namespace

LsmStore::LsmStore(EventLoop& loop, Volume& io, Cache& cache, const LsmConfig& cfg)
    : loop_(loop), io_(io), cache_(cache), cfg_(cfg)
{
    entry_bytes_ = std::uint64_t{cfg.key_bytes} + cfg.value_bytes;
    if (cfg.keys == 0) throw std::invalid_argument("lsm.keys must be > 0");
    if (entry_bytes_ == 0 || entry_bytes_ > kPageBytes) {
        throw std::invalid_argument("lsm: key_bytes + value_bytes must be in 1..4096");
    }
    if (cfg.sst_bytes < kPageBytes || cfg.memtable_bytes < entry_bytes_ || cfg.l1_bytes < cfg.sst_bytes) {
        throw std::invalid_argument("lsm: need sst_bytes >= 4k, memtable >= one entry, l1 >= sst");
    }
    if (cfg.max_level < 2 || cfg.max_level > 12) throw std::invalid_argument("lsm.max_level in 2..12");
    if (cfg.level_multiplier < 2) throw std::invalid_argument("lsm.level_multiplier >= 2");
    if (cfg.l0_trigger == 0 || cfg.l0_stop < cfg.l0_trigger) {
        throw std::invalid_argument("lsm: need 0 < l0_trigger <= l0_stop");
    }
    if (cfg.partition_blocks == 0 || cfg.compaction_threads == 0 || cfg.io_bytes < kPageBytes) {
        throw std::invalid_argument("lsm: partition_blocks, compaction_threads > 0, io_bytes >= 4k");
    }
    if (cfg.bloom_fpr < 0 || cfg.bloom_fpr > 1) throw std::invalid_argument("lsm.bloom_fpr in [0, 1]");
    epb_ = static_cast<std::uint32_t>(kPageBytes / entry_bytes_);
    capacity_ = cfg.keys + static_cast<std::uint64_t>(static_cast<double>(cfg.keys) * cfg.insert_headroom);
    next_insert_ = cfg.keys;
    const std::size_t nl = static_cast<std::size_t>(cfg.max_level) + 1;
    levels_.resize(nl);
    present_.assign(nl, std::vector<std::uint64_t>((capacity_ + 63) / 64, 0));
    level_keys_.assign(nl, 0);
    busy_.assign(nl, false);
    cursor_.assign(nl, 0);

    // Initial tree: each loaded key in one level, levels 1.. filled to 90 % of their targets
    // and the deepest needed level taking the rest (a randomly loaded leveled tree, §5.1).
    std::vector<double> share(nl, 0.0);
    std::uint64_t left = cfg.keys;
    int last = 1;
    for (int l = 1; l <= cfg.max_level && left > 0; ++l) {
        last = l;
        const std::uint64_t t = level_target_keys(l);
        if (t >= left || l == cfg.max_level) {
            share[static_cast<std::size_t>(l)] = static_cast<double>(left);
            left = 0;
        } else {
            const std::uint64_t take = t * 9 / 10;
            share[static_cast<std::size_t>(l)] = static_cast<double>(take);
            left -= take;
        }
    }
    Rng rng(cfg.seed);
    std::vector<std::vector<std::uint64_t>> keys(nl);
    for (std::uint64_t k = 0; k < cfg.keys; ++k) {
        double u = rng.uniform() * static_cast<double>(cfg.keys);
        int l = 1;
        while (l < last && u >= share[static_cast<std::size_t>(l)]) u -= share[static_cast<std::size_t>(l++)];
        keys[static_cast<std::size_t>(l)].push_back(k);
        set_bit(present_[static_cast<std::size_t>(l)], k);
        ++level_keys_[static_cast<std::size_t>(l)];
    }
    const std::uint64_t per_file = std::max<std::uint64_t>(1, cfg.sst_bytes / entry_bytes_);
    for (int l = 1; l <= last; ++l) {
        const auto& ks = keys[static_cast<std::size_t>(l)];
        for (std::size_t i = 0; i < ks.size(); i += per_file) {
            const std::size_t j = std::min<std::size_t>(ks.size(), i + per_file);
            auto f = make_file(l, ks[i], ks[j - 1] + 1, j - i, {});
            levels_[static_cast<std::size_t>(l)].push_back(f);
            announce(*f, true);
        }
    }
}

LsmStore::~LsmStore() = default;

std::uint64_t LsmStore::level_target_keys(int level) const
{
    std::uint64_t b = cfg_.l1_bytes;
    for (int l = 1; l < level; ++l) b *= cfg_.level_multiplier;
    return b / entry_bytes_;
}

std::size_t LsmStore::l0_files() const { return l0_.size(); }
std::size_t LsmStore::files(int level) const
{
    return level == 0 ? l0_.size() : levels_.at(static_cast<std::size_t>(level)).size();
}
std::uint64_t LsmStore::level_keys(int level) const
{
    if (level != 0) return level_keys_.at(static_cast<std::size_t>(level));
    std::uint64_t n = 0;
    for (const auto& f : l0_) n += f->nkeys;
    return n;
}

std::shared_ptr<LsmStore::File> LsmStore::make_file(int level, std::uint64_t lo, std::uint64_t hi,
                                                    std::uint64_t nkeys, std::vector<std::uint64_t> keys)
{
    auto f = std::make_shared<File>();
    f->id = next_file_id_++;
    f->level = level;
    f->lo = lo;
    f->hi = hi;
    f->nkeys = nkeys;
    f->keys = std::move(keys);
    f->data_pages = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (nkeys + epb_ - 1) / epb_));
    f->parts = (f->data_pages + cfg_.partition_blocks - 1) / cfg_.partition_blocks;
    f->first_page = next_page_;
    next_page_ += (f->pages() + kPagesPerEbsBlock - 1) / kPagesPerEbsBlock * kPagesPerEbsBlock;
    return f;
}

void LsmStore::announce(const File& f, bool created)
{
    if (created) cache_.file_created(f.extent());
    else cache_.file_deleted(f.extent());
}

std::uint64_t LsmStore::data_page(const File& f, std::uint64_t key) const
{
    std::uint64_t idx;
    if (f.level == 0) {
        idx = static_cast<std::uint64_t>(std::lower_bound(f.keys.begin(), f.keys.end(), key) - f.keys.begin()) / epb_;
    } else {
        // Keys of a level are spread evenly enough over a file's range to place a key's block
        // by interpolation (the model needs which block, not the exact entry).
        const std::uint64_t k = std::clamp(key, f.lo, f.hi - 1);
        idx = static_cast<std::uint64_t>(static_cast<u128>(k - f.lo) * f.data_pages / (f.hi - f.lo));
    }
    return f.first_page + std::min<std::uint64_t>(idx, f.data_pages - 1);
}

bool LsmStore::probe_file(const File& f, std::uint64_t key, bool present, std::vector<std::uint64_t>& pages) const
{
    const std::uint64_t dp = data_page(f, key);
    const std::uint64_t part = (dp - f.first_page) / cfg_.partition_blocks;
    if (!cfg_.meta_in_memory) pages.push_back(kMeta | (f.first_page + f.data_pages + part));  // filter
    const bool fp = !present && static_cast<double>(mix64((std::uint64_t{f.id} << 40) ^ key)) <
                                    cfg_.bloom_fpr * 18446744073709551616.0;
    if (present || fp) {
        if (!cfg_.meta_in_memory) pages.push_back(kMeta | (f.first_page + f.data_pages + f.parts + part));  // index
        pages.push_back(dp);
    }
    return present;
}

std::vector<std::uint64_t> LsmStore::get_plan(std::uint64_t key) const
{
    auto plan = tagged_plan(key);
    for (auto& p : plan) p &= ~kMeta;
    return plan;
}

std::vector<std::uint64_t> LsmStore::tagged_plan(std::uint64_t key) const
{
    std::vector<std::uint64_t> pages;
    if (key >= capacity_ || mem_.count(key) || imm_.count(key)) return pages;
    for (const auto& f : l0_) {
        if (key < f->lo || key >= f->hi) continue;
        if (probe_file(*f, key, std::binary_search(f->keys.begin(), f->keys.end(), key), pages)) return pages;
    }
    for (int l = 1; l <= cfg_.max_level; ++l) {
        const auto& files = levels_[static_cast<std::size_t>(l)];
        auto it = std::upper_bound(files.begin(), files.end(), key,
                                   [](std::uint64_t k, const std::shared_ptr<File>& f) { return k < f->lo; });
        if (it == files.begin()) continue;
        const File& f = **(it - 1);
        if (key >= f.hi) continue;
        if (probe_file(f, key, test_bit(present_[static_cast<std::size_t>(l)], key), pages)) return pages;
    }
    return pages;
}

int LsmStore::level_of(std::uint64_t key) const
{
    if (key >= capacity_) return -2;
    if (mem_.count(key) || imm_.count(key)) return -1;
    for (const auto& f : l0_) {
        if (std::binary_search(f->keys.begin(), f->keys.end(), key)) return 0;
    }
    for (int l = 1; l <= cfg_.max_level; ++l) {
        if (test_bit(present_[static_cast<std::size_t>(l)], key)) return l;
    }
    return -2;
}

void LsmStore::read_pages(std::shared_ptr<ReadPlan> plan, std::size_t i, Done done)
{
    if (i == plan->pages.size()) {
        done();
        return;
    }
    const bool meta = plan->pages[i] & kMeta;
    const std::uint64_t page = plan->pages[i] & ~(kMeta | kRunStart);
    const std::uint32_t run_left = plan->run_left.empty() ? 0 : plan->run_left[i];
    if (plan->pages[i] & kRunStart) {
        plan->file_reads = 0;  // a new file: a new table iterator
        plan->readahead = kReadaheadInitialPages;
        plan->buf_lo = plan->buf_hi = 0;
    }
    ++stats_.block_reads;
    if (!meta) ++stats_.data_reads;
    auto next = [this, plan, i, done = std::move(done)]() mutable {
        read_pages(plan, i + 1, std::move(done));
    };
    if (cache_.lookup(page)) {
        loop_.after(cfg_.cpu_block, std::move(next));
        return;
    }
    ++stats_.read_ios;
    if (!meta) ++stats_.data_read_ios;
    if (run_left > 0 && page >= plan->buf_lo && page < plan->buf_hi) {
        ++stats_.readahead_pages;
        cache_.fill(page);
        loop_.after(cfg_.cpu_block, std::move(next));
        return;
    }
    std::uint32_t n = 1;
    if (run_left > 0 && ++plan->file_reads > kReadaheadStartReads) {
        n = std::min(plan->readahead, run_left);
        plan->readahead = std::min(2 * plan->readahead, kReadaheadMaxPages);
    }
    IoRequest io;
    io.offset = page * kPageBytes;
    io.bytes = n * kPageBytes;
    io.op = IoOp::read;
    io.source = IoSource::user;
    io_.submit(io, [this, plan, page, n, next = std::move(next)]() mutable {
        plan->buf_lo = page + 1;
        plan->buf_hi = page + n;
        cache_.fill(page);
        next();
    });
}

void LsmStore::get(std::uint64_t key, Done done)
{
    ++stats_.gets;
    auto plan = std::make_shared<ReadPlan>();
    plan->pages = tagged_plan(key);
    loop_.after(cfg_.cpu_get, [this, plan, done = std::move(done)]() mutable {
        read_pages(plan, 0, std::move(done));
    });
}

std::vector<std::shared_ptr<LsmStore::File>> LsmStore::overlapping(int level, std::uint64_t lo,
                                                                   std::uint64_t hi) const
{
    std::vector<std::shared_ptr<File>> out;
    for (const auto& f : levels_[static_cast<std::size_t>(level)]) {
        if (f->lo < hi && lo < f->hi) out.push_back(f);
    }
    return out;
}

std::shared_ptr<LsmStore::ReadPlan> LsmStore::scan_read_plan(std::uint64_t key, std::uint32_t n) const
{
    auto plan = std::make_shared<ReadPlan>();
    const std::uint64_t end = std::min(capacity_, key + std::max<std::uint32_t>(n, 1));
    auto add_range = [&](const File& f) {
        const std::uint64_t first = data_page(f, std::max(key, f.lo));
        const std::uint64_t last = data_page(f, std::min(end, f.hi) - 1);
        if (!cfg_.meta_in_memory) {
            plan->pages.push_back(kMeta | (f.first_page + f.data_pages + f.parts + (first - f.first_page) / cfg_.partition_blocks));
            plan->run_left.push_back(0);
        }
        for (std::uint64_t p = first; p <= last; ++p) {
            plan->pages.push_back(p == first ? p | kRunStart : p);
            plan->run_left.push_back(static_cast<std::uint32_t>(last - p + 1));
        }
    };
    for (const auto& f : l0_) {
        if (f->lo < end && key < f->hi) add_range(*f);
    }
    for (int l = 1; l <= cfg_.max_level; ++l) {
        for (const auto& f : overlapping(l, key, end)) add_range(*f);
    }
    return plan;
}

std::vector<std::uint64_t> LsmStore::scan_plan(std::uint64_t key, std::uint32_t n) const
{
    auto pages = scan_read_plan(key, n)->pages;
    for (auto& p : pages) p &= ~(kMeta | kRunStart);
    return pages;
}

void LsmStore::scan(std::uint64_t key, std::uint32_t n, Done done)
{
    ++stats_.scans;
    auto plan = scan_read_plan(key, n);
    loop_.after(cfg_.cpu_get, [this, plan, done = std::move(done)]() mutable {
        read_pages(plan, 0, std::move(done));
    });
}

void LsmStore::append_wal()
{
    while (wal_pending_ >= cfg_.io_bytes) {
        wal_pending_ -= cfg_.io_bytes;
        IoRequest io;
        io.offset = kWalBase + wal_offset_;
        io.bytes = cfg_.io_bytes;
        io.op = IoOp::write;
        io.source = IoSource::wal;
        wal_offset_ += cfg_.io_bytes;
        ++stats_.wal_ios;
        io_.submit(io, [] {});
    }
}

void LsmStore::put(std::uint64_t key, Done done)
{
    if (key >= capacity_) throw std::out_of_range("LsmStore::put: key beyond capacity");
    if (mem_bytes_ + entry_bytes_ > cfg_.memtable_bytes) {
        if (flushing_) {
            ++stats_.write_stalls;
            stalled_.push_back([this, key, done = std::move(done)]() mutable { put(key, std::move(done)); });
            return;
        }
        switch_memtable();
    }
    if (l0_.size() >= cfg_.l0_stop) {
        ++stats_.write_stalls;
        stalled_.push_back([this, key, done = std::move(done)]() mutable { put(key, std::move(done)); });
        return;
    }
    ++stats_.puts;
    mem_.insert(key);
    mem_bytes_ += entry_bytes_;
    if (cfg_.sync_wal) {
        IoRequest io;
        io.offset = kWalBase + wal_offset_;
        io.bytes = kPageBytes;
        io.op = IoOp::write;
        io.source = IoSource::wal;
        wal_offset_ += kPageBytes;
        ++stats_.wal_ios;
        loop_.after(cfg_.cpu_put, [this, io, done = std::move(done)]() mutable { io_.submit(io, std::move(done)); });
        return;
    }
    wal_pending_ += entry_bytes_;
    append_wal();
    loop_.after(cfg_.cpu_put, std::move(done));
}

void LsmStore::switch_memtable()
{
    imm_ = std::move(mem_);
    mem_.clear();
    mem_bytes_ = 0;
    start_flush();
}

namespace {
void chunk(std::vector<std::pair<std::uint64_t, std::uint32_t>>& out, std::uint64_t first_page,
           std::uint64_t pages, std::uint32_t io_bytes)
{
    std::uint64_t off = first_page * kPageBytes;
    std::uint64_t left = pages * kPageBytes;
    while (left > 0) {
        const std::uint32_t b = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, io_bytes));
        out.emplace_back(off, b);
        off += b;
        left -= b;
    }
}
}  // namespace

void LsmStore::start_flush()
{
    flushing_ = true;
    std::vector<std::uint64_t> keys(imm_.begin(), imm_.end());
    std::sort(keys.begin(), keys.end());
    auto job = std::make_unique<Job>();
    job->level = -1;
    const std::uint64_t lo = keys.empty() ? 0 : keys.front();
    const std::uint64_t hi = keys.empty() ? 1 : keys.back() + 1;
    const std::uint64_t n = keys.size();
    auto f = make_file(0, lo, hi, n, std::move(keys));
    chunk(job->writes, f->first_page, f->pages(), cfg_.io_bytes);
    job->outputs.push_back(f);
    start_job(std::move(job));
}

void LsmStore::start_job(std::unique_ptr<Job> job)
{
    Job* j = job.get();
    jobs_.push_back(std::move(job));
    job_step(j);
}

void LsmStore::job_step(Job* job)
{
    const bool reads_left = job->ri < job->reads.size();
    const bool writes_left = job->wi < job->writes.size();
    if (!reads_left && !writes_left) {
        install(job);
        return;
    }
    // Interleave so the output keeps pace with the input, as a merge does.
    const bool do_read = reads_left && (!writes_left || job->ri * job->writes.size() <= job->wi * job->reads.size());
    IoRequest io;
    if (do_read) {
        io.offset = job->reads[job->ri].first;
        io.bytes = job->reads[job->ri].second;
        io.op = IoOp::read;
        ++job->ri;
        stats_.bytes_compacted_read += io.bytes;
    } else {
        io.offset = job->writes[job->wi].first;
        io.bytes = job->writes[job->wi].second;
        io.op = IoOp::write;
        ++job->wi;
        if (job->level < 0) stats_.bytes_flushed += io.bytes;
        else stats_.bytes_compacted_written += io.bytes;
    }
    io.source = job->level < 0 ? IoSource::flush : IoSource::compaction;
    io.level = static_cast<std::uint8_t>(std::max(0, job->level));
    io_.submit(io, [this, job] { job_step(job); });
}

void LsmStore::maybe_compact()
{
    while (running_ < cfg_.compaction_threads) {
        auto job = std::make_unique<Job>();
        std::vector<std::uint64_t> keys;
        if (l0_.size() >= cfg_.l0_trigger && !busy_[0] && !busy_[1]) {
            job->level = 0;
            job->upper = l0_;
            job->lo = ~std::uint64_t{0};
            job->hi = 0;
            for (const auto& f : l0_) {
                job->lo = std::min(job->lo, f->lo);
                job->hi = std::max(job->hi, f->hi);
            }
            job->lower = overlapping(1, job->lo, job->hi);
            for (const auto& f : job->lower) {
                job->lo = std::min(job->lo, f->lo);
                job->hi = std::max(job->hi, f->hi);
            }
            // Union of the L0 keys and L1's keys in the range.
            const auto& bits = present_[1];
            for (std::uint64_t k = job->lo; k < job->hi; ++k) {
                if (test_bit(bits, k)) keys.push_back(k);
            }
            for (const auto& f : l0_) keys.insert(keys.end(), f->keys.begin(), f->keys.end());
            std::sort(keys.begin(), keys.end());
            keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        } else {
            int best = -1;
            double best_score = 1.0;
            for (int l = 1; l < cfg_.max_level; ++l) {
                if (busy_[static_cast<std::size_t>(l)] || busy_[static_cast<std::size_t>(l) + 1]) continue;
                if (levels_[static_cast<std::size_t>(l)].empty()) continue;
                const double score = static_cast<double>(level_keys_[static_cast<std::size_t>(l)]) /
                                     static_cast<double>(level_target_keys(l));
                if (score > best_score) {
                    best_score = score;
                    best = l;
                }
            }
            if (best < 0) return;
            const auto ul = static_cast<std::size_t>(best);
            auto& files = levels_[ul];
            auto it = std::find_if(files.begin(), files.end(),
                                   [&](const std::shared_ptr<File>& f) { return f->lo >= cursor_[ul]; });
            if (it == files.end()) it = files.begin();
            const auto f = *it;
            cursor_[ul] = f->hi;
            job->level = best;
            job->upper = {f};
            job->lower = overlapping(best + 1, f->lo, f->hi);
            job->lo = f->lo;
            job->hi = f->hi;
            for (const auto& g : job->lower) {
                job->lo = std::min(job->lo, g->lo);
                job->hi = std::max(job->hi, g->hi);
            }
            const auto& up = present_[ul];
            const auto& dn = present_[ul + 1];
            for (std::uint64_t k = job->lo; k < job->hi; ++k) {
                const bool in_up = k >= f->lo && k < f->hi && test_bit(up, k);
                if (in_up || test_bit(dn, k)) keys.push_back(k);
            }
        }
        const int out_level = job->level + 1;
        const std::uint64_t per_file = std::max<std::uint64_t>(1, cfg_.sst_bytes / entry_bytes_);
        for (std::size_t i = 0; i < keys.size(); i += per_file) {
            const std::size_t j = std::min<std::size_t>(keys.size(), i + per_file);
            job->outputs.push_back(make_file(out_level, keys[i], keys[j - 1] + 1, j - i, {}));
        }
        for (const auto* set : {&job->upper, &job->lower}) {
            for (const auto& f : *set) chunk(job->reads, f->first_page, f->data_pages, cfg_.io_bytes);
        }
        for (const auto& f : job->outputs) chunk(job->writes, f->first_page, f->pages(), cfg_.io_bytes);
        busy_[static_cast<std::size_t>(job->level)] = true;
        busy_[static_cast<std::size_t>(job->level) + 1] = true;
        ++running_;
        start_job(std::move(job));
    }
}

void LsmStore::install(Job* job)
{
    if (job->level < 0) {
        const auto& f = job->outputs.front();
        l0_.insert(l0_.begin(), f);
        announce(*f, true);
        imm_.clear();
        flushing_ = false;
        ++stats_.flushes;
    } else {
        const auto ul = static_cast<std::size_t>(job->level);
        const auto dl = ul + 1;
        if (job->level == 0) {
            for (const auto& f : job->upper) {
                for (std::uint64_t k : f->keys) {
                    if (!test_bit(present_[1], k)) {
                        set_bit(present_[1], k);
                        ++level_keys_[1];
                    }
                }
                l0_.erase(std::find(l0_.begin(), l0_.end(), f));
            }
        } else {
            const auto& f = job->upper.front();
            for (std::uint64_t k = f->lo; k < f->hi; ++k) {
                if (!test_bit(present_[ul], k)) continue;
                clear_bit(present_[ul], k);
                --level_keys_[ul];
                if (!test_bit(present_[dl], k)) {
                    set_bit(present_[dl], k);
                    ++level_keys_[dl];
                }
            }
            auto& files = levels_[ul];
            files.erase(std::find(files.begin(), files.end(), f));
        }
        auto& lower = levels_[dl];
        for (const auto& g : job->lower) lower.erase(std::find(lower.begin(), lower.end(), g));
        lower.insert(lower.end(), job->outputs.begin(), job->outputs.end());
        std::sort(lower.begin(), lower.end(),
                  [](const std::shared_ptr<File>& a, const std::shared_ptr<File>& b) { return a->lo < b->lo; });
        for (const auto* set : {&job->upper, &job->lower}) {
            for (const auto& f : *set) announce(*f, false);
        }
        for (const auto& f : job->outputs) announce(*f, true);
        busy_[ul] = false;
        busy_[dl] = false;
        --running_;
        ++stats_.compactions;
    }
    jobs_.erase(std::find_if(jobs_.begin(), jobs_.end(), [job](const std::unique_ptr<Job>& j) { return j.get() == job; }));
    // Writers stalled on a full memtable or on L0 retry now.
    std::vector<Done> retry;
    retry.swap(stalled_);
    for (auto& r : retry) r();
    maybe_compact();
}

}  // namespace bg::lsm
