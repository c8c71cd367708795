// The gateway's storage agent on the real clock: every NBD request becomes one descriptor to a
// bg::Device (model, verilator or xrt: docs/design.md contract 3); a deferred one waits in a FIFO and
// is offered again right after the next window's COMMIT, in deferral order, until admitted
// (never failed); an admitted one enters the SA thread the load balancer chose. The
// firmware window loop (bg_fw_window over device->hal()) runs every window_us on steady_clock.
//
// An admitted I/O goes through the stages of burstgate-sim's SA (bg::sim::SaStages, the same
// code): the SA thread the decision names (true CPU time, dpu.cpu_ns), the one software limiter
// shared by all threads (size / dpu.swlimit_mbps), both round robin over the tenants' vCPU
// queues, then the egress link. The stages run in virtual time driven by the real clock: an
// I/O may not be answered before it has left them (its release time), so the agent has the
// scenario's capacity, the one its grants are computed from, rather than this host's.
//
// Pacing costs no thread hand-off when the model lets the I/O go by the time its real work is
// done: the connection's own thread admits it, does the store operation, advances the stages
// to now and hands the reply to the connection (the server's reply queue: no engine thread waits
// for a client). Only an I/O whose release lies ahead waits, for the pacer thread, which
// sleeps until the next stage event (at most one wake-up per kPaceTickNs while I/Os wait), and
// runs every event due in one batch. I/Os admitted at a window (deferred ones), FLUSH, TRIM,
// WRITE_ZEROES, CACHE, BLOCK_STATUS and FUA writes are done by backend threads instead, off the
// connection's reader. --no-pace skips the stages.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "burstgate/host/device.hpp"
#include "burstgate/sim/hist.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/sa_stages.hpp"
#include "burstgate/sim/scenario.hpp"
#include "burstgate/sim/simulator.hpp"
#include "burstgate/sim/withheld.hpp"
#include "arrivals.hpp"
#include "store.hpp"
#include "work_queue.hpp"

namespace bg::gw {

using Clock = std::chrono::steady_clock;

// One NBD request in flight. `reply` hands the result (`data`: a READ's bytes, BLOCK_STATUS's
// encoded extents) to the connection it came from, which queues it: called by the connection's
// reader, the pacer or a backend thread, it never waits for a client.
struct Request {
    std::uint16_t type = 0, flags = 0;
    std::uint64_t cookie = 0, offset = 0;
    std::uint32_t length = 0;
    std::uint16_t tenant = 0;
    std::uint8_t queue = 0;
    std::uint16_t vq = 0;  // the tenant's vCPU queue (one per connection, wrapped): the SA's round-robin turn
    std::vector<std::uint8_t> data;
    std::function<void(Request &, std::uint32_t error)> reply;
    // Filled by the engine.
    Clock::time_point arrival, admit;
    std::uint16_t tag = 0, segment = 0;
    std::uint8_t egress = 0;
    std::uint32_t charge = 0, true_cpu = 0, desc_size = 0;
    // From the hand-off to a backend thread (or, inline, the store call) to the store's answer:
    // the store's time and the wait behind other requests' store calls (a neighbour's
    // fdatasync), which the SA delay excludes.
    Clock::time_point queued{};
    std::uint64_t backend_ns = 0;
    std::uint64_t admit_ns = 0, release_ns = 0;  // virtual time of the SA stages
    std::uint64_t next_ns = 0;  // its next stage event (Engine::sa_mu_); ~0: queued, or none
    std::uint32_t error = 0;
    bool within = false;  // served within its tenant's base, its reader favoured (server.cpp, base_priority.hpp)
    bool deferred = false, released = false, work_done = false;  // the last two: Engine::sa_mu_
};

struct EngineOptions {
    std::string engine = "model";
    bg::sim::Scheduler scheduler = bg::sim::Scheduler::kBios;
    std::uint64_t seed = 1;
    bool pace = true;  // answers wait for the SA stages (the scenario's CPU time and software limit)
    // The window loop, the pacer and the backend threads at SCHED_FIFO priority 10, as firmware
    // on its own core would run: on a loaded host their deadlines then hold (needs CAP_SYS_NICE).
    bool realtime = false;
    // --base-priority (0: off): a favoured reader's SCHED_FIFO priority (the server's readers,
    // base_priority.hpp), which the store threads take for first-class work (first_class,
    // work_queue.hpp) while a reader is favoured (backend_loop).
    int base_priority = 0;
    // --arrivals: every READ and WRITE descriptor's first offer is recorded here (arrivals.hpp).
    ArrivalRecorder *arrivals = nullptr;
    // --tenant-depth: requests one tenant may have in the engine (admitted or deferred), as a
    // device's queues bound a VM's outstanding I/O. Every deferred request is offered again each
    // window under the engine lock, so this bounds the window's work one tenant can cause, and
    // keeps one tenant from holding all 2^16 tags. A request beyond it waits in its connection's
    // thread (which then reads no more from its socket), counted in the tenant's depth_waits.
    std::uint32_t tenant_depth = 1024;
};

// True while the calling thread is one of the engine's at SCHED_FIFO: the window loop and the
// pacer (10 with --realtime), a store thread doing within-base work (--base-priority). A reply
// such a thread produces for a request not within its tenant's base is left to its connection's
// writer while another tenant's reader is favoured (server.cpp, base_priority_in_use()), so that
// no tenant's bytes are copied at a real-time priority beyond what its base buys. A favoured
// reader is not counted: it sends the other tenants' replies it releases itself, since handing
// them to their writers (a wake-up each) cost compare-qemu case 1's victim 0-6 % of its demand
// (docs/results.md, "The store threads' queue").
bool on_engine_fifo_thread();

class Engine {
public:
    // Throws bg::sim::ScenarioError / std::runtime_error like burstgate-sim does.
    Engine(const bg::sim::Scenario &sc, const EngineOptions &opt, std::vector<std::unique_ptr<Store>> stores);
    ~Engine();

    void start();
    // Waits (up to `drain`) for every request in flight to be answered, then stops the window
    // loop and the workers.
    void stop(std::chrono::milliseconds drain);

    // The largest READ/WRITE of tenant t one burst grant covers (at most `cap`).
    std::uint32_t max_block(std::size_t t) const { return max_block_[t]; }
    Store &store(std::size_t t) { return *stores_[t]; }
    // The scenario (the exports' tenants and their contracts).
    const bg::sim::Scenario &scenario() const { return sc_; }
    const EngineOptions &options() const { return opt_; }
    std::uint8_t ingress_queue(std::size_t t, std::uint32_t k) const;
    std::uint16_t vcpu_queue(std::size_t t, std::uint32_t k) const;

    // Schedules one valid command. Blocks while all 2^16 tags are in flight, or its tenant has
    // --tenant-depth requests in the engine. Once stopped,
    // answers it at once with ESHUTDOWN.
    void submit(std::unique_ptr<Request> r);

    std::string live_json();          // the last second and the run so far, one line
    std::string live_table();         // the same for a terminal
    std::string report_json();        // contract 4
    std::vector<std::string> warnings() const { return warnings_; }
    bool realtime_failed() const { return rt_failed_.load(); }
    std::string engine_name() const { return dev_->engine(); }
    std::uint64_t in_flight() const { return in_flight_.load(); }

private:
    struct TenantStats {
        std::uint64_t completed = 0, bytes = 0, throttled = 0, deferred_ios = 0, generated = 0;
        std::uint64_t depth_waits = 0;  // requests that waited for a tag: its --tenant-depth, or the pool
        std::uint64_t admitted_by[4] = {};
        std::uint64_t buffer_borrows = 0;  // admissions whose buffer came from the shared pool
        bg::sim::LatencyHist lat;
        // The current second, for the live view.
        std::uint64_t s_done = 0, s_bytes = 0, s_defer = 0;
        bg::sim::LatencyHist s_lat;
    };
    // The stages' events in virtual time (ns since t0_), in (time, kind, id) order.
    struct StageEv {
        std::uint64_t t, key;  // key: kind << 32 | tag
        bool operator>(const StageEv &o) const { return t != o.t ? t > o.t : key > o.key; }
    };
    // The SA delay each admitted request gave the firmware (what the delay-based adjustment
    // sees) and its store time (Request::backend_ns: from the hand-off to a store thread, or
    // inline the store call, to the store's answer), by class: within its tenant's base or not
    // (Request::within), admitted at its first offer or after a deferral. st_mu_.
    struct DelayClass {
        bg::sim::LatencyHist sa, store;
    };
    struct SaSink final : bg::sim::SaStages::Sink {
        Engine *e = nullptr;
        void stage_event(std::uint64_t t, bg::sim::SaEvent ev, std::uint32_t id) override;
    };

    // dev_mu_ held. Admitted ones enter the SA stages; from_window: they go to the backend
    // threads (else the caller does the work of those that are reader_work, work_queue.hpp, and is
    // told how many).
    // `ready`: I/Os the stages released meanwhile, for the caller to answer once dev_mu_ is free.
    std::size_t offer_locked(std::vector<Request *> &rs, bool from_window, std::vector<Request *> &ready);
    void window_loop();
    void thread_setup(const char *name);  // its name (thread_name.hpp), timer slack, SCHED_FIFO with --realtime
    void pacer_loop();
    void backend_loop();
    void work(Request &r);          // the store operation; sets r.error
    void work_done(Request *r);     // answers r now, or once the stages release it
    // sa_mu_ held. `answered`: the counter (answered_*_) of the thread that answers what it releases.
    void advance_locked(std::uint64_t now, std::vector<Request *> &ready, std::uint64_t &answered);
    void release_locked(Request *r, std::uint64_t t, std::vector<Request *> &ready, std::uint64_t &answered);
    // sa_mu_ held: when the pacer should next wake (the next stage event, at least a tick after its
    // last wake-up; kNever while no request waits for it).
    std::uint64_t pace_at_locked() const;
    // sa_mu_ held: the pacer's timer to fire at `t` (virtual ns; kNever: disarmed). No wake-up
    // for the pacer unless t has passed.
    void arm_pacer_locked(std::uint64_t t);
    std::uint64_t now_ns() const { return ns(Clock::now() - t0_); }
    static std::uint64_t ns(Clock::duration d);
    void finish(Request *r, std::uint32_t error);
    void roll_second();

    bg::sim::Scenario sc_;
    EngineOptions opt_;
    std::vector<std::unique_ptr<Store>> stores_;
    std::vector<std::string> warnings_;
    std::vector<std::uint32_t> max_block_, queue_base_, seg_base_;
    std::vector<std::uint64_t> seg_bytes_;

    std::mutex dev_mu_;  // the device, the firmware, the deferred FIFO, the tag pool
    std::unique_ptr<Device> dev_;
    bg_hal hal_{};
    bg::sim::Firmware fw_;
    std::vector<Request *> deferred_;
    // The deferrals withheld from a tenant with demand, and those below its base, judged at each
    // window's end before COMMIT (burstgate-sim counts them with the same code).
    bg::sim::WithheldTally withheld_{sc_};
    std::vector<std::unique_ptr<Request>> slots_;
    std::vector<std::uint16_t> free_tags_;
    std::vector<std::uint32_t> tenant_tags_;          // tags each tenant holds
    // Per tenant, the connection threads waiting for a tag, in arrival order, each by its own
    // condition variable (submit).
    std::vector<std::deque<std::condition_variable *>> tag_waiters_;
    std::vector<IoDesc> descs_;
    std::vector<IoDecision> decs_;
    // windows_late_: run after their deadline had passed (caught up); window_overruns_: skipped.
    std::uint64_t windows_ = 0, window_overruns_ = 0, windows_late_ = 0;
    static constexpr std::uint64_t kCatchUpWindows = 8;
    std::uint64_t commit_ns_ = 0;  // the last window's COMMIT (ns since start), for --arrivals-clock window

    std::mutex st_mu_;
    std::vector<TenantStats> st_;
    DelayClass delay_[4];  // [(within ? 0 : 2) + deferred]
    std::vector<std::uint64_t> thread_completed_;  // per SA thread (egress queue), as burstgate-sim reports
    Clock::time_point t0_, second_t0_;
    double last_second_s_ = 1;
    std::vector<TenantStats> last_;  // the previous second's figures (s_* fields)

    // The SA stages (sa_mu_): the model, its event heap, the I/Os in it by tag.
    std::mutex sa_mu_;
    SaSink sink_;
    std::unique_ptr<bg::sim::SaStages> sa_;
    std::vector<StageEv> heap_;
    std::vector<Request *> in_sa_;
    bool pacer_stopped_ = false;
    std::uint64_t model_now_ = 0;         // the latest stage event run
    std::uint64_t waiting_ = 0;           // work done, release ahead: the pacer's to answer
    // Who answered the paced requests: their own thread (released by the time the work was
    // done), another engine or reader thread advancing the stages, the pacer (and its wake-ups).
    std::uint64_t answered_own_ = 0, answered_passing_ = 0, answered_pacer_ = 0, pacer_wakeups_ = 0;
    std::uint64_t pacer_wake_ = 0;        // when the pacer's timer fires (0: it is awake; ~0: idle)
    std::uint64_t pacer_last_ = 0;        // its last wake-up (the next is at least kPaceTickNs later)
    int pacer_tfd_ = -1;                  // the pacer sleeps on this timer; others move it (arm_pacer_locked)
    WorkQueue<Request> backend_;
    std::vector<std::thread> threads_;
    std::thread window_th_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> rt_failed_{false};
    std::atomic<std::uint64_t> in_flight_{0};
    std::atomic<std::uint64_t> generated_{0}, finished_{0};
};

}  // namespace bg::gw
