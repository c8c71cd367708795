// The "xrt" engine: the kernel on an Alveo board through XRT's native API (Debian libxrt-dev).
// Registers through xrt::ip (the kernel is user-managed: it runs from CTRL.AP_START, XRT does
// not schedule it); rings in xrt::bo buffers synced to and from the device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "burstgate/host/ring_device.hpp"

namespace bg {

class XrtDevice final : public RingDevice {
public:
    // Opens device `index`, loads `xclbin`, attaches to the bg_kernel compute unit. Throws
    // std::runtime_error with one line naming what is missing (no board, no xclbin, no kernel).
    XrtDevice(unsigned index, const std::string &xclbin, unsigned ring_log2 = 12);
    ~XrtDevice() override;
    std::string engine() const override { return "xrt"; }
    void write32(std::uint32_t addr, std::uint32_t value) override;
    std::uint32_t read32(std::uint32_t addr) override;

protected:
    void to_device(Ring r, std::size_t offset, std::size_t bytes) override;
    void from_device(Ring r, std::size_t offset, std::size_t bytes) override;
    bool wait_for_kernel(bool progressed) override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// True when this binary was built against XRT.
bool xrt_available();

// Throws std::runtime_error (one line, naming `xclbin`) unless a compute unit register window
// of `bytes` -- what XRT's xrt::ip lets read_register/write_register reach -- covers the whole
// register map, TENANT block included. XrtDevice calls it with the window the xclbin records.
void check_register_window(std::uint64_t bytes, const std::string &xclbin);

}  // namespace bg
