// burstgate-sim's end of the LSM co-simulation; see lsm_link.hpp.
#include "burstgate/sim/lsm_link.hpp"

#include "burstgate/sim/io_table.hpp"
#include "burstgate/sim/sa_stages.hpp"
#include "burstgate/sim/workload_sources.hpp"

namespace bg::sim {

LsmLink::LsmLink(const Scenario &sc, std::uint64_t seed, const TenantSource &tenant, std::uint32_t ingress)
    : sc_(sc), tenant_(tenant), ingress_(ingress), store_(sc, seed, sc.duration_ns, sc.warmup_ns)
{
}

const std::vector<LsmTenant::Io> &LsmLink::run_at(std::uint64_t t)
{
    out_.clear();
    store_.run_at(t, out_);
    return out_;
}

void LsmLink::fill(Io &io, const LsmTenant::Io &x) const
{
    io.size = x.bytes;
    io.write = x.write;
    io.vq = static_cast<std::uint16_t>(tenant_.queue_base + x.cookie % tenant_.cfg->queues);
    io.queue = static_cast<std::uint8_t>(io.vq % ingress_);
    io.segment = static_cast<std::uint16_t>(tenant_.seg_base + (x.offset / sc_.lsm->segment_bytes) % sc_.lsm->segments);
    io.true_cpu = true_cpu_ns(sc_.dpu, *tenant_.cfg, io.size, io.write);
    io.lsm = x.cookie + 1;
}

void LsmLink::complete(const Io &io, std::uint64_t t)
{
    if (io.lsm)
        store_.complete(io.lsm - 1, t);
}

}  // namespace bg::sim
