#include "burstgate/lsm/workload.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
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
        if (spec.skew < 1) throw std::invalid_argument("workload.skew must be >= 1");
        double total = 0;
        for (std::uint32_t i = 0; i < spec.key_ranges; ++i) {
            const double x = i;
            total += 14.18 * std::exp(-2.917 * x) + 0.0164 * std::exp(-0.08082 * x);
            range_cdf_.push_back(total);
        }
        for (auto& c : range_cdf_) c /= total;
        // Fixed shuffle of range positions (seeded by the key count: same for every run).
        range_slot_.resize(spec.key_ranges);
        for (std::uint32_t i = 0; i < spec.key_ranges; ++i) range_slot_[i] = i;
        Rng shuffle(keys * 0x9e3779b97f4a7c15ull + spec.key_ranges);
        for (std::uint32_t i = spec.key_ranges - 1; i > 0; --i) std::swap(range_slot_[i], range_slot_[shuffle.below(i + 1)]);
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
    const double u = rng.uniform();
    const auto r = static_cast<std::size_t>(std::upper_bound(range_cdf_.begin(), range_cdf_.end(), u) - range_cdf_.begin());
    const std::size_t range = std::min(r, range_cdf_.size() - 1);
    const std::uint64_t size = keys_ / spec_.key_ranges;
    const std::uint64_t off = static_cast<std::uint64_t>(static_cast<double>(size) * std::pow(rng.uniform(), spec_.skew));
    return std::min(keys_ - 1, range_slot_[range] * size + std::min(off, size - 1));
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
    if (op.type == OpType::scan) op.scan_len = mixgraph_ ? 10 : static_cast<std::uint32_t>(1 + rng.below(100));
    return op;
}

}  // namespace bg::lsm
