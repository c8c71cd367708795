// Device plumbing shared by every engine, and the model engine.
#include "burstgate/host/device.hpp"

#include <stdexcept>

namespace bg {

namespace {

void hal_write(void *ctx, std::uint32_t addr, std::uint32_t value) { static_cast<Device *>(ctx)->write32(addr, value); }
std::uint32_t hal_read(void *ctx, std::uint32_t addr) { return static_cast<Device *>(ctx)->read32(addr); }

}  // namespace

bg_hal Device::hal() { return bg_hal{this, &hal_write, &hal_read}; }

void ModelDevice::submit(std::span<const IoDesc> in, std::vector<IoDecision> &out)
{
    out.reserve(out.size() + in.size());
    for (const IoDesc &d : in)
        out.push_back(agent_.io(d));
}

void ModelDevice::complete(std::span<const IoCompletion> in)
{
    for (const IoCompletion &c : in)
        agent_.complete(c);
}

std::unique_ptr<Device> open_device(const std::string &engine, const AgentParams &params)
{
    if (engine == "model")
        return std::make_unique<ModelDevice>(params);
    if (engine == "verilator" || engine == "xrt")
        throw std::runtime_error("engine '" + engine + "' is not built into this binary yet; use --engine model");
    throw std::invalid_argument("unknown engine '" + engine + "' (model, verilator, xrt)");
}

}  // namespace bg
