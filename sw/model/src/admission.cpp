// Admission alone: the agent plus the firmware window loop; see admission.hpp.
#include "burstgate/model/admission.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace bg {

namespace {

const char *dim_name(int d)
{
    static const char *const names[BG_COST_DIMS] = {"cpu", "ingress", "egress", "swlimit"};
    return d >= 0 && d < static_cast<int>(BG_COST_DIMS) ? names[d] : "?";
}

std::uint32_t sched_register(Scheduler s)
{
    switch (s) {
    case Scheduler::Base: return BG_SCHED_BASE;
    case Scheduler::Wild: return BG_SCHED_WILD;
    default: return BG_SCHED_BIOS;
    }
}

Source source_of(std::uint8_t src)
{
    switch (src) {
    case BG_SRC_OWN: return Source::Own;
    case BG_SRC_BORROW: return Source::Borrow;
    case BG_SRC_RESERVED: return Source::Reserved;
    default: return Source::Deferred;
    }
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

    fw_t_.resize(n);
    for (std::size_t i = 0; i < n; i++) {
        const TenantSpec &s = cfg_.tenants[i];
        if (!bg_vec_covers(&s.burst, &s.base))
            throw std::invalid_argument("tenants[" + std::to_string(i) + "].burst: below base in some dimension");
        bg_bios_tenant &t = fw_t_[i];
        t = bg_bios_tenant{};
        t.res_base = s.base;
        t.res_burst = s.burst;
        t.mode = s.credit ? BG_BURST_CREDIT : BG_BURST_PAID;
        t.credit = s.credit ? s.credits : bg_vec{};
        t.credit_max = s.credit ? s.credit_max : bg_vec{};
    }
    fw_u_.assign(n, bg_bios_usage{});
    sched_.assign(n, 0);
    burst_.assign(n, 0);
    totals_.assign(n, TenantTotals{});

    // One ingress and one egress queue that never fill: every I/O completes at once.
    agent_ = std::make_unique<Agent>(AgentParams{static_cast<std::uint32_t>(n), 1, 1, BG_SEGMENT_BITS});
    hal_ = agent_->hal();
    bg_hal_write(&hal_, BG_LB_DEPTH, BG_LB_DEPTH_MASK);
    bg_hal_write(&hal_, BG_CTRL_SEED, cfg_.seed);

    bg_fw_config fc{};
    fc.scheduler = sched_register(cfg_.scheduler);
    fc.bios = bg_bios_params{cfg_.total, cfg_.reserved_q16, cfg_.alpha_q16, cfg_.weight_throttle_q16, cfg_.floor_q16,
                             cfg_.options, cfg_.reserve_tenants};
    const int rc = bg_fw_init(&fw_, &fc, fw_t_.data(), fw_u_.data(), sched_.data(), burst_.data(),
                              static_cast<std::uint32_t>(n), &hal_);
    if (rc == BG_BIOS_E_OVERSUB)
        throw std::invalid_argument(std::string("tenants[*].base.") + dim_name(fw_.bios.err_dim) +
                                    ": sum of base exceeds total minus the reserved pool");
    if (rc != BG_FW_OK)
        throw std::invalid_argument("admission configuration rejected, code " + std::to_string(rc));
}

Decision Admission::io(std::uint32_t tenant, const bg_vec &cost)
{
    if (tenant >= fw_t_.size())
        throw std::out_of_range("admission: tenant " + std::to_string(tenant) + " not configured");
    IoDesc d;
    d.tenant = static_cast<std::uint16_t>(tenant);
    const IoDecision x = agent_->io_costed(d, cost);
    if (x.admitted())  // = complete(IoCompletion{0, tenant, 0, x.egress, cost.d[BG_DIM_CPU], 0})
        agent_->complete_admitted(x, 0);
    return count(tenant, x);
}

Decision Admission::throttle_io(std::uint32_t tenant, const bg_vec &cost)
{
    if (tenant >= fw_t_.size())
        throw std::out_of_range("admission: tenant " + std::to_string(tenant) + " not configured");
    return count(tenant, agent_->throttle_io(static_cast<std::uint16_t>(tenant), cost, false));
}

inline Decision Admission::count(std::uint32_t tenant, const IoDecision &x)
{
    const Decision out{source_of(x.source), x.lender};
    TenantTotals &tot = totals_[tenant];
    tot.offered++;
    switch (out.source) {
    case Source::Own: tot.own++; break;
    case Source::Borrow:
        tot.borrowed++;
        totals_[out.lender].lent++;
        break;
    case Source::Reserved: tot.reserved++; break;
    case Source::Deferred: tot.deferred++; break;
    }
    return out;
}

void Admission::window_tick() { bg_fw_window(&fw_, &hal_); }

bg_vec Admission::tenant_vec(std::uint32_t first, std::uint32_t t) const
{
    if (t >= fw_t_.size())
        throw std::out_of_range("admission: tenant " + std::to_string(t) + " not configured");
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = agent_->read(first + 4u * (t * BG_COST_DIMS + d));
    return v;
}

bg_vec Admission::pool() const
{
    const std::uint32_t first = cfg_.scheduler == Scheduler::Wild ? BG_CTRL_GLOBAL(0) : BG_CTRL_POOL(0);
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = agent_->read(first + 4u * d);
    return v;
}

bg_vec Admission::pool_granted() const
{
    return cfg_.scheduler == Scheduler::Wild ? cfg_.total
           : cfg_.scheduler == Scheduler::Bios ? fw_.bios.reserved
                                               : bg_vec{};
}

bg_bios_usage Admission::window_counters(std::uint32_t t) const
{
    bg_bios_usage u;
    u.usage = tenant_vec(BG_TENANT_USAGE(0), t);
    u.throttle = tenant_vec(BG_TENANT_THROTTLE(0), t);
    u.throttle_n = agent_->read(BG_TENANT_THROTTLE_N(t));
    u.spill_n = agent_->read(BG_TENANT_SPILL_N(t));
    return u;
}

}  // namespace bg
