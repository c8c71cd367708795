// The host side of the kernel's rings (KERNEL block, docs/registers.md): what the Verilator and
// XRT engines share. An engine supplies register access, the rings' memory and a way to wait;
// this class runs the doorbell protocol, so both drive the generated kernel identically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "burstgate/host/device.hpp"

namespace bg {

class RingDevice : public Device {
public:
    enum class Ring { Desc, Decision, Completion };
    // Where a ring lives: device address for the kernel, host pointer for this side.
    struct RingMemory {
        std::uint64_t device_addr = 0;  // aligned to BG_RING_ALIGN
        std::uint8_t *host = nullptr;   // (1 << log2) * record bytes
        std::uint32_t log2 = 0;         // BG_RING_LOG2_MIN..BG_RING_LOG2_MAX
    };

    AgentParams params() const override { return params_; }
    void submit(std::span<const IoDesc> in, std::vector<IoDecision> &out) override;
    // Returns once the datapath has taken every completion (CTRL.COMPLETIONS +
    // CTRL.BAD_COMPLETIONS advanced by in.size()), so a later descriptor sees their effect.
    void complete(std::span<const IoCompletion> in) override;

    static constexpr std::uint32_t record_bytes(Ring r);

protected:
    RingDevice() = default;
    // Call once the registers work: checks INFO.MAGIC, reads the sizes, programs the rings,
    // sets CTRL.AP_START. Throws std::runtime_error on a kernel that is not burstgate.
    void attach(const RingMemory &desc, const RingMemory &decision, const RingMemory &completion);

    // Make host writes of [offset, offset + bytes) of a ring visible to the kernel, or the
    // kernel's writes visible to the host.
    virtual void to_device(Ring r, std::size_t offset, std::size_t bytes) = 0;
    virtual void from_device(Ring r, std::size_t offset, std::size_t bytes) = 0;
    // Nothing moved: let the kernel run a while. Returns false once the engine gives up
    // (simulated cycles or wall time without progress); the caller then throws.
    virtual bool wait_for_kernel(bool progressed) = 0;

private:
    const RingMemory &mem(Ring r) const;
    void sync_span(Ring r, std::uint32_t first, std::uint32_t count, bool to);
    void check(const IoDesc &d, std::size_t i) const;
    void check(const IoCompletion &c, std::size_t i) const;
    [[noreturn]] void stalled(const char *what) const;

    AgentParams params_{};
    RingMemory desc_{}, decision_{}, completion_{};
    std::uint32_t desc_tail_ = 0, desc_head_ = 0;
    std::uint32_t decision_head_ = 0;
    std::uint32_t completion_tail_ = 0, completion_head_ = 0;
};

constexpr std::uint32_t RingDevice::record_bytes(Ring r)
{
    return r == Ring::Desc ? BG_REC_DESC_BYTES : r == Ring::Decision ? BG_REC_DECISION_BYTES : BG_REC_COMPLETION_BYTES;
}

}  // namespace bg
