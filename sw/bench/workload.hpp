// Workload generation shared by the benchmarks. Everything here runs outside the timed
// regions: draws are pre-generated into arrays that the timed loops only read.
#pragma once

#include <cstdint>
#include <vector>

#include "burstgate/model/admission.hpp"
#include "burstgate/model/cost.hpp"
#include "burstgate/random.hpp"
#include "burstgate/vec.h"

namespace bg::bench {

// splitmix64 (burstgate/random.hpp): deterministic, so every run of a benchmark sees the same
// workload.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : g_(seed) {}
    std::uint64_t next() { return g_.next(); }
    // Uniform in [0, n), n > 0 (multiply-shift; the bias is far below what a workload sees).
    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }
    // Uniform in [lo, hi].
    double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53; }

private:
    SplitMix64 g_;
};

// One descriptor as the cost estimator sees it.
struct Descriptor {
    unsigned product;
    bool write;
    std::uint32_t size;
};

// An estimator programmed through the firmware loader (fw/ cost_table.h) with a DPU-like
// linear CPU profile for products A and B. The timed paths do not depend on the values.
CostEstimator programmed_estimator();

// The I/O types of the workloads: products A and B, read and write, 4k 16k 64k 128k.
std::vector<Descriptor> io_types();

// Cost vectors of io_types() under programmed_estimator().
std::vector<bg_vec> io_type_costs();

// Element-wise mean of vectors (rounded down).
bg_vec mean_cost(const std::vector<bg_vec> &costs);

struct TenantIo {
    std::uint32_t tenant;
    bg_vec cost;
};

// A burstable multi-tenant admission workload, replayed window after window.
//
// About ios_per_window I/Os per window whatever the tenant count (the thread's capacity is
// fixed; more tenants share it), tenants interleaved at random, I/O types drawn from
// io_types(). One tenant in eight bursts every window (2.5-3.5x its base); the others are
// on/off (a two-state Markov chain: on stays on with p = 1/2, off stays off with p = 3/5;
// on offers 1-2.5x base). Bases fill 90 % of the thread, the reserved pool is 5 %, bursts
// reach 4x base, odd tenants are in credit mode. Tenants that were off decay toward their
// floor or are dropped (§6.6), so a tenant turning on exhausts its grant below base and
// takes BORROW from the burst tenants' surplus or RESERVED: BIOS fast recovery.
struct AdmissionWorkload {
    AdmissionConfig cfg;
    std::vector<std::vector<TenantIo>> windows;
};

AdmissionWorkload admission_workload(Scheduler scheduler, std::uint32_t tenants,
                                     std::uint32_t ios_per_window, unsigned windows);

}  // namespace bg::bench
