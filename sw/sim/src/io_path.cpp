// burstgate-sim's side of the storage agent; see io_path.hpp.
#include "burstgate/sim/io_path.hpp"

#include <algorithm>
#include <cmath>

#include "burstgate/regs.h"
#include "burstgate/sim/event_queue.hpp"
#include "burstgate/sim/io_table.hpp"
#include "burstgate/sim/result_tally.hpp"
#include "burstgate/sim/window_series.hpp"

namespace bg::sim {

IoPath::IoPath(const Scenario &sc, std::uint64_t seed, std::uint32_t vqueues, Device &dev, IoTable &ios,
               EventQueue &events, ResultTally &tally, WindowSeries &series)
    : sc_(sc), dev_(dev), ios_(ios), events_(events), tally_(tally), series_(series), backend_rng_(seed, 0)
{
    // Lognormal from (median, p99): mu = ln(median), sigma = ln(p99 / median) / z(0.99).
    if (sc_.dpu.backend_median_us > 0) {
        backend_mu_ = std::log(sc_.dpu.backend_median_us * 1000.0);
        backend_sigma_ = std::log(sc_.dpu.backend_p99_us / sc_.dpu.backend_median_us) / 2.3263478740408408;
    }
    sa_ = std::make_unique<SaStages>(sc_.dpu, vqueues, *this);
}

void IoPath::stage_event(std::uint64_t t, SaEvent e, std::uint32_t id)
{
    events_.push(t, e == SaEvent::kCpuDone ? EventKind::kCpuDone : e == SaEvent::kSwlDone ? EventKind::kSwlDone : EventKind::kSaLoop, id);
}

void IoPath::offer(std::uint64_t now, std::span<const std::uint32_t> ids)
{
    descs_.clear();
    decs_.clear();
    for (std::uint32_t id : ids) {
        const Io &io = ios_[id];
        IoDesc d;
        d.tag = static_cast<std::uint16_t>(id);
        d.tenant = io.tenant;
        d.queue = io.queue;
        d.product = static_cast<std::uint8_t>(sc_.tenants[io.tenant].product);
        d.write = io.write;
        d.size = io.size;
        d.segment = io.segment;
        d.reoffer = io.deferred;  // only a re-offer offers a deferred I/O: not counted again
        descs_.push_back(d);
    }
    dev_.submit(descs_, decs_);
    for (std::size_t k = 0; k < ids.size(); k++) {
        const std::uint32_t id = ids[k];
        Io &io = ios_[id];
        const IoDecision &dec = decs_[k];
        tally_.decided(io, dec, now);
        if (!dec.admitted()) {
            io.deferred = true;
            io.deferred_hot = dec.hot;
            series_.deferred(io.tenant);
            deferred_.push_back(id);
            continue;
        }
        io.admit = now;
        io.egress = dec.egress;
        io.charge = dec.cost.d[BG_DIM_CPU];
        SaItem it;
        it.true_cpu = io.true_cpu;
        it.size = io.size;
        it.vq = io.vq;
        it.egress = io.egress;
        it.write = io.write;
        sa_->admit(now, id, it, tally_.measured(now));
    }
}

void IoPath::reoffer(std::uint64_t now, bool steady_first)
{
    reoffer_.swap(deferred_);
    deferred_.clear();
    if (steady_first)
        std::stable_partition(reoffer_.begin(), reoffer_.end(), [this](std::uint32_t id) { return !ios_[id].deferred_hot; });
    if (!reoffer_.empty())
        offer(now, reoffer_);
    reoffer_.clear();
}

void IoPath::cpu_done(std::uint64_t now, std::uint32_t id) { sa_->cpu_done(now, id, tally_.measured(now)); }

void IoPath::swl_done(std::uint64_t now, std::uint32_t id)
{
    const std::uint64_t sent = sa_->swl_done(now, id, tally_.measured(now));
    Io &io = ios_[id];
    double backend = 0;
    if (backend_mu_ != 0)
        backend = std::exp(backend_mu_ + backend_sigma_ * backend_rng_.normal());
    io.backend = static_cast<std::uint64_t>(std::llround(backend));
    events_.push(sent + io.backend, EventKind::kBackendDone, id);
}

void IoPath::backend_done(std::uint64_t now, std::uint32_t id)
{
    events_.push(sa_->ingress(now, id), EventKind::kComplete, id);
}

void IoPath::complete(std::uint64_t now, std::uint32_t id, const Io &io)
{
    IoCompletion c;
    c.tag = static_cast<std::uint16_t>(id);
    c.tenant = io.tenant;
    c.queue = io.queue;
    c.egress = io.egress;
    c.charge_ns = io.charge;
    const std::uint64_t sa = now - io.admit - io.backend;
    c.sa_delay_ns = sa > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(sa);
    dev_.complete(std::span<const IoCompletion>(&c, 1));
    sa_->complete(id, tally_.measured(now));
}

}  // namespace bg::sim
