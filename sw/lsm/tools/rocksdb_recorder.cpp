// burstgate-rocksdb-record: runs a YCSB-like / Mixgraph-like load against a real RocksDB
// (Debian's librocksdb) whose FileSystem is wrapped to record every SST block read and every
// SST/WAL write, with who issued it: user (foreground Get), wal, flush, or compaction with its
// input level (tagged per thread from the flush/compaction begin/end listener callbacks,
// which RocksDB runs on the background thread doing the job). The trace replays through the
// volume model with `burstgate-lsm replay` (format: sw/lsm/include/burstgate/lsm/replay.hpp).
// MANIFEST/OPTIONS/CURRENT I/O is metadata and is not recorded. WAL appends (one per write
// batch, into the page cache) are recorded as the 256 KiB writebacks they become.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "burstgate/lsm/replay.hpp"
#include "burstgate/lsm/workload.hpp"

using namespace bg::lsm;

namespace {

struct Tag {
    bool set = false;
    IoSource source = IoSource::user;
    std::uint8_t level = 0;
};
thread_local Tag t_tag;
thread_local std::uint32_t t_thread = 0;
std::atomic<std::uint32_t> g_next_thread{1};

class Recorder {
public:
    Recorder(std::FILE* out) : out_(out), start_(std::chrono::steady_clock::now()) { write_trace_header(out); }
    void enable(bool on) { on_.store(on); }
    // kind: 's' = SST, 'w' = WAL.
    void record(char kind, IoOp op, std::uint64_t file, std::uint64_t offset, std::uint64_t bytes)
    {
        if (!on_.load() || bytes == 0) return;
        if (t_thread == 0) t_thread = g_next_thread++;
        TraceRecord r;
        r.t = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
        r.thread = t_thread;
        r.op = op;
        r.file = file;
        r.offset = offset;
        r.bytes = static_cast<std::uint32_t>(bytes);
        if (kind == 'w') r.source = IoSource::wal;
        else if (t_tag.set) {
            r.source = t_tag.source;
            r.level = t_tag.level;
        } else r.source = op == IoOp::read ? IoSource::user : IoSource::flush;
        const std::string line = format_trace_record(r);
        std::lock_guard<std::mutex> g(mu_);
        std::fputs(line.c_str(), out_);
        ++counts_[std::string(to_string(r.source)) + (op == IoOp::read ? " read" : " write")];
    }
    std::map<std::string, std::uint64_t> counts()
    {
        std::lock_guard<std::mutex> g(mu_);
        return counts_;
    }

private:
    std::FILE* out_;
    std::chrono::steady_clock::time_point start_;
    std::atomic<bool> on_{false};
    std::mutex mu_;
    std::map<std::string, std::uint64_t> counts_;
};

// File number and kind from a RocksDB file name: 000123.sst -> (123, 's'), 000007.log -> (7, 'w').
bool classify(const std::string& fname, std::uint64_t& number, char& kind)
{
    const auto slash = fname.find_last_of('/');
    const std::string base = slash == std::string::npos ? fname : fname.substr(slash + 1);
    const auto dot = base.find('.');
    if (dot == std::string::npos || dot == 0) return false;
    const std::string ext = base.substr(dot);
    if (ext != ".sst" && ext != ".log") return false;
    for (std::size_t i = 0; i < dot; ++i) {
        if (base[i] < '0' || base[i] > '9') return false;
    }
    number = std::stoull(base.substr(0, dot));
    kind = ext == ".sst" ? 's' : 'w';
    return true;
}

class RecReadFile final : public rocksdb::FSRandomAccessFileOwnerWrapper {
public:
    RecReadFile(std::unique_ptr<rocksdb::FSRandomAccessFile>&& t, Recorder& rec, std::uint64_t file, char kind)
        : FSRandomAccessFileOwnerWrapper(std::move(t)), rec_(rec), file_(file), kind_(kind) {}
    rocksdb::IOStatus Read(uint64_t offset, size_t n, const rocksdb::IOOptions& o, rocksdb::Slice* result,
                           char* scratch, rocksdb::IODebugContext* dbg) const override
    {
        rec_.record(kind_, IoOp::read, file_, offset, n);
        return target()->Read(offset, n, o, result, scratch, dbg);
    }
    rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num, const rocksdb::IOOptions& o,
                                rocksdb::IODebugContext* dbg) override
    {
        for (size_t i = 0; i < num; ++i) rec_.record(kind_, IoOp::read, file_, reqs[i].offset, reqs[i].len);
        return target()->MultiRead(reqs, num, o, dbg);
    }

private:
    Recorder& rec_;
    std::uint64_t file_;
    char kind_;
};

class RecWriteFile final : public rocksdb::FSWritableFileOwnerWrapper {
public:
    RecWriteFile(std::unique_ptr<rocksdb::FSWritableFile>&& t, Recorder& rec, std::uint64_t file, char kind)
        : FSWritableFileOwnerWrapper(std::move(t)), rec_(rec), file_(file), kind_(kind) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override
    {
        note(data.size());
        return target()->Append(data, o, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v, rocksdb::IODebugContext* dbg) override
    {
        note(data.size());
        return target()->Append(data, o, v, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset, const rocksdb::IOOptions& o,
                                       rocksdb::IODebugContext* dbg) override
    {
        rec_.record(kind_, IoOp::write, file_, offset, data.size());
        return target()->PositionedAppend(data, offset, o, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset, const rocksdb::IOOptions& o,
                                       const rocksdb::DataVerificationInfo& v, rocksdb::IODebugContext* dbg) override
    {
        rec_.record(kind_, IoOp::write, file_, offset, data.size());
        return target()->PositionedAppend(data, offset, o, v, dbg);
    }

    rocksdb::IOStatus Close(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override
    {
        drain(true);
        return target()->Close(o, dbg);
    }

private:
    // WAL appends are one write() per batch into the page cache (sync = false); the volume
    // sees the kernel's writeback, modelled as one I/O per 256 KiB (docs/lsm.md).
    void note(std::uint64_t n)
    {
        if (kind_ == 'w') {
            pending_ += n;
            drain(false);
            return;
        }
        rec_.record(kind_, IoOp::write, file_, offset_, n);
        offset_ += n;
    }
    void drain(bool all)
    {
        while (pending_ >= kEbsBlockBytes || (all && pending_ > 0)) {
            const std::uint64_t b = std::min<std::uint64_t>(pending_, kEbsBlockBytes);
            rec_.record(kind_, IoOp::write, file_, offset_, b);
            offset_ += b;
            pending_ -= b;
        }
    }
    std::uint64_t pending_ = 0;
    Recorder& rec_;
    std::uint64_t file_;
    char kind_;
    std::uint64_t offset_ = 0;
};

class RecFs final : public rocksdb::FileSystemWrapper {
public:
    RecFs(const std::shared_ptr<rocksdb::FileSystem>& base, Recorder& rec) : FileSystemWrapper(base), rec_(rec) {}
    static const char* kClassName() { return "BurstgateRecordingFs"; }
    const char* Name() const override { return kClassName(); }
    rocksdb::IOStatus NewRandomAccessFile(const std::string& f, const rocksdb::FileOptions& o,
                                          std::unique_ptr<rocksdb::FSRandomAccessFile>* r,
                                          rocksdb::IODebugContext* dbg) override
    {
        auto s = target()->NewRandomAccessFile(f, o, r, dbg);
        std::uint64_t n;
        char k;
        if (s.ok() && classify(f, n, k)) *r = std::make_unique<RecReadFile>(std::move(*r), rec_, n, k);
        return s;
    }
    rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) override
    {
        auto s = target()->NewWritableFile(f, o, r, dbg);
        std::uint64_t n;
        char k;
        if (s.ok() && classify(f, n, k)) *r = std::make_unique<RecWriteFile>(std::move(*r), rec_, n, k);
        return s;
    }

private:
    Recorder& rec_;
};

class Tagger final : public rocksdb::EventListener {
public:
    void OnFlushBegin(rocksdb::DB*, const rocksdb::FlushJobInfo&) override { t_tag = Tag{true, IoSource::flush, 0}; }
    void OnFlushCompleted(rocksdb::DB*, const rocksdb::FlushJobInfo&) override { t_tag = Tag{}; }
    void OnCompactionBegin(rocksdb::DB*, const rocksdb::CompactionJobInfo& ci) override
    {
        t_tag = Tag{true, IoSource::compaction, static_cast<std::uint8_t>(std::max(0, ci.base_input_level))};
    }
    void OnCompactionCompleted(rocksdb::DB*, const rocksdb::CompactionJobInfo&) override { t_tag = Tag{}; }
};

[[noreturn]] void fail(const std::string& m)
{
    std::cerr << "burstgate-rocksdb-record: " << m << "\n";
    std::exit(2);
}

std::string key_of(std::uint64_t k)
{
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(k));  // 16 B keys (§5.1)
    return std::string(b, 16);
}

}  // namespace

int main(int argc, char** argv)
{
    std::string db, out, workload = "ycsb-a";
    std::uint64_t keys = 100000, ops = 100000, seed = 1, cache_mb = 1;
    std::uint32_t threads = 4;
    bool record_load = false;
    try {
        bg::cli::ArgReader args(argc, argv);
        while (args.next()) {
            const std::string f = args.flag();
            if (f == "--record-load") record_load = true;
            else if (f == "-h" || f == "--help") {
                std::cout << "usage: burstgate-rocksdb-record --db DIR --out TRACE [--keys N] [--ops N] [--threads N]\n"
                             "       [--workload ycsb-a..f|mixgraph] [--cache-mb N] [--seed N] [--record-load]\n";
                return 0;
            } else if (f == "--db") db = args.value();
            else if (f == "--out") out = args.value();
            else if (f == "--keys") keys = args.integer(100, 1000000000);
            else if (f == "--ops") ops = args.integer(0, 1000000000);
            else if (f == "--threads") threads = static_cast<std::uint32_t>(args.integer(1, 256));
            else if (f == "--workload") workload = args.value();
            else if (f == "--cache-mb") cache_mb = args.integer(0, 1 << 20);
            else if (f == "--seed") seed = args.integer(0, UINT64_MAX);
            else fail("unknown option '" + f + "'");
        }
    } catch (const bg::cli::UsageError& e) {
        fail(e.what());
    }
    if (db.empty() || out.empty()) fail("--db and --out are required");
    WorkloadSpec ws;
    ws.kind = workload;
    std::unique_ptr<Workload> wl;
    try {
        wl = std::make_unique<Workload>(ws, keys);
    } catch (const std::invalid_argument& e) {
        fail(e.what());
    }
    std::FILE* trace = std::fopen(out.c_str(), "w");
    if (!trace) fail("cannot write '" + out + "'");
    Recorder rec(trace);
    auto fs = std::make_shared<RecFs>(rocksdb::FileSystem::Default(), rec);
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);

    // A scaled-down version of docs/lsm.md's tree: 1 MiB memtables, 2 MiB SSTs, 8 MiB L1.
    rocksdb::Options o;
    o.env = env.get();
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.write_buffer_size = 1 << 20;
    o.max_write_buffer_number = 2;
    o.target_file_size_base = 2 << 20;
    o.max_bytes_for_level_base = 8 << 20;
    o.level0_file_num_compaction_trigger = 4;
    o.max_background_jobs = 4;
    o.listeners.push_back(std::make_shared<Tagger>());
    rocksdb::BlockBasedTableOptions t;
    t.block_size = 4096;
    t.cache_index_and_filter_blocks = true;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    if (cache_mb) t.block_cache = rocksdb::NewLRUCache(cache_mb << 20);
    else t.no_block_cache = true;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status st = rocksdb::DB::Open(o, db, &raw);
    if (!st.ok()) fail("open '" + db + "': " + st.ToString());
    std::unique_ptr<rocksdb::DB> dbp(raw);

    const std::string value(256, 'v');  // 256 B values (§5.1)
    rec.enable(record_load);
    rocksdb::WriteOptions wo;
    wo.disableWAL = false;
    for (std::uint64_t i = 0; i < keys; ++i) {
        // Random load order, like the paper's "randomly writing" (§5.1).
        const std::uint64_t k = mix64(i ^ seed) % keys;
        if (!dbp->Put(wo, key_of(k), value).ok()) fail("put failed during load");
    }
    rec.enable(true);
    std::atomic<std::uint64_t> next{0}, errors{0};
    std::vector<std::thread> pool;
    for (std::uint32_t th = 0; th < threads; ++th) {
        pool.emplace_back([&, th] {
            Rng rng(seed * 1000 + th);
            std::string v;
            while (next.fetch_add(1) < ops) {
                const Op op = wl->next(rng, keys - 1);
                const std::string k = key_of(op.key);
                rocksdb::Status s;
                switch (op.type) {
                case OpType::read: s = dbp->Get(rocksdb::ReadOptions(), k, &v); break;
                case OpType::update:
                case OpType::insert: s = dbp->Put(wo, k, value); break;
                case OpType::rmw:
                    s = dbp->Get(rocksdb::ReadOptions(), k, &v);
                    if (s.ok() || s.IsNotFound()) s = dbp->Put(wo, k, value);
                    break;
                case OpType::scan: {
                    std::unique_ptr<rocksdb::Iterator> it(dbp->NewIterator(rocksdb::ReadOptions()));
                    std::uint32_t n = 0;
                    for (it->Seek(k); it->Valid() && n < op.scan_len; it->Next()) ++n;
                    s = it->status();
                    break;
                }
                }
                if (!s.ok() && !s.IsNotFound()) ++errors;
            }
        });
    }
    for (auto& p : pool) p.join();
    if (!dbp->Flush(rocksdb::FlushOptions()).ok()) ++errors;
    dbp.reset();
    rec.enable(false);
    std::fclose(trace);
    if (errors) fail(std::to_string(errors.load()) + " RocksDB operations failed");
    std::cout << "recorded to " << out << ":";
    for (const auto& [k, n] : rec.counts()) std::cout << " " << k << " " << n << ";";
    std::cout << "\n";
    return 0;
}
