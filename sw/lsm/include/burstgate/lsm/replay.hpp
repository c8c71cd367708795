// Replay of a recorded block-I/O trace (e.g. from burstgate-rocksdb-record, which wraps a
// real RocksDB's FileSystem) through the volume model, with or without Calcspar's allocator.
//
// Trace format, one I/O per line, '#' starts a comment:
//   t_ns thread op source level file offset bytes
//   op: R | W; source: user | wal | flush | compaction | prefetch; level: the compaction's
//   input level (0 otherwise); file: RocksDB file number; offset, bytes: within that file.
// Replay keeps each recorded thread's order: a thread issues its next I/O when the previous
// one has completed and not before the recorded time x time_scale (so a thread that was
// waiting on the disk in the recording waits on the model instead).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/experiment.hpp"

namespace bg::lsm {

struct TraceRecord {
    Time t = 0;
    std::uint32_t thread = 0;
    IoOp op = IoOp::read;
    IoSource source = IoSource::user;
    std::uint8_t level = 0;
    std::uint64_t file = 0;
    std::uint64_t offset = 0;
    std::uint32_t bytes = 0;
};

// Replay holds the whole trace and one latency per I/O in memory (about 72 bytes a record), so
// a trace is accepted up to a record count: 2^24 records (~1.2 GiB) unless the caller says.
inline constexpr std::uint64_t kMaxTraceRecords = std::uint64_t{1} << 24;

// Throws std::runtime_error("PATH:LINE: what") on a malformed line, an unreadable file, or the
// record after the max_records-th.
std::vector<TraceRecord> read_trace(const std::string& path, std::uint64_t max_records = kMaxTraceRecords);
void write_trace_header(std::FILE* f);
std::string format_trace_record(const TraceRecord& r);

struct ReplaySpec {
    std::string store = "calcspar";  // calcspar (allocator + stabilizer) | direct
    std::string allocator = "twa";   // calcspar: twa | na | twa-reserve
    VolumeSpec volume;
    double time_scale = 1.0;
    std::uint64_t seed = 1;
};

struct ReplayResult {
    std::map<std::string, LatencySummary> by_source;  // per source, plus "all"
    VolumeStats volume;
    double volume_iops = 0;  // tokens per simulated second
    Time span = 0;           // simulated time until the last completion
};

ReplayResult replay(const std::vector<TraceRecord>& trace, const ReplaySpec& spec);

// The replay's threads on a loop and volume someone else owns (replay() above; burstgate-sim's
// burstgate-scheduled disk). Every recorded thread starts at construction; `trace` must outlive
// the Replayer. Latency is kept for I/Os issued at or after `measure_from`.
class Replayer {
public:
    Replayer(const std::vector<TraceRecord>& trace, EventLoop& loop, Volume& io, double time_scale,
             Time measure_from = 0);
    ~Replayer();
    Replayer(const Replayer&) = delete;
    Replayer& operator=(const Replayer&) = delete;
    // Per source, plus "all".
    std::map<std::string, LatencySummary> latency() const;
    Time last_completion() const;
    std::uint64_t completed() const;  // I/Os completed (all, measured or not)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace bg::lsm
