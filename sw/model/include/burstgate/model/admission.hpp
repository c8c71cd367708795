// Admission alone: the agent's admission stage (agent.hpp, THROTTLE_IO and the baselines)
// driven by the firmware's window loop (fw/include/burstgate/window.h) through the register
// HAL, with costs given directly and every admitted I/O completed at once, so a study of
// who-pays-for-what (BurstCBS Fig. 13, 14, 24) sees no load balancer or buffer limits. The
// decision rule lives in exactly one place, Agent::plan; this class adds only per-tenant totals.
//
// window_tick() runs one firmware window: TICK, RUN_SCHEDULING (or the baseline's window) over
// the window that just ended, COMMIT. There is no lag: the next window's grants come from the
// window that just ended, as Algorithm 1 and fast recovery (throttled -> base next window)
// require; in hardware TICK holds admission until COMMIT, and that hold is the RUN_SCHEDULING
// time §6.6 measures. A deferred I/O is never dropped: the caller offers it again after the
// next window_tick(), where it is a new offer like any other.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "burstgate/bios.h"
#include "burstgate/vec.h"
#include "burstgate/window.h"
#include "burstgate/model/agent.hpp"

namespace bg {

enum class Scheduler : std::uint8_t { Bios, Base, Wild };
enum class Source : std::uint8_t { Own, Borrow, Reserved, Deferred };

struct Decision {
    Source source = Source::Deferred;
    std::uint16_t lender = 0;  // the tenant that paid, when source == Borrow
    bool admitted() const { return source != Source::Deferred; }
};

struct TenantSpec {
    bg_vec base{};        // base-level provisioning per window
    bg_vec burst{};       // burst provisioning per window (>= base)
    bool credit = false;  // burst_mode: credit (true) or paid (false)
    bg_vec credits{};     // initial credits (credit mode), cost units; see bg_credit_from_ios
    bg_vec credit_max{};  // credit bucket size (credit mode)
};

struct AdmissionConfig {
    Scheduler scheduler = Scheduler::Bios;
    std::uint32_t seed = 1;                  // admission LFSR seed (0 maps to bg_lfsr_seed(0))
    bg_vec total{};                          // per-window capacity of the SA thread
    std::uint32_t reserved_q16 = 3277;       // 0.05 of total, with reserve_tenants = 0
    std::uint32_t alpha_q16 = 0x8000;        // 0.5: an idle tenant halves its allocation
    std::uint32_t weight_throttle_q16 = 0x20000;  // 2.0: deferred cost weighs double
    // Algorithm 1 as printed unless set (bios.h): no floor, no option, the two-tenant pool.
    std::uint32_t floor_q16 = 0;             // variation: 1/16 (0x1000) keeps a floor
    std::uint32_t options = 0;               // BG_BIOS_OPT_* variations
    std::uint32_t reserve_tenants = 2;       // pool = two largest bases; 0: reserved_q16
    std::vector<TenantSpec> tenants;
};

// Cumulative per-tenant counts since construction.
struct TenantTotals {
    std::uint64_t offered = 0;
    std::uint64_t own = 0;
    std::uint64_t borrowed = 0;  // admitted from another tenant's surplus
    std::uint64_t reserved = 0;  // admitted from the reserved pool
    std::uint64_t deferred = 0;  // == deferral decisions, always
    std::uint64_t lent = 0;      // I/Os of others this tenant paid for
};

class Admission {
public:
    // Throws std::invalid_argument naming the offending field (e.g. "tenants[2].burst").
    explicit Admission(AdmissionConfig cfg);
    // The firmware state points into this object's arrays: moving keeps them, copying would not.
    Admission(const Admission &) = delete;
    Admission &operator=(const Admission &) = delete;

    // THROTTLE_IO. Throws std::out_of_range for a tenant id outside the configuration.
    Decision io(std::uint32_t tenant, const bg_vec &cost);
    // THROTTLE_IO's decision alone (Agent::throttle_io: LFSR draws, source, charge) plus the
    // per-tenant totals, without the dispatch, buffer and immediate completion io() adds.
    // Here the egress queue and buffers never fill and every I/O goes to segment 0 with the
    // monitor at its reset threshold (never hot), so the decision and the admission state
    // (grants, lendable, pool, usage, throttle, spill) are io()'s; the load balancer's and
    // buffer pool's counters and the latency histograms are not touched.
    Decision throttle_io(std::uint32_t tenant, const bg_vec &cost);
    void window_tick();

    std::uint32_t tenants() const { return static_cast<std::uint32_t>(fw_t_.size()); }
    std::uint64_t window() const { return agent_->window(); }
    const AdmissionConfig &config() const { return cfg_; }
    bg_vec grant(std::uint32_t t) const { return tenant_vec(BG_TENANT_GRANT(0), t); }  // this window
    bg_vec remaining(std::uint32_t t) const { return tenant_vec(BG_TENANT_REMAINING(0), t); }
    bg_vec lendable(std::uint32_t t) const { return tenant_vec(BG_TENANT_LENDABLE(0), t); }
    bg_vec pool() const;          // reserved (bios) or global budget (wild), live
    bg_vec pool_granted() const;  // the same as the firmware last wrote it
    std::span<const std::uint16_t> burst_list() const { return {burst_.data(), fw_.bios.n_burst}; }
    // As of the tenant's last scheduling: a dropped tenant's idle credits land when it wakes.
    const bg_vec &credits(std::uint32_t t) const { return fw_t_.at(t).credit; }
    std::uint8_t status(std::uint32_t t) const { return fw_t_.at(t).status; }
    bg_bios_usage window_counters(std::uint32_t t) const;
    const TenantTotals &totals(std::uint32_t t) const { return totals_.at(t); }
    std::uint32_t lfsr_state() const { return agent_->read(BG_CTRL_SEED); }
    std::uint32_t scheduled() const { return fw_.bios.n_sched; }
    const Agent &agent() const { return *agent_; }

private:
    bg_vec tenant_vec(std::uint32_t first, std::uint32_t t) const;
    Decision count(std::uint32_t tenant, const IoDecision &x);

    AdmissionConfig cfg_;
    std::unique_ptr<Agent> agent_;
    std::vector<bg_bios_tenant> fw_t_;   // firmware-owned config and state
    std::vector<bg_bios_usage> fw_u_;
    std::vector<std::uint16_t> sched_;
    std::vector<std::uint16_t> burst_;
    bg_fw fw_{};
    bg_hal hal_{};
    std::vector<TenantTotals> totals_;
};

}  // namespace bg
