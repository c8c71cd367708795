#include "workload.hpp"

#include <stdexcept>
#include <utility>

#include "burstgate/cost_table.h"

namespace bg::bench {

namespace {

// CPU ns per I/O = base + per KiB, per product (read, write); link bytes are exact.
constexpr bg_linear_profile kProfile[2][2] = {
    {{2200, 40}, {1800, 35}},
    {{3000, 55}, {2500, 45}},
};
constexpr std::uint32_t kHeaderBytes = 128;

}  // namespace

CostEstimator programmed_estimator()
{
    CostEstimator est;
    const bg_hal hal = est.hal();
    for (unsigned p = 0; p < 2; p++)
        if (bg_cost_load_linear(&hal, p, &kProfile[p][0], &kProfile[p][1], kHeaderBytes) != BG_COST_OK)
            throw std::runtime_error("bench: cost-table loader rejected the profile");
    return est;
}

std::vector<Descriptor> io_types()
{
    std::vector<Descriptor> types;
    for (unsigned product = 0; product < 2; product++)
        for (bool write : {false, true})
            for (std::uint32_t kib : {4u, 16u, 64u, 128u})
                types.push_back({product, write, kib << 10});
    return types;
}

std::vector<bg_vec> io_type_costs()
{
    const CostEstimator est = programmed_estimator();
    std::vector<bg_vec> costs;
    for (const Descriptor &t : io_types()) {
        const CostVector c = est.estimate(t.product, t.write, t.size);
        bg_vec v;
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            v.d[d] = c[d];
        costs.push_back(v);
    }
    return costs;
}

bg_vec mean_cost(const std::vector<bg_vec> &costs)
{
    bg_vec m{};
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        std::uint64_t s = 0;
        for (const bg_vec &c : costs)
            s += c.d[d];
        m.d[d] = static_cast<std::uint32_t>(s / costs.size());
    }
    return m;
}

AdmissionWorkload admission_workload(Scheduler scheduler, std::uint32_t n, std::uint32_t ios_per_window,
                                     unsigned windows)
{
    Rng rng(0xAD + n);
    // load[w][i]: tenant i's offered load in window w, in multiples of its base.
    std::vector<std::vector<double>> load(windows, std::vector<double>(n));
    double load_sum = 0;
    for (std::uint32_t i = 0; i < n; i++) {
        bool on = rng.below(2) != 0;
        for (unsigned w = 0; w < windows; w++) {
            if (i % 8 == 0) {
                load[w][i] = rng.uniform(2.5, 3.5);
            } else {
                on = on ? rng.below(2) != 0 : rng.below(5) < 2;
                load[w][i] = on ? rng.uniform(1.0, 2.5) : 0.0;
            }
            load_sum += load[w][i];
        }
    }
    // Base per tenant in I/Os, so that the mean offered load is ios_per_window.
    const double base_ios = static_cast<double>(ios_per_window) * windows / load_sum;
    const std::vector<bg_vec> types = io_type_costs();
    const bg_vec mean = mean_cost(types);

    AdmissionWorkload wl;
    wl.cfg.scheduler = scheduler;
    wl.cfg.seed = 7;
    wl.cfg.tenants.resize(n);
    std::uint64_t sum[BG_COST_DIMS] = {};
    for (std::uint32_t i = 0; i < n; i++) {
        TenantSpec &s = wl.cfg.tenants[i];
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            s.base.d[d] = static_cast<std::uint32_t>(base_ios * mean.d[d]);
            s.burst.d[d] = s.base.d[d] * 4;
            s.credits.d[d] = s.base.d[d] * 8;
            s.credit_max.d[d] = s.base.d[d] * 64;
            sum[d] += s.base.d[d];
        }
        s.credit = (i & 1u) != 0;
    }
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        wl.cfg.total.d[d] = static_cast<std::uint32_t>(static_cast<double>(sum[d]) / 0.9);

    wl.windows.resize(windows);
    for (unsigned j = 0; j < windows; j++) {
        std::vector<TenantIo> &w = wl.windows[j];
        for (std::uint32_t i = 0; i < n; i++) {
            const auto ios = static_cast<std::uint32_t>(load[j][i] * base_ios + 0.5);
            for (std::uint32_t k = 0; k < ios; k++)
                w.push_back({i, types[rng.below(static_cast<std::uint32_t>(types.size()))]});
        }
        for (std::size_t k = w.size(); k > 1; k--)  // Fisher-Yates: tenants interleave
            std::swap(w[k - 1], w[rng.below(static_cast<std::uint32_t>(k))]);
    }
    return wl;
}

}  // namespace bg::bench
