#include "burstgate/lsm/workload.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

namespace bg::lsm {

const char* to_string(OpType t)
{
    switch (t) {
    case OpType::read: return "read";
    case OpType::update: return "update";
    case OpType::insert: return "insert";
    case OpType::scan: return "scan";
    case OpType::rmw: return "rmw";
    }
    return "?";
}

static double zeta(std::uint64_t n, double theta)
{
    double s = 0;
    for (std::uint64_t i = 1; i <= n; ++i) s += 1.0 / std::pow(static_cast<double>(i), theta);
    return s;
}

Zipfian::Zipfian(std::uint64_t n, double theta) : n_(n), theta_(theta)
{
    if (n == 0) throw std::invalid_argument("Zipfian: n must be > 0");
    if (theta <= 0 || theta >= 1) throw std::invalid_argument("Zipfian: theta in (0, 1)");
    zetan_ = zeta(n, theta);
    const double zeta2 = zeta(2, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1 - std::pow(2.0 / static_cast<double>(n), 1 - theta)) / (1 - zeta2 / zetan_);
    half_pow_theta_ = 1 + std::pow(0.5, theta);
}

std::uint64_t Zipfian::next(Rng& rng) const
{
    const double u = rng.uniform();
    const double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (uz < half_pow_theta_) return std::min<std::uint64_t>(1, n_ - 1);
    const auto r = static_cast<std::uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_));
    return std::min(r, n_ - 1);
}

Workload::Workload(const WorkloadSpec& spec, std::uint64_t keys)
    : spec_(spec), keys_(keys), zipf_(keys ? keys : 1)
{
    if (keys == 0) throw std::invalid_argument("workload: no keys");
    if (spec.amplitude < 0 || spec.amplitude > 1) throw std::invalid_argument("workload.amplitude in [0, 1]");
    if (spec.period <= 0) throw std::invalid_argument("workload.period must be > 0");
    read_ = update_ = insert_ = scan_ = rmw_ = 0;
    const std::string& k = spec.kind;
    if (k == "ycsb-a") { read_ = 0.5; update_ = 0.5; }
    else if (k == "ycsb-b") { read_ = 0.95; update_ = 0.05; }
    else if (k == "ycsb-c") { read_ = 1.0; }
    else if (k == "ycsb-d") { read_ = 0.95; insert_ = 0.05; latest_ = true; }
    else if (k == "ycsb-e") { scan_ = 0.95; insert_ = 0.05; }
    else if (k == "ycsb-f") { read_ = 0.5; rmw_ = 0.5; }
    else if (k == "ycsb-uniform") { read_ = 1.0; uniform_ = true; }
    else if (k == "random-read") { read_ = 1.0; uniform_ = true; fluctuating_ = true; }
    else if (k == "mixgraph") {
        mixgraph_ = fluctuating_ = true;
        if (spec.read_ratio < 0) { read_ = 0.83; update_ = 0.14; scan_ = 0.03; }
        else if (spec.read_ratio <= 1) { read_ = spec.read_ratio; update_ = 1 - spec.read_ratio; }
        else throw std::invalid_argument("workload.read_ratio in [0, 1]");
        if (spec.key_ranges == 0 || spec.key_ranges > keys) throw std::invalid_argument("workload.key_ranges in 1..keys");
        const bool a0 = spec.key_dist_a == 0, b0 = spec.key_dist_b == 0;
        if (a0 != b0 || spec.key_dist_a < 0 || spec.key_dist_a > 1 || spec.key_dist_b < 0 ||
            !std::isfinite(spec.key_dist_b)) {
            throw std::invalid_argument(
                "workload.key_dist_a/key_dist_b: both 0 (uniform inside a range) or a in (0, 1] and b > 0");
        }
        std::uint64_t end = 0;
        for (const KeyRange& r : mixgraph_key_ranges(spec.key_ranges)) range_end_.push_back(end += r.access);
        range_size_ = keys / spec.key_ranges;
    } else {
        throw std::invalid_argument("unknown workload '" + k +
                                    "' (ycsb-a..ycsb-f, ycsb-uniform, mixgraph, random-read)");
    }
}

double Workload::rate_factor(Time t) const
{
    if (!fluctuating_) return 1.0;
    return 1.0 + spec_.amplitude * std::sin(2 * std::numbers::pi * static_cast<double>(t) / static_cast<double>(spec_.period));
}

std::uint64_t Workload::pick_zipf(Rng& rng) const
{
    if (uniform_) return rng.below(keys_);
    return mix64(zipf_.next(rng)) % keys_;  // scrambled Zipfian
}

std::uint64_t Workload::pick_mixgraph(Rng& rng) const
{
    // db_bench draws one ini_rand for both choices (range = ini_rand mod the access total,
    // offset from ini_rand mod the range size); two independent draws give the same marginals.
    const std::uint64_t r = rng.below(range_end_.back());
    const auto pos = static_cast<std::uint64_t>(std::upper_bound(range_end_.begin(), range_end_.end(), r) - range_end_.begin());
    std::uint64_t off = rng.below(range_size_);
    if (spec_.key_dist_a > 0) {
        const double u = static_cast<double>(off) / static_cast<double>(range_size_);
        const double seed = std::ceil(std::pow(u / spec_.key_dist_a, 1.0 / spec_.key_dist_b));
        std::mt19937_64 scatter(static_cast<std::uint64_t>(std::min(seed, 1.8e19)));
        off = scatter() % range_size_;
    }
    return pos * range_size_ + off;
}

std::uint32_t mixgraph_scan_len(double u)
{
    // db_bench's Seek: Next() ParetoCdfInversion(u, iter_theta = 0, iter_k = 2.517,
    // iter_sigma = 14.236) times, modulo mix_max_scan_len = 10000 (median 27, mean ~570).
    constexpr double k = 2.517, sigma = 14.236;
    constexpr std::uint64_t max_len = 10000;
    const double x = std::ceil(sigma * (std::pow(std::max(u, 1e-300), -k) - 1) / k);
    const auto n = x >= 1.8e19 ? 0 : static_cast<std::uint64_t>(x) % max_len;
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(n, 1));  // Seek reads the first entry
}

std::vector<KeyRange> mixgraph_key_ranges(std::uint32_t n)
{
    // db_bench InitiateExpDistribution: pfx from n down to 1, the coldest first, so amplify
    // comes from the smallest non-zero probability and every such range gets >= 1 access.
    constexpr double a = 14.18, b = -2.917, c = 0.0164, d = -0.08082;
    std::vector<KeyRange> set;
    std::uint64_t amplify = 0, total = 0;
    for (std::uint32_t pfx = n; pfx >= 1; --pfx) {
        double p = a * std::exp(b * pfx) + c * std::exp(d * pfx);
        if (p < 1e-16) p = 0;
        if (amplify == 0 && p > 0) amplify = static_cast<std::uint64_t>(std::floor(1 / p)) + 1;
        KeyRange r;
        r.pfx = pfx;
        r.access = p > 0 ? static_cast<std::uint64_t>(std::floor(static_cast<double>(amplify) * p)) : 0;
        total += r.access;
        set.push_back(r);
    }
    // The fixed shuffle (db_bench's Random64 is mt19937_64), so the hot range's position
    // depends only on the distribution parameters.
    std::mt19937_64 loca(total);
    for (std::uint32_t i = 0; i < n; ++i) std::swap(set[i], set[loca() % n]);
    return set;
}

Op Workload::next(Rng& rng, std::uint64_t latest_key)
{
    Op op;
    double u = rng.uniform();
    if ((u -= read_) < 0) op.type = OpType::read;
    else if ((u -= update_) < 0) op.type = OpType::update;
    else if ((u -= insert_) < 0) op.type = OpType::insert;
    else if ((u -= scan_) < 0) op.type = OpType::scan;
    else op.type = rmw_ > 0 ? OpType::rmw : OpType::read;
    if (mixgraph_) op.key = pick_mixgraph(rng);
    else if (latest_) {
        // YCSB "latest": Zipfian distance back from the newest key.
        const std::uint64_t back = zipf_.next(rng);
        op.key = latest_key > back ? latest_key - back : 0;
    } else op.key = pick_zipf(rng);
    if (op.type == OpType::scan) op.scan_len = mixgraph_ ? mixgraph_scan_len(1.0 - rng.uniform()) : static_cast<std::uint32_t>(1 + rng.below(100));
    return op;
}

}  // namespace bg::lsm
