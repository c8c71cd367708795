// Calcspar's opportunistic compaction (§4.4) and the queue every other I/O source
// goes to (§4.2): user-aware I/O (foreground reads, WAL, memtable flush -- a full memtable
// stalls writes) and L0 compaction (L0 drives read amplification) are high priority; L1 and
// L2 compaction medium ("opportunistically processed"); deeper compaction and prefetching low
// ("prefetching requests go into the lowest priority queue").
#pragma once

#include <cstdint>

#include "burstgate/lsm/volume.hpp"

namespace bg::lsm {

enum class Priority : std::uint8_t { high = 0, medium = 1, low = 2 };
constexpr int kPriorities = 3;

Priority priority_of(const IoRequest& io);
const char* to_string(Priority p);

}  // namespace bg::lsm
