// The block-device interface the LSM store and Calcspar's allocator submit I/O to.
//
// A Volume takes one I/O at the event loop's current time and calls its completion exactly
// once, later (or at the same time), from the event loop. CloudVolume (Calcspar §2.3) is one
// implementation; an agent-backed volume -- each I/O becomes a descriptor of one burstgate
// tenant and completes when the agent model's backend completion fires (BurstCBS §6.7,
// "a burstgate-scheduled disk") -- is the other one planned, see docs/lsm.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "burstgate/lsm/event_loop.hpp"

namespace bg::lsm {

constexpr std::uint32_t kPageBytes = 4096;            // LSM block / cache page (Calcspar §4.3)
constexpr std::uint32_t kEbsBlockBytes = 256 * 1024;  // largest EBS I/O, one IOPS token (§4.3)

// Who issued an I/O. Calcspar maps this to a priority queue (opportunistic compaction,
// compaction_priority.hpp); the report breaks volume I/O down by it.
enum class IoSource : std::uint8_t {
    user,        // foreground Get/Scan block read (user-aware, §4.2)
    wal,         // write-ahead-log append
    flush,       // memtable -> L0 SST
    compaction,  // SST merge; `level` is the compaction's input level
    prefetch,    // Calcspar hotspot-aware prefetch / L0-L1 rewarm (§4.3)
};
const char* to_string(IoSource s);

enum class IoOp : std::uint8_t { read, write };

struct IoRequest {
    std::uint64_t offset = 0;  // byte address on the volume
    std::uint32_t bytes = kPageBytes;
    IoOp op = IoOp::read;
    IoSource source = IoSource::user;
    std::uint8_t level = 0;  // compaction input level (0 = L0 -> L1)
};

// IOPS tokens one I/O costs: EBS counts each I/O of up to 256 KiB as one operation.
inline std::uint32_t io_tokens(std::uint32_t bytes)
{
    return bytes == 0 ? 1 : (bytes + kEbsBlockBytes - 1) / kEbsBlockBytes;
}

class Volume {
public:
    using Completion = std::function<void()>;
    virtual ~Volume() = default;
    // Submit at loop().now(); `done` runs from the event loop when the I/O completes.
    virtual void submit(const IoRequest& io, Completion done) = 0;
    // The IOPS the contract pays for (the stabilizer's token budget per second).
    virtual std::uint32_t paid_iops() const = 0;
    virtual EventLoop& loop() = 0;
};

}  // namespace bg::lsm
