// The one interface host software drives a burstgate datapath through (docs/design.md contract 3):
// register access, descriptors in with one decision out per descriptor, in order, and
// completions. Engines: "model" (the C++ reference, bg::Agent), "verilator" (the generated
// kernel), "xrt" (an Alveo board). Everything above this interface -- the firmware window loop,
// the simulator, the trace replayer, the gateway -- is the same program on every engine, which
// is what makes a report from the model and one from the RTL comparable byte for byte.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "burstgate/hal.h"
#include "burstgate/model/agent.hpp"

namespace bg {

class Device {
public:
    virtual ~Device() = default;

    virtual std::string engine() const = 0;
    // The build's sizes, as the INFO block reports them.
    virtual AgentParams params() const = 0;

    virtual void write32(std::uint32_t addr, std::uint32_t value) = 0;
    virtual std::uint32_t read32(std::uint32_t addr) = 0;

    // Appends exactly one decision per descriptor to `out`, in descriptor order. The device
    // never drops a descriptor. Submitting while the window is held (between the firmware's
    // TICK and COMMIT) is a caller error.
    virtual void submit(std::span<const IoDesc> in, std::vector<IoDecision> &out) = 0;
    virtual void complete(std::span<const IoCompletion> in) = 0;

    // The firmware's view of this device. Valid while *this lives.
    bg_hal hal();
};

// How to reach an engine beyond its name. Defaults come from the environment so every tool
// takes them the same way: BG_XCLBIN (path), BG_XRT_DEVICE (index), BG_TRACE (FST file path).
struct DeviceOptions {
    std::string xclbin;             // xrt: the xclbin to load
    unsigned xrt_device = 0;        // xrt: device index
    std::string trace;              // verilator: write an FST trace here when not empty
    static DeviceOptions from_env();
};

// "model", "verilator" or "xrt". Throws std::invalid_argument for an unknown engine and
// std::runtime_error with one line saying what is missing when the engine cannot start.
// The model takes `params`; the verilator and xrt engines report the sizes their kernel was
// built with (params() reads INFO) and throw when they differ from a non-default `params`.
std::unique_ptr<Device> open_device(const std::string &engine, const AgentParams &params);
std::unique_ptr<Device> open_device(const std::string &engine, const AgentParams &params,
                                    const DeviceOptions &options);

// The reference model as a device.
class ModelDevice final : public Device {
public:
    explicit ModelDevice(const AgentParams &p) : agent_(p) {}
    std::string engine() const override { return "model"; }
    AgentParams params() const override { return agent_.params(); }
    void write32(std::uint32_t addr, std::uint32_t value) override { agent_.write(addr, value); }
    std::uint32_t read32(std::uint32_t addr) override { return agent_.read(addr); }
    void submit(std::span<const IoDesc> in, std::vector<IoDecision> &out) override;
    void complete(std::span<const IoCompletion> in) override;
    const Agent &agent() const { return agent_; }

private:
    Agent agent_;
};

}  // namespace bg
