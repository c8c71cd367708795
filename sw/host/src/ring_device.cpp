// The doorbell protocol of the kernel's rings, shared by the Verilator and XRT engines.
#include "burstgate/host/ring_device.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "burstgate/host/records.hpp"
#include "burstgate/regs.h"

namespace bg {

namespace {

std::uint32_t size_of(const RingDevice::RingMemory &m) { return 1u << m.log2; }

}  // namespace

const RingDevice::RingMemory &RingDevice::mem(Ring r) const
{
    return r == Ring::Desc ? desc_ : r == Ring::Decision ? decision_ : completion_;
}

void RingDevice::attach(const RingMemory &desc, const RingMemory &decision, const RingMemory &completion)
{
    const std::uint32_t magic = read32(BG_INFO_MAGIC);
    if (magic != BG_MAP_MAGIC)
        throw std::runtime_error(engine() + ": INFO.MAGIC reads " + std::to_string(magic) +
                                 ", not 'BGST': this is not a burstgate kernel");
    const std::uint32_t version = read32(BG_INFO_VERSION);
    if (version != BG_REGMAP_VERSION)
        throw std::runtime_error(engine() + ": kernel implements register map version " + std::to_string(version) +
                                 ", this host " + std::to_string(BG_REGMAP_VERSION) + "; rebuild one of them");
    params_.tenants = read32(BG_INFO_TENANTS);
    params_.ingress = read32(BG_INFO_INGRESS);
    params_.egress = read32(BG_INFO_EGRESS);
    params_.segment_bits = read32(BG_INFO_SEGMENT_BITS);

    desc_ = desc;
    decision_ = decision;
    completion_ = completion;
    struct Prog {
        const RingMemory &m;
        std::uint32_t lo, hi, log2;
    } progs[] = {
        {desc_, BG_KERNEL_DESC_BASE_LO, BG_KERNEL_DESC_BASE_HI, BG_KERNEL_DESC_LOG2},
        {decision_, BG_KERNEL_DECISION_BASE_LO, BG_KERNEL_DECISION_BASE_HI, BG_KERNEL_DECISION_LOG2},
        {completion_, BG_KERNEL_COMPLETION_BASE_LO, BG_KERNEL_COMPLETION_BASE_HI, BG_KERNEL_COMPLETION_LOG2},
    };
    for (const Prog &p : progs) {
        if (p.m.device_addr % BG_RING_ALIGN || p.m.log2 < BG_RING_LOG2_MIN || p.m.log2 > BG_RING_LOG2_MAX)
            throw std::invalid_argument(engine() + ": ring at " + std::to_string(p.m.device_addr) + " of 2^" +
                                        std::to_string(p.m.log2) + " entries is misaligned or out of range");
        write32(p.lo, static_cast<std::uint32_t>(p.m.device_addr));
        write32(p.hi, static_cast<std::uint32_t>(p.m.device_addr >> 32));
        write32(p.log2, p.m.log2);
    }
    // Indices run free from the kernel's reset; continue from where they are.
    desc_head_ = desc_tail_ = read32(BG_KERNEL_DESC_HEAD);
    write32(BG_KERNEL_DESC_TAIL, desc_tail_);
    decision_head_ = read32(BG_KERNEL_DECISION_TAIL);
    write32(BG_KERNEL_DECISION_HEAD, decision_head_);
    completion_head_ = completion_tail_ = read32(BG_KERNEL_COMPLETION_HEAD);
    write32(BG_KERNEL_COMPLETION_TAIL, completion_tail_);
    write32(BG_KERNEL_CTRL, 1);
}

void RingDevice::sync_span(Ring r, std::uint32_t first, std::uint32_t count, bool to)
{
    const RingMemory &m = mem(r);
    const std::uint32_t size = size_of(m), rec = record_bytes(r);
    while (count) {
        const std::uint32_t slot = first & (size - 1), run = std::min(count, size - slot);
        if (to)
            to_device(r, std::size_t{slot} * rec, std::size_t{run} * rec);
        else
            from_device(r, std::size_t{slot} * rec, std::size_t{run} * rec);
        first += run;
        count -= run;
    }
}

void RingDevice::check(const IoDesc &d, std::size_t i) const
{
    const char *bad = d.tenant >= params_.tenants ? "tenant"
                      : d.queue >= params_.ingress ? "queue"
                      : d.product >= BG_PRODUCTS   ? "product"
                      : d.size >> BG_SIZE_BITS     ? "size"
                                                   : nullptr;
    if (bad)
        throw std::invalid_argument(engine() + ": descriptor " + std::to_string(i) + " has a " + bad +
                                    " this kernel cannot carry");
}

void RingDevice::check(const IoCompletion &c, std::size_t i) const
{
    // The wire carries what the record carries; the datapath itself counts bad completions.
    if (c.queue >= BG_QUEUES_MAX || c.egress >= BG_QUEUES_MAX || c.tenant >= BG_TENANTS_MAX)
        throw std::invalid_argument(engine() + ": completion " + std::to_string(i) +
                                    " names a queue, egress or tenant the record format cannot carry");
}

void RingDevice::stalled(const char *what) const
{
    throw std::runtime_error(engine() + ": the kernel made no progress " + what +
                             " (admission held between CTRL.WINDOW TICK and COMMIT?)");
}

void RingDevice::submit(std::span<const IoDesc> in, std::vector<IoDecision> &out)
{
    for (std::size_t i = 0; i < in.size(); i++)
        check(in[i], i);
    // Grow geometrically: an exact reserve per batch would reallocate (and page-fault) the
    // whole vector on every call of a caller that appends across batches.
    if (out.capacity() < out.size() + in.size())
        out.reserve(std::max(out.size() + in.size(), 2 * out.capacity()));
    const std::uint32_t dsize = size_of(desc_);
    std::size_t sent = 0, got = 0;
    while (got < in.size()) {
        bool progressed = false;
        if (sent < in.size()) {
            if (desc_tail_ - desc_head_ == dsize)
                desc_head_ = read32(BG_KERNEL_DESC_HEAD);
            const auto k = static_cast<std::uint32_t>(std::min<std::size_t>(dsize - (desc_tail_ - desc_head_), in.size() - sent));
            if (k) {
                for (std::uint32_t j = 0; j < k; j++) {
                    std::uint8_t *rec = desc_.host + std::size_t{(desc_tail_ + j) & (dsize - 1)} * BG_REC_DESC_BYTES;
                    std::memset(rec, 0, BG_REC_DESC_BYTES);
                    records::pack({rec, BG_REC_DESC_BYTES}, in[sent + j]);
                }
                sync_span(Ring::Desc, desc_tail_, k, true);
                desc_tail_ += k;
                sent += k;
                write32(BG_KERNEL_DESC_TAIL, desc_tail_);
                progressed = true;
            }
        }
        const std::uint32_t tail = read32(BG_KERNEL_DECISION_TAIL);
        const std::uint32_t n = tail - decision_head_;
        if (n > size_of(decision_) || n > sent - got)
            throw std::runtime_error(engine() + ": DECISION_TAIL " + std::to_string(tail) + " is not within HEAD " +
                                     std::to_string(decision_head_) + " and the descriptors sent");
        if (n) {
            sync_span(Ring::Decision, decision_head_, n, false);
            for (std::uint32_t j = 0; j < n; j++) {
                const std::uint8_t *rec =
                    decision_.host + std::size_t{(decision_head_ + j) & (size_of(decision_) - 1)} * BG_REC_DECISION_BYTES;
                out.push_back(records::unpack_decision({rec, BG_REC_DECISION_BYTES}));
            }
            decision_head_ = tail;
            got += n;
            write32(BG_KERNEL_DECISION_HEAD, decision_head_);
            progressed = true;
        }
        if (got < in.size() && !wait_for_kernel(progressed))
            stalled("deciding descriptors");
    }
}

void RingDevice::complete(std::span<const IoCompletion> in)
{
    for (std::size_t i = 0; i < in.size(); i++)
        check(in[i], i);
    const std::uint32_t csize = size_of(completion_);
    const std::uint32_t target = read32(BG_CTRL_COMPLETIONS) + read32(BG_CTRL_BAD_COMPLETIONS) +
                                 static_cast<std::uint32_t>(in.size());
    std::size_t sent = 0;
    for (;;) {
        bool progressed = false;
        if (sent < in.size()) {
            if (completion_tail_ - completion_head_ == csize)
                completion_head_ = read32(BG_KERNEL_COMPLETION_HEAD);
            const auto k = static_cast<std::uint32_t>(
                std::min<std::size_t>(csize - (completion_tail_ - completion_head_), in.size() - sent));
            if (k) {
                for (std::uint32_t j = 0; j < k; j++) {
                    std::uint8_t *rec =
                        completion_.host + std::size_t{(completion_tail_ + j) & (csize - 1)} * BG_REC_COMPLETION_BYTES;
                    std::memset(rec, 0, BG_REC_COMPLETION_BYTES);
                    records::pack({rec, BG_REC_COMPLETION_BYTES}, in[sent + j]);
                }
                sync_span(Ring::Completion, completion_tail_, k, true);
                completion_tail_ += k;
                sent += k;
                write32(BG_KERNEL_COMPLETION_TAIL, completion_tail_);
                progressed = true;
            }
        }
        if (sent == in.size() && read32(BG_CTRL_COMPLETIONS) + read32(BG_CTRL_BAD_COMPLETIONS) == target)
            return;
        if (!wait_for_kernel(progressed))
            stalled("taking completions");
    }
}

}  // namespace bg
