// Queue-scaling load balancer (BurstCBS §5.1, Figure 10b): each ingress queue owns a set of
// egress queues (SA threads), given as a bitmask register, and every admitted I/O is sent to
// one member of its set. The gateware makes one decision per clock and must equal this model
// decision by decision, so every rule here is bounded (at most 16 egress queues), integer and
// division-free, and a stall changes no state: the RTL re-presents a stalled I/O every clock
// while the model re-presents it only at the next event, and both must stay in lockstep.
#ifndef BURSTGATE_MODEL_LOAD_BALANCER_HPP
#define BURSTGATE_MODEL_LOAD_BALANCER_HPP

#include <array>
#include <cstdint>

#include "burstgate/regs.h"

namespace bg {

enum class LbPolicy : std::uint8_t {
    // LB.POLICY's values, from the register map (regs.h).
    kStatic = BG_LB_STATIC,           // lowest eligible member of the set (one-hot sets: the 1:1 baseline)
    kRoundRobin = BG_LB_ROUND_ROBIN,  // per-ingress pointer over the set
    kJsq = BG_LB_JSQ,                 // least outstanding CPU ns among eligible members
    kP2c = BG_LB_P2C,                 // two LFSR draws over the eligible members; less loaded, else first
    kLeastIos = BG_LB_LEAST_IOS,      // fewest outstanding I/Os among eligible members (docs/extending.md)
};

// Widths the gateware is sized by; the model enforces the same bounds so the two agree.
// They come from the register map (regs.h), which sizes the gateware too.
inline constexpr unsigned kLbMaxQueues = BG_QUEUES_MAX;     // ingress and egress queues each
inline constexpr unsigned kLbDepthBits = BG_LB_DEPTH_BITS;   // egress depth register: 1..4095 I/Os
inline constexpr unsigned kLbChargeBits = BG_LB_CHARGE_BITS; // per-I/O charge clamp: 0..1048575 ns
inline constexpr std::uint32_t kLbMaxDepth = (1u << kLbDepthBits) - 1u;
inline constexpr std::uint32_t kLbMaxCharge = (1u << kLbChargeBits) - 1u;
// Outstanding cost per egress fits 32 bits: kLbMaxDepth * kLbMaxCharge < 2^32.

struct LbConfig {
    unsigned ingress_queues = 1;     // 1..16
    unsigned egress_queues = 1;      // 1..16
    LbPolicy policy = LbPolicy::kStatic;
    std::uint32_t egress_depth = 64; // outstanding I/Os per egress queue, 1..kLbMaxDepth
    std::uint32_t lfsr_seed = 1;     // passed through bg_lfsr_seed (0 maps to 0xACE1)
};

struct LbDecision {
    bool stall = false;       // no member of the set can take the I/O; the caller holds it
    std::uint8_t egress = 0;  // valid when !stall
};

struct LbEgressStats {
    std::uint64_t dispatched = 0;      // I/Os sent to this egress
    std::uint64_t dispatched_ns = 0;   // clamped CPU ns sent to this egress
    std::uint32_t peak_outstanding = 0;
};

struct LbIngressStats {
    std::uint64_t dispatched = 0;
    std::uint64_t stalled_ios = 0;  // I/Os that stalled at least once (episodes, not retries)
};

class LoadBalancer {
public:
    // Throws std::invalid_argument when a count, the depth or the policy is out of range.
    // At reset ingress i maps to egress (i mod E): the 1:1 binding of Figure 10a.
    explicit LoadBalancer(const LbConfig& cfg);

    // Register write LB_MAP[ingress]; bits at or above egress_queues are discarded, as the
    // register is that wide. An empty set is legal and stalls every I/O of that ingress.
    void set_map(unsigned ingress, std::uint16_t egress_mask);
    std::uint16_t map(unsigned ingress) const;
    void set_policy(LbPolicy policy);
    void set_depth(std::uint32_t depth);  // 1..kLbMaxDepth; lowering it drops no I/O
    void set_seed(std::uint32_t seed);    // LB_SEED write: state = bg_lfsr_seed(seed)

    // One decision. On success the egress's outstanding counters are charged with
    // min(cpu_ns, kLbMaxCharge) and one I/O; on stall nothing but the episode flag changes.
    LbDecision dispatch(unsigned ingress, std::uint32_t cpu_ns);

    // Completion of an I/O dispatched to `egress` with the same cpu_ns it was dispatched
    // with (the caller's tag table holds both). Throws std::logic_error on an underflow,
    // which can only come from a caller bug.
    void complete(unsigned egress, std::uint32_t cpu_ns);

    // The per-I/O accessors are inline (the agent calls them for every descriptor and
    // completion); the range checks stay, with the throw out of line in check_*.
    std::uint32_t outstanding_ios(unsigned egress) const
    {
        if (egress >= cfg_.egress_queues)
            check_egress(egress);
        return out_ios_[egress];
    }
    std::uint32_t outstanding_ns(unsigned egress) const
    {
        if (egress >= cfg_.egress_queues)
            check_egress(egress);
        return out_ns_[egress];
    }
    std::uint8_t rr_pointer(unsigned ingress) const;
    std::uint32_t lfsr_state() const { return lfsr_; }
    // Members of the ingress's set that are not full, as the decision logic sees them.
    std::uint16_t eligible(unsigned ingress) const
    {
        if (ingress >= cfg_.ingress_queues)
            check_ingress(ingress);
        return static_cast<std::uint16_t>(map_[ingress] & not_full_);
    }

    const LbConfig& config() const { return cfg_; }
    const LbEgressStats& egress_stats(unsigned egress) const;
    const LbIngressStats& ingress_stats(unsigned ingress) const;

    static std::uint32_t clamp_charge(std::uint32_t cpu_ns)
    {
        return cpu_ns < kLbMaxCharge ? cpu_ns : kLbMaxCharge;
    }
    // Position of the idx-th (0-based) set bit of mask, scanning upward; mask must have
    // more than idx bits set. This is how an LFSR draw lands on a member of a set.
    static unsigned nth_set_bit(std::uint16_t mask, unsigned idx);
    // ((uint64_t)r * n) >> 32: a draw mapped onto 0..n-1 without division.
    static unsigned scale_draw(std::uint32_t r, unsigned n);
    // One draw = the bg_lfsr state after 32 bg_lfsr_next steps (returned and stored). A
    // single step only shifts the state, so consecutive one-step values share their top
    // bits, which are exactly the bits scale_draw uses: two one-step draws over four queues
    // reach only half of the (first, second) pairs. 32 steps give a fresh 32-bit word.
    // The leap is linear over GF(2): the XOR of the leaps of each state byte, from tables
    // built once by stepping bg_lfsr_next itself (load_balancer.cpp), so no second LFSR
    // definition exists. Inline: the agent draws twice per descriptor.
    struct LfsrLeap {
        LfsrLeap();
        std::uint32_t draw(std::uint32_t* state) const
        {
            const std::uint32_t s = *state;
            *state = t[0][s & 0xFFu] ^ t[1][(s >> 8) & 0xFFu] ^ t[2][(s >> 16) & 0xFFu] ^ t[3][s >> 24];
            return *state;
        }
        std::uint32_t t[4][256];
    };
    // The tables, built on first use. The per-I/O callers (this class, the agent) keep the
    // returned pointer from their constructor, so the draw itself passes no static-init guard.
    static const LfsrLeap* lfsr_leap();
    static std::uint32_t lfsr_draw(std::uint32_t* state) { return lfsr_leap()->draw(state); }

private:
    unsigned pick_static(std::uint16_t elig) const;
    unsigned pick_rr(unsigned ingress, std::uint16_t elig) const;
    unsigned pick_jsq(std::uint16_t elig) const;
    unsigned pick_least_ios(std::uint16_t elig) const;
    unsigned pick_p2c(std::uint16_t elig);
    void refresh_not_full(unsigned egress);
    void check_ingress(unsigned ingress) const;
    void check_egress(unsigned egress) const;

    LbConfig cfg_;
    const LfsrLeap* leap_ = lfsr_leap();
    std::uint16_t width_mask_;
    std::uint32_t lfsr_;
    std::uint16_t not_full_;  // egress queues below depth: the eligibility vector's source
    std::array<std::uint16_t, kLbMaxQueues> map_{};
    std::array<std::uint8_t, kLbMaxQueues> rr_ptr_{};
    std::array<bool, kLbMaxQueues> stalled_{};
    std::array<std::uint32_t, kLbMaxQueues> out_ios_{};
    std::array<std::uint32_t, kLbMaxQueues> out_ns_{};
    std::array<LbEgressStats, kLbMaxQueues> egress_stats_{};
    std::array<LbIngressStats, kLbMaxQueues> ingress_stats_{};
};

}  // namespace bg

#endif  // BURSTGATE_MODEL_LOAD_BALANCER_HPP
