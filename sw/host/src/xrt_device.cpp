// The "xrt" engine. Built only when CMake finds libxrt-dev (BG_HAVE_XRT).
#include "burstgate/host/xrt_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "burstgate/regs.h"

#ifdef BG_HAVE_XRT
#include <experimental/xrt_ip.h>
#include <experimental/xrt_xclbin.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#endif

namespace bg {

namespace {
// The engine waits this long for a kernel that moves nothing before it calls it stuck.
constexpr auto stall_limit = std::chrono::seconds(5);
// The register map ends with the TENANT block (docs/registers.md); kernel_xml.py gives
// s_axi_control the same span as its range.
constexpr std::uint64_t map_bytes = std::uint64_t{BG_TENANT_BASE} + BG_TENANT_SIZE;

std::string hex(std::uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
    return buf;
}
}  // namespace

void check_register_window(std::uint64_t bytes, const std::string &xclbin)
{
    if (bytes < map_bytes)
        throw std::runtime_error("xrt: " + xclbin + " gives bg_kernel's s_axi_control a register window of " + hex(bytes) +
                                 " bytes, the register map needs " + hex(map_bytes) +
                                 " (TENANT at " + hex(BG_TENANT_BASE) + "); rebuild it with `make xclbin`");
}

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
    std::uint64_t window = 0;
    try {
        const xrt::xclbin xb(xclbin);
        impl_->uuid = impl_->device.load_xclbin(xb);
        // xrt::ip checks every offset against the CU's address range, which XRT >= 2.12 reads
        // from the xclbin's kernel XML (the s_axi_control port's range; 64 KiB only when the
        // XML is missing): a short window would otherwise fail at the first TENANT access.
        // The link configs instantiate one CU; with several, the smallest window counts.
        bool first = true;
        for (const xrt::xclbin::ip &cu : xb.get_kernel("bg_kernel").get_cus()) {
            window = first ? cu.get_size() : std::min<std::uint64_t>(window, cu.get_size());
            first = false;
        }
        impl_->ip = xrt::ip(impl_->device, impl_->uuid, "bg_kernel:{bg_kernel_1}");
    } catch (const std::exception &e) {
        throw std::runtime_error("xrt: cannot load " + xclbin + " with a bg_kernel_1 compute unit (" + e.what() + ")");
    }
    check_register_window(window, xclbin);
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
