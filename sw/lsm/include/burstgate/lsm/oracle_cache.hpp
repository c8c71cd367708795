// A measuring instrument, not a policy of the paper: the best hit ratio any block cache of a
// given size can reach on a workload whose operations are drawn independently of each other
// (Mixgraph and YCSB here: the independent reference model). Under that model the chance that
// a block read hits is the summed read probability of the pages resident at that moment, so no
// policy -- demand-filled, prefetching, hotness-aware, fluctuation-aware -- does better on
// average than keeping the most probable pages resident all the time (the static optimum,
// Aho, Denning and Ullman's A0). StaticCache is that cache: a fixed page set, loaded for
// free before the run, never filled by reads. The tree changes under it, though: every Get
// probes the filter of each new L0 file, so a set fitted to the initial tree would miss those
// on every Get. It therefore pins each new file's filter and index pages for free when the
// file is created (Calcspar's "rewarm the LSM top layer", without its I/O), dropping the
// least-read pages of the fitted set to stay within its size. `--cache oracle` runs Calcspar
// with it (docs/lsm.md), to show what Calcspar Fig. 18 would need from any cache of that size.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/lsm_store.hpp"
#include "burstgate/lsm/workload.hpp"

namespace bg::lsm {

class StaticCache final : public Cache {
public:
    // `ranked`: the pages to hold, most read first; `capacity`: the most it ever holds.
    StaticCache(const std::vector<std::uint64_t>& ranked, std::uint64_t capacity);
    bool lookup(std::uint64_t page) override;
    void fill(std::uint64_t) override {}  // reads never change the resident set
    void file_created(const FileExtent& f) override;
    void file_deleted(const FileExtent& f) override;
    const char* name() const override { return "oracle"; }
    std::uint64_t size() const { return pages_.size(); }
    bool holds(std::uint64_t page) const { return pages_.count(page) != 0; }
    // From now on pin the metadata of created files (call it once the initial tree, which the
    // fitted set already covers, has been announced).
    void arm() { armed_ = true; }

private:
    std::vector<std::uint64_t> ranked_;  // the fitted set, most read first; dropped from the back
    std::uint64_t capacity_;
    std::unordered_set<std::uint64_t> pages_;
    bool armed_ = false;
};

// The `capacity` pages read most often by `ops` operations of `wl` (Gets' and Seeks' block
// reads as get_plan / scan_plan list them) on the initial tree that an LsmStore with `cfg`
// builds, drawn with their own generator (seeded from `seed`, independent of a run's). Ties
// broken by page number, so the set is deterministic.
std::vector<std::uint64_t> most_read_pages(const LsmConfig& cfg, const WorkloadSpec& wl, std::uint64_t seed,
                                           std::uint64_t capacity, std::uint32_t ops);

}  // namespace bg::lsm
