// The event engine of burstgate-sim; see simulator.hpp for the life of one I/O. Sim is the
// event loop and the composition of its parts, each in its own file:
//   event_queue.hpp       the pending events and their deterministic order
//   io_table.*            the I/O records every part reads and writes
//   workload_sources.*    the tenants' I/O generators (closed, open, trace)
//   io_path.*             the device's decision, deferral, the SA stages, the backend, completion
//   firmware_loop.*       the device's programming and the firmware's window loop
//   lsm_link.*            the LSM store whose I/O is a tenant's (lsm_section.hpp)
//   result_tally.*        the report's counters; window_series.* the --csv time series
#include "burstgate/sim/simulator.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <ostream>
#include <span>
#include <vector>

#include "burstgate/host/device.hpp"
#include "burstgate/sim/event_queue.hpp"
#include "burstgate/sim/firmware_loop.hpp"
#include "burstgate/sim/io_path.hpp"
#include "burstgate/sim/io_table.hpp"
#include "burstgate/sim/lsm_link.hpp"
#include "burstgate/sim/lsm_section.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/result_tally.hpp"
#include "burstgate/sim/window_series.hpp"
#include "burstgate/sim/workload_sources.hpp"

namespace bg::sim {

namespace {

class Sim final {
public:
    Sim(const Scenario &sc, const SimOptions &opt);
    SimResult run();

private:
    std::uint32_t new_io(std::uint32_t ti)
    {
        const std::uint32_t id = src_.new_io(ti, now_, ios_);
        tally_.generated(ti);
        return id;
    }
    void offer_one(std::uint32_t id) { path_.offer(now_, std::span<const std::uint32_t>(&id, 1)); }
    void on_start(std::uint32_t ti);
    void on_arrival(std::uint32_t ti);
    void on_complete(std::uint32_t id);
    void on_window();
    void on_meter(std::uint32_t j);
    std::uint32_t slices_ = 1;  // dualbucket.main_slices under the dualbucket scheduler, else 1
    bool swapped_ = false;  // libra.swap's reservations swapped
    bool lsm_step();  // lsm: the store's events due before the next of ours (lsm_link.hpp)
    void progress(bool final);

    // Declaration order is construction order: the device first, the report's counters before
    // the firmware (whose warnings they hold), the firmware before the trace checks read it.
    Scenario sc_;
    SimOptions opt_;
    Scheduler sched_;
    std::uint64_t seed_;
    std::unique_ptr<Device> dev_;
    std::uint32_t ingress_;
    ResultTally tally_;
    FirmwareLoop fw_;
    EventQueue queue_;
    IoTable ios_;
    WorkloadSources src_;
    WindowSeries series_;
    IoPath path_;
    std::unique_ptr<LsmLink> lsm_;
    std::uint64_t now_ = 0, events_ = 0;
    std::chrono::steady_clock::time_point wall0_, last_progress_;
};

Sim::Sim(const Scenario &sc, const SimOptions &opt)
    : sc_(sc), opt_(opt), sched_(opt.scheduler.value_or(sc.scheduler)), seed_(opt.seed.value_or(sc.seed)),
      dev_(open_scenario_device(sc_, opt_.engine)), ingress_(dev_->params().ingress),
      tally_(sc_, dev_->engine(), sched_, seed_), fw_(sc_, sched_, seed_, *dev_, tally_.warnings()), ios_(sc_),
      src_(sc_, seed_, sched_, ingress_, fw_.firmware(), tally_.warnings()), series_(sc_, sched_),
      path_(sc_, seed_, src_.vqueues(), *dev_, ios_, queue_, tally_, series_)
{
    if (sc_.lsm && !sc_.lsm->tenant.empty())
        lsm_ = std::make_unique<LsmLink>(sc_, seed_, src_.tenant(sc_.lsm->tenant_index), ingress_);
}

void Sim::on_start(std::uint32_t ti)
{
    const Workload &w = src_.tenant(ti).cfg->wl;
    if (w.trace) {
        if (src_.open_trace(ti))
            queue_.push(src_.tenant(ti).next_at, EventKind::kArrival, ti);
    } else if (w.closed) {
        std::vector<std::uint32_t> ids;
        for (std::uint32_t k = 0; k < w.iodepth && now_ < w.stop_ns; k++)
            ids.push_back(new_io(ti));
        path_.offer(now_, ids);
    } else if (w.rate_iops > 0) {
        const std::uint64_t first = src_.next_poisson(ti, now_);
        if (first < w.stop_ns)
            queue_.push(first, EventKind::kArrival, ti);
    }
}

void Sim::on_arrival(std::uint32_t ti)
{
    offer_one(new_io(ti));
    const Workload &w = src_.tenant(ti).cfg->wl;
    if (w.trace) {
        if (src_.trace_next(ti))
            queue_.push(src_.tenant(ti).next_at, EventKind::kArrival, ti);
        return;
    }
    const std::uint64_t next = src_.next_poisson(ti, now_);
    if (next < w.stop_ns)
        queue_.push(next, EventKind::kArrival, ti);
}

// Closed loop: the completion's slot is free before the tenant's next I/O takes one.
void Sim::on_complete(std::uint32_t id)
{
    const Io io = ios_[id];
    ios_.release(id);
    if (lsm_)
        lsm_->complete(io, now_);
    path_.complete(now_, id, io);
    tally_.completed(io, now_);
    series_.completed(io.tenant, io.size, now_ - io.arrival);
    const Workload &w = src_.tenant(io.tenant).cfg->wl;
    if (w.closed && now_ < w.stop_ns)
        offer_one(new_io(io.tenant));
}

// Deferred I/Os go again right after the firmware's COMMIT, so they meet the new grants.
void Sim::on_window()
{
    if (!swapped_ && now_ >= sc_.libra.swap_reservations_ns) {
        fw_.swap_reservations(sc_.libra.swap_pairs);
        swapped_ = true;
    }
    tally_.window_end(fw_.hal(), fw_.firmware(), now_);
    fw_.window();
    tally_.result().windows++;
    if (opt_.csv)
        series_.write_window(*opt_.csv, tally_.result().windows, now_, fw_);
    path_.reoffer(now_, sched_ == Scheduler::kDualBucket && sc_.db.steady_first);
}

// Slice j of the main bucket's tokens, j * T / k into the window (times from the window's
// start, so they do not drift); deferred I/Os go again to meet them, as after a COMMIT.
void Sim::on_meter(std::uint32_t j)
{
    const std::uint64_t start = now_ - j * sc_.window_ns / slices_;
    fw_.meter(j);
    path_.reoffer(now_, sc_.db.steady_first);
    if (j + 1 < slices_)
        queue_.push(start + (j + 1) * sc_.window_ns / slices_, EventKind::kMeter, j + 1);
}

void Sim::progress(bool final)
{
    const auto wall = std::chrono::steady_clock::now();
    if (!final && wall - last_progress_ < std::chrono::milliseconds(500))
        return;
    last_progress_ = wall;
    const double el = std::chrono::duration<double>(wall - wall0_).count();
    std::fprintf(stderr, "\rburstgate-sim: %5.1f%%  %.0f/%.0f ms simulated  %.2f M events/s%s",
                 100.0 * static_cast<double>(now_) / static_cast<double>(sc_.duration_ns), static_cast<double>(now_) / 1e6,
                 static_cast<double>(sc_.duration_ns) / 1e6, el > 0 ? static_cast<double>(events_) / el / 1e6 : 0.0,
                 final ? "\n" : "");
}

bool Sim::lsm_step()
{
    const std::uint64_t t = lsm_->next_time();
    if (t > sc_.duration_ns || t > queue_.next_time())
        return false;
    now_ = t;
    events_++;
    const std::uint32_t ti = lsm_->tenant_index();
    for (const LsmTenant::Io &x : lsm_->run_at(t)) {
        const std::uint32_t id = ios_.alloc(now_, ti);
        lsm_->fill(ios_[id], x);
        tally_.generated(ti);
        offer_one(id);
    }
    return true;
}

SimResult Sim::run()
{
    wall0_ = last_progress_ = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    if (opt_.csv)
        WindowSeries::write_header(*opt_.csv);
    for (std::uint32_t i = 0; i < src_.size(); i++)
        if (src_.tenant(i).cfg->wl.start_ns < sc_.duration_ns)
            queue_.push(src_.tenant(i).cfg->wl.start_ns, EventKind::kStart, i);
    queue_.push(sc_.window_ns, EventKind::kWindow, 0);
    if (sched_ == Scheduler::kDualBucket)
        slices_ = sc_.db.main_slices;
    if (slices_ > 1)
        queue_.push(sc_.window_ns / slices_, EventKind::kMeter, 1);
    while (!queue_.empty() && queue_.next_time() <= sc_.duration_ns) {
        if (lsm_ && lsm_step())
            continue;
        const Event e = queue_.pop();
        now_ = e.t;
        events_++;
        const std::uint32_t id = e.id();
        switch (e.kind()) {
        case EventKind::kStart: on_start(id); break;  // id is the tenant for kStart and kArrival
        case EventKind::kArrival: on_arrival(id); break;
        case EventKind::kCpuDone: path_.cpu_done(now_, id); break;
        case EventKind::kSwlDone: path_.swl_done(now_, id); break;
        case EventKind::kBackendDone: path_.backend_done(now_, id); break;
        case EventKind::kComplete: on_complete(id); break;
        case EventKind::kSaLoop: path_.sa_loop(now_, id); break;  // id is the SA thread
        case EventKind::kWindow:
            on_window();
            if (now_ + sc_.window_ns <= sc_.duration_ns)
                queue_.push(now_ + sc_.window_ns, EventKind::kWindow, 0);
            if (slices_ > 1)
                queue_.push(now_ + sc_.window_ns / slices_, EventKind::kMeter, 1);
            break;
        case EventKind::kMeter: on_meter(id); break;
        }
        if (opt_.progress && (events_ & 0xFFFF) == 0)
            progress(false);
    }
    now_ = sc_.duration_ns;
    if (opt_.progress)
        progress(true);
    SimResult &res = tally_.result();
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    res.cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    res.events = events_;
    res.deferred_pending = path_.deferred();
    path_.account(res, tally_.period_s());
    if (sc_.dpu.sa_loop != SaLoop::kNone)
        res.sa_loop = std::array<std::uint64_t, 2>{path_.stages().loops(), path_.stages().unrelated_run()};
    tally_.finish();
    fw_.read_final(res);
    if (lsm_)
        res.lsm = lsm_->finish();
    return std::move(res);
}

}  // namespace

SimResult simulate(const Scenario &sc, const SimOptions &opt)
{
    Sim sim(sc, opt);
    SimResult r = sim.run();
    if (sc.lsm && sc.lsm->tenant.empty())  // lsm: on its own cloud volume
        r.lsm = run_lsm_on_cloud_volume(sc, opt.seed.value_or(sc.seed));
    return r;
}

}  // namespace bg::sim
