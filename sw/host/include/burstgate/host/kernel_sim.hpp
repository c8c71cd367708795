// The Verilated bg_kernel on a clock, with the two things an Alveo shell gives it: a host that
// reads and writes s_axi_control (AXI4-Lite), and device memory behind m_axi_gmem (AXI4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

class Vbg_kernel;
class VerilatedContext;
class VerilatedFstC;

namespace bg::verilator {

class KernelSim {
public:
    // `memory_bytes` of device memory at address 0; an access outside it answers SLVERR.
    // `read_latency`: cycles from an accepted AR to its first R beat. `trace`: FST path or "";
    // a build without tracing (BG_VERILATOR_TRACE=OFF) throws std::runtime_error for a path.
    explicit KernelSim(std::size_t memory_bytes, unsigned read_latency = 8, const std::string &trace = "");
    ~KernelSim();
    KernelSim(const KernelSim &) = delete;
    KernelSim &operator=(const KernelSim &) = delete;

    void write32(std::uint32_t addr, std::uint32_t value);
    std::uint32_t read32(std::uint32_t addr);
    void run(std::uint64_t cycles);

    std::uint8_t *memory() { return mem_.data(); }
    std::size_t memory_bytes() const { return mem_.size(); }
    std::uint64_t cycles() const { return cycle_; }
    bool interrupt() const;

private:
    struct Burst {
        std::uint64_t addr;
        unsigned beats, id;
        std::uint64_t due;  // cycle its first beat may go
    };
    void tick();
    void reset();
    void dump(std::uint64_t time);  // an FST time step, if tracing
    bool in_range(std::uint64_t addr, std::size_t bytes) const { return addr <= mem_.size() && bytes <= mem_.size() - addr; }

    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vbg_kernel> top_;
#ifndef BG_VERILATOR_NO_TRACE
    std::unique_ptr<VerilatedFstC> fst_;
#endif
    std::vector<std::uint8_t> mem_;
    unsigned read_latency_;
    std::uint64_t cycle_ = 0;
    std::deque<Burst> reads_, writes_;
    unsigned read_beat_ = 0, write_beat_ = 0;
    std::deque<std::pair<unsigned, unsigned>> bresp_;  // id, resp
    bool write_error_ = false;
    struct {
        bool aw_w, ar, b, r;
        std::uint32_t rdata;
    } lite_{};  // the AXI4-Lite handshakes of the last cycle, as sampled before its edge
};

}  // namespace bg::verilator
