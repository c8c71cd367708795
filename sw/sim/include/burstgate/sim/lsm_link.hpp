// burstgate-sim's end of the LSM co-simulation (lsm_section.hpp): a store whose I/O goes to the
// tenant `lsm.tenant` names. The store's I/O enters at that tenant's queues like a trace
// record -- size, direction and segment (offset / lsm.segment_size mod lsm.segments) from the
// store, the vCPU queue from its cookie -- and its completion goes back to the store at the
// simulator's time. The simulator runs the store's events due before its own next event.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "burstgate/sim/lsm_section.hpp"
#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

struct Io;
struct TenantSource;

class LsmLink {
public:
    // `tenant`: the source of lsm.tenant (its queues and segments); `ingress`: the build's
    // ingress queues.
    LsmLink(const Scenario &sc, std::uint64_t seed, const TenantSource &tenant, std::uint32_t ingress);

    std::uint32_t tenant_index() const { return sc_.lsm->tenant_index; }
    // The store's next event (UINT64_MAX: none).
    std::uint64_t next_time() const { return store_.next_time(); }
    // Runs the store's events due at t; returns the I/Os they submitted, in order.
    const std::vector<LsmTenant::Io> &run_at(std::uint64_t t);
    // Fills the record of one of those I/Os (allocated for the tenant at t).
    void fill(Io &io, const LsmTenant::Io &x) const;
    // The record `io` completed at t: the store hears of its I/O when it was the store's.
    void complete(const Io &io, std::uint64_t t);
    std::shared_ptr<const LsmResult> finish() { return store_.finish(); }

private:
    const Scenario &sc_;
    const TenantSource &tenant_;
    std::uint32_t ingress_;
    LsmTenant store_;
    std::vector<LsmTenant::Io> out_;
};

}  // namespace bg::sim
