// The storage agent's stages after admission, one implementation for burstgate-sim (simulated
// time) and burstgate-gateway (the real clock, sw/gateway/engine.cpp):
//
//   SA thread (the one the decision names): one server, its queued I/Os served round robin over
//   the tenants' vCPU queues, one I/O per turn (dpu.sa_discipline: rr; BurstCBS §5.1 "one
//   ingress queue per vCPU", §5.2 the SA "iterates through all ingress queues") or in arrival
//   order (fifo); service = the I/O's true CPU time (dpu.cpu_ns)
//   With dpu.sa_loop the thread is instead an event loop (bg::TaskLoop, "Come Hell or Still
//   Water" §3.2/§4.3): its I/Os wait in the rx buffer until a loop polls it, and it also runs
//   the periodic I/O-unrelated tasks (sa_loop.tasks) and each I/O's spawned one (per_io_us),
//   in one FIFO batch per loop (policy: fifo) or I/O-related first, the rest up to DLT
//   (priority); offload: true moves the tasks marked offload off the thread (the thread split).
//   A loop's schedule is fixed when it starts, so each I/O's kCpuDone and the loop's end
//   (kLoop, id = the thread) are posted then; I/Os arriving meanwhile wait for the next loop.
//   -> software limiter: one server shared by all threads, same discipline, size / swlimit_mbps
//   -> egress link (request header + write data), FIFO, bytes / egress_gbps
//   (backend: the caller's -- a lognormal delay in the simulator, the real store in the gateway)
//   -> ingress link (response header + read data), FIFO, bytes / ingress_gbps
//
// The stages hold no clock: the caller passes `now` and is told, through Sink, when a server's
// service ends; it calls cpu_done / swl_done at that time. Times are integer nanoseconds.
// Utilization and in-flight accounting live here too, so both programs report the same figures.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "burstgate/model/task_loop.hpp"

#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

struct SimResult;

enum class SaEvent : std::uint8_t { kCpuDone, kSwlDone, kLoop };

// The SA's view of one admitted I/O.
struct SaItem {
    std::uint32_t true_cpu = 0, size = 0;
    std::uint16_t vq = 0;     // the tenant's vCPU queue (queue_base + k): the round-robin turn
    std::uint8_t egress = 0;  // the SA thread the decision named
    bool write = false;
};

// The SA's true CPU time for one I/O: the scenario's linear profile (dpu.cpu_ns).
std::uint32_t true_cpu_ns(const Dpu &d, const Tenant &t, std::uint32_t size, bool write);

class SaStages {
public:
    // Told when a server's service of `id` ends (at `t`).
    struct Sink {
        virtual void stage_event(std::uint64_t t, SaEvent e, std::uint32_t id) = 0;

    protected:
        ~Sink() = default;
    };
    // vqueues: the vCPU queues of all tenants (sum of tenants[i].queues).
    SaStages(const Dpu &d, std::size_t vqueues, Sink &sink);

    // An admitted I/O enters its SA thread. `measured`: counts in admitted_load.
    void admit(std::uint64_t now, std::uint32_t id, const SaItem &it, bool measured);
    // At the end of id's CPU service: the thread takes its next I/O, id goes to the limiter.
    void cpu_done(std::uint64_t now, std::uint32_t id, bool measured);
    // At the end of id's limiter service: the limiter takes its next I/O, id crosses the
    // egress link. Returns when it has crossed it (the backend starts then).
    std::uint64_t swl_done(std::uint64_t now, std::uint32_t id, bool measured);
    // The backend answered at `now`: the response crosses the ingress link; returns when.
    std::uint64_t ingress(std::uint64_t now, std::uint32_t id);
    // The I/O is complete (its response delivered).
    void complete(std::uint32_t id, bool measured);
    // dpu.sa_loop: a kLoop event of thread `thread` (a loop's end or an idle thread's timer).
    void loop_event(std::uint64_t now, std::uint32_t thread);
    // dpu.sa_loop: loops run and I/O-unrelated tasks run on the SA threads, in total.
    std::uint64_t loops() const;
    std::uint64_t unrelated_run() const { return unrelated_run_; }

    const SaItem &item(std::uint32_t id) const { return items_[id]; }
    // I/Os admitted and not yet complete.
    std::uint64_t in_stages() const { return in_stages_; }
    // Fills utilization and admitted_load (share of capacity over `period_s`) and in_flight
    // (generated - finished - deferred_pending, which the caller has set).
    void account(SimResult &r, double period_s) const;

private:
    // A growable FIFO ring: no allocation once it has reached its working size.
    template <class T>
    class Fifo {
    public:
        bool empty() const { return head_ == tail_; }
        void push(T v)
        {
            if (tail_ - head_ == buf_.size()) {
                std::vector<T> bigger(std::max<std::size_t>(16, 2 * buf_.size()));
                for (std::size_t i = head_; i != tail_; i++)
                    bigger[i - head_] = buf_[i & (buf_.size() - 1)];
                tail_ -= head_;
                head_ = 0;
                buf_.swap(bigger);
            }
            buf_[tail_++ & (buf_.size() - 1)] = v;
        }
        T pop() { return buf_[head_++ & (buf_.size() - 1)]; }

    private:
        std::vector<T> buf_;
        std::size_t head_ = 0, tail_ = 0;
    };
    // One server in front of which I/Os wait in one FIFO, or one FIFO per vCPU queue served
    // round robin, one I/O per turn.
    class Server {
    public:
        Server(std::size_t queues, bool round_robin) : q_(round_robin ? queues : 1), rr_(round_robin) {}
        bool busy = false;
        void push(std::uint16_t queue, std::uint32_t id)
        {
            const std::uint16_t k = rr_ ? queue : 0;
            if (q_[k].empty())
                ring_.push(k);
            q_[k].push(id);
        }
        bool empty() const { return ring_.empty(); }
        std::uint32_t pop()
        {
            const std::uint16_t k = ring_.pop();
            const std::uint32_t id = q_[k].pop();
            if (!q_[k].empty())
                ring_.push(k);
            return id;
        }

    private:
        std::vector<Fifo<std::uint32_t>> q_;
        Fifo<std::uint16_t> ring_;
        bool rr_;
    };
    // One SA thread's event loop (dpu.sa_loop).
    struct Loop {
        std::unique_ptr<bg::TaskLoop> loop;
        std::vector<std::uint64_t> next_due;  // per sa_tasks entry; UINT64_MAX: off this thread
        bool running = false;
        std::uint64_t end = 0;                         // the running loop's end
        std::uint64_t wake = ~std::uint64_t{0};        // the idle thread's pending timer event
    };
    void start_loop(std::uint64_t now, std::uint32_t thread);
    void start_cpu(std::uint64_t now, std::uint32_t thread);
    void start_swl(std::uint64_t now);

    const Dpu &dpu_;
    Sink &sink_;
    std::vector<SaItem> items_;
    std::vector<Server> threads_;
    std::vector<Loop> loops_;  // empty without dpu.sa_loop
    std::uint64_t unrelated_run_ = 0;
    Server swl_;
    double eg_free_ = 0, in_free_ = 0;
    double ns_per_swl_byte_ = 0, ns_per_eg_byte_ = 0, ns_per_in_byte_ = 0;
    std::array<double, 4> admitted_{};  // true cost of the I/Os admitted (measured ones)
    std::array<double, 4> served_{};    // work the servers finished (measured)
    std::array<double, 4> cap_per_s_{};
    std::uint64_t in_stages_ = 0;
};

}  // namespace bg::sim
