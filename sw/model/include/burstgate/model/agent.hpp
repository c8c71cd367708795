// The whole datapath of the storage agent, bit-exact with the gateware core: cost estimator,
// segment monitor, admission, load balancer, buffer pool, completion path, and every register
// of the map (docs/registers.md). Contract 2 of docs/design.md: for the same ordered stream of
// events -- descriptor, completion, register write (the window commands are register writes)
// -- the model and the RTL make the same decision for every descriptor.
//
// One descriptor, in this order (the gateware pipelines the same steps at one per clock):
//   cost   = COST block estimate (product, write, size)
//   hot    = segment monitor on_io(segment, !reoffer, size)  // counts every new I/O, admitted or not
//   r1, r2 = two 32-step LFSR draws                  // always, whatever the scheduler or path
//   active[tenant] = 1
//   src    = the scheduler's source (below), without changing any level yet
//   if src admits:
//     if no egress of LB.MAP[queue] is below DEPTH     -> SRC_DEFER_EGRESS (nothing charged)
//     elif the buffer pool cannot give queue a buffer  -> SRC_DEFER_BUFFER (nothing charged)
//     else charge src, dispatch to the load balancer (egress), take the buffer,
//          usage[tenant] += cost; spill_n += (src is BORROW or RESERVED)
//   else (SRC_DEFER): throttle_n[tenant] += 1; throttle[tenant] += cost
//
// Sources by CTRL.SCHEDULER (all vectors compared in every dimension):
//   SCHED_BIOS (BurstCBS Algorithm 1 THROTTLE_IO):
//     rem[k] covers c                                       -> OWN
//     elif base[k] covers usage[k] + c:                     // fallback restores base only
//       b1 = burst_list[(r1 * n) >> 32], b2 = burst_list[(r2 * n) >> 32] (n = BURST_N > 0)
//       ok_x = rem[bx] covers c and lend[bx] covers c
//       both ok: the one with more lendable CPU ns, tie b1  -> BORROW (rem, lend -= c)
//       elif !hot and pool covers c                         -> RESERVED (pool -= c)
//     else                                                  -> DEFER
//   SCHED_BASE:       rem[k] covers c -> OWN, else DEFER
//   SCHED_WILD:       rem[k] and global both cover c -> OWN (both -= c), else DEFER
//   SCHED_DUALBUCKET: global (main bucket) covers c -> OWN (global -= c);
//                     elif !hot and pool (cheque) covers c -> RESERVED (pool -= c; drawn);
//                     else DEFER
//
// Completion {tenant, queue, egress, charge_ns, sa_delay_ns}: the load balancer's egress
// counts go down by one I/O and min(charge_ns, 2^LB_CHARGE_BITS - 1) ns, the queue's buffer
// is released, and the delay is recorded in the tenant's and the aggregate histogram. A
// completion naming an egress or queue with nothing outstanding, or a tenant out of range,
// changes nothing and counts in CTRL.BAD_COMPLETIONS (a host bug must not corrupt state).
//
// The window (CTRL block doc): TICK holds admission; COMMIT refills rem from GRANT and lend
// from LEND_GRANT, clears the window counters, histograms and active bits, ticks the segment
// monitor and the buffer pool, and releases. A descriptor offered while held is a caller error
// (the gateware simply does not accept it until COMMIT).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "burstgate/hal.h"
#include "burstgate/latency_hist.h"
#include "burstgate/regs.h"
#include "burstgate/vec.h"
#include "burstgate/model/buffer_pool.hpp"
#include "burstgate/model/cost.hpp"
#include "burstgate/model/load_balancer.hpp"
#include "burstgate/model/segment_monitor.hpp"

namespace bg {

// Sizes of one build; the gateware core takes the same parameters (INFO block). The defaults
// are docs/design.md's small point (64 tenants, 4 queues, 4K segments), the build the Verilator
// engine and the simulator use unless told otherwise.
struct AgentParams {
    std::uint32_t tenants = 64;      // 1..BG_TENANTS_MAX
    std::uint32_t ingress = 4;       // 1..BG_QUEUES_MAX
    std::uint32_t egress = 4;        // 1..BG_QUEUES_MAX
    std::uint32_t segment_bits = 12; // 1..BG_SEGMENT_BITS
};

struct IoDesc {
    std::uint16_t tag = 0;
    std::uint16_t tenant = 0;
    std::uint8_t queue = 0;    // ingress queue
    std::uint8_t product = 0;  // 0..BG_PRODUCTS-1
    bool write = false;
    std::uint32_t size = 0;    // bytes, < 2^BG_SIZE_BITS
    std::uint16_t segment = 0;
    bool reoffer = false;      // a deferred I/O offered again: the segment monitor does not count it
};

struct IoDecision {
    std::uint16_t tag = 0;
    std::uint16_t tenant = 0;
    std::uint8_t queue = 0;
    std::uint8_t source = BG_SRC_DEFER;  // BG_SRC_*
    std::uint16_t lender = 0;            // valid for BG_SRC_BORROW
    std::uint8_t egress = 0;             // valid when admitted
    bool hot = false;                    // the segment was hot for this I/O
    bool prefill = false;                // the buffer came from the shared pool (prefilled now)
    bg_vec cost{};
    bool admitted() const { return source < BG_SRC_DEFER; }
    friend bool operator==(const IoDecision &, const IoDecision &) = default;
};

struct IoCompletion {
    std::uint16_t tag = 0;
    std::uint16_t tenant = 0;
    std::uint8_t queue = 0;
    std::uint8_t egress = 0;
    std::uint32_t charge_ns = 0;    // the decision's cost.d[BG_DIM_CPU]
    std::uint32_t sa_delay_ns = 0;  // time in the SA, backend excluded
};

class Agent {
public:
    // Registers at reset. Throws std::invalid_argument naming the bad parameter.
    explicit Agent(const AgentParams &p);
    Agent(const Agent &) = delete;
    Agent &operator=(const Agent &) = delete;

    const AgentParams &params() const { return p_; }

    // Register access at absolute byte addresses (regs.h). Bits 1..0 are ignored; writes keep
    // the implemented bits; unmapped addresses and read-only registers ignore writes; unmapped
    // reads return 0.
    void write(std::uint32_t addr, std::uint32_t value);
    std::uint32_t read(std::uint32_t addr) const;
    // The firmware's view of this agent (fw/include/burstgate/hal.h). Valid while *this lives.
    bg_hal hal();

    // One descriptor -> its decision. Throws std::invalid_argument for a descriptor the wire
    // format cannot carry or this build does not implement (tenant, queue, product, size),
    // std::logic_error while admission is held.
    IoDecision io(const IoDesc &d);
    // The same after the COST stage: the descriptor arrives with its cost vector (the gateware's
    // admission block input). Admission-only studies feed costs directly.
    IoDecision io_costed(const IoDesc &d, const bg_vec &cost);
    // THROTTLE_IO alone (BurstCBS Algorithm 1): what io_costed does for a descriptor of
    // `tenant` whose segment-monitor verdict is `hot`, minus the segment monitor, the load
    // balancer and the buffer pool -- the two LFSR draws, the active bit and IOS count, the
    // scheduler's source and its charge (rem, lend or pool; usage, spill_n), or on deferral
    // throttle_n, throttle and DEFERRED. io_costed runs the same two steps (decide, charge)
    // around its egress and buffer checks, so where those never defer, both make the same
    // decision and state change (tests/cpp/test_throttle_io.cpp). For benchmarks and
    // admission studies; egress and lender are 0, prefill false. Throws as io_costed does
    // for a tenant out of range or while admission is held.
    IoDecision throttle_io(std::uint16_t tenant, const bg_vec &cost, bool hot);
    void complete(const IoCompletion &c);
    // complete() of the I/O io_costed() admitted as `x` just before, with no other event in
    // between (Admission completes every admitted I/O at once). Such a completion passes
    // every check of complete() by construction -- its tenant, queue and egress exist, and
    // what it releases was just taken -- so this skips them; the state change is the same.
    void complete_admitted(const IoDecision &x, std::uint32_t sa_delay_ns);

    bool held() const { return held_; }
    std::uint64_t window() const { return window_; }

    // Read-only views for tests and tools (everything is also a register).
    const CostEstimator &cost() const { return cost_; }
    const LoadBalancer &lb() const { return lb_; }
    const BufferPool &buffers() const { return bpool_; }
    const SegmentMonitor &segments() const { return segmon_; }
    const bg_lhist &hist_all() const { return hist_all_; }

private:
    struct Tenant {
        bg_vec base{}, grant{}, lend_grant{}, rem{}, lend{}, usage{}, throttle{};
        std::uint32_t throttle_n = 0, spill_n = 0;
        // The exact IOPS cap: I/Os admitted this window (any source) and TENANT.COUNT_GRANT.
        std::uint32_t count = 0, count_grant = BG_TENANT_COUNT_GRANT_RESET;
    };
    struct Plan {
        std::uint8_t source;
        std::uint16_t lender;
    };

    Plan plan(std::uint32_t k, const bg_vec &c, bool hot, std::uint32_t r1, std::uint32_t r2) const;
    void check_offer(std::uint16_t tenant) const;
    Plan decide(std::uint16_t k, const bg_vec &c, bool hot);
    void charge(std::uint16_t k, const Plan &pl, const bg_vec &c);
    void commit_window();
    void rebuild_buffers();
    std::uint32_t *tenant_vec(std::uint32_t block_off, std::uint32_t index);
    bool write_tenant(std::uint32_t off, std::uint32_t value);
    std::uint32_t read_tenant(std::uint32_t off) const;
    static void hal_write(void *ctx, std::uint32_t addr, std::uint32_t value);
    static std::uint32_t hal_read(void *ctx, std::uint32_t addr);

    AgentParams p_;
    CostEstimator cost_;
    SegmentMonitor segmon_;
    LoadBalancer lb_;
    BufferPool bpool_;
    BufferPoolConfig bp_cfg_;

    std::vector<Tenant> t_;
    std::vector<std::uint16_t> burst_list_;
    std::vector<std::uint32_t> active_;        // bitmap, 32 tenants a word
    std::vector<bg_lhist> hist_;               // per tenant
    bg_lhist hist_all_{};
    bg_vec pool_{}, global_{};
    std::uint32_t scheduler_ = BG_SCHED_BIOS;
    std::uint32_t burst_n_ = 0;
    std::uint32_t lfsr_;
    const LoadBalancer::LfsrLeap *leap_ = LoadBalancer::lfsr_leap();
    bool pool_drawn_ = false;
    bool held_ = false;
    std::uint64_t window_ = 0;
    std::uint32_t ios_ = 0, deferred_ = 0, deferred_egress_ = 0, deferred_buffer_ = 0;
    std::uint32_t completions_ = 0, bad_completions_ = 0;
};

}  // namespace bg
