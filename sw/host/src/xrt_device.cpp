// The "xrt" engine. Built only when CMake finds libxrt-dev (BG_HAVE_XRT).
#include "burstgate/host/xrt_device.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#ifdef BG_HAVE_XRT
#include <experimental/xrt_ip.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#endif

namespace bg {

namespace {
// The engine waits this long for a kernel that moves nothing before it calls it stuck.
constexpr auto stall_limit = std::chrono::seconds(5);
}  // namespace

#ifdef BG_HAVE_XRT

bool xrt_available() { return true; }

struct XrtDevice::Impl {
    xrt::device device;
    xrt::uuid uuid;
    xrt::ip ip;
    xrt::bo bo[3];
    std::chrono::steady_clock::time_point last_progress = std::chrono::steady_clock::now();
};

XrtDevice::XrtDevice(unsigned index, const std::string &xclbin, unsigned ring_log2) : impl_(std::make_unique<Impl>())
{
    try {
        impl_->device = xrt::device(index);
    } catch (const std::exception &e) {
        throw std::runtime_error("xrt: cannot open Alveo device " + std::to_string(index) + " (" + e.what() +
                                 "); without a board, run the same kernel with --engine verilator");
    }
    if (xclbin.empty())
        throw std::runtime_error("xrt: no xclbin given (set BG_XCLBIN or --xclbin; `make xclbin` builds one)");
    try {
        impl_->uuid = impl_->device.load_xclbin(xclbin);
        impl_->ip = xrt::ip(impl_->device, impl_->uuid, "bg_kernel:{bg_kernel_1}");
    } catch (const std::exception &e) {
        throw std::runtime_error("xrt: cannot load " + xclbin + " with a bg_kernel_1 compute unit (" + e.what() + ")");
    }
    RingMemory mem[3];
    const Ring rings[3] = {Ring::Desc, Ring::Decision, Ring::Completion};
    for (int i = 0; i < 3; i++) {
        const std::size_t bytes = std::size_t{record_bytes(rings[i])} << ring_log2;
        // Memory bank 0: the link configs (scripts/alveo/*.cfg) put m_axi_gmem there.
        impl_->bo[i] = xrt::bo(impl_->device, bytes, xrt::bo::flags::normal, 0);
        mem[i] = RingMemory{impl_->bo[i].address(), impl_->bo[i].map<std::uint8_t *>(), ring_log2};
    }
    attach(mem[0], mem[1], mem[2]);
}

XrtDevice::~XrtDevice()
{
    if (impl_ && impl_->ip)
        impl_->ip.write_register(BG_KERNEL_CTRL, 0);
}

void XrtDevice::write32(std::uint32_t addr, std::uint32_t value) { impl_->ip.write_register(addr, value); }
std::uint32_t XrtDevice::read32(std::uint32_t addr) { return impl_->ip.read_register(addr); }

void XrtDevice::to_device(Ring r, std::size_t offset, std::size_t bytes)
{
    impl_->bo[static_cast<int>(r)].sync(XCL_BO_SYNC_BO_TO_DEVICE, bytes, offset);
}

void XrtDevice::from_device(Ring r, std::size_t offset, std::size_t bytes)
{
    impl_->bo[static_cast<int>(r)].sync(XCL_BO_SYNC_BO_FROM_DEVICE, bytes, offset);
}

bool XrtDevice::wait_for_kernel(bool progressed)
{
    const auto now = std::chrono::steady_clock::now();
    if (progressed)
        impl_->last_progress = now;
    else
        std::this_thread::yield();
    return now - impl_->last_progress < stall_limit;
}

#else  // !BG_HAVE_XRT

bool xrt_available() { return false; }

struct XrtDevice::Impl {};

XrtDevice::XrtDevice(unsigned, const std::string &, unsigned)
{
    throw std::runtime_error("xrt: this binary was built without XRT (apt-get install libxrt-dev, rebuild); "
                             "without a board, run with --engine verilator");
}
XrtDevice::~XrtDevice() = default;
void XrtDevice::write32(std::uint32_t, std::uint32_t) {}
std::uint32_t XrtDevice::read32(std::uint32_t) { return 0; }
void XrtDevice::to_device(Ring, std::size_t, std::size_t) {}
void XrtDevice::from_device(Ring, std::size_t, std::size_t) {}
bool XrtDevice::wait_for_kernel(bool) { return false; }

#endif

}  // namespace bg
