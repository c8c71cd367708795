// The gateway's arrivals, recorded for burstgate-sim to replay (--arrivals, docs/gateway.md): one
// line per READ or WRITE descriptor at its first offer to the datapath -- the time since the
// gateway started, the tenant, read or write, offset and length -- in fio's iolog v3, the format
// burstgate-sim's `mode: trace` reads (each tenant one iolog "file" named after it, added and
// opened at time 0 so that every record keeps its time since start). `burstgate-sim --arrivals`
// replays the file as every tenant's workload, open loop at the recorded times.
//
// Bounded whatever the run: at most `max_records` records (later arrivals are counted, not
// written: the file holds the run's first ones), and the lines wait for the writer thread in at
// most kMaxPending chunks of kChunkBytes (4 MiB); a writer that falls further behind loses the
// records that do not fit, counted. The engine's hot path formats into the current chunk under
// a mutex nobody else holds for long; the writer thread alone makes system calls.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "burstgate/trace/trace.hpp"

namespace bg::gw {

class ArrivalRecorder {
public:
    static constexpr std::size_t kChunkBytes = 256u << 10, kMaxPending = 16;
    static constexpr std::uint64_t kDefaultMaxRecords = 4000000;  // ~40 bytes each: ~160 MB
    // How long the stop waits for the writer to write what is pending: 16 chunks of 256 KiB
    // take milliseconds on any disk that still takes writes.
    static constexpr std::chrono::seconds kStopDeadline{2};

    // Opens `path` for writing and writes the header. Throws std::invalid_argument naming
    // --arrivals for a file that cannot be written or a tenant name iolog cannot hold (blanks).
    // `window_ns` > 0: the window clock (below); 0: the wall clock.
    ArrivalRecorder(const std::string &path, const std::vector<std::string> &tenants, std::uint64_t max_records,
                    std::uint64_t window_ns = 0);
    ~ArrivalRecorder();
    ArrivalRecorder(const ArrivalRecorder &) = delete;
    ArrivalRecorder &operator=(const ArrivalRecorder &) = delete;

    // One descriptor of NBD command `type` offered to the datapath for the first time, `t_ns`
    // after the gateway started, `windows` COMMITs having run, the last at `commit_ns`. The
    // caller's times must not go back (the engine calls it under its device lock). Only READ and
    // WRITE are written; other commands are counted.
    //
    // The wall clock writes t_ns. The window clock writes windows x window_ns + (t_ns - commit_ns),
    // the latter at most window_ns - 1 us: the arrival lands in the simulator's window of the same
    // index as the gateway's firmware saw it in, as long after that window's start. On the real
    // clock a window's COMMIT comes late (the loop's wake-up) or is skipped (overruns), so an I/O
    // offered just after a nominal window boundary meets the old window's grants in the gateway
    // and would meet the new one's in a wall-clock replay.
    void record(std::uint64_t t_ns, std::uint64_t windows, std::uint64_t commit_ns, std::uint16_t tenant,
                std::uint16_t type, std::uint64_t offset, std::uint32_t length);
    // Writes what is pending and each tenant's close, and stops the writer. Returns a summary
    // for stderr ("N arrivals recorded to PATH", with what was left out and any write error).
    std::string finish();

private:
    // What the writer thread shares with the recorder, held by both: a writer the stop gives up
    // on (a file that stopped taking writes, kStopDeadline) is detached and may outlive the
    // recorder, so it must never touch the recorder's own memory.
    struct Shared {
        std::mutex mu;
        std::condition_variable cv;       // chunks to write, or the stop
        std::condition_variable done_cv;  // the writer has written everything and ended
        std::deque<std::string> pending;  // full chunks for the writer
        std::vector<std::string> spare;   // written chunks, their capacity reused
        std::string error;
        int fd = -1;
        bool stop = false, done = false;
    };

    // One iolog file per tenant; IologV3Lines's std::invalid_argument for a name an iolog file
    // name cannot be, prefixed with --arrivals.
    static bg::trace::IologV3Lines lines_for(const std::vector<std::string> &tenants);
    static void writer_loop(const std::shared_ptr<Shared> &sh);
    void hand_off_locked();  // sh_->mu held: the current chunk to the writer (or dropped, counted)

    std::string path_;
    bg::trace::IologV3Lines lines_;  // one iolog "file" per tenant
    std::uint64_t max_records_, window_ns_;
    std::shared_ptr<Shared> sh_ = std::make_shared<Shared>();
    std::string cur_;  // the chunk being filled (sh_->mu)
    std::uint64_t recorded_ = 0, over_cap_ = 0, lost_ = 0, other_ = 0;
    bool finished_ = false;
    std::thread writer_;
};

}  // namespace bg::gw
