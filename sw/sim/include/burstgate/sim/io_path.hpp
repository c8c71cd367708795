// burstgate-sim's side of the storage agent: an I/O's path from its offer to its completion
// (the life of one I/O at the top of simulator.hpp). The device decides (submit); a deferred
// I/O waits in a FIFO for the next window's re-offer; an admitted one goes through the SA
// stages (sa_stages.hpp), the backend's lognormal delay and the ingress link, and its
// completion is reported to the device with its SA delay. Every time here is an event of the
// simulator's queue, so the SA's timing is the simulator's alone.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "burstgate/host/device.hpp"
#include "burstgate/sim/rng.hpp"
#include "burstgate/sim/sa_stages.hpp"
#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

class EventQueue;
class IoTable;
class ResultTally;
class WindowSeries;
struct Io;
struct SimResult;

class IoPath final : public SaStages::Sink {
public:
    // vqueues: the vCPU queues of all tenants. The backend draws from Rng stream (seed, 0).
    IoPath(const Scenario &sc, std::uint64_t seed, std::uint32_t vqueues, Device &dev, IoTable &ios, EventQueue &events,
           ResultTally &tally, WindowSeries &series);

    // The device decides on `ids` (one submit, in order) at `now`: the deferred ones join the
    // deferral FIFO, the admitted ones enter their SA thread.
    void offer(std::uint64_t now, std::span<const std::uint32_t> ids);
    // After a window's COMMIT: the deferred I/Os go again, in deferral order, or with
    // `steady_first` those the segment monitor last saw as steady ahead of the hot ones.
    void reoffer(std::uint64_t now, bool steady_first);
    // The events the SA stages and the backend scheduled (event_queue.hpp).
    void cpu_done(std::uint64_t now, std::uint32_t id);
    void swl_done(std::uint64_t now, std::uint32_t id);
    void backend_done(std::uint64_t now, std::uint32_t id);
    void sa_loop(std::uint64_t now, std::uint32_t thread) { sa_->loop_event(now, thread); }
    // The response of `io` (record id, already copied out) was delivered at `now`: the
    // device hears of it with its SA delay (completion - admission - backend).
    void complete(std::uint64_t now, std::uint32_t id, const Io &io);

    std::size_t deferred() const { return deferred_.size(); }
    // Utilization, admitted load and in-flight count of the report (SaStages::account).
    void account(SimResult &r, double period_s) const { sa_->account(r, period_s); }
    const SaStages &stages() const { return *sa_; }

private:
    void stage_event(std::uint64_t t, SaEvent e, std::uint32_t id) override;

    const Scenario &sc_;
    Device &dev_;
    IoTable &ios_;
    EventQueue &events_;
    ResultTally &tally_;
    WindowSeries &series_;
    std::unique_ptr<SaStages> sa_;  // SA threads, software limiter, links
    Rng backend_rng_;
    double backend_mu_ = 0, backend_sigma_ = 0;
    std::vector<std::uint32_t> deferred_, reoffer_;
    std::vector<IoDesc> descs_;
    std::vector<IoDecision> decs_;
};

}  // namespace bg::sim
