// Per-I/O admission (BurstCBS Algorithm 1 THROTTLE_IO) for the schedulers bios, base and
// wild, and the window tick that runs the firmware's per-window half (fw/src/bios.c) and
// swaps its outputs in. The gateware reimplements io() at one I/O per clock, so everything
// it touches is an array indexed by tenant id, a fixed-size list, or one vector.
//
// Per I/O (tenant k, cost c, all vectors compared with bg_vec_covers, i.e. every dimension):
//   r1 = lfsr_next(); r2 = lfsr_next()        // always two steps per offered I/O, any path,
//                                             // any scheduler: no feedback from the decision
//   bios:
//     if rem[k] covers c:                       rem[k] -= c;              -> OWN
//     elif base[k] covers used[k] + c:          // fallback only restores base provisioning
//       if nb > 0:
//         b1 = list[(r1 * nb) >> 32]; b2 = list[(r2 * nb) >> 32]      // u64 product
//         ok_x = rem[bx] covers c && lend[bx] covers c
//         b = ok1 && ok2 ? (lend[b2].cpu > lend[b1].cpu ? b2 : b1)       // tie -> b1
//           : ok1 ? b1 : ok2 ? b2 : none
//         if b:                                 rem[b] -= c; lend[b] -= c -> BORROW(b)
//       if no lender and reserved covers c:     reserved -= c             -> RESERVED
//       otherwise                                                          -> DEFERRED
//     else                                                                 -> DEFERRED
//   base: rem[k] covers c ? OWN : DEFERRED      (rem = static proportional share)
//   wild: rem[k] covers c && global covers c ? (both -= c) OWN : DEFERRED
//   admitted:  used[k] += c (saturating); spill[k] += 1 for BORROW / RESERVED
//   deferred:  throttle_n[k] += 1; throttle[k] += c (saturating)
// The lender comparison uses remaining lendable CPU ns, the one dimension every I/O spends
// in proportion to its count (BurstCBS §5.3), standing in for "the tenant with the most
// remaining resources". A deferred I/O is never dropped: the caller offers it again after
// the next window_tick(), where it is a new offer like any other.
//
// window_tick() has no lag: the next window's grants come from the window that just ended,
// as Algorithm 1 and fast recovery (throttled -> base next window) require. In hardware the
// tick latches the counters and holds admission (I/Os wait, none is decided) until the
// firmware commits; that hold is the RUN_SCHEDULING time, which is why §6.6 measures it.
// bios runs bg_bios_run over this window's counters and active bitmap;
// base keeps its static shares; wild runs bg_wildcbs_window and refills the global budget
// to total. Then, all at once: rem[i] = grant[i], lend[i] = lend_grant[i], the burst list
// and the reserved pool (bios) take the firmware's values, and the window counters and
// active bitmap clear. Grants persist in the firmware arrays, so a dropped tenant is
// refilled to its floor every window without firmware work.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "burstgate/bios.h"
#include "burstgate/vec.h"

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
    std::uint32_t reserved_q16 = 3277;       // 0.05 of total (BurstCBS §6.4)
    std::uint32_t alpha_q16 = 0x8000;        // 0.5: an idle tenant halves its unused part
    std::uint32_t weight_throttle_q16 = 0x20000;  // 2.0: deferred cost weighs double
    std::uint32_t floor_q16 = 0x1000;        // 1/16 of base stays with an idle tenant
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
    Admission(Admission &&) = default;
    Admission &operator=(Admission &&) = default;

    // THROTTLE_IO. Throws std::out_of_range for a tenant id outside the configuration.
    Decision io(std::uint32_t tenant, const bg_vec &cost);
    void window_tick();

    std::uint32_t tenants() const { return static_cast<std::uint32_t>(fw_.size()); }
    std::uint64_t window() const { return window_; }
    const AdmissionConfig &config() const { return cfg_; }
    const bg_vec &grant(std::uint32_t t) const { return grant_.at(t); }     // this window
    const bg_vec &remaining(std::uint32_t t) const { return rem_.at(t); }
    const bg_vec &lendable(std::uint32_t t) const { return lend_.at(t); }
    const bg_vec &pool() const { return pool_; }  // reserved (bios) or global budget (wild)
    const bg_vec &pool_granted() const { return pool_grant_; }
    std::span<const std::uint16_t> burst_list() const { return burst_live_; }
    // As of the tenant's last scheduling: a dropped tenant's idle credits land when it wakes.
    const bg_vec &credits(std::uint32_t t) const { return fw_.at(t).credit; }
    std::uint8_t status(std::uint32_t t) const { return fw_.at(t).status; }
    const bg_bios_usage &window_counters(std::uint32_t t) const { return usage_.at(t); }
    const TenantTotals &totals(std::uint32_t t) const { return totals_.at(t); }
    std::uint32_t lfsr_state() const { return lfsr_; }
    std::uint32_t scheduled() const { return bios_.n_sched; }

private:
    Decision admit_bios(std::uint32_t k, const bg_vec &c, std::uint32_t r1, std::uint32_t r2);
    void refill();

    AdmissionConfig cfg_;
    std::vector<bg_bios_tenant> fw_;     // firmware-owned config and state
    std::vector<bg_bios_usage> usage_;   // this window's counters, as the datapath keeps them
    std::vector<std::uint64_t> active_;  // bit i: tenant i offered an I/O this window
    std::vector<std::uint16_t> sched_list_;
    std::vector<std::uint16_t> burst_next_;  // firmware writes
    std::vector<std::uint16_t> burst_live_;  // datapath reads
    std::vector<bg_vec> grant_;          // live window: bios grant, base share, wild limiter
    std::vector<bg_vec> rem_;
    std::vector<bg_vec> lend_;
    std::vector<TenantTotals> totals_;
    bg_bios bios_{};
    bg_vec pool_{};
    bg_vec pool_grant_{};
    std::uint32_t lfsr_ = 0;
    std::uint64_t window_ = 0;
};

}  // namespace bg
