// The "verilator" engine: the generated bg_kernel, Verilated, behind the same Device interface
// as the model and the board. Rings live in the simulated device memory; the host side of the
// protocol is RingDevice, exactly as on XRT.
#pragma once

#include <memory>
#include <string>

#include "burstgate/host/ring_device.hpp"

namespace bg {

namespace verilator {
class KernelSim;
}

class VerilatorDevice final : public RingDevice {
public:
    // `trace`: FST file path, or "" for none.
    explicit VerilatorDevice(const std::string &trace = "", unsigned ring_log2 = 10);
    ~VerilatorDevice() override;
    std::string engine() const override { return "verilator"; }
    void write32(std::uint32_t addr, std::uint32_t value) override;
    std::uint32_t read32(std::uint32_t addr) override;
    std::uint64_t cycles() const;

protected:
    void to_device(Ring, std::size_t, std::size_t) override {}  // one memory: nothing to sync
    void from_device(Ring, std::size_t, std::size_t) override {}
    bool wait_for_kernel(bool progressed) override;

private:
    std::unique_ptr<verilator::KernelSim> sim_;
    std::uint64_t idle_cycles_ = 0;
};

}  // namespace bg
