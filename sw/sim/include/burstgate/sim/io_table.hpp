// burstgate-sim's I/O records: one per I/O waiting, deferred or in flight, indexed by the id
// its events and the device's tag carry. Every part of the simulator reads and writes the same
// record (the workload fills it, the decision and the SA stages stamp it, the completion reads
// it), so the records live apart from all of them. A completed record's slot is reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bg::sim {

struct Scenario;

struct Io {
    std::uint64_t arrival = 0, admit = 0, backend = 0;
    std::uint32_t size = 0, true_cpu = 0, charge = 0;
    std::uint16_t tenant = 0, segment = 0;
    std::uint16_t vq = 0;  // the tenant's vCPU queue (queue_base + k): the SA's round-robin turn
    std::uint8_t queue = 0, egress = 0;
    bool write = false, deferred = false, hot = false;
    bool deferred_hot = false;  // the segment monitor's verdict at the last deferral
    std::uint32_t lsm = 0;  // lsm: the store's I/O cookie + 1 (0: the workload's)
};

// I/Os alive at once (waiting, deferred or in flight) a run may hold: 4 Mi records of 48 bytes
// plus their queue entries stay under about 0.5 GB.
inline constexpr std::size_t kMaxLiveIos = std::size_t{1} << 22;

class IoTable {
public:
    explicit IoTable(const Scenario &sc) : sc_(sc) {}
    // A fresh record of tenant ti arriving at `now`, in a completed record's slot when there is
    // one. Throws ScenarioError at the tenant's line beyond kMaxLiveIos records.
    std::uint32_t alloc(std::uint64_t now, std::uint32_t ti);
    // The I/O completed: its slot is free for the next alloc.
    void release(std::uint32_t id) { free_.push_back(id); }
    Io &operator[](std::uint32_t id) { return ios_[id]; }
    const Io &operator[](std::uint32_t id) const { return ios_[id]; }

private:
    const Scenario &sc_;
    std::vector<Io> ios_;
    std::vector<std::uint32_t> free_;
};

}  // namespace bg::sim
