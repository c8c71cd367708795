// The storage agent's stages after admission; see sa_stages.hpp.
#include "burstgate/sim/sa_stages.hpp"

#include <cmath>

#include "burstgate/regs.h"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/simulator.hpp"

namespace bg::sim {

std::uint32_t true_cpu_ns(const Dpu &d, const Tenant &t, std::uint32_t size, bool write)
{
    const CpuProfile &p = d.cpu[t.product][write ? 1 : 0];
    return p.base_ns + static_cast<std::uint32_t>((static_cast<std::uint64_t>(p.per_kib_ns) * size) >> 10);
}

SaStages::SaStages(const Dpu &d, std::size_t vqueues, Sink &sink)
    : dpu_(d), sink_(sink), threads_(d.threads, Server(vqueues, d.sa_round_robin)), swl_(vqueues, d.sa_round_robin)
{
    ns_per_swl_byte_ = 1e9 / (d.swlimit_mbps * 1e6);
    ns_per_eg_byte_ = 8.0 / d.egress_gbps;
    ns_per_in_byte_ = 8.0 / d.ingress_gbps;
    cap_per_s_ = capacity_per_s(d);
}

void SaStages::admit(std::uint64_t now, std::uint32_t id, const SaItem &it, bool measured)
{
    if (id >= items_.size())
        items_.resize(std::max<std::size_t>(id + 1, 2 * items_.size()));
    items_[id] = it;
    in_stages_++;
    if (measured) {
        admitted_[BG_DIM_CPU] += it.true_cpu;
        admitted_[BG_DIM_INGRESS] += dpu_.header_bytes + (it.write ? 0 : it.size);
        admitted_[BG_DIM_EGRESS] += dpu_.header_bytes + (it.write ? it.size : 0);
        admitted_[BG_DIM_SWLIMIT] += it.size;
    }
    threads_[it.egress].push(it.vq, id);
    if (!threads_[it.egress].busy)
        start_cpu(now, it.egress);
}

void SaStages::start_cpu(std::uint64_t now, std::uint32_t thread)
{
    Server &s = threads_[thread];
    s.busy = !s.empty();
    if (s.empty())
        return;
    const std::uint32_t id = s.pop();
    sink_.stage_event(now + items_[id].true_cpu, SaEvent::kCpuDone, id);
}

void SaStages::start_swl(std::uint64_t now)
{
    swl_.busy = !swl_.empty();
    if (swl_.empty())
        return;
    const std::uint32_t id = swl_.pop();
    sink_.stage_event(now + static_cast<std::uint64_t>(std::ceil(items_[id].size * ns_per_swl_byte_)), SaEvent::kSwlDone, id);
}

void SaStages::cpu_done(std::uint64_t now, std::uint32_t id, bool measured)
{
    if (measured)
        served_[BG_DIM_CPU] += items_[id].true_cpu;
    start_cpu(now, items_[id].egress);
    swl_.push(items_[id].vq, id);
    if (!swl_.busy)
        start_swl(now);
}

std::uint64_t SaStages::swl_done(std::uint64_t now, std::uint32_t id, bool measured)
{
    start_swl(now);
    const SaItem &it = items_[id];
    if (measured) {
        served_[BG_DIM_SWLIMIT] += it.size;
        served_[BG_DIM_EGRESS] += dpu_.header_bytes + (it.write ? it.size : 0);
    }
    const double start = std::max(static_cast<double>(now), eg_free_);
    eg_free_ = start + (dpu_.header_bytes + (it.write ? it.size : 0)) * ns_per_eg_byte_;
    return static_cast<std::uint64_t>(std::ceil(eg_free_));
}

std::uint64_t SaStages::ingress(std::uint64_t now, std::uint32_t id)
{
    const SaItem &it = items_[id];
    const double start = std::max(static_cast<double>(now), in_free_);
    in_free_ = start + (dpu_.header_bytes + (it.write ? 0 : it.size)) * ns_per_in_byte_;
    return static_cast<std::uint64_t>(std::ceil(in_free_));
}

void SaStages::complete(std::uint32_t id, bool measured)
{
    const SaItem &it = items_[id];
    if (measured)
        served_[BG_DIM_INGRESS] += dpu_.header_bytes + (it.write ? 0 : it.size);
    in_stages_--;
}

void SaStages::account(SimResult &r, double period_s) const
{
    for (unsigned d = 0; d < 4; d++) {
        r.utilization[d] = served_[d] / (cap_per_s_[d] * period_s);
        r.admitted_load[d] = admitted_[d] / (cap_per_s_[d] * period_s);
    }
    const std::uint64_t open = r.generated - r.finished;
    r.in_flight = open - std::min(open, r.deferred_pending);
}

}  // namespace bg::sim
