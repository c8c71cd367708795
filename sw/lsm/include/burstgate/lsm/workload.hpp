// Key-value workloads: YCSB A-F (seed 000 Table 2) and a Mixgraph-like fluctuating load
// (seed 000 §3.2/§5.2, Facebook's db_bench mixgraph).
//
// YCSB: Zipfian(0.99) popularity over the loaded keys, scrambled over the key space by a hash
// so the hot keys are scattered (why prefetching helps little under YCSB, §5.2); D reads the
// latest inserted keys; E scans 1..100 keys; F is read-modify-write.
// Mixgraph-like: db_bench's default key-range model -- 30 equal key ranges, range i drawn with
// weight a*e^(b*i) + c*e^(d*i) (a = 14.18, b = -2.917, c = 0.0164, d = -0.08082), ranges
// placed at shuffled positions -- and inside a range the hot keys cluster at its start
// (offset = size * u^skew), which is the spatial locality §5.2 says prefetching exploits.
// Operation mix: 83 % Get, 14 % Put, 3 % Seek (db_bench defaults) unless read_ratio is set;
// the arrival rate follows db_bench's sine model, rate(t) = mean * (1 + amplitude *
// sin(2 pi t / period)), with mean = intensity * paid IOPS (§5.6: "the average value of load
// fluctuations is equal to paid IOPS").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "burstgate/lsm/sim.hpp"

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
    double skew = 2.0;              // mixgraph: in-range clustering exponent
    std::uint32_t key_ranges = 30;
};

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

private:
    std::uint64_t pick_zipf(Rng& rng) const;
    std::uint64_t pick_mixgraph(Rng& rng) const;
    WorkloadSpec spec_;
    std::uint64_t keys_;
    Zipfian zipf_;
    double read_, update_, insert_, scan_, rmw_;
    bool latest_ = false, uniform_ = false, fluctuating_ = false, mixgraph_ = false;
    std::vector<double> range_cdf_;
    std::vector<std::uint64_t> range_slot_;
};

}  // namespace bg::lsm
