// The real-RocksDB recorder (burstgate-rocksdb-record, built only where Debian's
// librocksdb-dev is installed) and the replay of its trace through the volume model.
// Skipped when the recorder was not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "burstgate/lsm/replay.hpp"

using namespace bg::lsm;
namespace fs = std::filesystem;

namespace {
fs::path recorder()
{
    // bg_tests lives in <build>/tests/cpp, the recorder in <build>/sw/lsm/tools.
    return fs::canonical("/proc/self/exe").parent_path().parent_path().parent_path() / "sw/lsm/tools/burstgate-rocksdb-record";
}
}  // namespace

// Record a short run of a real RocksDB (load included, so flushes and compactions happen),
// then check the trace has foreground reads, WAL (as 256 KiB writebacks), flush writes and
// compaction reads and writes, and replay it: through Calcspar's allocator the volume never overdraws, directly
// it does (the load's writes arrive far faster than 1000 IOPS). Catches a recorder that
// loses the thread tags (everything "user"), or a replay that bypasses the allocator.
TEST(LsmRocksdbRecorder, RecordAndReplay)
{
    const fs::path rec = recorder();
    // librocksdb-dev is in scripts/deb-deps.sh: a missing recorder is a broken set-up, not a skip.
    ASSERT_TRUE(fs::exists(rec)) << rec << " not built: is librocksdb-dev installed (scripts/deb-deps.sh)?";
    const fs::path dir = fs::temp_directory_path() / ("bg_lsm_rocksdb_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string cmd = rec.string() + " --db " + (dir / "db").string() + " --out " + (dir / "trace").string() +
                            " --keys 30000 --ops 20000 --record-load > " + (dir / "log").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto trace = read_trace((dir / "trace").string());
    std::map<IoSource, std::uint64_t> n;
    for (const auto& r : trace) {
        ++n[r.source];
        if (r.source == IoSource::user) {
            EXPECT_EQ(r.op, IoOp::read);
        }
        if (r.source == IoSource::wal) {
            EXPECT_EQ(r.op, IoOp::write);
            EXPECT_LE(r.bytes, kEbsBlockBytes);
        }
    }
    EXPECT_GT(n[IoSource::user], 1000u);
    EXPECT_GT(n[IoSource::wal], 0u);
    std::uint64_t flush_writes = 0;
    for (const auto& r : trace) flush_writes += r.source == IoSource::flush && r.op == IoOp::write;
    EXPECT_GT(flush_writes, 0u);
    std::uint64_t compaction_writes = 0;
    for (const auto& r : trace) compaction_writes += r.source == IoSource::compaction && r.op == IoOp::write;
    EXPECT_GT(n[IoSource::compaction], compaction_writes);
    EXPECT_GT(compaction_writes, 0u);

    ReplaySpec spec;
    spec.volume = volume_preset("io2", 1000);
    spec.time_scale = 0;  // as fast as each recorded thread's I/O completes
    spec.store = "calcspar";
    const ReplayResult c = replay(trace, spec);
    spec.store = "direct";
    const ReplayResult d = replay(trace, spec);
    EXPECT_EQ(c.by_source.at("all").count, trace.size());
    EXPECT_EQ(d.by_source.at("all").count, trace.size());
    EXPECT_EQ(c.volume.overdraft, 0u);
    EXPECT_GT(d.volume.overdraft, 0u);
    fs::remove_all(dir);
}
