// The SA stages burstgate-sim and burstgate-gateway share (sa_stages.hpp), driven by hand: the
// round robin gives each vCPU queue one turn, service times and links are the scenario's,
// accounting counts only what is measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "burstgate/sim/sa_stages.hpp"
#include "burstgate/sim/simulator.hpp"

namespace {

using namespace bg::sim;

// Runs the stages' events in (time, kind, id) order, as both programs do.
struct Driver final : SaStages::Sink {
    struct Ev {
        std::uint64_t t;
        SaEvent e;
        std::uint32_t id;
    };
    std::vector<Ev> pending;
    std::vector<std::uint32_t> cpu_order, swl_order;
    std::vector<std::uint64_t> sent;  // by id: when it crossed the egress link
    void stage_event(std::uint64_t t, SaEvent e, std::uint32_t id) override { pending.push_back({t, e, id}); }
    void run(SaStages &s, bool measured = true)
    {
        while (!pending.empty()) {
            auto it = std::min_element(pending.begin(), pending.end(), [](const Ev &a, const Ev &b) {
                return a.t != b.t ? a.t < b.t : a.e != b.e ? a.e < b.e : a.id < b.id;
            });
            const Ev ev = *it;
            pending.erase(it);
            if (ev.e == SaEvent::kCpuDone) {
                cpu_order.push_back(ev.id);
                s.cpu_done(ev.t, ev.id, measured);
            } else {
                swl_order.push_back(ev.id);
                if (sent.size() <= ev.id)
                    sent.resize(ev.id + 1);
                sent[ev.id] = s.swl_done(ev.t, ev.id, measured);
            }
        }
    }
};

Dpu one_thread(bool rr)
{
    Dpu d;
    d.threads = 1;
    d.sa_round_robin = rr;
    d.swlimit_mbps = 1000;  // 1 byte per ns
    d.egress_gbps = d.ingress_gbps = 8;  // 1 byte per ns
    d.header_bytes = 100;
    return d;
}

SaItem item(std::uint16_t vq, std::uint32_t cpu, std::uint32_t size = 0, bool write = false)
{
    SaItem it;
    it.vq = vq;
    it.true_cpu = cpu;
    it.size = size;
    it.write = write;
    return it;
}

// Catches a round robin per tenant or per arrival instead of per vCPU queue: queue 0 has
// three I/Os waiting, queue 1 one; the thread serves 0, 1, 0, 0 (the one in service first).
TEST(SaStages, RoundRobinOneTurnPerVcpuQueue)
{
    const Dpu d = one_thread(true);
    Driver drv;
    SaStages s(d, 2, drv);
    s.admit(0, 0, item(0, 100), true);  // starts at once
    s.admit(0, 1, item(0, 100), true);
    s.admit(0, 2, item(0, 100), true);
    s.admit(0, 3, item(1, 100), true);
    drv.run(s);
    EXPECT_EQ(drv.cpu_order, (std::vector<std::uint32_t>{0, 1, 3, 2}));
    EXPECT_EQ(s.in_stages(), 4u);
}

TEST(SaStages, FifoServesInArrivalOrder)
{
    const Dpu d = one_thread(false);
    Driver drv;
    SaStages s(d, 2, drv);
    for (std::uint32_t id = 0; id < 4; id++)
        s.admit(0, id, item(id == 3 ? 1 : 0, 100), true);
    drv.run(s);
    EXPECT_EQ(drv.cpu_order, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

// Catches a stage that is not a single server (overlapping services) or a wrong service time:
// CPU 100 ns each, then the limiter 1 ns per byte, then the egress link (header + write data).
TEST(SaStages, ServiceTimesAndLinks)
{
    const Dpu d = one_thread(true);
    Driver drv;
    SaStages s(d, 1, drv);
    s.admit(0, 0, item(0, 100, 1000, true), true);
    s.admit(0, 1, item(0, 100, 1000, false), true);
    drv.run(s);
    // id 0: CPU 0-100, limiter 100-1100, link 1100-2200 (100 + 1000 bytes).
    // id 1: CPU 100-200, limiter 1100-2100, link 2200-2300 (its header; a read's data comes back).
    ASSERT_EQ(drv.sent.size(), 2u);
    EXPECT_EQ(drv.sent[0], 2200u);
    EXPECT_EQ(drv.sent[1], 2300u);
    EXPECT_EQ(s.ingress(5000, 1), 6100u);  // header + 1000 bytes of read data
}

// Catches accounting that counts unmeasured work or the wrong dimension: utilization is the
// finished work over the capacity of the period, in-flight excludes deferred I/Os.
TEST(SaStages, Accounting)
{
    const Dpu d = one_thread(true);
    Driver drv;
    SaStages s(d, 1, drv);
    s.admit(0, 0, item(0, 500, 1000, false), false);  // warm-up: not measured
    drv.run(s, false);
    s.admit(10000, 1, item(0, 250, 2000, false), true);
    drv.run(s, true);
    s.complete(0, false);
    SimResult r;
    r.generated = 10;
    r.finished = 6;
    r.deferred_pending = 3;
    s.account(r, 1e-6);  // a 1 us period: capacity 1000 ns of CPU, 1000 bytes of limiter
    EXPECT_DOUBLE_EQ(r.utilization[0], 0.25);   // only id 1's 250 ns (cpu_done measured)
    EXPECT_DOUBLE_EQ(r.utilization[3], 2.0);    // 2000 bytes on a 1000-byte period
    EXPECT_DOUBLE_EQ(r.utilization[2], 0.1);    // a read's request: its 100-byte header
    EXPECT_DOUBLE_EQ(r.utilization[1], 0.0);    // its response is not complete yet
    EXPECT_DOUBLE_EQ(r.admitted_load[0], 0.25);
    EXPECT_EQ(r.in_flight, 1u);
    EXPECT_EQ(s.in_stages(), 1u);  // id 1 not yet complete
}

}  // namespace
