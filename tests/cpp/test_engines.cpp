// The engines of the Device interface that this machine can check without a board: how each
// one fails when it cannot start (one line, saying what to do), and the model's identity.
#include <gtest/gtest.h>

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

TEST(Engines, VerilatorSaysHowToBuildItOrRuns)
{
#ifdef BG_HAVE_VERILATOR
    auto dev = open_device("verilator", AgentParams{});
    EXPECT_EQ(dev->engine(), "verilator");
    EXPECT_EQ(dev->read32(BG_INFO_MAGIC), BG_MAP_MAGIC);
#else
    const std::string msg = failure("verilator");
    EXPECT_NE(msg.find("make sim"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
#endif
}

TEST(Engines, BadXrtDeviceIndexIsNamed)
{
    setenv("BG_XRT_DEVICE", "zero", 1);
    EXPECT_THROW(DeviceOptions::from_env(), std::invalid_argument);
    unsetenv("BG_XRT_DEVICE");
}
