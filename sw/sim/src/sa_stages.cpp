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
    if (d.sa_loop == SaLoop::kNone)
        return;
    TaskLoopConfig cfg;
    cfg.lt_ns = d.sa_lt_ns;
    cfg.alpha_permille = d.sa_alpha_permille;
    cfg.policy = d.sa_loop == SaLoop::kFifo ? LoopPolicy::kFifo : LoopPolicy::kPriority;
    cfg.gate = d.sa_gate_literal ? UnrelatedGate::kStartBeforeDeadline : UnrelatedGate::kFirstThenFit;
    loops_.resize(d.threads);
    for (Loop &l : loops_) {
        l.loop = std::make_unique<TaskLoop>(cfg);
        for (const SaTask &t : d.sa_tasks)
            l.next_due.push_back(t.offload && d.sa_offload ? ~std::uint64_t{0} : t.period_ns);
    }
}

void SaStages::start_loop(std::uint64_t now, std::uint32_t thread)
{
    Loop &l = loops_[thread];
    TaskLoop &loop = *l.loop;
    loop.advance_to(now);
    // The timers that came due by now enter the rx buffer at their due time, so a FIFO loop
    // takes them in order with the I/Os.
    std::uint64_t next = ~std::uint64_t{0};
    for (std::size_t k = 0; k < l.next_due.size(); k++) {
        for (; l.next_due[k] <= now; l.next_due[k] += dpu_.sa_tasks[k].period_ns)
            loop.post_rx(Task{"", TaskClass::kIoUnrelated, dpu_.sa_tasks[k].duration_ns, {}, 0}, l.next_due[k]);
        next = std::min(next, l.next_due[k]);
    }
    if (!loop.has_work()) {
        l.running = false;
        if (next != ~std::uint64_t{0} && l.wake != next) {
            l.wake = next;
            sink_.stage_event(next, SaEvent::kLoop, thread);
        }
        return;
    }
    const LoopRecord rec = *loop.run_loop();
    for (const TraceEntry &e : loop.take_trace()) {
        if (e.cls == TaskClass::kIoRelated)
            sink_.stage_event(e.end_ns, SaEvent::kCpuDone, e.id);
        else
            unrelated_run_++;
    }
    l.running = true;
    l.end = rec.end_ns;
    sink_.stage_event(rec.end_ns, SaEvent::kLoop, thread);
}

void SaStages::loop_event(std::uint64_t now, std::uint32_t thread)
{
    Loop &l = loops_[thread];
    if (l.running && now != l.end)
        return;  // an idle-time timer event that a loop overtook: the loop's end takes the timers
    l.running = false;
    start_loop(now, thread);
}

std::uint64_t SaStages::loops() const
{
    std::uint64_t n = 0;
    for (const Loop &l : loops_)
        n += l.loop->loops();
    return n;
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
    if (!loops_.empty()) {
        Loop &l = loops_[it.egress];
        std::vector<Task> spawns;
        if (dpu_.sa_per_io_ns > 0)
            spawns.push_back(Task{"", TaskClass::kIoUnrelated, dpu_.sa_per_io_ns, {}, id});
        l.loop->post_rx(Task{"", TaskClass::kIoRelated, it.true_cpu, std::move(spawns), id}, now);
        if (!l.running)
            start_loop(now, it.egress);
        return;
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
    if (loops_.empty())
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
