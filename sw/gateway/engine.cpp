// The gateway's storage agent; see engine.hpp.
#include "engine.hpp"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "burstgate/bios.h"
#include "burstgate/regs.h"
#include "burstgate/window.h"
#include "base_priority.hpp"
#include "nbd_proto.hpp"
#include "thread_name.hpp"

namespace bg::gw {

namespace {

constexpr std::uint32_t kTags = 1u << BG_REC_DESC_TAG_WIDTH;
// NBD's customary limit is 32 MiB, but the cost estimator takes sizes below 2^24 bytes: the
// largest power of two it accepts.
constexpr std::uint32_t kMaxBlockCap = 8u << 20;

// While I/Os wait for their release the pacer wakes at most once per tick (each wake-up is a
// context switch on a host the clients share) and runs every
// stage event due in one batch: an answer is late by at most this much, and a busy gateway
// does not pay one wake-up per I/O. The stages themselves run in exact virtual time.
constexpr std::uint64_t kPaceTickNs = 50000;
constexpr std::uint64_t kNever = ~std::uint64_t{0};
// An I/O whose work is done and whose stages' next event is this close waits for it on its own
// thread (yielding) rather than handing the answer to the pacer: a wake-up costs more.
constexpr std::uint64_t kSpinNs = 5000;
constexpr int kEnginePriority = 10;  // --realtime's SCHED_FIFO priority (the readers' --base-priority is below)
enum : std::uint32_t { kEvCpu, kEvSwl, kEvRelease };

// BLOCK_STATUS answers at most this many extents per request (8 KiB of reply).
constexpr std::size_t kMaxExtents = 1024;

// Commands that change the disk count as writes in the descriptor (and in the cost table).
bool is_write(std::uint16_t type)
{
    return type == nbd::kCmdWrite || type == nbd::kCmdFlush || type == nbd::kCmdTrim || type == nbd::kCmdWriteZeroes;
}

// The bytes a command's descriptor carries, i.e. what it costs the SA beyond its base CPU time.
// READ/WRITE: their payload (the server splits them to at most `max_block`). WRITE_ZEROES: a
// write of its range up to one schedulable block -- zeroing is not free on a real disk, but a
// file system does it without moving the data; CACHE: a read of the same. FLUSH, TRIM and
// BLOCK_STATUS move no data: a zero-byte write / read (base CPU and a header).
std::uint32_t desc_bytes(std::uint16_t type, std::uint32_t length, std::uint32_t max_block)
{
    switch (type) {
    case nbd::kCmdRead:
    case nbd::kCmdWrite: return length;
    case nbd::kCmdWriteZeroes:
    case nbd::kCmdCache: return std::min(length, max_block);
    default: return 0;
    }
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

Engine::Engine(const bg::sim::Scenario &sc, const EngineOptions &opt, std::vector<std::unique_ptr<Store>> stores)
    : sc_(sc), opt_(opt), stores_(std::move(stores))
{
    const std::size_t n = sc_.tenants.size();
    // The SA threads' event loop with I/O-unrelated tasks is a model of the simulator only.
    if (sc_.dpu.sa_loop != bg::sim::SaLoop::kNone)
        throw bg::sim::ScenarioError(sc_.file + ":" + std::to_string(sc_.dpu.sa_loop_line) +
                                     ": dpu.sa_loop: simulator only (the gateway's SA threads serve I/Os only)");
    dev_ = bg::sim::open_scenario_device(sc_, opt_.engine);
    hal_ = dev_->hal();
    bg::sim::program_device(sc_, opt_.scheduler, opt_.seed, hal_, dev_->params().ingress);
    bg::sim::init_firmware(sc_, opt_.scheduler, hal_, fw_, warnings_);

    // The largest request one window's burst grant covers: a larger one would wait forever.
    std::uint32_t qb = 0, sb = 0;
    for (std::size_t i = 0; i < n; i++) {
        const bg::sim::Tenant &t = sc_.tenants[i];
        // Nor can one cost more than the window's whole capacity less the reserved pool the
        // firmware set aside (WildCBS's global budget, BIOS's schedulable total; the firmware's
        // reserve is 0 for every scheduler but BIOS). With the grant carry on (dpu.grant_carry,
        // docs/contracts.md) the firmware writes a grant of up to carry_max more than the
        // scheduler's (WildCBS's global budget up to global_carry_max more), so a request up to
        // that much larger is admitted once its tenant has left the carry unspent.
        const bool carry = sc_.dpu.grant_carry && !fw_.carry_max.empty();
        const bool wild = opt_.scheduler == bg::sim::Scheduler::kWild;
        bg_vec limit = fw_.t[i].res_burst;
        if (opt_.scheduler == bg::sim::Scheduler::kDualBucket)
            limit = fw_.fw.cfg.db.main_size;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            const double own = carry ? fw_.carry_max[i].d[d] : 0.0;
            const double global = !carry ? 0.0 : wild ? fw_.fw.cfg.global_carry_max.d[d] : own;
            limit.d[d] = std::min(bg::sim::sat32(double(limit.d[d]) + own),
                                  bg::sim::sat32(double(fw_.fw.cfg.bios.total.d[d] - fw_.fw.bios.reserve.d[d]) + global));
        }
        auto fits = [&](std::uint32_t len) {
            for (int w = 0; w < 2; w++) {
                const bg_vec c = bg::sim::io_cost(sc_.dpu, t, len, w != 0);
                for (unsigned d = 0; d < BG_COST_DIMS; d++)
                    if (c.d[d] > limit.d[d])
                        return false;
            }
            return true;
        };
        std::uint32_t mb = 0;
        for (std::uint32_t len = 512; len <= kMaxBlockCap && fits(len); len *= 2)
            mb = len;
        if (mb < 4096)
            throw bg::sim::ScenarioError(sc_.file + ":" + std::to_string(t.line) + ": tenants[" + std::to_string(i) +
                                         "].burst: one window's burst grant does not cover a 4 KiB I/O; raise burst or window_us");
        max_block_.push_back(mb);
        queue_base_.push_back(qb);
        seg_base_.push_back(sb);
        seg_bytes_.push_back(std::max<std::uint64_t>(1, (stores_[i]->size() + t.wl.segments - 1) / t.wl.segments));
        qb += t.queues;
        sb += t.wl.segments;
    }
    slots_.resize(kTags);
    for (std::uint32_t k = kTags; k-- > 0;)
        free_tags_.push_back(static_cast<std::uint16_t>(k));
    tenant_tags_.assign(n, 0);
    tag_waiters_.resize(n);
    st_.resize(n);
    last_.resize(n);
    thread_completed_.assign(sc_.dpu.threads, 0);
    sink_.e = this;
    sa_ = std::make_unique<bg::sim::SaStages>(sc_.dpu, qb, sink_);
    in_sa_.resize(kTags, nullptr);
}

std::uint64_t Engine::ns(Clock::duration d)
{
    const auto v = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

void Engine::SaSink::stage_event(std::uint64_t t, bg::sim::SaEvent ev, std::uint32_t id)
{
    if (Request *r = e->in_sa_[id])  // null: answered by the stopping pacer (advance_locked)
        r->next_ns = t;
    e->heap_.push_back({t, std::uint64_t{ev == bg::sim::SaEvent::kCpuDone ? kEvCpu : kEvSwl} << 32 | id});
    std::push_heap(e->heap_.begin(), e->heap_.end(), std::greater<>{});
}

Engine::~Engine()
{
    if (window_th_.joinable())
        stop(std::chrono::milliseconds(0));
    if (pacer_tfd_ >= 0)
        ::close(pacer_tfd_);
}

std::uint16_t Engine::vcpu_queue(std::size_t t, std::uint32_t k) const
{
    return static_cast<std::uint16_t>(queue_base_[t] + k % sc_.tenants[t].queues);
}

std::uint8_t Engine::ingress_queue(std::size_t t, std::uint32_t k) const
{
    return static_cast<std::uint8_t>(vcpu_queue(t, k) % dev_->params().ingress);
}

void Engine::start()
{
    t0_ = second_t0_ = Clock::now();
    pacer_tfd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (pacer_tfd_ < 0)
        throw std::runtime_error(std::string("timerfd_create for the pacer: ") + std::strerror(errno));
    threads_.emplace_back([this] { pacer_loop(); });
    for (std::uint32_t w = 0; w < sc_.dpu.threads; w++)
        threads_.emplace_back([this] { backend_loop(); });
    window_th_ = std::thread([this] { window_loop(); });
}

void Engine::stop(std::chrono::milliseconds drain)
{
    const auto until = Clock::now() + drain;
    while (in_flight_.load() > 0 && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop_ = true;
    if (window_th_.joinable())
        window_th_.join();
    {
        std::lock_guard<std::mutex> g(sa_mu_);
        arm_pacer_locked(0);  // fires at once: the pacer sees stop_
    }
    backend_.stop();
    for (std::thread &t : threads_)
        t.join();
    threads_.clear();
    // Connection threads still waiting for a tag answer ESHUTDOWN (submit).
    std::lock_guard<std::mutex> g(dev_mu_);
    for (auto &q : tag_waiters_)
        for (std::condition_variable *w : q)
            w->notify_one();
}

void Engine::submit(std::unique_ptr<Request> r)
{
    const bg::sim::Tenant &t = sc_.tenants[r->tenant];
    const bool write = is_write(r->type);
    r->desc_size = desc_bytes(r->type, r->length, max_block_[r->tenant]);
    r->segment = static_cast<std::uint16_t>(seg_base_[r->tenant] + (r->offset / seg_bytes_[r->tenant]) % t.wl.segments);
    r->true_cpu = bg::sim::true_cpu_ns(sc_.dpu, t, r->desc_size, write);
    generated_++;
    in_flight_++;
    if (stop_.load()) {  // the workers are gone: answer now, counted, rather than strand it
        finish(r.release(), nbd::kEshutdown);
        return;
    }
    std::unique_lock<std::mutex> g(dev_mu_);
    const std::uint32_t tn = r->tenant;
    auto may_take = [&] { return !free_tags_.empty() && tenant_tags_[tn] < opt_.tenant_depth; };
    std::deque<std::condition_variable *> &queue = tag_waiters_[tn];
    if (!queue.empty() || !may_take()) {
        // In arrival order behind the tenant's earlier waiters: a connection whose own request
        // just finished must not take the slot ahead of the ones already waiting.
        {
            std::lock_guard<std::mutex> s(st_mu_);
            st_[tn].depth_waits++;
        }
        std::condition_variable me;
        queue.push_back(&me);
        me.wait(g, [&] { return stop_.load() || (queue.front() == &me && may_take()); });
        queue.erase(std::find(queue.begin(), queue.end(), &me));
        if (!queue.empty())  // the next in line, once this one has its tag (dev_mu_ is held)
            queue.front()->notify_one();
    }
    if (stop_.load() || !may_take()) {  // stopped while it waited (or right before it asked)
        g.unlock();
        finish(r.release(), nbd::kEshutdown);
        return;
    }
    r->tag = free_tags_.back();
    free_tags_.pop_back();
    tenant_tags_[tn]++;
    Request *raw = r.get();
    slots_[raw->tag] = std::move(r);
    {
        std::lock_guard<std::mutex> s(st_mu_);
        st_[raw->tenant].generated++;
    }
    if (opt_.arrivals)  // its first offer: the arrival burstgate-sim --arrivals replays
        opt_.arrivals->record(now_ns(), windows_, commit_ns_, raw->tenant, raw->type, raw->offset, raw->desc_size);
    std::vector<Request *> one{raw}, ready;
    const bool now_admitted = offer_locked(one, false, ready) > 0;
    g.unlock();
    for (Request *q : ready)
        finish(q, q->error);
    if (now_admitted) {
        // The connection's thread does the work: no hand-off (see engine.hpp).
        work(*raw);
        work_done(raw);
    }
}

std::size_t Engine::offer_locked(std::vector<Request *> &rs, bool from_window, std::vector<Request *> &ready)
{
    descs_.clear();
    decs_.clear();
    for (const Request *r : rs) {
        IoDesc d;
        d.tag = r->tag;
        d.tenant = r->tenant;
        d.queue = r->queue;
        d.product = static_cast<std::uint8_t>(sc_.tenants[r->tenant].product);
        d.write = is_write(r->type);
        d.size = r->desc_size;
        d.segment = r->segment;
        d.reoffer = r->deferred;  // a re-offer: the segment monitor counts each request once
        descs_.push_back(d);
    }
    dev_->submit(descs_, decs_);
    const auto now = Clock::now();
    std::vector<Request *> admitted;
    std::unique_lock<std::mutex> s(st_mu_);
    for (std::size_t k = 0; k < rs.size(); k++) {
        Request *r = rs[k];
        const IoDecision &dec = decs_[k];
        TenantStats &ts = st_[r->tenant];
        if (!dec.admitted()) {
            ts.throttled++;
            ts.s_defer++;
            if (!r->deferred)
                ts.deferred_ios++;
            r->deferred = true;
            deferred_.push_back(r);
            withheld_.deferred(r->tenant, r->desc_size, is_write(r->type));
            continue;
        }
        ts.admitted_by[dec.source & 3]++;
        withheld_.admitted(r->tenant, r->desc_size);
        ts.buffer_borrows += dec.prefill;
        r->admit = now;
        r->egress = dec.egress;
        r->charge = dec.cost.d[BG_DIM_CPU];
        admitted.push_back(r);
    }
    s.unlock();
    // Into the SA stages (dev_mu_ -> sa_mu_ is the one lock order), at the stages' now.
    if (opt_.pace && !admitted.empty()) {
        std::lock_guard<std::mutex> g(sa_mu_);
        // The stages run in time order: first every event due before these admissions.
        const std::uint64_t t = std::max(now_ns(), model_now_);
        advance_locked(t, ready, answered_passing_);
        for (Request *r : admitted) {
            r->admit_ns = t;
            r->released = r->work_done = false;
            r->next_ns = kNever;
            bg::sim::SaItem it;
            it.true_cpu = r->true_cpu;
            it.size = r->desc_size;
            it.vq = r->vq;
            it.egress = r->egress;
            it.write = is_write(r->type);
            in_sa_[r->tag] = r;
            sa_->admit(r->admit_ns, r->tag, it, true);
        }
    }
    std::size_t inline_count = 0;
    for (Request *r : admitted) {
        if (!from_window && reader_work(r->type, r->flags))
            inline_count++;
        else {
            r->queued = Clock::now();
            backend_.push(r, first_class(r->within, r->type, r->flags));
        }
    }
    return inline_count;
}

// Runs every stage event due by `now` in (time, kind, tag) order, each at its own time.
void Engine::advance_locked(std::uint64_t now, std::vector<Request *> &ready, std::uint64_t &answered)
{
    while (!heap_.empty() && heap_.front().t <= now) {
        std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
        const StageEv e = heap_.back();
        heap_.pop_back();
        model_now_ = std::max(model_now_, e.t);
        const std::uint32_t id = static_cast<std::uint32_t>(e.key);
        // Null only for a request the stopping pacer answered while still in the stages
        // (pacer_loop): its events still run, so the stages stay consistent for the rest.
        Request *r = in_sa_[id];
        if (r)
            r->next_ns = kNever;  // until a stage schedules its next event
        switch (static_cast<std::uint32_t>(e.key >> 32)) {
        case kEvCpu: sa_->cpu_done(e.t, id, true); break;
        case kEvSwl: {
            const std::uint64_t sent = sa_->swl_done(e.t, id, true);
            if (sent <= now) {
                if (r)
                    release_locked(r, sent, ready, answered);
            } else {
                if (r)
                    r->next_ns = sent;
                heap_.push_back({sent, std::uint64_t{kEvRelease} << 32 | id});
                std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
            }
            break;
        }
        default:
            if (r)
                release_locked(r, e.t, ready, answered);
            break;
        }
    }
}

void Engine::release_locked(Request *r, std::uint64_t t, std::vector<Request *> &ready, std::uint64_t &answered)
{
    r->released = true;
    r->release_ns = t;
    if (r->work_done) {  // else its worker takes it when done
        waiting_--;
        sa_->complete(r->tag, true);
        in_sa_[r->tag] = nullptr;
        ready.push_back(r);
        answered++;
    }
}

std::uint64_t Engine::pace_at_locked() const
{
    return waiting_ > 0 && !heap_.empty() ? std::max(heap_.front().t, pacer_last_ + kPaceTickNs) : kNever;
}

void Engine::arm_pacer_locked(std::uint64_t t)
{
    pacer_wake_ = t;
    itimerspec its{};
    if (t != kNever) {  // absolute, on CLOCK_MONOTONIC (steady_clock's); a time past fires at once
        const std::uint64_t at = std::max<std::uint64_t>(1, ns((t0_ + std::chrono::nanoseconds(t)).time_since_epoch()));
        its.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000u);  // all zero would disarm it
        its.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000u);
    }
    // Re-arming also clears an expiry not yet read (fs/timerfd.c): the pacer never reads a stale one.
    if (::timerfd_settime(pacer_tfd_, TFD_TIMER_ABSTIME, &its, nullptr) != 0) {
        std::perror("burstgate-gateway: timerfd_settime (the pacer's timer)");
        std::abort();  // the valid fd and times given cannot fail; a pacer without its timer would strand requests
    }
}

void Engine::work_done(Request *r)
{
    if (!opt_.pace) {
        finish(r, r->error);
        return;
    }
    std::vector<Request *> ready;
    std::unique_lock<std::mutex> g(sa_mu_);
    advance_locked(now_ns(), ready, answered_passing_);
    // r's own next stage event is close (it is being served, not queued): waiting here for it
    // costs less than the pacer's wake-up. (work_done stays false meanwhile, so nobody else
    // answers r under our feet.)
    while (!r->released && !pacer_stopped_ && r->next_ns <= now_ns() + kSpinNs) {
        g.unlock();
        sched_yield();
        g.lock();
        advance_locked(now_ns(), ready, answered_passing_);
    }
    r->work_done = true;
    if (r->released || pacer_stopped_) {
        sa_->complete(r->tag, true);
        in_sa_[r->tag] = nullptr;
        ready.push_back(r);
        answered_own_++;
    } else {
        waiting_++;  // the pacer answers it at its release
    }
    // The pacer sleeps more than a tick past the next event while I/Os wait: move its timer
    // earlier (one system call; the pacer is not woken to plan again).
    if (waiting_ > 0 && !heap_.empty() && pacer_wake_ != 0 && heap_.front().t + kPaceTickNs < pacer_wake_)
        arm_pacer_locked(pace_at_locked());
    g.unlock();
    for (Request *q : ready)
        finish(q, q->error);
}

void Engine::pacer_loop()
{
    thread_setup("bg-pacer");
    std::vector<Request *> ready;
    std::unique_lock<std::mutex> g(sa_mu_);
    while (!stop_.load()) {
        ready.clear();
        advance_locked(now_ns(), ready, answered_pacer_);
        if (!ready.empty()) {
            g.unlock();
            for (Request *q : ready)
                finish(q, q->error);
            g.lock();
            continue;
        }
        arm_pacer_locked(pace_at_locked());
        g.unlock();
        // Until the timer fires: at the time planned here, or earlier if a thread moved it
        // (work_done), or at once when stopping. Idle (disarmed), until a request waits.
        std::uint64_t fired = 0;
        while (::read(pacer_tfd_, &fired, sizeof fired) < 0 && errno == EINTR) {
        }
        g.lock();
        // The tick counts from the time the timer was set for, not from the wake-up: a late
        // wake-up (the host busy) must not push the next one later still.
        const std::uint64_t now = now_ns();
        pacer_last_ = pacer_wake_ != 0 && pacer_wake_ != kNever ? std::min(pacer_wake_, now) : now;
        pacer_wake_ = 0;
        pacer_wakeups_++;
    }
    // Stopping: whatever still waits is answered now, and from now on by its worker.
    pacer_stopped_ = true;
    for (Request *&r : in_sa_)
        if (r && r->work_done) {
            ready.push_back(r);
            r = nullptr;
        }
    answered_pacer_ += ready.size();
    g.unlock();
    for (Request *q : ready)
        finish(q, q->error);
}

void Engine::window_loop()
{
    thread_setup("bg-window");
    const auto period = std::chrono::nanoseconds(sc_.window_ns);
    auto next = Clock::now() + period;
    std::vector<Request *> again, ready;
    std::uint64_t late_run = 0;  // windows run late in a row
    while (!stop_.load()) {
        std::this_thread::sleep_until(next);
        {
            std::lock_guard<std::mutex> g(dev_mu_);
            withheld_.window_end(hal_, fw_);
            bg_fw_window(&fw_.fw, &hal_);
            windows_++;
            commit_ns_ = now_ns();
            // Deferred requests go again, in deferral order, under the new grants.
            again.swap(deferred_);
            deferred_.clear();
            if (!again.empty())
                offer_locked(again, true, ready);
            again.clear();
        }
        for (Request *q : ready)
            finish(q, q->error);
        ready.clear();
        next += period;
        const auto now = Clock::now();
        // A late wake-up (a loaded host, a long re-offer) runs the windows it missed back to
        // back: each window's grants are what the tenants bought for that stretch of wall time,
        // and skipping it took them away (a 4000-IOPS tenant alone got 3774 at load average 1.8
        // with 94 windows skipped in 4 s). A stall of kCatchUpWindows or more, or as many late
        // windows in a row (a host that cannot keep up: each window's work longer than the
        // window), is given up instead: the windows missed are skipped and counted, and the loop
        // sleeps a window, so it never runs windows without pause under the engine lock (at
        // SCHED_FIFO with --realtime, where it would also hold a core).
        if (now > next) {
            const auto behind = static_cast<std::uint64_t>((now - next) / period);
            if (behind >= kCatchUpWindows || ++late_run > kCatchUpWindows) {
                window_overruns_ += behind + 1;
                next = now + period;
                late_run = 0;
            } else {
                windows_late_++;
            }
        } else {
            late_run = 0;
        }
        if (now - second_t0_ >= std::chrono::seconds(1))
            roll_second();
    }
}

void Engine::roll_second()
{
    std::lock_guard<std::mutex> s(st_mu_);
    const auto now = Clock::now();
    last_second_s_ = secs(now - second_t0_);
    second_t0_ = now;
    for (std::size_t i = 0; i < st_.size(); i++) {
        last_[i].s_done = st_[i].s_done;
        last_[i].s_bytes = st_[i].s_bytes;
        last_[i].s_defer = st_[i].s_defer;
        last_[i].s_lat = st_[i].s_lat;
        st_[i].s_done = st_[i].s_bytes = st_[i].s_defer = 0;
        st_[i].s_lat = bg::sim::LatencyHist();
    }
}

namespace {
thread_local bool t_engine_fifo = false;
}

bool on_engine_fifo_thread() { return t_engine_fifo; }

// Sleeps end within a microsecond of their deadline instead of the default 50 us slack.
void Engine::thread_setup(const char *name)
{
    name_thread(name);
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    if (opt_.realtime) {
        if (set_thread_fifo(kEnginePriority))
            t_engine_fifo = true;
        else
            rt_failed_ = true;
    }
}

void Engine::backend_loop()
{
    // Its policy follows each request's (store_priority, work_queue.hpp).
    thread_setup("bg-store");
    int at = t_engine_fifo ? kEnginePriority : 0;  // what thread_setup got
    while (Request *r = backend_.pop()) {
        const int want = store_priority(opt_.realtime, base_priority_in_use(r->tenant), first_class(r->within, r->type, r->flags),
                                        opt_.base_priority, kEnginePriority);
        if (want != at) {
            if (set_thread_fifo(want)) {
                at = want;
                t_engine_fifo = want > 0;
            } else {
                rt_failed_ = true;
            }
        }
        work(*r);
        work_done(r);
    }
}

void Engine::work(Request &r)
{
    Store &s = *stores_[r.tenant];
    const auto b0 = Clock::now();
    int e = 0;
    switch (r.type) {
    case nbd::kCmdRead:
        r.data.resize(r.length);
        e = s.read(r.data.data(), r.length, r.offset);
        break;
    case nbd::kCmdWrite:
        e = s.write(r.data.data(), r.length, r.offset);
        if (!e && (r.flags & nbd::kCmdFlagFua))
            e = s.flush();
        break;
    case nbd::kCmdFlush: e = s.flush(); break;
    case nbd::kCmdTrim: e = s.trim(r.offset, r.length); break;
    case nbd::kCmdWriteZeroes:
        e = s.zero(r.offset, r.length, !(r.flags & nbd::kCmdFlagNoHole), r.flags & nbd::kCmdFlagFastZero);
        if (!e && (r.flags & nbd::kCmdFlagFua))
            e = s.flush();
        break;
    case nbd::kCmdCache: e = s.cache(r.offset, r.length); break;
    case nbd::kCmdBlockStatus: {
        Store::Extents ex;
        e = s.extents(r.offset, r.length, (r.flags & nbd::kCmdFlagReqOne) ? 1 : kMaxExtents, ex);
        r.data.clear();
        for (const auto &[len, flags] : ex) {
            nbd::put32(r.data, len);
            nbd::put32(r.data, flags);
        }
        break;
    }
    default: e = EINVAL; break;
    }
    r.backend_ns = ns(Clock::now() - (r.queued != Clock::time_point{} ? r.queued : b0));
    r.error = nbd::kOk;
    if (e)
        r.error = e == ENOSPC ? nbd::kEnospc : e == ENOMEM ? nbd::kEnomem : e == EOPNOTSUPP ? nbd::kEnotsup
                : e == EINVAL ? nbd::kEinval : nbd::kEio;
}

void Engine::finish(Request *r, std::uint32_t error)
{
    if (r->reply)
        r->reply(*r, error);  // a closed connection makes this a no-op
    const auto done = Clock::now();
    const std::uint64_t lat = ns(done - r->arrival);
    const bool admitted = r->admit != Clock::time_point{};
    IoCompletion c;
    if (admitted) {
        c.tag = r->tag;
        c.tenant = r->tenant;
        c.queue = r->queue;
        c.egress = r->egress;
        c.charge_ns = r->charge;
        // The real delay less the store's time. Paced, the store works while the modelled
        // stages hold the request, so it is at least the stages' own delay (release -
        // admission, virtual time: the figure the simulator reports for the same I/O); it is
        // more when the host is late -- the pacer, a worker or the reply waiting for a CPU,
        // which the model does not see and the delay-based adjustment must (window.h).
        const std::uint64_t real = ns(done - r->admit) - std::min(ns(done - r->admit), r->backend_ns);
        const std::uint64_t sa = opt_.pace ? std::max(r->release_ns - r->admit_ns, real) : real;
        c.sa_delay_ns = sa > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(sa);
    }
    {
        std::lock_guard<std::mutex> s(st_mu_);
        TenantStats &ts = st_[r->tenant];
        ts.completed++;
        ts.bytes += r->desc_size;
        if (admitted && r->egress < thread_completed_.size())
            thread_completed_[r->egress]++;
        ts.lat.record(lat);
        ts.s_done++;
        ts.s_bytes += r->desc_size;
        ts.s_lat.record(lat);
        if (admitted) {
            DelayClass &d = delay_[(r->within ? 0 : 2) + (r->deferred ? 1 : 0)];
            d.sa.record(c.sa_delay_ns);  // as the firmware gets it
            d.store.record(r->backend_ns);
        }
    }
    finished_++;
    std::unique_ptr<Request> own;
    {
        // One hold of dev_mu_ for the completion and the tag: the engine's busiest lock (every
        // submit, and each window's re-offers under it), taken twice per request before.
        std::lock_guard<std::mutex> g(dev_mu_);
        if (admitted)
            dev_->complete(std::span<const IoCompletion>(&c, 1));
        if (admitted || slots_[r->tag].get() == r) {
            own = std::move(slots_[r->tag]);
            const bool pool_was_empty = free_tags_.empty();
            free_tags_.push_back(r->tag);
            tenant_tags_[r->tenant]--;
            // The first waiter of this tenant may go; with the pool empty until now, the first
            // of every tenant may (one takes the tag, the others test and wait again).
            // Notified under dev_mu_: a waiter leaves its queue only with dev_mu_ held.
            if (pool_was_empty) {
                for (auto &q : tag_waiters_)
                    if (!q.empty())
                        q.front()->notify_one();
            } else if (!tag_waiters_[r->tenant].empty()) {
                tag_waiters_[r->tenant].front()->notify_one();
            }
        }
    }
    if (!own)
        delete r;  // never got a tag (the engine was stopping)
    in_flight_--;
}

namespace {

std::string num(double v, int decimals = 1)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}

}  // namespace

std::string Engine::live_json()
{
    std::vector<std::uint32_t> held;  // tags per tenant (dev_mu_ before st_mu_, the lock order)
    {
        std::lock_guard<std::mutex> g(dev_mu_);
        held = tenant_tags_;
    }
    std::lock_guard<std::mutex> s(st_mu_);
    const double el = secs(Clock::now() - t0_);
    std::string j = "{\"uptime_s\": " + num(el, 3) + ", \"engine\": \"" + dev_->engine() + "\", \"scheduler\": \"" +
                    bg::sim::scheduler_name(opt_.scheduler) + "\", \"windows\": " + std::to_string(windows_) +
                    ", \"window_overruns\": " + std::to_string(window_overruns_) + ", \"windows_late\": " +
                    std::to_string(windows_late_) + ", \"in_flight\": " +
                    std::to_string(in_flight_.load()) + ", \"tenants\": [";
    for (std::size_t i = 0; i < st_.size(); i++) {
        const TenantStats &t = st_[i], &l = last_[i];
        auto lat = [](const bg::sim::LatencyHist &h) {
            return "{\"avg\": " + num(h.mean() / 1e3) + ", \"p50\": " + num(h.quantile(0.5) / 1e3) + ", \"p99\": " +
                   num(h.quantile(0.99) / 1e3) + ", \"p999\": " + num(h.quantile(0.999) / 1e3) + "}";
        };
        j += std::string(i ? ", " : "") + "{\"name\": \"" + sc_.tenants[i].name + "\", \"last_second\": {\"iops\": " +
             num(static_cast<double>(l.s_done) / last_second_s_) + ", \"mbps\": " +
             num(static_cast<double>(l.s_bytes) / last_second_s_ / 1e6, 3) + ", \"deferrals\": " +
             std::to_string(l.s_defer) + ", \"lat_us\": " + lat(l.s_lat) + "}, \"in_engine\": " + std::to_string(held[i]) +
             ", \"total\": {\"completed\": " +
             std::to_string(t.completed) + ", \"bytes\": " + std::to_string(t.bytes) + ", \"throttled\": " +
             std::to_string(t.throttled) + ", \"deferred_ios\": " + std::to_string(t.deferred_ios) + ", \"depth_waits\": " +
             std::to_string(t.depth_waits) + ", \"lat_us\": " + lat(t.lat) + "}}";
    }
    return j + "]}\n";
}

std::string Engine::live_table()
{
    std::lock_guard<std::mutex> s(st_mu_);
    char line[256];
    std::snprintf(line, sizeof line, "burstgate-gateway %.0f s  %s/%s  windows %llu (late %llu, skipped %llu)\n",
                  secs(Clock::now() - t0_), dev_->engine().c_str(), bg::sim::scheduler_name(opt_.scheduler),
                  static_cast<unsigned long long>(windows_), static_cast<unsigned long long>(windows_late_),
                  static_cast<unsigned long long>(window_overruns_));
    std::string out = line;
    std::snprintf(line, sizeof line, "  %-16s %10s %10s %10s %10s %10s %10s\n", "tenant", "IOPS", "MB/s", "deferrals",
                  "avg us", "p50 us", "p99 us");
    out += line;
    for (std::size_t i = 0; i < st_.size(); i++) {
        const TenantStats &l = last_[i];
        std::snprintf(line, sizeof line, "  %-16s %10.0f %10.2f %10llu %10.1f %10.1f %10.1f\n", sc_.tenants[i].name.c_str(),
                      static_cast<double>(l.s_done) / last_second_s_,
                      static_cast<double>(l.s_bytes) / last_second_s_ / 1e6, static_cast<unsigned long long>(l.s_defer),
                      l.s_lat.mean() / 1e3, l.s_lat.quantile(0.5) / 1e3, l.s_lat.quantile(0.99) / 1e3);
        out += line;
    }
    return out;
}

std::string Engine::report_json()
{
    bg::sim::SimResult r;
    std::vector<std::uint64_t> withheld, below_base;
    {
        std::lock_guard<std::mutex> g(dev_mu_);
        r.bad_completions = bg_hal_read(&hal_, BG_CTRL_BAD_COMPLETIONS);
        for (unsigned d = 0; d < 4; d++)
            r.final_factor[d] = bg_hal_read(&hal_, BG_COST_FACTOR(d));
        r.burst_factor = bg::sim::burst_factor(fw_);
        r.burst_factor_mean = bg::sim::burst_factor_mean(fw_);
        r.windows = windows_;
        r.window_overruns = window_overruns_;
        r.deferred_pending = deferred_.size();
        for (std::uint32_t i = 0; i < sc_.tenants.size(); i++) {
            withheld.push_back(withheld_.withheld(i));
            below_base.push_back(withheld_.below_base(i));
        }
    }
    std::lock_guard<std::mutex> s(st_mu_);
    const double period = secs(Clock::now() - t0_);
    r.scenario = sc_.name;
    r.file = sc_.file;
    r.engine = dev_->engine();
    r.scheduler = bg::sim::scheduler_name(opt_.scheduler);
    r.seed = opt_.seed;
    r.duration_ns = static_cast<std::uint64_t>(period * 1e9);
    r.window_ns = sc_.window_ns;
    for (std::size_t i = 0; i < st_.size(); i++) {
        const TenantStats &t = st_[i];
        bg::sim::TenantResult tr;
        tr.name = sc_.tenants[i].name;
        tr.completed = t.completed;
        tr.bytes = t.bytes;
        tr.iops = static_cast<double>(t.completed) / period;
        tr.mbps = static_cast<double>(t.bytes) / period / 1e6;
        tr.lat = t.lat;
        tr.throttled = t.throttled;
        tr.deferred_ios = t.deferred_ios;
        tr.deferred_withheld = withheld[i];
        tr.deferred_below_base = below_base[i];
        for (int k = 0; k < 4; k++)
            tr.admitted_by[k] = t.admitted_by[k];
        tr.buffer_borrows = t.buffer_borrows;
        tr.generated = t.generated;
        tr.finished = t.completed;
        r.tenants.push_back(std::move(tr));
    }
    r.thread_completed = thread_completed_;
    r.events = generated_.load();
    r.generated = generated_.load();
    r.finished = finished_.load();
    char pacing[256];
    {
        std::lock_guard<std::mutex> g(sa_mu_);
        sa_->account(r, period);
        std::snprintf(pacing, sizeof pacing,
                      "\"pacing\": {\"answered_own\": %llu, \"answered_passing\": %llu, \"answered_pacer\": %llu, "
                      "\"pacer_wakeups\": %llu}",
                      static_cast<unsigned long long>(answered_own_), static_cast<unsigned long long>(answered_passing_),
                      static_cast<unsigned long long>(answered_pacer_), static_cast<unsigned long long>(pacer_wakeups_));
    }
    // The gateway's own part: the delay the adjustment sees, by class (docs/gateway.md, "Statistics").
    r.gateway_json = "\"sa_delay_us\": {";
    const char *names[4] = {"within_first", "within_deferred", "other_first", "other_deferred"};
    for (int k = 0; k < 4; k++) {
        const DelayClass &d = delay_[k];
        char b[256];
        std::snprintf(b, sizeof b,
                      "%s\"%s\": {\"n\": %llu, \"p50\": %.1f, \"p95\": %.1f, \"p99\": %.1f, \"store_p95\": %.1f}",
                      k ? ", " : "", names[k], static_cast<unsigned long long>(d.sa.count()), d.sa.quantile(0.5) / 1e3,
                      d.sa.quantile(0.95) / 1e3, d.sa.quantile(0.99) / 1e3, d.store.quantile(0.95) / 1e3);
        r.gateway_json += b;
    }
    r.gateway_json += std::string("}, ") + pacing;
    return bg::sim::report_json(r);
}

}  // namespace bg::gw
