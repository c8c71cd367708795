// Key-value workloads: YCSB A-F (Calcspar Table 2) and Mixgraph (Calcspar §3.2/§5.2, Cao et
// al. FAST'20, RocksDB's db_bench --benchmarks=mixgraph).
//
// YCSB: Zipfian(0.99) popularity over the loaded keys, scrambled over the key space by a hash
// so the hot keys are scattered (why prefetching helps little under YCSB, §5.2); D reads the
// latest inserted keys; E scans 1..100 keys; F is read-modify-write.
// Mixgraph: db_bench's key-range ("prefix") model, GenerateTwoTermExpKeys, as its prefix_dist
// command line runs it. The key space is cut into `key_ranges` (30) equal ranges; range
// pfx = 1..30 is drawn with probability a*e^(b*pfx) + c*e^(d*pfx) (a = 14.18, b = -2.917,
// c = 0.0164, d = -0.08082), quantised as db_bench does (amplify = floor(1 / p_min) + 1,
// access = floor(amplify * p)) and placed at the position db_bench's fixed shuffle gives it
// (mt19937_64 seeded with the sum of the accesses). Range pfx = 1 takes 79 % of the keys,
// pfx = 2 another 5.6 %: key-range locality, contiguous hot regions of the sorted key space.
// Inside a range the offset is uniform (key_dist_a = key_dist_b = 0, prefix_dist), or with
// key_dist_a/b > 0 db_bench's power model: seed = ceil((u / a)^(1 / b)), offset =
// mt19937_64(seed)() mod range size -- hot keys scattered inside the range (all_dist's
// 0.002312 / 0.3467).
// Operation mix: 83 % Get, 14 % Put, 3 % Seek (db_bench defaults) unless read_ratio is set;
// a Seek reads db_bench's Pareto number of entries (iter_k 2.517, iter_sigma 14.236, modulo
// mix_max_scan_len 10000: median 27, mean ~570);
// the arrival rate follows db_bench's sine model, rate(t) = mean * (1 + amplitude *
// sin(2 pi t / period)), with mean = intensity * paid IOPS (§5.6: "the average value of load
// fluctuations is equal to paid IOPS").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "burstgate/lsm/event_loop.hpp"

namespace bg::lsm {

enum class OpType : std::uint8_t { read, update, insert, scan, rmw };
const char* to_string(OpType t);

struct Op {
    OpType type = OpType::read;
    std::uint64_t key = 0;
    std::uint32_t scan_len = 0;
};

// YCSB's Zipfian generator (Gray et al., as in YCSB's ZipfianGenerator): rank in [0, n).
class Zipfian {
public:
    Zipfian(std::uint64_t n, double theta = 0.99);
    std::uint64_t next(Rng& rng) const;
    std::uint64_t items() const { return n_; }

private:
    std::uint64_t n_;
    double theta_, alpha_, zetan_, eta_, half_pow_theta_;
};

struct WorkloadSpec {
    std::string kind = "mixgraph";  // ycsb-a .. ycsb-f, ycsb-uniform, mixgraph, random-read
    double read_ratio = -1;         // mixgraph: Get share, the rest Put (<0: db_bench mix)
    double amplitude = 0.5;         // sine amplitude as a share of the mean
    Time period = 60 * kSec;        // sine period
    std::uint32_t key_ranges = 30;  // mixgraph: db_bench keyrange_num
    double key_dist_a = 0;          // mixgraph: db_bench key_dist_a / key_dist_b; both 0 =
    double key_dist_b = 0;          //   uniform inside a range, both > 0 = power model
};

// db_bench's two-term exponential key-range table (GenerateTwoTermExpKeys).
struct KeyRange {
    std::uint64_t access = 0;  // weight: draws in [start, start + access) of [0, total) pick it
    std::uint32_t pfx = 0;     // db_bench's pfx (1 = the hottest); its position is its index
};
std::vector<KeyRange> mixgraph_key_ranges(std::uint32_t n);
// db_bench's Seek length for a uniform u in (0, 1]: Pareto(k 2.517, sigma 14.236) mod 10000, >= 1.
std::uint32_t mixgraph_scan_len(double u);

class Workload {
public:
    // `keys` loaded keys; inserts are drawn by the caller from the store's key space.
    // Throws std::invalid_argument for an unknown kind or out-of-range parameters.
    Workload(const WorkloadSpec& spec, std::uint64_t keys);
    Op next(Rng& rng, std::uint64_t latest_key);
    // Arrival rate multiplier at time t (mean 1): 1 + amplitude * sin(2 pi t / period) for
    // mixgraph and random-read, 1 for YCSB.
    double rate_factor(Time t) const;
    const WorkloadSpec& spec() const { return spec_; }
    // Mixgraph: keys per range; the range at position i of mixgraph_key_ranges() holds keys
    // [i * range_size(), (i + 1) * range_size()).
    std::uint64_t range_size() const { return range_size_; }

private:
    std::uint64_t pick_zipf(Rng& rng) const;
    std::uint64_t pick_mixgraph(Rng& rng) const;
    WorkloadSpec spec_;
    std::uint64_t keys_;
    Zipfian zipf_;
    double read_, update_, insert_, scan_, rmw_;
    bool latest_ = false, uniform_ = false, fluctuating_ = false, mixgraph_ = false;
    std::vector<std::uint64_t> range_end_;  // cumulative accesses by position
    std::uint64_t range_size_ = 1;
};

}  // namespace bg::lsm
