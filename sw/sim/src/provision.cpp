// A scenario's configuration of a device and its firmware; see provision.hpp.
#include "burstgate/sim/provision.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "burstgate/cost_table.h"
#include "burstgate/model/cost.hpp"
#include "burstgate/model/segment_monitor.hpp"
#include "burstgate/regs.h"
#include "cost_cli.hpp"

namespace bg::sim {

std::uint32_t sat32(double v) { return v >= 4294967295.0 ? UINT32_MAX : v <= 0 ? 0 : static_cast<std::uint32_t>(std::llround(v)); }

std::array<double, 4> capacity_per_s(const Dpu &d)
{
    return {1e9 * d.threads, d.ingress_gbps * 1e9 / 8, d.egress_gbps * 1e9 / 8, d.swlimit_mbps * 1e6};
}

namespace {

// The least of its base IOPS the count carry holds, in seconds (init_firmware, docs/contracts.md).
constexpr double kCountCarrySeconds = 0.005;

// The estimator's table: the true profile divided by estimate_error, as the firmware's
// loader writes it. Throws (prefixed by `where`) when the table rejects the profile.
void load_cost_table(const Dpu &d, const bg_hal *h, const std::string &where)
{
    if (!d.vop_points.empty()) {  // dpu.vop_curve: VOPs in the CPU dimension, every product alike
        std::vector<bg_vop_point> pts;
        for (const auto &q : d.vop_points)
            pts.push_back({q[0], q[1], q[2]});
        const int rc = bg_cost_load_vop(h, pts.data(), static_cast<unsigned>(pts.size()), BG_DIM_CPU);
        if (rc != BG_COST_OK)
            throw ScenarioError(where + "dpu.vop_curve: the cost table rejects this curve (code " + std::to_string(rc) + ")");
        return;
    }
    for (unsigned p = 0; p < kProducts; p++) {
        if (!d.defined[p])
            continue;
        bg_linear_profile est[2];
        for (unsigned w = 0; w < 2; w++) {
            est[w].cpu_base_ns = sat32(d.cpu[p][w].base_ns / d.estimate_error);
            est[w].cpu_per_kib_ns = sat32(d.cpu[p][w].per_kib_ns / d.estimate_error);
        }
        const int rc = bg_cost_load_linear(h, p, &est[0], &est[1], d.header_bytes);
        if (rc != BG_COST_OK)
            throw ScenarioError(where + "dpu.cpu_ns: the cost table rejects this profile (code " + std::to_string(rc) + ")");
    }
}

bool same_profile(const Dpu &a, const Dpu &b)
{
    if (a.defined != b.defined || a.estimate_error != b.estimate_error || a.header_bytes != b.header_bytes ||
        a.vop_points != b.vop_points)
        return false;
    for (unsigned p = 0; p < kProducts; p++)
        for (unsigned w = 0; w < 2; w++)
            if (a.cpu[p][w].base_ns != b.cpu[p][w].base_ns || a.cpu[p][w].per_kib_ns != b.cpu[p][w].per_kib_ns)
                return false;
    return true;
}

// A CostEstimator model programmed by the very register writes the device gets, so that
// provisioning and the admissibility checks price an I/O exactly as admission will (one
// source: no second, floating-point formula). Rebuilt only when the profile changes.
const bg::CostEstimator &estimator(const Dpu &d)
{
    struct Cache {
        Dpu key;
        bool valid = false;
        // estimate() reads its size bounds with aligned 16-byte SSE loads.
        alignas(16) bg::CostEstimator est;
    };
    thread_local Cache c;
    if (!c.valid || !same_profile(c.key, d)) {
        c.valid = false;
        c.est.reset();
        const bg_hal h = c.est.hal();
        load_cost_table(d, &h, "");
        c.key = d;
        c.valid = true;
    }
    return c.est;
}

}  // namespace

double est_io_cpu(const Dpu &d, const Tenant &t, std::uint32_t size, bool write)
{
    return estimator(d).estimate(static_cast<unsigned>(t.product), write, size)[BG_DIM_CPU];
}

bg_vec io_cost(const Dpu &d, const Tenant &t, std::uint32_t size, bool write)
{
    const bg::CostVector v = estimator(d).estimate(static_cast<unsigned>(t.product), write, size);
    bg_vec c;
    for (unsigned k = 0; k < BG_COST_DIMS; k++)
        c.d[k] = v[k];
    return c;
}

namespace {

// The sizes at which a contract's envelope can peak: the cost of min(iops, bytes/s / size)
// I/Os per second of `size` bytes, c(size) affine in size within each size class with
// non-negative base and slope, rises with size while the IOPS bound holds and falls once the
// byte bound does (bytes/s x (a / size + b)), so its maximum over [512 B, 1 MiB] is at the
// knee size* = bytes/s / iops, clamped to the range -- the two sizes around it, since sizes are
// whole bytes. The range's ends are included for a contract of 0 IOPS or 0 MB/s.
std::vector<std::uint32_t> envelope_sizes(const Provision &pv)
{
    std::vector<std::uint32_t> s{kContractMinSize, kContractMaxSize};
    if (pv.iops > 0) {
        const double knee = std::clamp(pv.mbps * 1e6 / pv.iops, double(kContractMinSize), double(kContractMaxSize));
        s.push_back(static_cast<std::uint32_t>(std::floor(knee)));
        s.push_back(static_cast<std::uint32_t>(std::ceil(knee)));
    }
    return s;
}

}  // namespace

double contract_ios_per_s(const Provision &pv, std::uint32_t size)
{
    return std::min(pv.iops, pv.mbps * 1e6 / size);
}

bg_vec contract_vector(const Dpu &d, const Tenant &t, const Provision &pv, std::uint64_t window_ns)
{
    const double w_s = static_cast<double>(window_ns) / 1e9;
    if (!d.envelope) {
        // dpu.provision: io4k, the mapping before the contract: CPU at the estimated cost of
        // a 4 KiB I/O weighted by the read share; link bytes = data + one header per I/O;
        // software-limit bytes = data. A larger I/O then spends more than its share.
        const double r = t.wl.read_share;
        const double c4k = r * est_io_cpu(d, t, 4096, false) + (1 - r) * est_io_cpu(d, t, 4096, true);
        bg_vec v;
        v.d[BG_DIM_CPU] = sat32(pv.iops * c4k * w_s);
        v.d[BG_DIM_INGRESS] = sat32((pv.mbps * 1e6 + pv.iops * d.header_bytes) * w_s);
        v.d[BG_DIM_EGRESS] = v.d[BG_DIM_INGRESS];
        v.d[BG_DIM_SWLIMIT] = sat32(pv.mbps * 1e6 * w_s);
        return v;
    }
    std::array<double, BG_COST_DIMS> env{};
    for (const std::uint32_t size : envelope_sizes(pv))
        for (const bool write : {false, true}) {
            const bg_vec c = io_cost(d, t, size, write);
            const double n = contract_ios_per_s(pv, size);
            for (unsigned k = 0; k < BG_COST_DIMS; k++)
                env[k] = std::max(env[k], n * c.d[k]);
        }
    bg_vec v;
    for (unsigned k = 0; k < BG_COST_DIMS; k++)
        v.d[k] = sat32(std::ceil(env[k] * w_s));
    return v;
}

bg_vec carry_vector(const Dpu &d, const Tenant &t, const bg_vec &res_base, std::uint64_t window_ns)
{
    bg_vec v = res_base;
    for (const bool write : {false, true}) {
        const bg_vec c = io_cost(d, t, kContractMaxSize, write);
        for (unsigned k = 0; k < BG_COST_DIMS; k++)
            v.d[k] = std::max(v.d[k], c.d[k]);
    }
    const double ios = t.base.iops * static_cast<double>(window_ns) / 1e9;  // base I/Os a window
    if (ios > 0) {
        // The knee term, at most kCarryCapacitySeconds of the device's capacity: what a tenant
        // spending its whole carry at once can queue ahead of its neighbours. A large knee
        // (case 204's 758 kB: 97 MB, 32 ms of a 3 GB/s limiter) would carry far more.
        const std::array<double, 4> cap = capacity_per_s(d);
        for (unsigned k = 0; k < BG_COST_DIMS; k++)
            v.d[k] = std::max(v.d[k], sat32(std::min(std::ceil(res_base.d[k] * (kCarryIos / ios)),
                                                     cap[k] * kCarryCapacitySeconds)));
    }
    return v;
}

bg_vec credit_ref(const Dpu &d, const Tenant &t, std::uint64_t window_ns)
{
    if (!d.envelope) {  // io4k: one 4 KiB I/O at the read-share-weighted CPU price
        const double r = t.wl.read_share;
        bg_vec v;
        v.d[BG_DIM_CPU] = sat32(r * est_io_cpu(d, t, 4096, false) + (1 - r) * est_io_cpu(d, t, 4096, true));
        v.d[BG_DIM_INGRESS] = v.d[BG_DIM_EGRESS] = 4096 + d.header_bytes;
        v.d[BG_DIM_SWLIMIT] = 4096;
        return v;
    }
    // res_base per window / (base IOPS x window): what one I/O of the contract may spend.
    const bg_vec base = contract_vector(d, t, t.base, window_ns);
    const double ios = t.base.iops * static_cast<double>(window_ns) / 1e9;
    bg_vec v{};
    for (unsigned k = 0; k < BG_COST_DIMS; k++)
        v.d[k] = ios > 0 ? sat32(std::ceil(base.d[k] / ios)) : 0;
    return v;
}

std::unique_ptr<Device> open_scenario_device(const Scenario &sc, const std::string &engine)
{
    const std::size_t n = sc.tenants.size();
    AgentParams p;
    std::uint32_t segs = 0;
    for (const Tenant &t : sc.tenants)
        segs += t.wl.segments;
    p.tenants = std::max<std::uint32_t>(p.tenants, static_cast<std::uint32_t>(n));
    p.egress = std::max<std::uint32_t>(p.egress, sc.dpu.threads);
    std::unique_ptr<Device> dev = open_device(engine, p);
    if (dev->params().tenants < n || dev->params().egress < sc.dpu.threads)
        throw std::runtime_error("engine '" + engine + "' is built for " + std::to_string(dev->params().tenants) +
                                 " tenants and " + std::to_string(dev->params().egress) + " SA threads; the scenario needs " +
                                 std::to_string(n) + " and " + std::to_string(sc.dpu.threads));
    if (segs > (1u << dev->params().segment_bits))
        throw ScenarioError(sc.file + ":1: tenants: " + std::to_string(segs) + " segments in all, the datapath has " +
                            std::to_string(1u << dev->params().segment_bits));
    return dev;
}

void program_device(const Scenario &sc, Scheduler sched, std::uint64_t seed, const bg_hal &hal, std::uint32_t ingress)
{
    const Dpu &d = sc.dpu;
    const bg_hal *h = &hal;
    bg_hal_write(h, BG_CTRL_SEED, static_cast<std::uint32_t>(seed));
    bg_hal_write(h, BG_LB_SEED, static_cast<std::uint32_t>(seed * 2654435761u + 1));
    bg_hal_write(h, BG_LB_POLICY, static_cast<std::uint32_t>(d.lb_policy));
    bg_hal_write(h, BG_LB_DEPTH, d.queue_depth);
    // SA threads are egress queues 0..threads-1; a larger build leaves the rest unused.
    const std::uint32_t all = (1u << d.threads) - 1u;
    for (std::uint32_t q = 0; q < ingress; q++)
        bg_hal_write(h, BG_LB_MAP(q), d.lb_policy == LbPolicy::kStatic ? 1u << (q % d.threads) : all);
    load_cost_table(d, h, sc.file + ":1: ");
    if (d.buf_dedicated) {  // dpu.buffers: every ingress queue the same
        for (std::uint32_t q = 0; q < ingress; q++)
            bg_hal_write(h, BG_BPOOL_DEDICATED(q), d.buf_dedicated);
        bg_hal_write(h, BG_BPOOL_SHARED, d.buf_shared);
        bg_hal_write(h, BG_BPOOL_BORROW_CAP, d.buf_borrow_cap);
        bg_hal_write(h, BG_BPOOL_QUIET, d.buf_quiet);
    }
    if (sched == Scheduler::kDualBucket) {
        const double window_s = static_cast<double>(sc.window_ns) / 1e9;
        bg_hal_write(h, BG_SEGMON_UNIT, sc.db.monitor_bytes ? BG_SEGMON_UNIT_SECTORS : BG_SEGMON_UNIT_REQUESTS);
        if (sc.db.monitor_bytes) {
            // R in bytes per interval, counted in 512-byte sectors: floor(bytes / 512) is exact
            // for sector-multiple sizes (SegmentMonitor::threshold_from_bytes).
            const double bps = sc.db.hot_threshold_bps >= 0 ? sc.db.hot_threshold_bps : sc.db.hot_threshold_iops * 4096.0;
            const std::uint64_t bytes = static_cast<std::uint64_t>(std::min(bps * window_s, 1e15));
            bg_hal_write(h, BG_SEGMON_HOT_THRESHOLD,
                         std::min<std::uint32_t>(SegmentMonitor::threshold_from_bytes(bytes), BG_SEGMON_HOT_THRESHOLD_MASK - 1));
        } else {
            const double r = sc.db.hot_threshold_iops * window_s;
            bg_hal_write(h, BG_SEGMON_HOT_THRESHOLD, std::min<std::uint32_t>(sat32(r), BG_SEGMON_HOT_THRESHOLD_MASK - 1));
        }
        bg_hal_write(h, BG_SEGMON_STEADY_WINDOWS, sc.db.steady_intervals);
    }
}

namespace {

// Every scheduler but Still Water's dual-bucket (tenant_contracts: false) admits an I/O only when
// one per-window grant of at most the tenant's burst provisioning (plus the grant carry, when
// on) covers its whole cost, so an I/O type costing more than that in any dimension would be
// deferred forever: a scenario error, not a simulation result. One costing more than the base
// grant is only a warning: such I/Os wait for a burst share. The carry's cap covers one 1 MiB
// I/O, so with it on, only I/Os above the contract's 1 MiB can meet either.
void check_admissible(const Scenario &sc, std::size_t i, const bg_vec &base_grant, const bg_vec &burst_grant,
                      const bg_vec &carry, std::vector<std::string> &warnings)
{
    const Tenant &t = sc.tenants[i];
    // With the carry (dpu.grant_carry), a window's grant may grow by up to one 1 MiB I/O's cost.
    bg_vec base = base_grant, burst = burst_grant;
    if (sc.dpu.grant_carry)
        for (unsigned k = 0; k < BG_COST_DIMS; k++) {
            base.d[k] = sat32(double(base.d[k]) + carry.d[k]);
            burst.d[k] = sat32(double(burst.d[k]) + carry.d[k]);
        }
    const std::string where = sc.file + ":" + std::to_string(t.line) + ": tenants[" + std::to_string(i) + "].workload.sizes.";
    const std::string with_carry = sc.dpu.grant_carry ? " with the grant carry" : "";
    bool warned = false;
    for (const auto &[size, share] : t.wl.sizes) {
        for (int w = 0; w < 2; w++) {
            if ((w && t.wl.read_share >= 1.0) || (!w && t.wl.read_share <= 0.0))
                continue;
            const bg_vec c = io_cost(sc.dpu, t, size, w != 0);
            const std::string io = "one " + std::string(w ? "write" : "read") + " costs ";
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                if (c.d[d] > burst.d[d])
                    throw ScenarioError(where + bg::cli::format_size(size) + ": " + io + std::to_string(c.d[d]) + " " +
                                        kDimNames[d] + " units, more than the tenant's burst provisioning grants per window" + with_carry + " (" +
                                        std::to_string(burst.d[d]) + "): it could never be admitted; raise burst or window_us");
                if (c.d[d] > base.d[d] && !warned) {
                    warnings.push_back(where + bg::cli::format_size(size) + ": " + io + std::to_string(c.d[d]) + " " +
                                       kDimNames[d] + " units, more than the base grant per window" + with_carry + " (" +
                                       std::to_string(base.d[d]) + "): such I/Os are deferred until a burst share covers them");
                    warned = true;
                }
            }
        }
    }
}

// Libra §4.2: "The resource policy is free to provision tenant IO within this limit, but no
// more": the bases' envelope vectors must fit in floor_share of the capacity, per dimension.
void check_floor(const Scenario &sc, const Firmware &f, const bg_vec &total)
{
    for (unsigned k = 0; k < BG_COST_DIMS; k++) {
        double sum = 0;
        std::size_t top = 0;
        for (std::size_t i = 0; i < f.t.size(); i++) {
            sum += f.t[i].res_base.d[k];
            if (f.t[i].res_base.d[k] > f.t[top].res_base.d[k])
                top = i;
        }
        const double floor = std::floor(total.d[k] * sc.libra.floor_share);
        if (sum > floor)
            throw ScenarioError(sc.file + ":" + std::to_string(sc.tenants[top].line) + ": tenants: the bases need " +
                                std::to_string(static_cast<std::uint64_t>(sum)) + " " + kDimNames[k] +
                                " units per window, more than Libra's provisionable floor (libra.floor_share " +
                                std::to_string(sc.libra.floor_share) + " of " + std::to_string(total.d[k]) + ": " +
                                std::to_string(static_cast<std::uint64_t>(floor)) + ") (largest: tenants[" +
                                std::to_string(top) + "] '" + sc.tenants[top].name + "')");
    }
}

// cost_adjust: burst under bios (window.h): the only setting whose factor divides a grant.
bool burst_adjusted(const Firmware &fw)
{
    return fw.fw.cfg.costadj == BG_FW_COSTADJ_BURST && fw.fw.cfg.scheduler == BG_SCHED_BIOS;
}

}  // namespace

std::uint32_t burst_factor(const Firmware &fw)
{
    return burst_adjusted(fw) ? fw.fw.ca.factor[BG_DIM_CPU] : 1u << BG_FACTOR_FRAC_BITS;
}

double burst_factor_mean(const Firmware &fw)
{
    if (!burst_adjusted(fw) || fw.fw.windows == 0)
        return 1.0;
    return static_cast<double>(fw.fw.ca_factor_sum) / fw.fw.windows / (1u << BG_FACTOR_FRAC_BITS);
}

void init_firmware(const Scenario &sc, Scheduler sched, const bg_hal &hal, Firmware &f, std::vector<std::string> &warnings,
                   bool meters)
{
    if (sched == Scheduler::kDualBucket && sc.db.main_slices > 1 && !meters)
        throw ScenarioError(sc.file + ":" + std::to_string(sc.db.main_slices_line) +
                            ": dualbucket.main_slices: simulator only (the gateway releases the main bucket at the tick)");
    const Dpu &d = sc.dpu;
    if (d.cost_adjust == CostAdjust::kBurst && sched != Scheduler::kBios)
        warnings.push_back("dpu.cost_adjust: burst divides what bios grants above a base; under this scheduler "
                           "it adjusts nothing");
    const double w_s = static_cast<double>(sc.window_ns) / 1e9;
    const std::size_t n = sc.tenants.size();
    const std::array<double, 4> cap_per_s = capacity_per_s(d);
    bg_fw_config cfg{};
    cfg.scheduler = sched == Scheduler::kBios ? BG_SCHED_BIOS
                    : sched == Scheduler::kBase ? BG_SCHED_BASE
                    : sched == Scheduler::kWild ? BG_SCHED_WILD
                    : sched == Scheduler::kDdrr ? BG_FW_SCHED_DDRR
                                                : BG_SCHED_DUALBUCKET;
    bg_vec total;
    for (unsigned k = 0; k < 4; k++)
        total.d[k] = sat32(cap_per_s[k] * w_s);
    if (!d.vop_points.empty())  // dpu.vop_curve: the CPU dimension counts milli-VOPs
        total.d[BG_DIM_CPU] = sat32(d.vop_per_s * 1000 * w_s);
    cfg.bios.total = total;
    cfg.bios.reserved_q16 = sat32(d.reserved_share * BG_BIOS_ONE);
    cfg.bios.alpha_q16 = sat32(d.bios_alpha * BG_BIOS_ONE);
    cfg.bios.weight_throttle_q16 = sat32(d.bios_weight_throttle * BG_BIOS_ONE);
    cfg.bios.floor_q16 = sat32(sc.bios.floor_share * BG_BIOS_ONE);
    cfg.bios.options = (sc.bios.usage_clamp ? BG_BIOS_OPT_USAGE_CLAMP : 0u) | (sc.bios.spill_base ? BG_BIOS_OPT_SPILL_BASE : 0u) |
                       (sc.bios.reserve_shortfall ? BG_BIOS_OPT_RESERVE_SHORTFALL : 0u) |
                       (sc.bios.share_refill ? BG_BIOS_OPT_SHARE_REFILL : 0u);
    cfg.bios.reserve_tenants = sc.bios.reserve_tenants;
    // The main bucket issues the proxy's limit (dualbucket.main_share of the capacity); the
    // cheque's delta_p * T is a share of the capacity itself (dualbucket.h).
    for (unsigned k = 0; k < 4; k++)
        cfg.db.main_size.d[k] = sat32(cap_per_s[k] * w_s * sc.db.main_share);
    cfg.db.capacity = total;
    cfg.db.cheque_share_q16 = sat32(sc.db.cheque_share * BG_DB_ONE);
    cfg.db.alpha = sc.db.alpha;
    cfg.db.pct_ppm = sat32(sc.db.percentile * 1e6);
    cfg.db.headroom_mbps = sc.db.headroom_mbps;
    cfg.db.mu_mbps = sc.db.mu_mbps ? sc.db.mu_mbps : sat32(d.swlimit_mbps * 8);
    cfg.db.interval_us = sat32(static_cast<double>(sc.window_ns) / 1000);
    cfg.db.min_samples = 16;
    cfg.db.hist_mode = BG_LH_INTERP;
    cfg.db.main_slices = sc.db.main_slices;
    cfg.db_contracts = sc.db.tenant_contracts ? 1u : 0u;
    cfg.costadj = d.cost_adjust == CostAdjust::kCost    ? BG_FW_COSTADJ_COST
                  : d.cost_adjust == CostAdjust::kBurst ? BG_FW_COSTADJ_BURST
                                                        : 0u;
    bg_ca_default_config(&cfg.ca, sat32(d.target_delay_us * 1000));
    cfg.ca.factor_max = static_cast<std::uint32_t>(d.adjust_max * BG_CA_ONE);

    f.t.assign(n, bg_bios_tenant{});
    f.u.assign(n, bg_bios_usage{});
    f.sched_list.assign(n, 0);
    f.burst_list.assign(n, 0);
    f.carry_max.assign(n, bg_vec{});
    f.granted.assign(n, bg_vec{});
    for (std::size_t i = 0; i < n; i++) {
        const Tenant &t = sc.tenants[i];
        f.t[i].res_base = contract_vector(d, t, t.base, sc.window_ns);
        f.t[i].res_burst = contract_vector(d, t, t.burst, sc.window_ns);
        // Libra's DDRR takes no grant carry, only its deficit bound from this (as before the knee term).
        f.carry_max[i] = carry_vector(d, t, f.t[i].res_base, sched == Scheduler::kDdrr ? 0 : sc.window_ns);
        if (sched != Scheduler::kDualBucket || sc.db.tenant_contracts)
            check_admissible(sc, i, f.t[i].res_base, f.t[i].res_burst, f.carry_max[i], warnings);
        f.t[i].mode = t.credit ? BG_BURST_CREDIT : BG_BURST_PAID;
        // One I/O credit is the base vector's share of one I/O, rounded up: it pays one I/O of
        // any size up to the knee, a larger one its bytes' share (as EBS gp2 counts an I/O
        // above 256 KiB as several); docs/contracts.md.
        const bg_vec ref = credit_ref(d, t, sc.window_ns);
        f.t[i].credit = bg_credit_from_ios(static_cast<std::uint32_t>(t.burst_credits), &ref);
        // EBS gp2's bucket: 5.4 M I/O credits.
        const auto credits = static_cast<std::uint32_t>(t.burst_credits);
        f.t[i].credit_max = bg_credit_from_ios(std::max<std::uint32_t>(5'400'000u, credits), &ref);
    }
    // libra.swap: after the swap a tenant issues its partner's sizes, which its grants must admit too.
    for (const auto &pair : sc.libra.swap_pairs)
        for (int k = 0; k < 2; k++) {
            const std::uint32_t a = pair[k], b = pair[1 - k];
            Scenario alt = sc;
            alt.tenants[a].wl.sizes = sc.tenants[b].wl.sizes;
            alt.tenants[a].wl.read_share = sc.tenants[b].wl.read_share;
            if (sched == Scheduler::kDualBucket && !sc.db.tenant_contracts)
                continue;
            try {
                check_admissible(alt, a, f.t[a].res_base, f.t[a].res_burst, f.carry_max[a], warnings);
            } catch (const ScenarioError &e) {
                const std::string m = e.what();
                const std::size_t at = m.find("tenants[");
                throw ScenarioError(sc.file + ":" + std::to_string(sc.libra.swap_line) + ": libra.swap.pairs: tenant '" +
                                    sc.tenants[a].name + "' with '" + sc.tenants[b].name + "''s workload: " +
                                    (at == std::string::npos ? m : m.substr(at)));
            }
        }
    if (sched == Scheduler::kDdrr || sc.libra.admit_floor)
        check_floor(sc, f, total);
    if (sched == Scheduler::kDdrr) {
        // Libra's v: the base's bytes per window as normalized (1 KiB) requests; its initial
        // allocation (before a policy interval has profiled it) the base's envelope vector.
        cfg.libra.total = total;
        cfg.libra.vop = sc.libra.vop ? 1u : 0u;
        cfg.libra.floor_q16 = sat32(std::round(sc.libra.floor_share * BG_LIBRA_ONE));
        cfg.libra.ewma_w_q16 = sat32(std::round(sc.libra.ewma_weight * BG_LIBRA_ONE));
        cfg.libra.policy_windows = sc.libra.policy_ms > 0
                                       ? std::max<std::uint32_t>(1, sat32(std::round(sc.libra.policy_ms * 1e6 / double(sc.window_ns))))
                                       : 0;
        f.libra.assign(n, bg_libra_tenant{});
        for (std::size_t i = 0; i < n; i++) {
            f.libra[i].quantum = f.t[i].res_base;
            f.libra[i].deficit_max = f.carry_max[i];
            f.libra[i].v_q16 = static_cast<std::uint64_t>(
                std::llround(sc.tenants[i].base.mbps * 1e6 * w_s / 1024.0 * BG_LIBRA_ONE));
        }
        cfg.libra_t = f.libra.data();
    }
    if (sc.dpu.grant_carry && sched != Scheduler::kDdrr) {
        cfg.carry_max = f.carry_max.data();
        cfg.granted = f.granted.data();
        // WildCBS's global budget carries only what a window of capacity lacks to hold one 1 MiB
        // I/O of the costliest tenant (window.h): nothing at the usual window lengths, so
        // WildCBS stays as printed, and short windows still admit the largest I/O.
        for (std::size_t i = 0; i < n; i++) {
            const bg_vec one = carry_vector(d, sc.tenants[i], bg_vec{}, 0);
            for (unsigned k = 0; k < BG_COST_DIMS; k++)
                if (one.d[k] > total.d[k])
                    cfg.global_carry_max.d[k] = std::max(cfg.global_carry_max.d[k], one.d[k] - total.d[k]);
        }
    }
    // Still Water as printed (dualbucket without tenant_contracts) consults no tenant contract.
    if (sc.dpu.iops_cap && (sched != Scheduler::kDualBucket || sc.db.tenant_contracts)) {
        // The exact IOPS cap (docs/contracts.md): the I/Os a window the scheduler allows the
        // tenant, its burst IOPS under every scheduler (BaseCBS's static share of the capacity,
        // proportional to the bases and capped at the burst, may exceed the base; under credit
        // mode the credits still bound it through the cost vector), in 1/65536 I/O. No IOPS figure, no cap. The
        // firmware counts a window's I/Os from the header bytes the cost table charges each.
        //
        // The count a window leaves unused carries (window.h), up to the largest of: one window's
        // count; with the grant carry on, D windows of the base count when the cost carry holds
        // D > 1 windows of base (the count accrued while its bytes accrue; the cost carry holds
        // kCarryIos I/Os at the knee, so this is at least kCarryIos); kCarryIos I/Os; and
        // kCountCarrySeconds of its base IOPS. Over any T the tenant is admitted at most IOPS x T
        // + that carry (docs/contracts.md). Why the last three: near the knee the count and the
        // bytes bind by turns, and the bucket that is full while the other one blocks loses what
        // it accrues. A tenant of 877 IOPS / 665 MB/s doing 1 MiB and 512 B I/Os in 250 us
        // windows (0.22 I/Os a window) got 82 % of its IOPS with one window's count carried, 86 %
        // with D = 6.3 windows (1.4 I/Os): a run of 512 B I/Os then empties the count while the
        // bytes overflow. A tenant held exactly at its knee (16, 64 and 256 KiB I/Os, 60/30/10 %)
        // loses what either bucket accrues while the other blocks, a random walk of bytes - knee x
        // count between the two bounds, so the loss falls with the depth of both in I/Os of the
        // mix: with the cost carry at one 1 MiB I/O (18.8 I/Os of the mix) it got 97.2 % at 2000
        // IOPS and 97.5 % at 5000; the count alone at 96-384 I/Os gave 99.6 % and at most
        // 98.65 % (the byte bucket then loses it); both at kCarryIos, at least 99.1 %.
        // The count's depth costs only a looser cap over short intervals (the cost vector, not
        // the count, guards the shared resources); the cost carry's is what neighbours absorb.
        f.count_q16.assign(n, 0);
        f.count_have.assign(n, 0);
        f.count_carry_max.assign(n, 0);
        for (std::size_t i = 0; i < n; i++) {
            const Tenant &t = sc.tenants[i];
            const double iops = t.burst.iops;
            const double q = iops * w_s * 65536.0;
            f.count_q16[i] = iops > 0 && q < 1.8e19 ? static_cast<std::uint64_t>(q) : UINT64_MAX;
            double depth = 1.0;
            if (sc.dpu.grant_carry)
                for (unsigned k = 0; k < BG_COST_DIMS; k++)
                    if (f.t[i].res_base.d[k] > 0)
                        depth = std::max(depth, double(f.carry_max[i].d[k]) / f.t[i].res_base.d[k]);
            const double most = std::max({q, t.base.iops * w_s * 65536.0 * depth, kCarryIos * 65536.0,
                                          t.base.iops * kCountCarrySeconds * 65536.0});
            f.count_carry_max[i] = most < 1.8e19 ? static_cast<std::uint64_t>(most) : UINT64_MAX;
        }
        cfg.count_q16 = f.count_q16.data();
        cfg.count_have = f.count_have.data();
        cfg.count_carry_max = f.count_carry_max.data();
        cfg.count_header = d.header_bytes;
    }
    const int rc = bg_fw_init(&f.fw, &cfg, f.t.data(), f.u.data(), f.sched_list.data(), f.burst_list.data(),
                              static_cast<std::uint32_t>(n), &hal);
    if (rc == BG_FW_OK)
        return;
    std::string msg = sc.file + ":1: ";
    if (rc == BG_BIOS_E_OVERSUB) {
        const int dim = f.fw.bios.err_dim;
        const unsigned k = dim >= 0 && dim < 4 ? static_cast<unsigned>(dim) : 0;
        double sum = 0;
        std::size_t top = 0;
        for (std::size_t i = 0; i < n; i++) {
            sum += f.t[i].res_base.d[k];
            if (f.t[i].res_base.d[k] > f.t[top].res_base.d[k])
                top = i;
        }
        // The pool comes off the capacity first only when it is a share (bios.reserve: share);
        // the printed two-tenant pool is at most what the bases leave.
        const bool share_pool = cfg.scheduler == BG_SCHED_BIOS && cfg.bios.reserve_tenants == 0;
        const double have = total.d[k] - (share_pool ? std::floor(total.d[k] * d.reserved_share) : 0);
        msg = sc.file + ":" + std::to_string(sc.tenants[top].line) + ": ";
        msg += std::string("tenants: the bases cannot all be honoured: at their worst I/O sizes (docs/contracts.md) "
                           "they need ") +
               std::to_string(static_cast<std::uint64_t>(sum)) + " " + kDimNames[k] + " units per window, the DPU has " +
               std::to_string(static_cast<std::uint64_t>(have)) +
               (share_pool ? " after dpu.reserved_share" : "") + " (largest: tenants[" +
               std::to_string(top) + "] '" + sc.tenants[top].name + "', " +
               std::to_string(f.t[top].res_base.d[k]) + ")";
    } else if (rc == BG_BIOS_E_BURST) {
        msg += "tenants[" + std::to_string(f.fw.bios.err_tenant) + "].burst: below base as a cost vector";
    } else if (rc == BG_FW_E_DUALBUCKET) {
        msg += std::string("dualbucket: firmware rejects field ") + (f.fw.err_field ? f.fw.err_field : "?");
    } else if (rc == BG_FW_E_LIBRA) {
        msg += std::string("libra: firmware rejects field ") + (f.fw.err_field ? f.fw.err_field : "?");
    } else if (rc == BG_FW_E_COSTADJ) {
        msg += std::string("dpu.target_delay_us: firmware rejects cost adjustment field ") + (f.fw.err_field ? f.fw.err_field : "?");
    } else {
        msg += "firmware init failed with code " + std::to_string(rc);
    }
    throw ScenarioError(msg);
}

}  // namespace bg::sim
