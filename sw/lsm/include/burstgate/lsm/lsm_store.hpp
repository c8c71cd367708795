// The LSM read/write path, as I/O (Calcspar §3, §5.1): a leveled LSM tree of SST files on a
// Volume, read through a Cache.
//
// Structure. Keys are integers in [0, capacity). A memtable (plus at most one immutable
// memtable being flushed) holds recent writes; L0 holds whole flushed memtables (key lists
// kept exactly, newest first, ranges overlap); L1..Ln each partition their key range into
// SST files, with one presence bitset per level. An SST is laid out as its data blocks
// (4 KiB, key+value entries), then its filter partitions, then its index partitions (one of
// each per `partition_blocks` data blocks: RocksDB's partitioned index/filters with the
// top-level index pinned). Files start on 256 KiB boundaries of a volume address space
// that is never reused.
//
// Get(k): memtables -> each L0 file newest first -> L1, L2, ...; at each SST whose range
// holds k: read the filter partition; if the key is there or the bloom filter gives a false
// positive (a per-(file, key) hash < fpr, so the same probe always answers the same): read
// the index partition and the data block. Reads are sequential; each goes through the cache
// and, on a miss, to the volume. With `meta_in_memory` filter/index reads cost nothing
// (RocksDB without a block cache keeps them in the table readers).
// Scan(k, n): for each level, the index partition of k and the data blocks of [k, k+n), with
// RocksDB's iterator auto-readahead (BlockBasedTableIterator): after two block reads from one
// file, each further miss reads the block plus the next ones, 8 KiB doubling to 256 KiB, and
// the blocks in that buffer cost no I/O (they still count as block-cache misses, as in RocksDB).
// Put(k): memtable insert; WAL appended in 256 KiB writes (not waited for: sync=false), or
// with sync_wal one 4 KiB WAL write per Put that the Put waits for;
// a full memtable becomes immutable and is flushed to L0 by 256 KiB writes; a second full
// memtable while one is flushing stalls writers (as RocksDB's max_write_buffer_number=2).
// Compaction (leveled): L0 -> L1 when L0 has `l0_trigger` files (all L0 files + overlapping
// L1); Ln -> Ln+1 when Ln exceeds its target (one file of Ln, round robin, + the overlapping
// files of Ln+1). A job reads its inputs and writes its output in 256 KiB I/Os, one at a time,
// interleaved; it installs its result (and deletes its inputs) when the last write completes.
// Up to `compaction_threads` jobs run on disjoint level pairs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/volume.hpp"

namespace bg::lsm {

struct LsmConfig {
    std::uint64_t keys = 2000000;        // loaded before the run (paper: 100 M, §5.1)
    double insert_headroom = 0.1;        // extra key space for inserts (YCSB D/E)
    std::uint32_t key_bytes = 16;        // §5.1
    std::uint32_t value_bytes = 256;     // §5.1
    std::uint64_t sst_bytes = 8 << 20;   // §5.1
    std::uint64_t memtable_bytes = 1 << 20;
    std::uint64_t l1_bytes = 16 << 20;
    std::uint32_t level_multiplier = 10;
    int max_level = 6;
    std::uint32_t l0_trigger = 4;
    std::uint32_t l0_stop = 20;
    std::uint32_t partition_blocks = 128;
    double bloom_fpr = 0.01;             // 10 bits per key
    std::uint32_t compaction_threads = 4;  // §5.1
    std::uint32_t io_bytes = kEbsBlockBytes;
    bool meta_in_memory = false;
    // sync = true: every Put writes its WAL record (one 4 KiB page) and completes only when that
    // write has (BurstCBS §6.7 runs RocksDB "with the sync flag enabled to force an immediate
    // disk I/O per write request"); false: 256 KiB WAL writebacks nobody waits for.
    bool sync_wal = false;
    Time cpu_get = 5 * kUs;
    Time cpu_put = 5 * kUs;
    Time cpu_block = 1 * kUs;            // per cache hit
    std::uint64_t seed = 1;
};

struct LsmStats {
    std::uint64_t gets = 0, puts = 0, scans = 0;
    std::uint64_t block_reads = 0;  // cache lookups by user operations
    std::uint64_t read_ios = 0;     // user block reads the cache did not serve (volume or readahead)
    std::uint64_t data_reads = 0;   // of block_reads, data blocks (the rest: filter/index)
    std::uint64_t data_read_ios = 0;
    std::uint64_t readahead_pages = 0;  // of read_ios, served by a scan's readahead buffer (no I/O)
    std::uint64_t flushes = 0, compactions = 0;
    std::uint64_t write_stalls = 0;
    std::uint64_t bytes_flushed = 0, bytes_compacted_read = 0, bytes_compacted_written = 0;
    std::uint64_t wal_ios = 0;
};

class LsmStore {
public:
    using Done = std::function<void()>;
    // Builds the initial tree (keys spread over L1.. by level targets, L0 empty) and
    // announces its files to the cache. Throws std::invalid_argument on a bad config.
    LsmStore(EventLoop& loop, Volume& io, Cache& cache, const LsmConfig& cfg);
    ~LsmStore();

    void get(std::uint64_t key, Done done);
    void put(std::uint64_t key, Done done);
    void scan(std::uint64_t key, std::uint32_t n, Done done);

    // The pages Get(key) would read, in order, for the current tree (without doing it).
    std::vector<std::uint64_t> get_plan(std::uint64_t key) const;
    // The blocks Scan(key, n) would look up, in order (readahead decides the I/O, not these).
    std::vector<std::uint64_t> scan_plan(std::uint64_t key, std::uint32_t n) const;
    int level_of(std::uint64_t key) const;  // -1 memtable, 0..max level, -2 absent
    std::size_t l0_files() const;
    std::size_t files(int level) const;
    std::uint64_t level_keys(int level) const;
    std::uint64_t level_target_keys(int level) const;
    std::uint64_t capacity() const { return capacity_; }
    // Inserts take fresh keys after the loaded ones; past the key space they become updates.
    std::uint64_t next_insert_key() { return next_insert_++ % capacity_; }
    std::uint64_t latest_key() const { return (next_insert_ - 1) % capacity_; }
    const LsmStats& stats() const { return stats_; }
    const LsmConfig& config() const { return cfg_; }
    std::uint32_t entries_per_block() const { return epb_; }
    std::uint32_t running_compactions() const { return running_; }

    struct File;
    struct Job;

private:
    std::vector<std::uint64_t> tagged_plan(std::uint64_t key) const;  // meta pages flagged
    struct ReadPlan;
    void read_pages(std::shared_ptr<ReadPlan> plan, std::size_t i, Done done);
    std::shared_ptr<ReadPlan> scan_read_plan(std::uint64_t key, std::uint32_t n) const;
    std::shared_ptr<File> make_file(int level, std::uint64_t lo, std::uint64_t hi,
                                    std::uint64_t nkeys, std::vector<std::uint64_t> keys);
    void announce(const File& f, bool created);
    void append_wal();
    void switch_memtable();
    void start_flush();
    void maybe_compact();
    void start_job(std::unique_ptr<Job> job);
    void job_step(Job* job);
    void install(Job* job);
    std::vector<std::shared_ptr<File>> overlapping(int level, std::uint64_t lo, std::uint64_t hi) const;
    bool probe_file(const File& f, std::uint64_t key, bool present,
                    std::vector<std::uint64_t>& pages) const;
    std::uint64_t data_page(const File& f, std::uint64_t key) const;

    EventLoop& loop_;
    Volume& io_;
    Cache& cache_;
    LsmConfig cfg_;
    std::uint32_t epb_;
    std::uint64_t entry_bytes_;
    std::uint64_t capacity_;
    std::uint64_t next_insert_;
    std::uint64_t next_page_ = 0;
    std::uint32_t next_file_id_ = 1;
    std::unordered_set<std::uint64_t> mem_, imm_;
    std::uint64_t mem_bytes_ = 0;
    std::uint64_t wal_pending_ = 0;
    std::uint64_t wal_offset_ = 0;
    bool flushing_ = false;
    std::vector<Done> stalled_;
    std::vector<std::shared_ptr<File>> l0_;                 // newest first
    std::vector<std::vector<std::shared_ptr<File>>> levels_;  // [level] sorted by lo; [0] unused
    std::vector<std::vector<std::uint64_t>> present_;       // [level] bitsets; [0] unused
    std::vector<std::uint64_t> level_keys_;
    std::vector<bool> busy_;
    std::vector<std::uint64_t> cursor_;
    std::uint32_t running_ = 0;
    std::vector<std::unique_ptr<Job>> jobs_;
    LsmStats stats_;
};

}  // namespace bg::lsm
