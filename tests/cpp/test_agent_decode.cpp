// Register decode of the TENANT block (sw/model/src/agent.cpp), swept over every word of the
// block for a full build (BG_TENANTS_MAX tenants) and a small one: every element of every
// per-tenant array of regs.h is written and read back and must follow the documented rules
// (agent.hpp, docs/registers.md): rw arrays keep the value for implemented tenants and read 0
// beyond them; ro arrays ignore writes; BURST_LIST keeps its implemented bits; the gaps read
// 0; address bits 1..0 are ignored. The ro arrays are then reached through the datapath
// (COMMIT copies GRANT and LEND_GRANT into REMAINING and LENDABLE; one I/O per tenant with a
// cost unique to that tenant fills USAGE, THROTTLE, THROTTLE_N, SPILL_N and HIST) and every
// element must name its own tenant and dimension. A decode that maps an address to the wrong
// array, tenant or dimension, or lets a write through to a read-only array, fails here with
// the address in the message.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "burstgate/latency_hist.h"
#include "burstgate/model/agent.hpp"
#include "burstgate/regs.h"

namespace {

using namespace bg;

// A value unique to each word address (and never 0), so any aliasing shows.
std::uint32_t tag(std::uint32_t addr) { return (addr * 2654435761u) ^ 0x5A5A0001u; }

struct Array {
    const char *name;
    std::uint32_t first, count;
};

// Every array of the TENANT block, from the generated map.
const Array kArrays[] = {
    {"RES_BASE", BG_TENANT_RES_BASE(0), BG_TENANT_RES_BASE_COUNT},
    {"GRANT", BG_TENANT_GRANT(0), BG_TENANT_GRANT_COUNT},
    {"LEND_GRANT", BG_TENANT_LEND_GRANT(0), BG_TENANT_LEND_GRANT_COUNT},
    {"REMAINING", BG_TENANT_REMAINING(0), BG_TENANT_REMAINING_COUNT},
    {"LENDABLE", BG_TENANT_LENDABLE(0), BG_TENANT_LENDABLE_COUNT},
    {"USAGE", BG_TENANT_USAGE(0), BG_TENANT_USAGE_COUNT},
    {"THROTTLE", BG_TENANT_THROTTLE(0), BG_TENANT_THROTTLE_COUNT},
    {"THROTTLE_N", BG_TENANT_THROTTLE_N(0), BG_TENANT_THROTTLE_N_COUNT},
    {"SPILL_N", BG_TENANT_SPILL_N(0), BG_TENANT_SPILL_N_COUNT},
    {"BURST_LIST", BG_TENANT_BURST_LIST(0), BG_TENANT_BURST_LIST_COUNT},
    {"COUNT_GRANT", BG_TENANT_COUNT_GRANT(0), BG_TENANT_COUNT_GRANT_COUNT},
    {"HIST", BG_TENANT_HIST(0), BG_TENANT_HIST_COUNT},
};

// The array holding addr and its element index, or nullptr for a gap.
const Array *locate(std::uint32_t addr, std::uint32_t &elem)
{
    for (const Array &a : kArrays)
        if (addr >= a.first && addr < a.first + 4u * a.count) {
            elem = (addr - a.first) / 4u;
            return &a;
        }
    return nullptr;
}

bool rw_vector(const Array *a)
{
    return a && (a->first == BG_TENANT_RES_BASE(0) || a->first == BG_TENANT_GRANT(0) ||
                 a->first == BG_TENANT_LEND_GRANT(0));
}

// Cost of tenant t's one I/O: different in every dimension and for every tenant.
bg_vec cost_of(std::uint32_t t) { return bg_vec{{t + 1u, 2u * t + 3u, 3u * t + 5u, 7u * t + 11u}}; }

class TenantDecode : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(TenantDecode, EveryElementOfEveryArrayFollowsTheDocumentedRules)
{
    const std::uint32_t n = GetParam();
    Agent a(AgentParams{n, 1, 1, 16});
    const std::uint32_t lo = BG_TENANT_BASE, hi = BG_TENANT_BASE + BG_TENANT_SIZE;

    // Writes: every word, with the low address bits set on some (they must be ignored).
    for (std::uint32_t addr = lo; addr < hi; addr += 4)
        a.write(addr | ((addr >> 2) & 3u), tag(addr));
    for (std::uint32_t addr = lo; addr < hi; addr += 4) {
        std::uint32_t e = 0;
        const Array *arr = locate(addr, e);
        std::uint32_t want = 0;
        if (rw_vector(arr))
            want = e / BG_COST_DIMS < n ? tag(addr) : 0u;
        else if (arr && arr->first == BG_TENANT_BURST_LIST(0))
            want = tag(addr) & BG_TENANT_BURST_LIST_MASK;
        else if (arr && arr->first == BG_TENANT_COUNT_GRANT(0))  // rw scalar
            want = e < n ? tag(addr) : 0u;
        const std::uint32_t got = a.read(addr);
        ASSERT_EQ(got, want) << std::hex << "addr 0x" << addr << " (" << (arr ? arr->name : "gap") << "["
                             << std::dec << e << "]), " << n << " tenants";
        for (std::uint32_t low = 1; low < 4; low++)
            ASSERT_EQ(a.read(addr | low), got) << std::hex << "addr 0x" << (addr | low);
    }

    // The count gate back to its reset (no cap), so the I/Os below are decided by the budgets.
    for (std::uint32_t t = 0; t < n; t++)
        a.write(BG_TENANT_COUNT_GRANT(t), BG_TENANT_COUNT_GRANT_RESET);

    // COMMIT copies each tenant's GRANT to REMAINING and LEND_GRANT to LENDABLE, element by
    // element: the read-only vector arrays must decode to the same tenant and dimension.
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    for (std::uint32_t e = 0; e < BG_TENANT_REMAINING_COUNT; e++) {
        const bool impl = e / BG_COST_DIMS < n;
        ASSERT_EQ(a.read(BG_TENANT_REMAINING(e)), impl ? tag(BG_TENANT_GRANT(e)) : 0u) << "REMAINING[" << e << "]";
        ASSERT_EQ(a.read(BG_TENANT_LENDABLE(e)), impl ? tag(BG_TENANT_LEND_GRANT(e)) : 0u) << "LENDABLE[" << e << "]";
    }

    // One I/O per tenant, BIOS rules (agent.hpp): t % 3 == 0 is paid from its own grant (OWN),
    // 1 has no grant but base room and a pool (RESERVED, a spill), 2 has neither (DEFER).
    for (std::uint32_t t = 0; t < n; t++) {
        const std::uint32_t cls = t % 3;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            a.write(BG_TENANT_GRANT(t * BG_COST_DIMS + d), cls == 0 ? 0xFFFFFFFFu : 0u);
            a.write(BG_TENANT_LEND_GRANT(t * BG_COST_DIMS + d), 0);
            a.write(BG_TENANT_RES_BASE(t * BG_COST_DIMS + d), cls == 1 ? 0xFFFFFFFFu : 0u);
        }
    }
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        a.write(BG_CTRL_POOL(d), 0xFFFFFFFFu);
    a.write(BG_CTRL_SCHEDULER, BG_SCHED_BIOS);
    a.write(BG_CTRL_BURST_N, 0);
    a.write(BG_SEGMON_HOT_THRESHOLD, BG_SEGMON_HOT_THRESHOLD_MASK);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    for (std::uint32_t t = 0; t < n; t++) {
        IoDesc io;
        io.tag = static_cast<std::uint16_t>(t);
        io.tenant = static_cast<std::uint16_t>(t);
        io.size = 4096;
        io.segment = static_cast<std::uint16_t>(t);
        const IoDecision dec = a.io_costed(io, cost_of(t));
        const std::uint8_t want = t % 3 == 0 ? BG_SRC_OWN : t % 3 == 1 ? BG_SRC_RESERVED : BG_SRC_DEFER;
        ASSERT_EQ(dec.source, want) << "tenant " << t;
        if (dec.admitted())  // completed at once, so no egress or buffer ever runs out
            a.complete(IoCompletion{dec.tag, dec.tenant, dec.queue, dec.egress, dec.cost.d[BG_DIM_CPU],
                                    bg_lh_lower(t % BG_HIST_BUCKETS)});
    }
    for (std::uint32_t t = 0; t < BG_TENANTS_MAX; t++) {
        const bool impl = t < n, admitted = impl && t % 3 != 2, deferred = impl && t % 3 == 2;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            const std::uint32_t e = t * BG_COST_DIMS + d;
            ASSERT_EQ(a.read(BG_TENANT_USAGE(e)), admitted ? cost_of(t).d[d] : 0u) << "USAGE[" << e << "]";
            ASSERT_EQ(a.read(BG_TENANT_THROTTLE(e)), deferred ? cost_of(t).d[d] : 0u) << "THROTTLE[" << e << "]";
        }
        ASSERT_EQ(a.read(BG_TENANT_THROTTLE_N(t)), deferred ? 1u : 0u) << "THROTTLE_N[" << t << "]";
        ASSERT_EQ(a.read(BG_TENANT_SPILL_N(t)), impl && t % 3 == 1 ? 1u : 0u) << "SPILL_N[" << t << "]";
        for (std::uint32_t b = 0; b < BG_HIST_BUCKETS; b++)
            ASSERT_EQ(a.read(BG_TENANT_HIST(t * BG_HIST_BUCKETS + b)), admitted && b == t % BG_HIST_BUCKETS ? 1u : 0u)
                << "HIST[" << t * BG_HIST_BUCKETS + b << "]";
    }
    // The read-only arrays still ignore writes once they hold something.
    a.write(BG_TENANT_USAGE(0), 0xDEAD);
    a.write(BG_TENANT_THROTTLE_N(2 % n), 0xDEAD);
    EXPECT_EQ(a.read(BG_TENANT_USAGE(0)), cost_of(0).d[0]);
    EXPECT_EQ(a.read(BG_TENANT_THROTTLE_N(2 % n)), 2 % n == 2 ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(Builds, TenantDecode, ::testing::Values(BG_TENANTS_MAX, 5u),
                         [](const auto &info) { return std::to_string(info.param) + "_tenants"; });

// The blocks on either side of TENANT keep their own decode: the tenant fast path must not
// swallow them, and their arrays keep element-exact behaviour.
TEST(AgentDecode, NeighbouringBlocksAndControlArrays)
{
    Agent a(AgentParams{8, 3, 2, 16});
    // Just below and at the end of the TENANT block: unmapped, reads 0, writes ignored.
    a.write(BG_TENANT_BASE - 4, 77);
    a.write(BG_TENANT_BASE + BG_TENANT_SIZE, 77);
    EXPECT_EQ(a.read(BG_TENANT_BASE - 4), 0u);
    EXPECT_EQ(a.read(BG_TENANT_BASE + BG_TENANT_SIZE), 0u);
    // COST block (decoded by the estimator): its first and last table entries read back.
    a.write(BG_COST_TABLE_BASE(0), 0x123);
    a.write(BG_COST_TABLE_BASE(BG_COST_TABLE_BASE_COUNT - 1), 0x456);
    EXPECT_EQ(a.read(BG_COST_TABLE_BASE(0)), 0x123u & BG_COST_TABLE_BASE_MASK);
    EXPECT_EQ(a.read(BG_COST_TABLE_BASE(BG_COST_TABLE_BASE_COUNT - 1)), 0x456u & BG_COST_TABLE_BASE_MASK);
    // CTRL arrays: POOL and GLOBAL rw per element, ACTIVE and HIST_ALL ro.
    for (std::uint32_t i = 0; i < BG_CTRL_POOL_COUNT; i++)
        a.write(BG_CTRL_POOL(i), tag(BG_CTRL_POOL(i)));
    for (std::uint32_t i = 0; i < BG_CTRL_GLOBAL_COUNT; i++)
        a.write(BG_CTRL_GLOBAL(i), tag(BG_CTRL_GLOBAL(i)));
    for (std::uint32_t i = 0; i < BG_CTRL_ACTIVE_COUNT; i++)
        a.write(BG_CTRL_ACTIVE(i), 0xFFFFFFFFu);
    for (std::uint32_t i = 0; i < BG_CTRL_POOL_COUNT; i++)
        EXPECT_EQ(a.read(BG_CTRL_POOL(i)), tag(BG_CTRL_POOL(i))) << "POOL[" << i << "]";
    for (std::uint32_t i = 0; i < BG_CTRL_GLOBAL_COUNT; i++)
        EXPECT_EQ(a.read(BG_CTRL_GLOBAL(i)), tag(BG_CTRL_GLOBAL(i))) << "GLOBAL[" << i << "]";
    for (std::uint32_t i = 0; i < BG_CTRL_ACTIVE_COUNT; i++)
        EXPECT_EQ(a.read(BG_CTRL_ACTIVE(i)), 0u) << "ACTIVE[" << i << "]";
    // LB.MAP: implemented ingress queues only, masked to the implemented egress queues.
    for (std::uint32_t i = 0; i < BG_LB_MAP_COUNT; i++)
        a.write(BG_LB_MAP(i), 0xFFFF);
    for (std::uint32_t i = 0; i < BG_LB_MAP_COUNT; i++)
        EXPECT_EQ(a.read(BG_LB_MAP(i)), i < 3 ? 0x3u : 0u) << "LB.MAP[" << i << "]";
}

}  // namespace
