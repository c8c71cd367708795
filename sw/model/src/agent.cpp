// The datapath model: register decode and the per-descriptor rule spelled out in agent.hpp.
#include "burstgate/model/agent.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "burstgate/lfsr.h"

namespace bg {

namespace {

// Index of addr within a register array at `first` with `count` elements, stride 4.
std::optional<std::uint32_t> element(std::uint32_t addr, std::uint32_t first, std::uint32_t count)
{
    if (addr < first || addr >= first + 4u * count)
        return std::nullopt;
    return (addr - first) / 4u;
}

// used + c within base in every dimension, without wrapping.
bool within_base(const bg_vec &used, const bg_vec &c, const bg_vec &base)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        if (std::uint64_t{used.d[d]} + c.d[d] > base.d[d])
            return false;
    return true;
}

bool covers(const bg_vec &a, const bg_vec &b) { return bg_vec_covers(&a, &b); }

void check_range(const char *name, std::uint32_t v, std::uint32_t lo, std::uint32_t hi)
{
    if (v < lo || v > hi)
        throw std::invalid_argument("agent: " + std::string(name) + " " + std::to_string(v) + " outside " +
                                    std::to_string(lo) + ".." + std::to_string(hi));
}

LbConfig lb_config(const AgentParams &p)
{
    check_range("tenants", p.tenants, 1, BG_TENANTS_MAX);
    check_range("ingress", p.ingress, 1, BG_QUEUES_MAX);
    check_range("egress", p.egress, 1, BG_QUEUES_MAX);
    check_range("segment_bits", p.segment_bits, 1, BG_SEGMENT_BITS);
    LbConfig c;
    c.ingress_queues = p.ingress;
    c.egress_queues = p.egress;
    c.policy = static_cast<LbPolicy>(BG_LB_POLICY_RESET);
    c.egress_depth = BG_LB_DEPTH_RESET;
    c.lfsr_seed = BG_LB_SEED_RESET;
    return c;
}

BufferPoolConfig bp_reset(const AgentParams &p)
{
    BufferPoolConfig c;
    c.dedicated.assign(p.ingress, BG_BPOOL_DEDICATED_RESET);
    c.shared = BG_BPOOL_SHARED_RESET;
    c.borrow_cap = BG_BPOOL_BORROW_CAP_RESET;
    c.quiet_windows = BG_BPOOL_QUIET_RESET;
    return c;
}

}  // namespace

Agent::Agent(const AgentParams &p)
    : p_(p),
      segmon_(BG_SEGMON_HOT_THRESHOLD_RESET, BG_SEGMON_STEADY_WINDOWS_RESET),
      lb_(lb_config(p)),
      bpool_(bp_reset(p)),
      bp_cfg_(bp_reset(p)),
      t_(p.tenants),
      burst_list_(BG_TENANT_BURST_LIST_COUNT, 0),
      active_(BG_CTRL_ACTIVE_COUNT, 0),
      hist_(p.tenants),
      lfsr_(bg_lfsr_seed(0))
{
    for (auto &h : hist_)
        bg_lh_clear(&h);
    bg_lh_clear(&hist_all_);
}

bg_hal Agent::hal() { return bg_hal{this, &Agent::hal_write, &Agent::hal_read}; }

void Agent::hal_write(void *ctx, std::uint32_t addr, std::uint32_t value)
{
    static_cast<Agent *>(ctx)->write(addr, value);
}

std::uint32_t Agent::hal_read(void *ctx, std::uint32_t addr) { return static_cast<const Agent *>(ctx)->read(addr); }

// Inlined into decide, its only caller.
[[gnu::always_inline]] inline Agent::Plan Agent::plan(std::uint32_t k, const bg_vec &c, bool hot, std::uint32_t r1,
                                                      std::uint32_t r2) const
{
    const Tenant &t = t_[k];
    switch (scheduler_) {
    case BG_SCHED_BIOS: {
        if (covers(t.rem, c))
            return {BG_SRC_OWN, 0};
        if (!within_base(t.usage, c, t.base))
            return {BG_SRC_DEFER, 0};
        if (burst_n_ > 0) {
            // BURST_N is 11 bits: a draw past the list's 1024 entries, or an entry naming a
            // tenant this build lacks, lends nothing (as in the gateware).
            const std::uint64_t n = burst_n_;
            const std::uint64_t i1 = (r1 * n) >> 32, i2 = (r2 * n) >> 32;
            const std::uint16_t b1 = i1 < burst_list_.size() ? burst_list_[i1] : std::uint16_t{0xFFFF};
            const std::uint16_t b2 = i2 < burst_list_.size() ? burst_list_[i2] : std::uint16_t{0xFFFF};
            const bool ok1 = b1 < p_.tenants && covers(t_[b1].rem, c) && covers(t_[b1].lend, c);
            const bool ok2 = b2 < p_.tenants && covers(t_[b2].rem, c) && covers(t_[b2].lend, c);
            if (ok1 && ok2)
                return {BG_SRC_BORROW, t_[b2].lend.d[BG_DIM_CPU] > t_[b1].lend.d[BG_DIM_CPU] ? b2 : b1};
            if (ok1 || ok2)
                return {BG_SRC_BORROW, ok1 ? b1 : b2};
        }
        if (!hot && covers(pool_, c))
            return {BG_SRC_RESERVED, 0};
        return {BG_SRC_DEFER, 0};
    }
    case BG_SCHED_BASE:
        return {covers(t.rem, c) ? std::uint8_t{BG_SRC_OWN} : std::uint8_t{BG_SRC_DEFER}, 0};
    case BG_SCHED_WILD:
        return {covers(t.rem, c) && covers(global_, c) ? std::uint8_t{BG_SRC_OWN} : std::uint8_t{BG_SRC_DEFER}, 0};
    default:  // BG_SCHED_DUALBUCKET
        if (covers(global_, c))
            return {BG_SRC_OWN, 0};
        if (!hot && covers(pool_, c))
            return {BG_SRC_RESERVED, 0};
        return {BG_SRC_DEFER, 0};
    }
}

IoDecision Agent::io(const IoDesc &d)
{
    const CostVector cv = cost_.estimate(d.product, d.write, d.size);  // validates product, size
    bg_vec c;
    for (unsigned i = 0; i < BG_COST_DIMS; i++)
        c.d[i] = cv[i];
    return io_costed(d, c);
}

void Agent::check_offer(std::uint16_t tenant) const
{
    if (held_)
        throw std::logic_error("agent: descriptor offered while admission is held (between TICK and COMMIT)");
    if (tenant >= p_.tenants)
        throw std::invalid_argument("agent: tenant " + std::to_string(tenant) + " not implemented (" +
                                    std::to_string(p_.tenants) + " tenants)");
}

// THROTTLE_IO's decision for one offered I/O: the draws, the active bit, the source; a
// deferral is counted here. Inlined into io_costed and throttle_io.
[[gnu::always_inline]] inline Agent::Plan Agent::decide(std::uint16_t k, const bg_vec &c, bool hot)
{
    const std::uint32_t r1 = leap_->draw(&lfsr_);
    const std::uint32_t r2 = leap_->draw(&lfsr_);
    active_[k >> 5] |= 1u << (k & 31u);
    ios_++;
    Plan pl = plan(k, c, hot, r1, r2);
    Tenant &t = t_[k];
    // The count gate: whatever source would pay, no more than COUNT_GRANT I/Os a window.
    if (t.count >= t.count_grant)
        pl = {BG_SRC_DEFER, 0};
    if (pl.source == BG_SRC_DEFER) {
        t.throttle_n++;
        bg_vec_add_sat(&t.throttle, &c);
        deferred_++;
    }
    return pl;
}

// The charge of an admitted source (pl.source < BG_SRC_DEFER).
[[gnu::always_inline]] inline void Agent::charge(std::uint16_t k, const Plan &pl, const bg_vec &c)
{
    Tenant &t = t_[k];
    switch (pl.source) {
    case BG_SRC_OWN:
        if (scheduler_ == BG_SCHED_DUALBUCKET) {
            bg_vec_sub(&global_, &c);
        } else {
            bg_vec_sub(&t.rem, &c);
            if (scheduler_ == BG_SCHED_WILD)
                bg_vec_sub(&global_, &c);
        }
        break;
    case BG_SRC_BORROW:
        bg_vec_sub(&t_[pl.lender].rem, &c);
        bg_vec_sub(&t_[pl.lender].lend, &c);
        t.spill_n++;
        break;
    default:  // BG_SRC_RESERVED
        bg_vec_sub(&pool_, &c);
        pool_drawn_ = true;
        t.spill_n++;
        break;
    }
    bg_vec_add_sat(&t.usage, &c);
    t.count++;  // below count_grant (decide), so it never wraps
}

IoDecision Agent::io_costed(const IoDesc &d, const bg_vec &cost)
{
    if (held_ || d.tenant >= p_.tenants)  // the throw is out of line
        check_offer(d.tenant);
    if (d.queue >= p_.ingress)
        throw std::invalid_argument("agent: ingress queue " + std::to_string(d.queue) + " not implemented (" +
                                    std::to_string(p_.ingress) + " queues)");

    IoDecision out;
    out.tag = d.tag;
    out.tenant = d.tenant;
    out.queue = d.queue;
    out.cost = cost;
    const bg_vec &c = out.cost;
    const auto seg_mask = static_cast<std::uint16_t>((1u << p_.segment_bits) - 1u);
    out.hot = segmon_.on_io(static_cast<std::uint16_t>(d.segment & seg_mask), !d.reoffer, d.size);
    const Plan pl = decide(d.tenant, c, out.hot);
    if (pl.source == BG_SRC_DEFER) {
        out.source = BG_SRC_DEFER;
        return out;
    }
    if (lb_.eligible(d.queue) == 0) {
        out.source = BG_SRC_DEFER_EGRESS;
        deferred_egress_++;
        return out;
    }
    if (!bpool_.can_acquire(d.queue)) {
        out.source = BG_SRC_DEFER_BUFFER;
        deferred_buffer_++;
        return out;
    }
    charge(d.tenant, pl, c);
    out.source = pl.source;
    out.lender = pl.lender;
    const LbDecision lbd = lb_.dispatch(d.queue, c.d[BG_DIM_CPU]);  // eligible above: never stalls
    out.egress = lbd.egress;
    out.prefill = bpool_.acquire(d.queue) == Acquire::kBorrowed;
    return out;
}

IoDecision Agent::throttle_io(std::uint16_t tenant, const bg_vec &cost, bool hot)
{
    if (held_ || tenant >= p_.tenants)
        check_offer(tenant);
    IoDecision out;
    out.tenant = tenant;
    out.cost = cost;
    out.hot = hot;
    const Plan pl = decide(tenant, out.cost, hot);
    out.source = pl.source;
    out.lender = pl.lender;
    if (pl.source != BG_SRC_DEFER)
        charge(tenant, pl, out.cost);
    return out;
}

void Agent::complete(const IoCompletion &c)
{
    if (c.tenant >= p_.tenants || c.queue >= p_.ingress || c.egress >= p_.egress ||
        lb_.outstanding_ios(c.egress) == 0 || bpool_.inflight(c.queue) == 0 ||
        lb_.outstanding_ns(c.egress) < LoadBalancer::clamp_charge(c.charge_ns)) {
        bad_completions_++;
        return;
    }
    lb_.complete(c.egress, c.charge_ns);
    bpool_.release(c.queue);
    bg_lh_record(&hist_[c.tenant], c.sa_delay_ns);
    bg_lh_record(&hist_all_, c.sa_delay_ns);
    completions_++;
}

void Agent::complete_admitted(const IoDecision &x, std::uint32_t sa_delay_ns)
{
    // LoadBalancer::complete and BufferPool::release still throw on an underflow, so a
    // caller that breaks the precondition fails loudly rather than corrupting the counts.
    lb_.complete(x.egress, x.cost.d[BG_DIM_CPU]);
    bpool_.release(x.queue);
    bg_lh_record(&hist_[x.tenant], sa_delay_ns);
    bg_lh_record(&hist_all_, sa_delay_ns);
    completions_++;
}

void Agent::commit_window()
{
    for (Tenant &t : t_) {
        t.rem = t.grant;
        t.lend = t.lend_grant;
        t.usage = bg_vec{};
        t.throttle = bg_vec{};
        t.throttle_n = 0;
        t.spill_n = 0;
        t.count = 0;
    }
    for (auto &w : active_)
        w = 0;
    for (auto &h : hist_)
        bg_lh_clear(&h);
    bg_lh_clear(&hist_all_);
    pool_drawn_ = false;
    segmon_.tick();
    bpool_.tick();
    window_++;
    held_ = false;
}

void Agent::rebuild_buffers()
{
    // The configuration applies only to an idle pool (BPOOL block doc); a write while any
    // I/O is in flight keeps the running pool and the registers read back what is in force.
    // The same holds for a configuration the pool cannot count (a queue's dedicated plus
    // shared buffers above 2^BP_COUNT_BITS - 1): a register write never throws.
    for (unsigned q = 0; q < p_.ingress; q++)
        if (bpool_.inflight(q) != 0)
            return;
    try {
        bpool_ = BufferPool(bp_cfg_);
    } catch (const std::invalid_argument &) {
    }
}

// The TENANT block is decoded by address arithmetic, not by trying each array in turn: the
// firmware's window reads ten and writes eight of its registers per scheduled tenant. The
// seven vector arrays are consecutive, equally sized, power-of-two blocks from the block's
// base, in the order of kTenantVecs below; the asserts hold the map (regs.h, generated)
// to that, so a map change that breaks it fails the build instead of the decode.
namespace {
constexpr std::uint32_t kVecWords = BG_TENANTS_MAX * BG_COST_DIMS;
constexpr std::uint32_t kVecBytes = 4u * kVecWords;
constexpr std::uint32_t kVecArrays = 7;
constexpr std::uint32_t kVecWritable = 3;  // RES_BASE, GRANT, LEND_GRANT; the rest read-only
static_assert((kVecBytes & (kVecBytes - 1u)) == 0, "tenant vector arrays must be power-of-two blocks");
static_assert(BG_TENANT_RES_BASE(0) == BG_TENANT_BASE + 0 * kVecBytes && BG_TENANT_RES_BASE_COUNT == kVecWords);
static_assert(BG_TENANT_GRANT(0) == BG_TENANT_BASE + 1 * kVecBytes && BG_TENANT_GRANT_COUNT == kVecWords);
static_assert(BG_TENANT_LEND_GRANT(0) == BG_TENANT_BASE + 2 * kVecBytes && BG_TENANT_LEND_GRANT_COUNT == kVecWords);
static_assert(BG_TENANT_REMAINING(0) == BG_TENANT_BASE + 3 * kVecBytes && BG_TENANT_REMAINING_COUNT == kVecWords);
static_assert(BG_TENANT_LENDABLE(0) == BG_TENANT_BASE + 4 * kVecBytes && BG_TENANT_LENDABLE_COUNT == kVecWords);
static_assert(BG_TENANT_USAGE(0) == BG_TENANT_BASE + 5 * kVecBytes && BG_TENANT_USAGE_COUNT == kVecWords);
static_assert(BG_TENANT_THROTTLE(0) == BG_TENANT_BASE + 6 * kVecBytes && BG_TENANT_THROTTLE_COUNT == kVecWords);
static_assert(BG_TENANT_RES_BASE_RO == 0 && BG_TENANT_GRANT_RO == 0 && BG_TENANT_LEND_GRANT_RO == 0 &&
              BG_TENANT_REMAINING_RO != 0 && BG_TENANT_LENDABLE_RO != 0 && BG_TENANT_USAGE_RO != 0 &&
              BG_TENANT_THROTTLE_RO != 0);
// The scalar arrays follow the vectors; read_tenant still scans those few.
static_assert(BG_TENANT_THROTTLE_N(0) >= BG_TENANT_BASE + kVecArrays * kVecBytes);
}  // namespace

// Inlined into the four register paths: one call per access, not three.
[[gnu::always_inline]] inline std::uint32_t *Agent::tenant_vec(std::uint32_t array, std::uint32_t index)
{
    static constexpr bg_vec Tenant::*kTenantVecs[kVecArrays] = {
        &Tenant::base, &Tenant::grant, &Tenant::lend_grant, &Tenant::rem, &Tenant::lend, &Tenant::usage, &Tenant::throttle};
    const std::uint32_t t = index / BG_COST_DIMS;
    if (t >= p_.tenants)
        return nullptr;
    return &(t_[t].*kTenantVecs[array]).d[index % BG_COST_DIMS];
}

[[gnu::always_inline]] inline bool Agent::write_tenant(std::uint32_t addr, std::uint32_t value)
{
    const std::uint32_t off = addr - BG_TENANT_BASE, array = off / kVecBytes;
    if (array < kVecArrays) {
        if (array >= kVecWritable)
            return false;
        if (std::uint32_t *p = tenant_vec(array, (off % kVecBytes) / 4u))
            *p = value;
        return true;
    }
    if (auto i = element(addr, BG_TENANT_BURST_LIST(0), BG_TENANT_BURST_LIST_COUNT)) {
        burst_list_[*i] = static_cast<std::uint16_t>(value & BG_TENANT_BURST_LIST_MASK);
        return true;
    }
    if (auto i = element(addr, BG_TENANT_COUNT_GRANT(0), BG_TENANT_COUNT_GRANT_COUNT)) {
        if (*i < p_.tenants)
            t_[*i].count_grant = value;
        return true;
    }
    return false;
}

[[gnu::always_inline]] inline std::uint32_t Agent::read_tenant(std::uint32_t addr) const
{
    auto *self = const_cast<Agent *>(this);  // tenant_vec only locates; nothing is written
    const std::uint32_t off = addr - BG_TENANT_BASE, array = off / kVecBytes;
    if (array < kVecArrays) {
        const std::uint32_t *p = self->tenant_vec(array, (off % kVecBytes) / 4u);
        return p ? *p : 0u;
    }
    if (auto i = element(addr, BG_TENANT_THROTTLE_N(0), BG_TENANT_THROTTLE_N_COUNT))
        return *i < p_.tenants ? t_[*i].throttle_n : 0u;
    if (auto i = element(addr, BG_TENANT_SPILL_N(0), BG_TENANT_SPILL_N_COUNT))
        return *i < p_.tenants ? t_[*i].spill_n : 0u;
    if (auto i = element(addr, BG_TENANT_BURST_LIST(0), BG_TENANT_BURST_LIST_COUNT))
        return burst_list_[*i];
    if (auto i = element(addr, BG_TENANT_COUNT_GRANT(0), BG_TENANT_COUNT_GRANT_COUNT))
        return *i < p_.tenants ? t_[*i].count_grant : 0u;
    if (auto i = element(addr, BG_TENANT_HIST(0), BG_TENANT_HIST_COUNT)) {
        const std::uint32_t t = *i / BG_HIST_BUCKETS;
        return t < p_.tenants ? hist_[t].count[*i % BG_HIST_BUCKETS] : 0u;
    }
    return 0;
}

void Agent::write(std::uint32_t addr, std::uint32_t value)
{
    addr &= ~3u;
    if (addr - BG_TENANT_BASE < BG_TENANT_SIZE) {  // the firmware's per-tenant traffic first
        write_tenant(addr, value);
        return;
    }
    if (cost_.owns(addr)) {
        cost_.write(addr, value);
        return;
    }
    switch (addr) {
    case BG_CTRL_SCHEDULER: scheduler_ = value & BG_CTRL_SCHEDULER_MASK; return;
    case BG_CTRL_WINDOW:
        if (value == BG_WINDOW_TICK)
            held_ = true;
        else if (value == BG_WINDOW_COMMIT)
            commit_window();
        return;
    case BG_CTRL_SEED: lfsr_ = bg_lfsr_seed(value); return;
    case BG_CTRL_BURST_N: burst_n_ = value & BG_CTRL_BURST_N_MASK; return;
    case BG_LB_POLICY: lb_.set_policy(static_cast<LbPolicy>(value & BG_LB_POLICY_MASK)); return;
    case BG_LB_DEPTH:
        // 0 is no depth (every egress would be full forever): the write is ignored.
        if ((value & BG_LB_DEPTH_MASK) != 0)
            lb_.set_depth(value & BG_LB_DEPTH_MASK);
        return;
    case BG_LB_SEED: lb_.set_seed(value); return;
    case BG_BPOOL_SHARED: bp_cfg_.shared = value & BG_BPOOL_SHARED_MASK; rebuild_buffers(); return;
    case BG_BPOOL_BORROW_CAP: bp_cfg_.borrow_cap = value & BG_BPOOL_BORROW_CAP_MASK; rebuild_buffers(); return;
    case BG_BPOOL_QUIET: bp_cfg_.quiet_windows = value & BG_BPOOL_QUIET_MASK; rebuild_buffers(); return;
    case BG_SEGMON_HOT_THRESHOLD:
        segmon_.set_hot_threshold(static_cast<std::uint16_t>(value & BG_SEGMON_HOT_THRESHOLD_MASK));
        return;
    case BG_SEGMON_UNIT:
        segmon_.set_unit(value & BG_SEGMON_UNIT_MASK);
        return;
    case BG_SEGMON_STEADY_WINDOWS: {
        const std::uint32_t n = value & BG_SEGMON_STEADY_WINDOWS_MASK;
        if (n <= SegmentMonitor::kMaxSteadyIntervals)  // 255 does not fit the hold counter: ignored
            segmon_.set_steady_intervals(n);
        return;
    }
    default: break;
    }
    if (auto i = element(addr, BG_CTRL_POOL(0), BG_CTRL_POOL_COUNT)) {
        pool_.d[*i] = value;
        return;
    }
    if (auto i = element(addr, BG_CTRL_GLOBAL(0), BG_CTRL_GLOBAL_COUNT)) {
        global_.d[*i] = value;
        return;
    }
    if (auto i = element(addr, BG_LB_MAP(0), BG_LB_MAP_COUNT)) {
        if (*i < p_.ingress)
            lb_.set_map(*i, static_cast<std::uint16_t>(value & BG_LB_MAP_MASK));
        return;
    }
    if (auto i = element(addr, BG_BPOOL_DEDICATED(0), BG_BPOOL_DEDICATED_COUNT)) {
        if (*i < p_.ingress) {
            bp_cfg_.dedicated[*i] = value & BG_BPOOL_DEDICATED_MASK;
            rebuild_buffers();
        }
        return;
    }
}

std::uint32_t Agent::read(std::uint32_t addr) const
{
    addr &= ~3u;
    if (addr - BG_TENANT_BASE < BG_TENANT_SIZE)  // the firmware's per-tenant traffic first
        return read_tenant(addr);
    if (cost_.owns(addr))
        return cost_.read(addr);
    switch (addr) {
    case BG_INFO_MAGIC: return BG_INFO_MAGIC_RESET;
    case BG_INFO_VERSION: return BG_INFO_VERSION_RESET;
    case BG_INFO_TENANTS: return p_.tenants;
    case BG_INFO_INGRESS: return p_.ingress;
    case BG_INFO_EGRESS: return p_.egress;
    case BG_INFO_SEGMENT_BITS: return p_.segment_bits;
    case BG_CTRL_SCHEDULER: return scheduler_;
    case BG_CTRL_WINDOW: return held_ ? 1u : 0u;
    case BG_CTRL_WINDOW_INDEX: return static_cast<std::uint32_t>(window_);
    case BG_CTRL_SEED: return lfsr_;
    case BG_CTRL_BURST_N: return burst_n_;
    case BG_CTRL_POOL_DRAWN: return pool_drawn_ ? 1u : 0u;
    case BG_CTRL_IOS: return ios_;
    case BG_CTRL_DEFERRED: return deferred_;
    case BG_CTRL_DEFERRED_EGRESS: return deferred_egress_;
    case BG_CTRL_DEFERRED_BUFFER: return deferred_buffer_;
    case BG_CTRL_COMPLETIONS: return completions_;
    case BG_CTRL_BAD_COMPLETIONS: return bad_completions_;
    case BG_LB_POLICY: return static_cast<std::uint32_t>(lb_.config().policy);
    case BG_LB_DEPTH: return lb_.config().egress_depth;
    case BG_LB_SEED: return lb_.lfsr_state();
    case BG_BPOOL_SHARED: return bpool_.shared_total();
    case BG_BPOOL_BORROW_CAP: return bp_cfg_.borrow_cap;
    case BG_BPOOL_QUIET: return bp_cfg_.quiet_windows;
    case BG_SEGMON_HOT_THRESHOLD: return segmon_.hot_threshold();
    case BG_SEGMON_STEADY_WINDOWS: return segmon_.steady_intervals();
    case BG_SEGMON_UNIT: return segmon_.unit();
    default: break;
    }
    if (auto i = element(addr, BG_CTRL_POOL(0), BG_CTRL_POOL_COUNT))
        return pool_.d[*i];
    if (auto i = element(addr, BG_CTRL_GLOBAL(0), BG_CTRL_GLOBAL_COUNT))
        return global_.d[*i];
    if (auto i = element(addr, BG_CTRL_ACTIVE(0), BG_CTRL_ACTIVE_COUNT))
        return active_[*i];
    if (auto i = element(addr, BG_CTRL_HIST_ALL(0), BG_CTRL_HIST_ALL_COUNT))
        return hist_all_.count[*i];
    if (auto i = element(addr, BG_LB_MAP(0), BG_LB_MAP_COUNT))
        return *i < p_.ingress ? lb_.map(*i) : 0u;
    if (auto i = element(addr, BG_LB_OUT_IOS(0), BG_LB_OUT_IOS_COUNT))
        return *i < p_.egress ? lb_.outstanding_ios(*i) : 0u;
    if (auto i = element(addr, BG_LB_OUT_NS(0), BG_LB_OUT_NS_COUNT))
        return *i < p_.egress ? lb_.outstanding_ns(*i) : 0u;
    if (auto i = element(addr, BG_BPOOL_DEDICATED(0), BG_BPOOL_DEDICATED_COUNT))
        return *i < p_.ingress ? bpool_.dedicated(*i) : 0u;
    if (auto i = element(addr, BG_BPOOL_HELD(0), BG_BPOOL_HELD_COUNT))
        return *i < p_.ingress ? bpool_.extra(*i) : 0u;
    return 0;
}

}  // namespace bg
