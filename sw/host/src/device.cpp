// Device plumbing shared by every engine, and the model engine.
#include "burstgate/host/device.hpp"

#include <cstdlib>
#include <stdexcept>

#include "burstgate/host/xrt_device.hpp"
#ifdef BG_HAVE_VERILATOR
#include "burstgate/host/verilator_device.hpp"
#endif

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

DeviceOptions DeviceOptions::from_env()
{
    DeviceOptions o;
    if (const char *x = std::getenv("BG_XCLBIN"))
        o.xclbin = x;
    if (const char *x = std::getenv("BG_XRT_DEVICE")) {
        char *end = nullptr;
        const unsigned long v = std::strtoul(x, &end, 10);
        if (!*x || *end || v > 255)
            throw std::invalid_argument(std::string("BG_XRT_DEVICE: not a device index: '") + x + "'");
        o.xrt_device = static_cast<unsigned>(v);
    }
    if (const char *x = std::getenv("BG_TRACE"))
        o.trace = x;
    return o;
}

std::unique_ptr<Device> open_device(const std::string &engine, const AgentParams &params)
{
    return open_device(engine, params, DeviceOptions::from_env());
}

namespace {

// A kernel is built for fixed sizes; a caller asking for others gets told, not surprised.
std::unique_ptr<Device> checked(std::unique_ptr<Device> dev, const AgentParams &want)
{
    const AgentParams have = dev->params(), defaults{};
    const bool asked = want.tenants != defaults.tenants || want.ingress != defaults.ingress ||
                       want.egress != defaults.egress || want.segment_bits != defaults.segment_bits;
    if (asked && (have.tenants != want.tenants || have.ingress != want.ingress || have.egress != want.egress ||
                  have.segment_bits != want.segment_bits))
        throw std::runtime_error(dev->engine() + ": the kernel was built for " + std::to_string(have.tenants) +
                                 " tenants, " + std::to_string(have.ingress) + " ingress and " +
                                 std::to_string(have.egress) + " egress queues, " + std::to_string(have.segment_bits) +
                                 " segment bits; the scenario asks for " + std::to_string(want.tenants) + ", " +
                                 std::to_string(want.ingress) + ", " + std::to_string(want.egress) + ", " +
                                 std::to_string(want.segment_bits));
    return dev;
}

}  // namespace

std::unique_ptr<Device> open_device(const std::string &engine, const AgentParams &params, const DeviceOptions &options)
{
    if (engine == "model")
        return std::make_unique<ModelDevice>(params);
    if (engine == "verilator") {
#ifdef BG_HAVE_VERILATOR
        return checked(std::make_unique<VerilatorDevice>(options.trace), params);
#else
        throw std::runtime_error("verilator: the Verilated kernel is not built into this binary; build it with "
                                 "`make cpp` (needs rtl/burstgate/core.py) or `pip install . "
                                 "-Cburstgate.verilator=true`, or use --engine model");
#endif
    }
    if (engine == "xrt")
        return checked(std::make_unique<XrtDevice>(options.xrt_device, options.xclbin), params);
    throw std::invalid_argument("unknown engine '" + engine + "' (model, verilator, xrt)");
}

}  // namespace bg
