// The event engine of burstgate-sim; see simulator.hpp for the life of one I/O.
#include "burstgate/sim/simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <ostream>

#include "burstgate/cost_table.h"
#include "burstgate/host/device.hpp"
#include "burstgate/sim/lsm_section.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/regs.h"
#include "burstgate/sim/rng.hpp"
#include "burstgate/sim/sa_stages.hpp"
#include "burstgate/window.h"
#include "cost_cli.hpp"

namespace bg::sim {

namespace {

enum Kind : std::uint32_t { kStart, kArrival, kCpuDone, kSwlDone, kBackendDone, kComplete, kWindow };

// 16 bytes: time, then kind and I/O id packed so that the heap compares two words. Equal
// times are ordered by (kind, id), a total order fixed by the inputs: the run is deterministic.
struct Event {
    std::uint64_t t;
    std::uint64_t key;  // kind << 32 | id
    std::uint32_t kind() const { return static_cast<std::uint32_t>(key >> 32); }
    std::uint32_t id() const { return static_cast<std::uint32_t>(key); }
};
struct Later {
    bool operator()(const Event &a, const Event &b) const { return a.t != b.t ? a.t > b.t : a.key > b.key; }
};

struct Io {
    std::uint64_t arrival = 0, admit = 0, backend = 0;
    std::uint32_t size = 0, true_cpu = 0, charge = 0;
    std::uint16_t tenant = 0, segment = 0;
    std::uint16_t vq = 0;  // the tenant's vCPU queue (queue_base + k): the SA's round-robin turn
    std::uint8_t queue = 0, egress = 0;
    bool write = false, deferred = false, hot = false;
    bool deferred_hot = false;  // the segment monitor's verdict at the last deferral
    std::uint32_t lsm = 0;  // lsm: the store's I/O cookie + 1 (0: the workload's)
};

// I/Os alive at once (waiting, deferred or in flight) a run may hold: 4 Mi records of 48 bytes
// plus their queue entries stay under about 0.5 GB.
constexpr std::size_t kMaxLiveIos = std::size_t{1} << 22;

struct TenantRt {
    const Tenant *cfg = nullptr;
    Rng rng{0};
    std::uint32_t queue_base = 0, seg_base = 0;
    std::vector<double> size_cdf;
    // mode: trace. `next` is the record that arrives next, at `next_at`.
    std::unique_ptr<bg::trace::TraceReader> reader;
    bg::trace::Record next;
    std::uint64_t next_at = 0, pass_base = 0, last_time = 0, pass_records = 0;
    bool base_warned = false;
    // Per-window CSV figures.
    std::uint64_t w_done = 0, w_bytes = 0, w_lat_sum = 0, w_lat_max = 0, w_defer = 0;
};

class Sim final : public SaStages::Sink {
public:
    Sim(const Scenario &sc, const SimOptions &opt);
    SimResult run();

private:
    void push(std::uint64_t t, Kind k, std::uint32_t id)
    {
        heap_.push_back({t, std::uint64_t{k} << 32 | id});
        std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
    void program_device();
    void init_firmware();
    std::uint32_t alloc_io(std::uint32_t tenant);
    std::uint32_t new_io(std::uint32_t tenant);
    void offer(std::span<const std::uint32_t> ids);
    void stage_event(std::uint64_t t, SaEvent e, std::uint32_t id) override
    {
        push(t, e == SaEvent::kCpuDone ? kCpuDone : kSwlDone, id);
    }
    void on_swl_done(std::uint32_t id);
    void on_backend_done(std::uint32_t id);
    void on_complete(std::uint32_t id);
    void on_window();
    bool lsm_step();  // lsm: the store's events due before the next of ours (lsm_section.hpp)
    void progress(bool final);
    bool measured(std::uint64_t t) const { return t >= sc_.warmup_ns; }
    bool trace_next(std::uint32_t ti);
    void check_trace_record(std::uint32_t ti, const bg::trace::Record &r);

    Scenario sc_;
    SimOptions opt_;
    Scheduler sched_;
    std::uint64_t seed_;
    std::unique_ptr<Device> dev_;
    bg_hal hal_{};
    std::uint64_t now_ = 0, events_ = 0;
    std::vector<Event> heap_;
    std::unique_ptr<LsmTenant> lsm_;
    std::vector<LsmTenant::Io> lsm_out_;
    std::vector<Io> ios_;
    std::vector<std::uint32_t> free_;
    std::vector<std::uint32_t> deferred_, reoffer_;
    std::vector<TenantRt> trt_;
    SimResult res_;
    Rng backend_rng_{0};
    double backend_mu_ = 0, backend_sigma_ = 0;
    std::unique_ptr<SaStages> sa_;  // SA threads, software limiter, links (sa_stages.hpp)
    Firmware fw_;
    std::vector<IoDesc> descs_;
    std::vector<IoDecision> decs_;
    std::chrono::steady_clock::time_point wall0_, last_progress_;
};

Sim::Sim(const Scenario &sc, const SimOptions &opt) : sc_(sc), opt_(opt)
{
    sched_ = opt.scheduler.value_or(sc.scheduler);
    seed_ = opt.seed.value_or(sc.seed);
    const std::size_t n = sc_.tenants.size();
    dev_ = open_scenario_device(sc_, opt_.engine);
    hal_ = dev_->hal();

    res_.scenario = sc_.name;
    res_.file = sc_.file;
    res_.engine = dev_->engine();
    res_.scheduler = scheduler_name(sched_);
    res_.seed = seed_;
    res_.duration_ns = sc_.duration_ns;
    res_.warmup_ns = sc_.warmup_ns;
    res_.window_ns = sc_.window_ns;

    trt_.resize(n);
    std::uint32_t qb = 0, sb = 0;
    for (std::size_t i = 0; i < n; i++) {
        TenantRt &t = trt_[i];
        t.cfg = &sc_.tenants[i];
        t.rng = Rng(seed_, i + 1);
        t.queue_base = qb;
        t.seg_base = sb;
        qb += t.cfg->queues;
        sb += t.cfg->wl.segments;
        double c = 0;
        for (const auto &[size, share] : t.cfg->wl.sizes)
            t.size_cdf.push_back(c += share);
        if (!t.size_cdf.empty())  // mode: trace has no size distribution
            t.size_cdf.back() = 1.0;
        res_.tenants.emplace_back();
        res_.tenants.back().name = t.cfg->name;
        if (t.cfg->wl.hot_segments > 0) {
            res_.tenants.back().lat_hot = std::make_unique<LatencyHist>();
            res_.tenants.back().lat_steady = std::make_unique<LatencyHist>();
        }
    }
    backend_rng_ = Rng(seed_, 0);
    // Lognormal from (median, p99): mu = ln(median), sigma = ln(p99 / median) / z(0.99).
    if (sc_.dpu.backend_median_us > 0) {
        backend_mu_ = std::log(sc_.dpu.backend_median_us * 1000.0);
        backend_sigma_ = std::log(sc_.dpu.backend_p99_us / sc_.dpu.backend_median_us) / 2.3263478740408408;
    }
    sa_ = std::make_unique<SaStages>(sc_.dpu, qb, *this);
    res_.thread_completed.assign(sc_.dpu.threads, 0);
    program_device();
    init_firmware();
    if (sc_.lsm && !sc_.lsm->tenant.empty())
        lsm_ = std::make_unique<LsmTenant>(sc_, seed_, sc_.duration_ns, sc_.warmup_ns);
}

void Sim::program_device()
{
    bg::sim::program_device(sc_, sched_, seed_, hal_, dev_->params().ingress);
}

void Sim::init_firmware()
{
    bg::sim::init_firmware(sc_, sched_, hal_, fw_, res_.warnings);
}

// check_admissible for one trace record, found only when it is read: the same error (an I/O
// no per-window burst grant covers would wait forever) and warning, at the trace's FILE:LINE.
void Sim::check_trace_record(std::uint32_t ti, const bg::trace::Record &r)
{
    if (sched_ == Scheduler::kDualBucket && !sc_.db.tenant_contracts)
        return;
    TenantRt &t = trt_[ti];
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
            res_.warnings.push_back(where + std::to_string(c.d[d]) + " " + kDimNames[d] + " units, more than tenant '" +
                                    t.cfg->name + "' gets per window at its base provisioning (" + std::to_string(base) +
                                    "): such I/Os are deferred until a burst share covers them");
            t.base_warned = true;
        }
    }
}

// Reads the tenant's next read or write record into t.next and its arrival time into
// t.next_at; false when the trace (and every loop over it) ends before the workload stops.
bool Sim::trace_next(std::uint32_t ti)
{
    TenantRt &t = trt_[ti];
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

// A fresh I/O record of tenant ti arriving now (reusing a completed one's slot).
std::uint32_t Sim::alloc_io(std::uint32_t ti)
{
    std::uint32_t id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        // Memory is bounded for any scenario that loads: an open loop or a trace offered far
        // above what the SA serves would otherwise grow its backlog until the machine runs out
        // (rate_iops: 1e9 reached 3.5 GB in 21 s). The limit is documented in docs/simulator.md.
        if (ios_.size() >= kMaxLiveIos)
            throw ScenarioError(sc_.file + ":" + std::to_string(trt_[ti].cfg->line) + ": tenants[" + std::to_string(ti) +
                                "] (" + trt_[ti].cfg->name + "): more than " + std::to_string(kMaxLiveIos) +
                                " I/Os waiting or in flight at once at " + std::to_string(now_ / 1'000'000) +
                                " ms: the offered load is far above what the SA serves; lower rate_iops (or the "
                                "trace's time_scale) or shorten the run");
        id = static_cast<std::uint32_t>(ios_.size());
        ios_.emplace_back();
    }
    Io &io = ios_[id];
    io = Io{};
    io.arrival = now_;
    io.tenant = static_cast<std::uint16_t>(ti);
    return id;
}

std::uint32_t Sim::new_io(std::uint32_t ti)
{
    TenantRt &t = trt_[ti];
    const Workload &w = t.cfg->wl;
    const std::uint32_t id = alloc_io(ti);
    Io &io = ios_[id];
    if (w.trace) {
        io.size = t.next.length;
        io.write = t.next.op == bg::trace::Op::kWrite;
        io.vq = static_cast<std::uint16_t>(t.queue_base + t.rng.below(t.cfg->queues));
        io.queue = static_cast<std::uint8_t>(io.vq % dev_->params().ingress);
        io.segment = static_cast<std::uint16_t>(t.seg_base + (t.next.offset / w.tr.segment_bytes) % w.segments);
        io.true_cpu = true_cpu_ns(sc_.dpu, *t.cfg, io.size, io.write);
        res_.tenants[ti].generated++;
        res_.generated++;
        return id;
    }
    const double u = t.rng.uniform();
    std::size_t k = 0;
    while (k + 1 < t.size_cdf.size() && u >= t.size_cdf[k])
        k++;
    io.size = w.sizes[k].first;
    io.write = t.rng.uniform() >= w.read_share;
    io.vq = static_cast<std::uint16_t>(t.queue_base + t.rng.below(t.cfg->queues));
    io.queue = static_cast<std::uint8_t>(io.vq % dev_->params().ingress);
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
    res_.tenants[ti].generated++;
    res_.generated++;
    return id;
}

void Sim::offer(std::span<const std::uint32_t> ids)
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
        descs_.push_back(d);
    }
    dev_->submit(descs_, decs_);
    for (std::size_t k = 0; k < ids.size(); k++) {
        const std::uint32_t id = ids[k];
        Io &io = ios_[id];
        const IoDecision &dec = decs_[k];
        TenantResult &tr = res_.tenants[io.tenant];
        if (dec.hot && !io.hot && tr.lat_hot && measured(now_)) {
            tr.steady_as_hot++;
            if (!io.deferred)
                tr.steady_new_as_hot++;
        }
        if (!dec.admitted()) {
            if (measured(now_)) {
                tr.throttled++;
                if (!io.deferred)
                    tr.deferred_ios++;
            }
            io.deferred = true;
            io.deferred_hot = dec.hot;
            trt_[io.tenant].w_defer++;
            deferred_.push_back(id);
            continue;
        }
        if (measured(now_)) {
            tr.admitted_by[dec.source & 3]++;
            tr.buffer_borrows += dec.prefill;
        }
        io.admit = now_;
        io.egress = dec.egress;
        io.charge = dec.cost.d[BG_DIM_CPU];
        SaItem it;
        it.true_cpu = io.true_cpu;
        it.size = io.size;
        it.vq = io.vq;
        it.egress = io.egress;
        it.write = io.write;
        sa_->admit(now_, id, it, measured(now_));
    }
}

void Sim::on_swl_done(std::uint32_t id)
{
    const std::uint64_t sent = sa_->swl_done(now_, id, measured(now_));
    Io &io = ios_[id];
    double backend = 0;
    if (backend_mu_ != 0)
        backend = std::exp(backend_mu_ + backend_sigma_ * backend_rng_.normal());
    io.backend = static_cast<std::uint64_t>(std::llround(backend));
    push(sent + io.backend, kBackendDone, id);
}

void Sim::on_backend_done(std::uint32_t id)
{
    push(sa_->ingress(now_, id), kComplete, id);
}

void Sim::on_complete(std::uint32_t id)
{
    const Io io = ios_[id];
    free_.push_back(id);
    if (io.lsm)
        lsm_->complete(io.lsm - 1, now_);
    IoCompletion c;
    c.tag = static_cast<std::uint16_t>(id);
    c.tenant = io.tenant;
    c.queue = io.queue;
    c.egress = io.egress;
    c.charge_ns = io.charge;
    const std::uint64_t sa = now_ - io.admit - io.backend;
    c.sa_delay_ns = sa > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(sa);
    dev_->complete(std::span<const IoCompletion>(&c, 1));
    const std::uint64_t lat = now_ - io.arrival;
    sa_->complete(id, measured(now_));
    TenantResult &tr = res_.tenants[io.tenant];
    TenantRt &t = trt_[io.tenant];
    tr.finished++;
    res_.finished++;
    if (measured(now_)) {
        tr.completed++;
        tr.bytes += io.size;
        res_.thread_completed[io.egress]++;
        if (measured(io.arrival)) {
            tr.lat.record(lat);
            if (tr.lat_hot)
                (io.hot ? tr.lat_hot : tr.lat_steady)->record(lat);
        }
    }
    t.w_done++;
    t.w_bytes += io.size;
    t.w_lat_sum += lat;
    t.w_lat_max = std::max(t.w_lat_max, lat);
    if (t.cfg->wl.closed && now_ < t.cfg->wl.stop_ns) {
        const std::uint32_t next = new_io(io.tenant);
        offer(std::span<const std::uint32_t>(&next, 1));
    }
}

void Sim::on_window()
{
    bg_fw_window(&fw_.fw, &hal_);
    res_.windows++;
    if (opt_.csv) {
        char line[512];
        const double w_s = static_cast<double>(sc_.window_ns) / 1e9;
        // The SA delay the firmware read at this tick (the datapath's all-tenant histogram of
        // the window just ended), at P95 as the dual-bucket estimate reads it (BG_LH_INTERP, as
        // provision.cpp configures it): what fitting Still Water's alpha to Eq. (1) needs
        // (burstgate fit-alpha). Only when the firmware reads it (dualbucket, cost
        // adjustment); blank otherwise and for a window without completions.
        char sa[48] = ",";
        const bool hist_read = sched_ == Scheduler::kDualBucket || sc_.dpu.cost_adjust;
        if (hist_read) {
            const std::uint64_t n = bg_lh_total(&fw_.fw.hist);
            if (n)
                std::snprintf(sa, sizeof sa, "%.3f,%llu",
                              static_cast<double>(bg_lh_percentile(&fw_.fw.hist, 950000u, BG_LH_INTERP)) / 1e3,
                              static_cast<unsigned long long>(n));
            else
                std::snprintf(sa, sizeof sa, ",0");
        }
        for (std::size_t i = 0; i < trt_.size(); i++) {
            TenantRt &t = trt_[i];
            std::uint32_t g[4];
            for (unsigned d = 0; d < 4; d++)
                g[d] = bg_hal_read(&hal_, BG_TENANT_GRANT(static_cast<std::uint32_t>(i) * BG_COST_DIMS + d));
            std::snprintf(line, sizeof line, "%llu,%.3f,%s,%.0f,%.3f,%u,%u,%u,%u,%llu,%.3f,%.3f,%s\n",
                          static_cast<unsigned long long>(res_.windows), static_cast<double>(now_) / 1e6,
                          t.cfg->name.c_str(), static_cast<double>(t.w_done) / w_s,
                          static_cast<double>(t.w_bytes) / w_s / 1e6, g[0], g[1], g[2], g[3],
                          static_cast<unsigned long long>(t.w_defer),
                          t.w_done ? static_cast<double>(t.w_lat_sum) / static_cast<double>(t.w_done) / 1e3 : 0.0,
                          static_cast<double>(t.w_lat_max) / 1e3, sa);
            *opt_.csv << line;
            t.w_done = t.w_bytes = t.w_lat_sum = t.w_lat_max = t.w_defer = 0;
        }
    }
    // Deferred I/Os go again, in deferral order, now that the new grants are in force. With
    // dualbucket.reoffer: steady_first the host keeps the I/Os the monitor saw as steady ahead
    // of the hot ones, so they reach the refilled main bucket before the hot backlog does.
    reoffer_.swap(deferred_);
    deferred_.clear();
    if (sched_ == Scheduler::kDualBucket && sc_.db.steady_first)
        std::stable_partition(reoffer_.begin(), reoffer_.end(), [this](std::uint32_t id) { return !ios_[id].deferred_hot; });
    if (!reoffer_.empty())
        offer(reoffer_);
    reoffer_.clear();
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

// The store's I/O enters at its tenant's queues like a trace record: size, direction and
// segment (offset / lsm.segment_size mod lsm.segments) from the store, the rest as new_io.
bool Sim::lsm_step()
{
    const std::uint64_t t = lsm_->next_time();
    if (t > sc_.duration_ns || t > heap_.front().t)
        return false;
    now_ = t;
    events_++;
    lsm_out_.clear();
    lsm_->run_at(t, lsm_out_);
    const std::uint32_t ti = sc_.lsm->tenant_index;
    const TenantRt &tr = trt_[ti];
    for (const LsmTenant::Io &x : lsm_out_) {
        const std::uint32_t id = alloc_io(ti);
        Io &io = ios_[id];
        io.size = x.bytes;
        io.write = x.write;
        io.vq = static_cast<std::uint16_t>(tr.queue_base + x.cookie % tr.cfg->queues);
        io.queue = static_cast<std::uint8_t>(io.vq % dev_->params().ingress);
        io.segment = static_cast<std::uint16_t>(tr.seg_base + (x.offset / sc_.lsm->segment_bytes) % sc_.lsm->segments);
        io.true_cpu = true_cpu_ns(sc_.dpu, *tr.cfg, io.size, io.write);
        io.lsm = x.cookie + 1;
        res_.tenants[ti].generated++;
        res_.generated++;
        offer(std::span<const std::uint32_t>(&id, 1));
    }
    return true;
}

SimResult Sim::run()
{
    wall0_ = last_progress_ = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    if (opt_.csv)
        *opt_.csv << "window,t_ms,tenant,iops,mbps,alloc_cpu_ns,alloc_ingress_B,alloc_egress_B,alloc_swlimit_B,"
                     "deferrals,lat_avg_us,lat_max_us,sa_p95_us,sa_n\n";
    for (std::uint32_t i = 0; i < trt_.size(); i++)
        if (trt_[i].cfg->wl.start_ns < sc_.duration_ns)
            push(trt_[i].cfg->wl.start_ns, kStart, i);
    push(sc_.window_ns, kWindow, 0);
    while (!heap_.empty() && heap_.front().t <= sc_.duration_ns) {
        if (lsm_ && lsm_step())
            continue;
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        const Event e = heap_.back();
        heap_.pop_back();
        now_ = e.t;
        events_++;
        const std::uint32_t id = e.id();
        switch (e.kind()) {
        case kStart: {
            const Workload &w = trt_[id].cfg->wl;
            if (w.trace) {
                try {
                    trt_[id].reader = std::make_unique<bg::trace::TraceReader>(w.tr.file, w.tr.format);
                } catch (const bg::trace::TraceError &err) {
                    throw ScenarioError(err.what());
                }
                if (trace_next(id))
                    push(trt_[id].next_at, kArrival, id);
                else
                    res_.warnings.push_back(sc_.file + ":" + std::to_string(w.tr.line) + ": tenants[" + std::to_string(id) +
                                            "].workload.trace: no read or write" +
                                            (w.tr.device.empty() ? "" : " of device '" + w.tr.device + "'") + " in '" +
                                            w.tr.file + "' arrives before stop_ms");
            } else if (w.closed) {
                std::vector<std::uint32_t> ids;
                for (std::uint32_t k = 0; k < w.iodepth && now_ < w.stop_ns; k++)
                    ids.push_back(new_io(id));
                offer(ids);
            } else if (w.rate_iops > 0) {
                const auto first = now_ + static_cast<std::uint64_t>(trt_[id].rng.exponential(1e9 / w.rate_iops));
                if (first < w.stop_ns)
                    push(first, kArrival, id);
            }
            break;
        }
        case kArrival: {
            const std::uint32_t io = new_io(id);  // id is the tenant for kStart and kArrival
            offer(std::span<const std::uint32_t>(&io, 1));
            const Workload &w = trt_[id].cfg->wl;
            if (w.trace) {
                if (trace_next(id))
                    push(trt_[id].next_at, kArrival, id);
                break;
            }
            const auto next = now_ + static_cast<std::uint64_t>(trt_[id].rng.exponential(1e9 / w.rate_iops));
            if (next < w.stop_ns)
                push(next, kArrival, id);
            break;
        }
        case kCpuDone: sa_->cpu_done(now_, id, measured(now_)); break;
        case kSwlDone: on_swl_done(id); break;
        case kBackendDone: on_backend_done(id); break;
        case kComplete: on_complete(id); break;
        case kWindow:
            on_window();
            if (now_ + sc_.window_ns <= sc_.duration_ns)
                push(now_ + sc_.window_ns, kWindow, 0);
            break;
        }
        if (opt_.progress && (events_ & 0xFFFF) == 0)
            progress(false);
    }
    now_ = sc_.duration_ns;
    if (opt_.progress)
        progress(true);
    res_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    res_.cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    res_.events = events_;
    res_.deferred_pending = deferred_.size();
    const double period = static_cast<double>(sc_.duration_ns - sc_.warmup_ns) / 1e9;
    sa_->account(res_, period);
    for (TenantResult &t : res_.tenants) {
        t.iops = static_cast<double>(t.completed) / period;
        t.mbps = static_cast<double>(t.bytes) / period / 1e6;
    }
    res_.bad_completions = bg_hal_read(&hal_, BG_CTRL_BAD_COMPLETIONS);
    if (lsm_)
        res_.lsm = lsm_->finish();
    for (unsigned d = 0; d < 4; d++)
        res_.final_factor[d] = bg_hal_read(&hal_, BG_COST_FACTOR(d));
    return std::move(res_);
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
