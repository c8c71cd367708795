// The "verilator" engine. Compiled into bg_host when CMake builds the Verilated kernel.
#include "burstgate/host/verilator_device.hpp"

#include "burstgate/host/kernel_sim.hpp"

namespace bg {

namespace {
// Cycles the host lets the kernel run between polls, and how many without any progress it
// takes before calling the kernel stuck (far beyond any memory latency or pipeline depth).
constexpr std::uint64_t poll_cycles = 16;
constexpr std::uint64_t stall_cycles = 1'000'000;
}  // namespace

VerilatorDevice::VerilatorDevice(const std::string &trace, unsigned ring_log2)
{
    const std::uint32_t rec[3] = {record_bytes(Ring::Desc), record_bytes(Ring::Decision), record_bytes(Ring::Completion)};
    std::size_t bytes[3], total = 0;
    for (int i = 0; i < 3; i++) {
        bytes[i] = (std::size_t{rec[i]} << ring_log2);
        total += (bytes[i] + 4095) & ~std::size_t{4095};
    }
    sim_ = std::make_unique<verilator::KernelSim>(total, 8, trace);
    RingMemory mem[3];
    std::size_t at = 0;
    for (int i = 0; i < 3; i++) {
        mem[i] = RingMemory{at, sim_->memory() + at, ring_log2};
        at += (bytes[i] + 4095) & ~std::size_t{4095};
    }
    attach(mem[0], mem[1], mem[2]);
}

VerilatorDevice::~VerilatorDevice() = default;

void VerilatorDevice::write32(std::uint32_t addr, std::uint32_t value) { sim_->write32(addr, value); }
std::uint32_t VerilatorDevice::read32(std::uint32_t addr) { return sim_->read32(addr); }
std::uint64_t VerilatorDevice::cycles() const { return sim_->cycles(); }

bool VerilatorDevice::wait_for_kernel(bool progressed)
{
    idle_cycles_ = progressed ? 0 : idle_cycles_ + poll_cycles;
    sim_->run(poll_cycles);
    return idle_cycles_ < stall_cycles;
}

}  // namespace bg
