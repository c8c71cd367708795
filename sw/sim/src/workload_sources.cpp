// burstgate-sim's I/O generators; see workload_sources.hpp.
#include "burstgate/sim/workload_sources.hpp"

#include <cmath>

#include "burstgate/cost_table.h"
#include "burstgate/sim/io_table.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/sa_stages.hpp"

namespace bg::sim {

WorkloadSources::WorkloadSources(const Scenario &sc, std::uint64_t seed, Scheduler sched, std::uint32_t ingress,
                                 const Firmware &fw, std::vector<std::string> &warnings)
    : sc_(sc), sched_(sched), ingress_(ingress), fw_(fw), warnings_(warnings)
{
    const std::size_t n = sc_.tenants.size();
    t_.resize(n);
    std::uint32_t qb = 0, sb = 0;
    for (std::size_t i = 0; i < n; i++) {
        TenantSource &t = t_[i];
        t.cfg = &sc_.tenants[i];
        t.rng = Rng(seed, i + 1);
        t.queue_base = qb;
        t.seg_base = sb;
        qb += t.cfg->queues;
        sb += t.cfg->wl.segments;
        double c = 0;
        for (const auto &[size, share] : t.cfg->wl.sizes)
            t.size_cdf.push_back(c += share);
        if (!t.size_cdf.empty())  // mode: trace has no size distribution
            t.size_cdf.back() = 1.0;
        t.partner = static_cast<std::uint32_t>(i);
    }
    for (const auto &p : sc_.libra.swap_pairs) {
        t_[p[0]].partner = p[1];
        t_[p[1]].partner = p[0];
    }
    vqueues_ = qb;
}

// check_admissible for one trace record, found only when it is read: the same error (an I/O
// no per-window burst grant covers would wait forever) and warning, at the trace's FILE:LINE.
void WorkloadSources::check_trace_record(std::uint32_t ti, const bg::trace::Record &r)
{
    if (sched_ == Scheduler::kDualBucket && !sc_.db.tenant_contracts)
        return;
    TenantSource &t = t_[ti];
    const bool write = r.op == bg::trace::Op::kWrite;
    const bg_vec c = io_cost(sc_.dpu, *t.cfg, r.length, write);
    const std::string where = t.reader->name() + ":" + std::to_string(r.line) + ": length " + std::to_string(r.length) +
                              ": one " + (write ? "write" : "read") + " costs ";
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        // The grant carry (docs/contracts.md) adds up to carry_max to a window's grant.
        const double carry = sc_.dpu.grant_carry ? fw_.carry_max[ti].d[d] : 0.0;
        const std::uint32_t burst = sat32(fw_.t[ti].res_burst.d[d] + carry), base = sat32(fw_.t[ti].res_base.d[d] + carry);
        if (c.d[d] > burst)
            throw ScenarioError(where + std::to_string(c.d[d]) + " " + kDimNames[d] + " units, more than tenant '" +
                                t.cfg->name + "' gets per window at its burst provisioning (" + std::to_string(burst) +
                                "): it could never be admitted; raise burst or window_us");
        if (c.d[d] > base && !t.base_warned) {
            warnings_.push_back(where + std::to_string(c.d[d]) + " " + kDimNames[d] + " units, more than tenant '" +
                                t.cfg->name + "' gets per window at its base provisioning (" + std::to_string(base) +
                                "): such I/Os are deferred until a burst share covers them");
            t.base_warned = true;
        }
    }
}

bool WorkloadSources::open_trace(std::uint32_t ti)
{
    const Workload &w = t_[ti].cfg->wl;
    try {
        t_[ti].reader = std::make_unique<bg::trace::TraceReader>(w.tr.file, w.tr.format);
    } catch (const bg::trace::TraceError &err) {
        throw ScenarioError(err.what());
    }
    if (trace_next(ti))
        return true;
    warnings_.push_back(sc_.file + ":" + std::to_string(w.tr.line) + ": tenants[" + std::to_string(ti) +
                        "].workload.trace: no read or write" +
                        (w.tr.device.empty() ? "" : " of device '" + w.tr.device + "'") + " in '" + w.tr.file +
                        "' arrives before stop_ms");
    return false;
}

bool WorkloadSources::trace_next(std::uint32_t ti)
{
    TenantSource &t = t_[ti];
    const Workload &w = t.cfg->wl;
    try {
        for (;;) {
            if (!t.reader->next(t.next)) {
                if (!w.tr.loop)
                    return false;
                const std::string where = sc_.file + ":" + std::to_string(w.tr.line) + ": tenants[" + std::to_string(ti) +
                                          "].workload.trace.loop: ";
                if (t.pass_records == 0)
                    throw ScenarioError(where + "'" + w.tr.file + "' has no read or write" +
                                        (w.tr.device.empty() ? "" : " of device '" + w.tr.device + "'") + " to loop over");
                const auto span = static_cast<std::uint64_t>(
                    std::llround(static_cast<double>(t.last_time - w.tr.skip_ns) * w.tr.time_scale));
                if (span == 0)
                    throw ScenarioError(where + "'" + w.tr.file + "' spans no time, so looping would never advance");
                t.pass_base += span;
                t.pass_records = 0;
                t.reader = std::make_unique<bg::trace::TraceReader>(w.tr.file, w.tr.format);
                continue;
            }
            if (t.next.op == bg::trace::Op::kOther || (!w.tr.device.empty() && t.next.device != w.tr.device) ||
                t.next.time_ns < w.tr.skip_ns)
                continue;
            t.pass_records++;
            t.last_time = t.next.time_ns;
            const double at = static_cast<double>(w.start_ns + t.pass_base) +
                              static_cast<double>(t.next.time_ns - w.tr.skip_ns) * w.tr.time_scale;
            if (at >= static_cast<double>(w.stop_ns))
                return false;
            t.next_at = static_cast<std::uint64_t>(std::llround(at));
            check_trace_record(ti, t.next);
            return true;
        }
    } catch (const bg::trace::TraceError &e) {
        throw ScenarioError(e.what());
    }
}

std::uint64_t WorkloadSources::next_poisson(std::uint32_t ti, std::uint64_t now)
{
    return now + static_cast<std::uint64_t>(t_[ti].rng.exponential(1e9 / t_[ti].cfg->wl.rate_iops));
}

std::uint32_t WorkloadSources::new_io(std::uint32_t ti, std::uint64_t now, IoTable &ios)
{
    TenantSource &t = t_[ti];
    const Workload &w = t.cfg->wl;
    const std::uint32_t id = ios.alloc(now, ti);
    Io &io = ios[id];
    if (w.trace) {
        io.size = t.next.length;
        io.write = t.next.op == bg::trace::Op::kWrite;
        io.vq = static_cast<std::uint16_t>(t.queue_base + t.rng.below(t.cfg->queues));
        io.queue = static_cast<std::uint8_t>(io.vq % ingress_);
        io.segment = static_cast<std::uint16_t>(t.seg_base + (t.next.offset / w.tr.segment_bytes) % w.segments);
        io.true_cpu = true_cpu_ns(sc_.dpu, *t.cfg, io.size, io.write);
        return id;
    }
    // libra.swap: after the swap, the partner's size mix and read share (the tenant's own queues,
    // segments and depth).
    const TenantSource &m = now >= sc_.libra.swap_workloads_ns ? t_[t.partner] : t;
    const double u = t.rng.uniform();
    std::size_t k = 0;
    while (k + 1 < m.size_cdf.size() && u >= m.size_cdf[k])
        k++;
    io.size = m.cfg->wl.sizes[k].first;
    io.write = t.rng.uniform() >= m.cfg->wl.read_share;
    io.vq = static_cast<std::uint16_t>(t.queue_base + t.rng.below(t.cfg->queues));
    io.queue = static_cast<std::uint8_t>(io.vq % ingress_);
    std::uint32_t seg;
    if (w.hot_segments > 0 && t.rng.uniform() < w.hot_share) {
        seg = t.rng.below(w.hot_segments);
        io.hot = true;
    } else {
        const std::uint32_t cold = w.segments - w.hot_segments;
        seg = w.hot_segments + (cold ? t.rng.below(cold) : 0);
    }
    io.segment = static_cast<std::uint16_t>(t.seg_base + seg);
    io.true_cpu = true_cpu_ns(sc_.dpu, *t.cfg, io.size, io.write);
    return id;
}

}  // namespace bg::sim
