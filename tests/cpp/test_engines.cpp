// The engines of the Device interface that this machine can check without a board: how each
// one fails when it cannot start (one line, saying what to do), and the model's identity.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "burstgate/host/device.hpp"
#include "burstgate/host/xrt_device.hpp"

using namespace bg;

namespace {

std::string failure(const std::string &engine, const DeviceOptions &o = {})
{
    try {
        open_device(engine, AgentParams{}, o);
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "";
}

}  // namespace

// With no Alveo board (this machine, CI) the xrt engine must fail at once, in one line, and
// point at the engine that runs the same kernel without one.
TEST(Engines, XrtWithoutABoardSaysUseVerilator)
{
    DeviceOptions o;
    o.xclbin = "/nonexistent/bg_kernel.xclbin";
    o.xrt_device = 0;
    const std::string msg = failure("xrt", o);
    ASSERT_FALSE(msg.empty()) << "opening xrt without a board did not throw";
    EXPECT_NE(msg.find("--engine verilator"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    EXPECT_EQ(msg.rfind("xrt: ", 0), 0u) << msg;
    EXPECT_TRUE(xrt_available()) << "bg_host was built without libxrt-dev";
}

// xrt::ip refuses offsets beyond the CU's register window recorded in the xclbin; XrtDevice
// must refuse, when it opens, a window that stops short of the TENANT block (e.g. XRT's 64 KiB
// fallback) instead of failing at the first TENANT access in the middle of a run.
TEST(Engines, XrtRegisterWindowMustCoverTheMap)
{
    const std::uint64_t map = std::uint64_t{BG_TENANT_BASE} + BG_TENANT_SIZE;
    EXPECT_NO_THROW(check_register_window(map, "k.xclbin"));
    EXPECT_THROW(check_register_window(map - 4, "k.xclbin"), std::runtime_error);
    try {
        check_register_window(0x10000, "k.xclbin");
        FAIL() << "a 64 KiB window was accepted";
    } catch (const std::runtime_error &e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("xrt: k.xclbin ", 0), 0u) << msg;
        EXPECT_NE(msg.find("0x10000"), std::string::npos) << msg;
        char need[24];
        std::snprintf(need, sizeof need, "%#llx", static_cast<unsigned long long>(map));
        EXPECT_NE(msg.find(need), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(Engines, VerilatorSaysHowToBuildItOrRuns)
{
#ifdef BG_HAVE_VERILATOR
    auto dev = open_device("verilator", AgentParams{});
    EXPECT_EQ(dev->engine(), "verilator");
    EXPECT_EQ(dev->read32(BG_INFO_MAGIC), BG_MAP_MAGIC);
#else
    const std::string msg = failure("verilator");
    EXPECT_NE(msg.find("make cpp"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
#endif
}

TEST(Engines, BadXrtDeviceIndexIsNamed)
{
    setenv("BG_XRT_DEVICE", "zero", 1);
    EXPECT_THROW(DeviceOptions::from_env(), std::invalid_argument);
    unsetenv("BG_XRT_DEVICE");
}
