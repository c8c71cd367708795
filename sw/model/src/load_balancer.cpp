#include "burstgate/model/load_balancer.hpp"

#include <bit>
#include <stdexcept>
#include <string>

#include "burstgate/lfsr.h"

namespace bg {

namespace {

void check_depth(std::uint32_t depth)
{
    if (depth == 0 || depth > kLbMaxDepth)
        throw std::invalid_argument("load balancer: egress_depth " + std::to_string(depth) +
                                    " outside 1.." + std::to_string(kLbMaxDepth));
}

void check_policy(LbPolicy policy)
{
    if (static_cast<unsigned>(policy) > static_cast<unsigned>(LbPolicy::kLeastIos))
        throw std::invalid_argument("load balancer: unknown policy " +
                                    std::to_string(static_cast<unsigned>(policy)));
}

}  // namespace

// lfsr_draw's tables: the 32-step leap of every value of each state byte.
LoadBalancer::LfsrLeap::LfsrLeap()
{
    for (unsigned b = 0; b < 4; b++) {
        for (unsigned v = 0; v < 256; v++) {
            std::uint32_t st = static_cast<std::uint32_t>(v) << (8 * b);
            for (unsigned k = 0; k < 32; k++)
                bg_lfsr_next(&st);
            t[b][v] = st;
        }
    }
}

const LoadBalancer::LfsrLeap* LoadBalancer::lfsr_leap()
{
    static const LfsrLeap leap;
    return &leap;
}

LoadBalancer::LoadBalancer(const LbConfig& cfg) : cfg_(cfg)
{
    if (cfg.ingress_queues == 0 || cfg.ingress_queues > kLbMaxQueues)
        throw std::invalid_argument("load balancer: ingress_queues " +
                                    std::to_string(cfg.ingress_queues) + " outside 1..16");
    if (cfg.egress_queues == 0 || cfg.egress_queues > kLbMaxQueues)
        throw std::invalid_argument("load balancer: egress_queues " +
                                    std::to_string(cfg.egress_queues) + " outside 1..16");
    check_depth(cfg.egress_depth);
    check_policy(cfg.policy);
    width_mask_ = static_cast<std::uint16_t>((1u << cfg.egress_queues) - 1u);
    lfsr_ = bg_lfsr_seed(cfg.lfsr_seed);
    not_full_ = width_mask_;
    for (unsigned i = 0; i < cfg.ingress_queues; i++)
        map_[i] = static_cast<std::uint16_t>(1u << (i % cfg.egress_queues));
}

void LoadBalancer::check_ingress(unsigned ingress) const
{
    if (ingress >= cfg_.ingress_queues)
        throw std::out_of_range("load balancer: ingress " + std::to_string(ingress) +
                                " >= " + std::to_string(cfg_.ingress_queues));
}

void LoadBalancer::check_egress(unsigned egress) const
{
    if (egress >= cfg_.egress_queues)
        throw std::out_of_range("load balancer: egress " + std::to_string(egress) + " >= " +
                                std::to_string(cfg_.egress_queues));
}

void LoadBalancer::set_map(unsigned ingress, std::uint16_t egress_mask)
{
    check_ingress(ingress);
    map_[ingress] = static_cast<std::uint16_t>(egress_mask & width_mask_);
}

std::uint16_t LoadBalancer::map(unsigned ingress) const
{
    check_ingress(ingress);
    return map_[ingress];
}

void LoadBalancer::set_policy(LbPolicy policy)
{
    check_policy(policy);
    cfg_.policy = policy;
}

void LoadBalancer::set_depth(std::uint32_t depth)
{
    check_depth(depth);
    cfg_.egress_depth = depth;
    for (unsigned e = 0; e < cfg_.egress_queues; e++)
        refresh_not_full(e);
}

[[gnu::always_inline]] inline void LoadBalancer::refresh_not_full(unsigned egress)
{
    const auto bit = static_cast<std::uint16_t>(1u << egress);
    if (out_ios_[egress] < cfg_.egress_depth)
        not_full_ = static_cast<std::uint16_t>(not_full_ | bit);
    else
        not_full_ = static_cast<std::uint16_t>(not_full_ & ~bit);
}

void LoadBalancer::set_seed(std::uint32_t seed)
{
    cfg_.lfsr_seed = seed;
    lfsr_ = bg_lfsr_seed(seed);
}

unsigned LoadBalancer::nth_set_bit(std::uint16_t mask, unsigned idx)
{
    if (static_cast<unsigned>(std::popcount(mask)) <= idx)
        throw std::logic_error("load balancer: draw index beyond the set");
    for (unsigned k = 0; k < idx; k++)
        mask = static_cast<std::uint16_t>(mask & (mask - 1u));
    return static_cast<unsigned>(std::countr_zero(mask));
}

unsigned LoadBalancer::scale_draw(std::uint32_t r, unsigned n)
{
    return static_cast<unsigned>((static_cast<std::uint64_t>(r) * n) >> 32);
}

[[gnu::always_inline]] inline unsigned LoadBalancer::pick_static(std::uint16_t elig) const
{
    return static_cast<unsigned>(std::countr_zero(elig));
}

unsigned LoadBalancer::pick_rr(unsigned ingress, std::uint16_t elig) const
{
    // A cyclic scan from the pointer is a rotate plus a priority encoder in gateware.
    unsigned e = rr_ptr_[ingress];
    for (unsigned k = 0; k < cfg_.egress_queues; k++) {
        if (elig & (1u << e))
            return e;
        e = (e + 1 == cfg_.egress_queues) ? 0 : e + 1;
    }
    throw std::logic_error("load balancer: round robin found no member");
}

unsigned LoadBalancer::pick_jsq(std::uint16_t elig) const
{
    // Strict < while scanning upward keeps the lowest index among equal loads.
    unsigned best = static_cast<unsigned>(std::countr_zero(elig));
    for (unsigned e = best + 1; e < cfg_.egress_queues; e++)
        if ((elig & (1u << e)) && out_ns_[e] < out_ns_[best])
            best = e;
    return best;
}

unsigned LoadBalancer::pick_least_ios(std::uint16_t elig) const
{
    // JSQ's scan on the I/O count instead of the CPU ns: lowest index among equal counts.
    unsigned best = static_cast<unsigned>(std::countr_zero(elig));
    for (unsigned e = best + 1; e < cfg_.egress_queues; e++)
        if ((elig & (1u << e)) && out_ios_[e] < out_ios_[best])
            best = e;
    return best;
}

unsigned LoadBalancer::pick_p2c(std::uint16_t elig)
{
    // Two draws every non-stalled decision, whatever the set size, so the LFSR position
    // depends only on the count of decisions made under this policy.
    const std::uint32_t r1 = leap_->draw(&lfsr_);
    const std::uint32_t r2 = leap_->draw(&lfsr_);
    const unsigned k = static_cast<unsigned>(std::popcount(elig));
    const unsigned i1 = scale_draw(r1, k);
    unsigned i2 = i1;
    if (k >= 2) {
        // Second pick among the other k-1 members: two distinct candidates whenever possible.
        i2 = scale_draw(r2, k - 1);
        if (i2 >= i1)
            i2++;
    }
    const unsigned e1 = nth_set_bit(elig, i1);
    const unsigned e2 = nth_set_bit(elig, i2);
    // A tie keeps the first draw: breaking it by index would tilt light load toward the
    // low-numbered threads, as JSQ's lowest-index rule does.
    return out_ns_[e2] < out_ns_[e1] ? e2 : e1;
}

LbDecision LoadBalancer::dispatch(unsigned ingress, std::uint32_t cpu_ns)
{
    const std::uint16_t elig = eligible(ingress);
    if (elig == 0) {
        if (!stalled_[ingress]) {
            stalled_[ingress] = true;
            ingress_stats_[ingress].stalled_ios++;
        }
        return LbDecision{true, 0};
    }
    unsigned e = 0;
    switch (cfg_.policy) {
    case LbPolicy::kStatic:
        e = pick_static(elig);
        break;
    case LbPolicy::kRoundRobin:
        e = pick_rr(ingress, elig);
        rr_ptr_[ingress] = static_cast<std::uint8_t>(e + 1 == cfg_.egress_queues ? 0 : e + 1);
        break;
    case LbPolicy::kJsq:
        e = pick_jsq(elig);
        break;
    case LbPolicy::kP2c:
        e = pick_p2c(elig);
        break;
    case LbPolicy::kLeastIos:
        e = pick_least_ios(elig);
        break;
    }
    const std::uint32_t charge = clamp_charge(cpu_ns);
    stalled_[ingress] = false;
    out_ios_[e]++;
    out_ns_[e] += charge;
    refresh_not_full(e);
    LbEgressStats& es = egress_stats_[e];
    es.dispatched++;
    es.dispatched_ns += charge;
    if (out_ios_[e] > es.peak_outstanding)
        es.peak_outstanding = out_ios_[e];
    ingress_stats_[ingress].dispatched++;
    return LbDecision{false, static_cast<std::uint8_t>(e)};
}

void LoadBalancer::complete(unsigned egress, std::uint32_t cpu_ns)
{
    if (egress >= cfg_.egress_queues)  // the check's throw is out of line, per I/O is one compare
        check_egress(egress);
    const std::uint32_t charge = clamp_charge(cpu_ns);
    if (out_ios_[egress] == 0 || out_ns_[egress] < charge)
        throw std::logic_error("load balancer: completion on egress " +
                               std::to_string(egress) + " exceeds what is outstanding");
    out_ios_[egress]--;
    out_ns_[egress] -= charge;
    refresh_not_full(egress);
}

std::uint8_t LoadBalancer::rr_pointer(unsigned ingress) const
{
    check_ingress(ingress);
    return rr_ptr_[ingress];
}

const LbEgressStats& LoadBalancer::egress_stats(unsigned egress) const
{
    check_egress(egress);
    return egress_stats_[egress];
}

const LbIngressStats& LoadBalancer::ingress_stats(unsigned ingress) const
{
    check_ingress(ingress);
    return ingress_stats_[ingress];
}

}  // namespace bg
