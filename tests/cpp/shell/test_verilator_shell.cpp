// The C++ host side of the rings (RingDevice, KernelSim's AXI memory and AXI4-Lite host)
// against the generated kernel SHELL with its unit-test passthrough datapath inside
// (rtl/burstgate/kernel/passthrough.py: NOT the datapath; it echoes each descriptor as a
// decision). Built only with -DBG_VERILATOR_DATAPATH=passthrough (`make kernel-shell`).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "burstgate/host/verilator_device.hpp"

using namespace bg;

namespace {

std::vector<IoDesc> random_descs(std::size_t n, const AgentParams &p, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<IoDesc> v(n);
    for (IoDesc &d : v) {
        d.tag = static_cast<std::uint16_t>(rng());
        d.tenant = static_cast<std::uint16_t>(rng() % p.tenants);
        d.queue = static_cast<std::uint8_t>(rng() % p.ingress);
        d.product = static_cast<std::uint8_t>(rng() % BG_PRODUCTS);
        d.write = rng() & 1;
        d.size = rng() & ((1u << BG_SIZE_BITS) - 1);
        d.segment = static_cast<std::uint16_t>(rng());
        d.reoffer = rng() & 1;
    }
    return v;
}

// What the passthrough makes of a descriptor (its docstring).
IoDecision echoed(const IoDesc &d)
{
    IoDecision e;
    e.tag = d.tag;
    e.tenant = d.tenant;
    e.queue = d.queue;
    e.source = BG_SRC_DEFER;
    e.lender = d.tenant;
    e.egress = d.queue;
    e.hot = d.write;
    e.prefill = !d.write;
    e.cost.d[0] = d.size;
    e.cost.d[1] = d.segment;
    e.cost.d[2] = d.product;
    e.cost.d[3] = (d.write ? 1u : 0u) | (d.reoffer ? 2u : 0u);
    return e;
}

// IoDecision's defaulted == is deleted (bg_vec is a C struct without one): field by field.
std::string show(const IoDecision &d)
{
    char buf[160];
    std::snprintf(buf, sizeof buf, "{tag %u tenant %u queue %u source %u lender %u egress %u hot %d prefill %d cost %u %u %u %u}",
                  d.tag, d.tenant, d.queue, d.source, d.lender, d.egress, d.hot, d.prefill, d.cost.d[0], d.cost.d[1],
                  d.cost.d[2], d.cost.d[3]);
    return buf;
}

}  // namespace

// Several times around every ring, in batches larger and smaller than the rings: the record
// packing, the doorbells and the wraparound of the C++ side, and no decision lost or repeated.
TEST(VerilatorShell, EveryDescriptorComesBackInOrder)
{
    VerilatorDevice dev("", 4);  // 16-entry rings
    const auto descs = random_descs(700, dev.params(), 7);
    std::vector<IoDecision> out;
    for (std::size_t at = 0; at < descs.size();) {
        const std::size_t k = std::min<std::size_t>(at % 3 ? 5 : 57, descs.size() - at);
        dev.submit(std::span(descs).subspan(at, k), out);
        at += k;
    }
    ASSERT_EQ(out.size(), descs.size());
    for (std::size_t i = 0; i < descs.size(); i++)
        ASSERT_EQ(show(out[i]), show(echoed(descs[i]))) << "decision " << i;
    EXPECT_EQ(dev.read32(BG_KERNEL_DESC_HEAD), descs.size());
    EXPECT_EQ(dev.read32(BG_KERNEL_STATUS), 0u);
}

// complete() returns only once the datapath counted every completion (CTRL.COMPLETIONS).
TEST(VerilatorShell, CompletionsAreTakenBeforeCompleteReturns)
{
    VerilatorDevice dev("", 4);
    std::vector<IoCompletion> c(100);
    for (std::size_t i = 0; i < c.size(); i++)
        c[i] = IoCompletion{static_cast<std::uint16_t>(i), 1, 2, 3, 1000, 2000};
    dev.complete(c);
    EXPECT_EQ(dev.read32(BG_CTRL_COMPLETIONS), 100u);
    EXPECT_EQ(dev.read32(BG_KERNEL_COMPLETION_HEAD), 100u);
}

TEST(VerilatorShell, RejectsADescriptorTheKernelCannotCarry)
{
    VerilatorDevice dev;
    IoDesc d;
    d.size = 1u << BG_SIZE_BITS;
    std::vector<IoDecision> out;
    EXPECT_THROW(dev.submit(std::span(&d, 1), out), std::invalid_argument);
    EXPECT_TRUE(out.empty());
}

TEST(VerilatorShell, WritesAnFstTraceWhenAsked)
{
    const auto path = std::filesystem::temp_directory_path() / "bg_shell_trace.fst";
    std::filesystem::remove(path);
#ifdef BG_VERILATOR_NO_TRACE
    // Built with -DBG_VERILATOR_TRACE=OFF: a trace path is refused, not silently ignored.
    EXPECT_THROW(VerilatorDevice dev(path.string()), std::runtime_error);
    EXPECT_FALSE(std::filesystem::exists(path));
#else
    {
        VerilatorDevice dev(path.string());
        std::vector<IoDecision> out;
        const auto descs = random_descs(10, dev.params(), 1);
        dev.submit(descs, out);
    }
    ASSERT_TRUE(std::filesystem::exists(path));
    EXPECT_GT(std::filesystem::file_size(path), 1000u);
    std::filesystem::remove(path);
#endif
}

// A ring outside device memory: the memory answers SLVERR, the kernel still delivers every
// record (nothing dropped) but flags the run: STATUS bit 0 and ISR bit 1.
TEST(VerilatorShell, ReadErrorsAreFlagged)
{
    VerilatorDevice dev("", 4);
    EXPECT_EQ(dev.read32(BG_KERNEL_STATUS), 0u);
    dev.write32(BG_KERNEL_CTRL, 0);
    dev.write32(BG_KERNEL_DESC_BASE_HI, 1);  // 4 GiB up: far outside the simulated memory
    dev.write32(BG_KERNEL_GIER, 1);
    dev.write32(BG_KERNEL_IER, 2);
    dev.write32(BG_KERNEL_CTRL, 1);
    dev.write32(BG_KERNEL_DESC_TAIL, dev.read32(BG_KERNEL_DESC_HEAD) + 3);
    for (int i = 0; i < 20 && dev.read32(BG_KERNEL_DECISION_TAIL) < 3; i++)
        dev.read32(BG_KERNEL_STATUS);
    EXPECT_EQ(dev.read32(BG_KERNEL_DECISION_TAIL), 3u);
    EXPECT_EQ(dev.read32(BG_KERNEL_STATUS), 1u);
    EXPECT_EQ(dev.read32(BG_KERNEL_ISR) & 2u, 2u);
}
