// Cycle loop: inputs for a cycle are driven, the model settles with the clock low, the
// handshakes of that cycle are sampled, the rising edge is applied, and the memory and the
// host update their state from what was sampled -- the order a real AXI slave sees.
#include "burstgate/host/kernel_sim.hpp"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "Vbg_kernel.h"
#include "verilated.h"
#ifndef BG_VERILATOR_NO_TRACE
#include "verilated_fst_c.h"
#endif

namespace bg::verilator {

namespace {
constexpr unsigned beat_bytes = 16;  // m_axi_gmem data width: 128 bits
constexpr std::uint64_t access_limit = 1000;  // cycles an AXI4-Lite access may take
// AXI data is little-endian; the memory copies whole words in the host's order.
static_assert(std::endian::native == std::endian::little);
}  // namespace

KernelSim::KernelSim(std::size_t memory_bytes, unsigned read_latency, const std::string &trace)
    : ctx_(std::make_unique<VerilatedContext>()), mem_(memory_bytes, 0), read_latency_(read_latency)
{
#ifdef BG_VERILATOR_NO_TRACE
    // Verilated without --trace-fst, which costs about 11 % of the model's speed even when
    // nothing is dumped (docs/results.md, "Verilated kernel throughput").
    if (!trace.empty())
        throw std::runtime_error("verilator: FST trace " + trace +
                                 " asked for, but this build has no tracing; configure it with -DBG_VERILATOR_TRACE=ON");
    top_ = std::make_unique<Vbg_kernel>(ctx_.get(), "bg_kernel");
#else
    if (!trace.empty())
        ctx_->traceEverOn(true);
    top_ = std::make_unique<Vbg_kernel>(ctx_.get(), "bg_kernel");
    if (!trace.empty()) {
        fst_ = std::make_unique<VerilatedFstC>();
        top_->trace(fst_.get(), 99);
        fst_->open(trace.c_str());
    }
#endif
    reset();
}

KernelSim::~KernelSim()
{
#ifndef BG_VERILATOR_NO_TRACE
    if (fst_)
        fst_->close();
#endif
    top_->final();
}

void KernelSim::dump([[maybe_unused]] std::uint64_t time)
{
#ifndef BG_VERILATOR_NO_TRACE
    if (fst_)
        fst_->dump(time);
#endif
}

// Verilator renames the port: "interrupt" is a reserved word in its C++ output.
bool KernelSim::interrupt() const { return top_->__SYM__interrupt; }

void KernelSim::reset()
{
    Vbg_kernel &t = *top_;
    t.ap_rst_n = 0;
    t.s_axi_control_awvalid = t.s_axi_control_wvalid = t.s_axi_control_arvalid = 0;
    t.s_axi_control_bready = t.s_axi_control_rready = 0;
    t.s_axi_control_wstrb = 0xF;
    for (int i = 0; i < 4; i++)
        tick();
    t.ap_rst_n = 1;
    tick();
}

void KernelSim::tick()
{
    Vbg_kernel &t = *top_;
    // The memory's side of this cycle, from its state.
    t.m_axi_gmem_arready = reads_.size() < 8;
    t.m_axi_gmem_awready = writes_.size() < 8;
    t.m_axi_gmem_wready = !writes_.empty();
    const bool rvalid = !reads_.empty() && reads_.front().due <= cycle_;
    t.m_axi_gmem_rvalid = rvalid;
    if (rvalid) {
        const Burst &b = reads_.front();
        const std::uint64_t addr = b.addr + std::uint64_t{read_beat_} * beat_bytes;
        const bool ok = in_range(addr, beat_bytes);
        for (unsigned w = 0; w < beat_bytes / 4; w++) {
            std::uint32_t word = 0;
            if (ok)
                std::memcpy(&word, &mem_[addr + 4 * w], 4);
            t.m_axi_gmem_rdata[w] = word;
        }
        t.m_axi_gmem_rresp = ok ? 0 : 2;
        t.m_axi_gmem_rlast = read_beat_ + 1 == b.beats;
        t.m_axi_gmem_rid = b.id;
    }
    t.m_axi_gmem_bvalid = !bresp_.empty();
    if (!bresp_.empty()) {
        t.m_axi_gmem_bid = bresp_.front().first;
        t.m_axi_gmem_bresp = bresp_.front().second;
    }

    t.ap_clk = 0;
    t.eval();
    dump(2 * cycle_);
    // Sample this cycle's handshakes: the host's (AXI4-Lite) for write32/read32, the memory's.
    lite_.aw_w = t.s_axi_control_awready && t.s_axi_control_wready;
    lite_.ar = t.s_axi_control_arready;
    lite_.b = t.s_axi_control_bvalid;
    lite_.r = t.s_axi_control_rvalid;
    lite_.rdata = t.s_axi_control_rdata;
    // The bursts are built only on a handshake: this loop is the simulator's inner loop.
    const bool ar = t.m_axi_gmem_arvalid && t.m_axi_gmem_arready;
    Burst ar_burst{};
    if (ar)
        ar_burst = Burst{t.m_axi_gmem_araddr, t.m_axi_gmem_arlen + 1u, t.m_axi_gmem_arid, cycle_ + 1 + read_latency_};
    const bool aw = t.m_axi_gmem_awvalid && t.m_axi_gmem_awready;
    Burst aw_burst{};
    if (aw)
        aw_burst = Burst{t.m_axi_gmem_awaddr, t.m_axi_gmem_awlen + 1u, t.m_axi_gmem_awid, 0};
    const bool r = rvalid && t.m_axi_gmem_rready;
    const bool b = t.m_axi_gmem_bvalid && t.m_axi_gmem_bready;
    const bool w = t.m_axi_gmem_wvalid && t.m_axi_gmem_wready;
    if (w) {
        const Burst &wb = writes_.front();
        const std::uint64_t addr = wb.addr + std::uint64_t{write_beat_} * beat_bytes;
        if (!in_range(addr, beat_bytes)) {
            write_error_ = true;
        } else if (t.m_axi_gmem_wstrb == (1u << beat_bytes) - 1) {
            // The common case (ring records are whole beats): four words at once, in the
            // host's byte order like the read path above (static_assert: little-endian).
            for (unsigned i = 0; i < beat_bytes / 4; i++) {
                const std::uint32_t word = t.m_axi_gmem_wdata[i];
                std::memcpy(&mem_[addr + 4 * i], &word, 4);
            }
        } else {
            for (unsigned i = 0; i < beat_bytes; i++)
                if (t.m_axi_gmem_wstrb >> i & 1)
                    mem_[addr + i] = static_cast<std::uint8_t>(t.m_axi_gmem_wdata[i / 4] >> (8 * (i % 4)));
        }
    }
    const bool wlast = w && t.m_axi_gmem_wlast;

    t.ap_clk = 1;
    t.eval();
    dump(2 * cycle_ + 1);
    cycle_++;

    if (ar)
        reads_.push_back(ar_burst);
    if (r && ++read_beat_ == reads_.front().beats) {
        reads_.pop_front();
        read_beat_ = 0;
    }
    if (b)
        bresp_.pop_front();
    if (w) {
        write_beat_++;
        if (wlast) {
            bresp_.emplace_back(writes_.front().id, write_error_ || write_beat_ != writes_.front().beats ? 2u : 0u);
            writes_.pop_front();
            write_beat_ = 0;
            write_error_ = false;
        }
    }
    if (aw)
        writes_.push_back(aw_burst);
}

void KernelSim::run(std::uint64_t cycles)
{
    for (std::uint64_t i = 0; i < cycles; i++)
        tick();
}

void KernelSim::write32(std::uint32_t addr, std::uint32_t value)
{
    Vbg_kernel &t = *top_;
    t.s_axi_control_awaddr = addr;
    t.s_axi_control_wdata = value;
    t.s_axi_control_awvalid = t.s_axi_control_wvalid = 1;
    for (std::uint64_t n = 0;; n++) {
        if (n == access_limit)
            throw std::runtime_error("verilator: s_axi_control write " + std::to_string(addr) + " not accepted");
        tick();
        if (lite_.aw_w)
            break;
    }
    t.s_axi_control_awvalid = t.s_axi_control_wvalid = 0;
    t.s_axi_control_bready = 1;
    for (std::uint64_t n = 0;; n++) {
        if (n == access_limit)
            throw std::runtime_error("verilator: s_axi_control write " + std::to_string(addr) + " got no response");
        tick();
        if (lite_.b)
            break;
    }
    t.s_axi_control_bready = 0;
}

std::uint32_t KernelSim::read32(std::uint32_t addr)
{
    Vbg_kernel &t = *top_;
    t.s_axi_control_araddr = addr;
    t.s_axi_control_arvalid = 1;
    for (std::uint64_t n = 0;; n++) {
        if (n == access_limit)
            throw std::runtime_error("verilator: s_axi_control read " + std::to_string(addr) + " not accepted");
        tick();
        if (lite_.ar)
            break;
    }
    t.s_axi_control_arvalid = 0;
    t.s_axi_control_rready = 1;
    for (std::uint64_t n = 0;; n++) {
        if (n == access_limit)
            throw std::runtime_error("verilator: s_axi_control read " + std::to_string(addr) + " got no data");
        tick();
        if (lite_.r)
            break;
    }
    t.s_axi_control_rready = 0;
    return lite_.rdata;
}

}  // namespace bg::verilator
