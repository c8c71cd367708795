// Per-I/O admission and the window tick; the decision rule is spelled out in admission.hpp.
#include "burstgate/model/admission.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "burstgate/lfsr.h"

namespace bg {

namespace {

std::string tenant_field(std::size_t i, const char *field)
{
    return "tenants[" + std::to_string(i) + "]." + field;
}

const char *dim_name(int d)
{
    static const char *const names[BG_COST_DIMS] = {"cpu", "ingress", "egress", "swlimit"};
    return d >= 0 && d < static_cast<int>(BG_COST_DIMS) ? names[d] : "?";
}

// used + c <= base in every dimension, without wrapping.
bool within_base(const bg_vec &used, const bg_vec &c, const bg_vec &base)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        if (std::uint64_t{used.d[d]} + c.d[d] > base.d[d])
            return false;
    return true;
}

}  // namespace

Admission::Admission(AdmissionConfig cfg) : cfg_(std::move(cfg))
{
    const std::size_t n = cfg_.tenants.size();
    if (n == 0 || n > BG_BIOS_MAX_TENANTS)
        throw std::invalid_argument("tenants: need 1.." + std::to_string(BG_BIOS_MAX_TENANTS) +
                                    " tenants, got " + std::to_string(n));
    const std::pair<std::uint32_t, const char *> ratios[] = {
        {cfg_.reserved_q16, "reserved_q16"}, {cfg_.alpha_q16, "alpha_q16"}, {cfg_.floor_q16, "floor_q16"}};
    for (const auto &[q, name] : ratios)
        if (q > BG_BIOS_ONE)
            throw std::invalid_argument(std::string(name) + ": above 1.0 (65536)");

    fw_.resize(n);
    for (std::size_t i = 0; i < n; i++) {
        const TenantSpec &s = cfg_.tenants[i];
        if (!bg_vec_covers(&s.burst, &s.base))
            throw std::invalid_argument(tenant_field(i, "burst") + ": below base in some dimension");
        bg_bios_tenant &t = fw_[i];
        t = bg_bios_tenant{};
        t.res_base = s.base;
        t.res_burst = s.burst;
        t.mode = s.credit ? BG_BURST_CREDIT : BG_BURST_PAID;
        t.credit = s.credit ? s.credits : bg_vec{};
        t.credit_max = s.credit ? s.credit_max : bg_vec{};
        t.alloc = s.base;
    }
    usage_.assign(n, bg_bios_usage{});
    active_.assign(BG_BIOS_BITMAP_WORDS, 0);
    sched_list_.assign(n, 0);
    burst_next_.assign(n, 0);
    lend_.assign(n, bg_vec{});
    grant_.assign(n, bg_vec{});
    totals_.assign(n, TenantTotals{});
    lfsr_ = bg_lfsr_seed(cfg_.seed);

    const auto u32n = static_cast<std::uint32_t>(n);
    switch (cfg_.scheduler) {
    case Scheduler::Bios: {
        const bg_bios_params p{cfg_.total, cfg_.reserved_q16, cfg_.alpha_q16, cfg_.weight_throttle_q16,
                               cfg_.floor_q16};
        const int rc = bg_bios_init(&bios_, &p, fw_.data(), sched_list_.data(), burst_next_.data(), u32n);
        if (rc == BG_BIOS_E_OVERSUB)
            throw std::invalid_argument(std::string("tenants[*].base.") + dim_name(bios_.err_dim) +
                                        ": sum of base exceeds total minus the reserved pool");
        if (rc != BG_BIOS_OK)
            throw std::invalid_argument("bios configuration rejected, code " + std::to_string(rc));
        for (std::size_t i = 0; i < n; i++)
            grant_[i] = fw_[i].alloc;
        pool_grant_ = bios_.reserved;
        break;
    }
    case Scheduler::Base:  // static: the grants never change
        bg_basecbs_alloc(&cfg_.total, fw_.data(), u32n, grant_.data());
        break;
    case Scheduler::Wild:
        for (std::size_t i = 0; i < n; i++)
            bg_burst_cap(&fw_[i], &grant_[i]);
        pool_grant_ = cfg_.total;
        break;
    }
    refill();
}

void Admission::refill()
{
    rem_ = grant_;
    pool_ = pool_grant_;
}

Decision Admission::admit_bios(std::uint32_t k, const bg_vec &c, std::uint32_t r1, std::uint32_t r2)
{
    if (bg_vec_covers(&rem_[k], &c)) {
        bg_vec_sub(&rem_[k], &c);
        return {Source::Own, 0};
    }
    if (!within_base(usage_[k].usage, c, fw_[k].res_base))
        return {};
    const auto nb = static_cast<std::uint64_t>(burst_live_.size());
    if (nb > 0) {
        const std::uint16_t b1 = burst_live_[(r1 * nb) >> 32];
        const std::uint16_t b2 = burst_live_[(r2 * nb) >> 32];
        const bool ok1 = bg_vec_covers(&rem_[b1], &c) && bg_vec_covers(&lend_[b1], &c);
        const bool ok2 = bg_vec_covers(&rem_[b2], &c) && bg_vec_covers(&lend_[b2], &c);
        if (ok1 || ok2) {
            std::uint16_t b = ok1 ? b1 : b2;
            if (ok1 && ok2 && lend_[b2].d[BG_DIM_CPU] > lend_[b1].d[BG_DIM_CPU])
                b = b2;
            bg_vec_sub(&rem_[b], &c);
            bg_vec_sub(&lend_[b], &c);
            totals_[b].lent++;
            return {Source::Borrow, b};
        }
    }
    if (bg_vec_covers(&pool_, &c)) {
        bg_vec_sub(&pool_, &c);
        return {Source::Reserved, 0};
    }
    return {};
}

Decision Admission::io(std::uint32_t tenant, const bg_vec &cost)
{
    if (tenant >= fw_.size())
        throw std::out_of_range("admission: tenant " + std::to_string(tenant) + " not configured");
    const std::uint32_t r1 = bg_lfsr_next(&lfsr_);
    const std::uint32_t r2 = bg_lfsr_next(&lfsr_);
    active_[tenant >> 6] |= std::uint64_t{1} << (tenant & 63u);

    Decision d;
    switch (cfg_.scheduler) {
    case Scheduler::Bios:
        d = admit_bios(tenant, cost, r1, r2);
        break;
    case Scheduler::Base:
        if (bg_vec_covers(&rem_[tenant], &cost)) {
            bg_vec_sub(&rem_[tenant], &cost);
            d = {Source::Own, 0};
        }
        break;
    case Scheduler::Wild:
        if (bg_vec_covers(&rem_[tenant], &cost) && bg_vec_covers(&pool_, &cost)) {
            bg_vec_sub(&rem_[tenant], &cost);
            bg_vec_sub(&pool_, &cost);
            d = {Source::Own, 0};
        }
        break;
    }

    bg_bios_usage &u = usage_[tenant];
    TenantTotals &tot = totals_[tenant];
    tot.offered++;
    switch (d.source) {
    case Source::Own:
        tot.own++;
        break;
    case Source::Borrow:
        tot.borrowed++;
        u.spill_n++;
        break;
    case Source::Reserved:
        tot.reserved++;
        u.spill_n++;
        break;
    case Source::Deferred:
        tot.deferred++;
        u.throttle_n++;
        bg_vec_add_sat(&u.throttle, &cost);
        return d;
    }
    bg_vec_add_sat(&u.usage, &cost);
    return d;
}

void Admission::window_tick()
{
    switch (cfg_.scheduler) {
    case Scheduler::Bios:
        bg_bios_run(&bios_, usage_.data(), active_.data());
        for (std::size_t i = 0; i < fw_.size(); i++) {
            grant_[i] = fw_[i].alloc;
            lend_[i] = fw_[i].lend;
        }
        burst_live_.assign(burst_next_.begin(), burst_next_.begin() + bios_.n_burst);
        pool_grant_ = bios_.reserved;
        break;
    case Scheduler::Base:
        break;
    case Scheduler::Wild:
        bg_wildcbs_window(fw_.data(), usage_.data(), static_cast<std::uint32_t>(fw_.size()), grant_.data());
        break;
    }
    refill();
    usage_.assign(usage_.size(), bg_bios_usage{});
    active_.assign(active_.size(), 0);
    window_++;
}

}  // namespace bg
