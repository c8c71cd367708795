// Ring records in device memory (regs.h BG_REC_*, generated from rtl/burstgate/regmap/records.py):
// the host side of the kernel's descriptor, decision and completion rings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "burstgate/model/agent.hpp"
#include "burstgate/regs.h"

namespace bg::records {

inline void put(std::span<std::uint8_t> rec, unsigned bit, unsigned width, std::uint32_t value)
{
    const std::uint32_t mask = width == 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
    const std::size_t w = bit / 32 * 4;
    const unsigned shift = bit % 32;
    std::uint32_t word = 0;
    for (unsigned i = 0; i < 4; i++)
        word |= static_cast<std::uint32_t>(rec[w + i]) << (8 * i);
    word = (word & ~(mask << shift)) | ((value & mask) << shift);
    for (unsigned i = 0; i < 4; i++)
        rec[w + i] = static_cast<std::uint8_t>(word >> (8 * i));
}

inline std::uint32_t get(std::span<const std::uint8_t> rec, unsigned bit, unsigned width)
{
    const std::uint32_t mask = width == 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
    const std::size_t w = bit / 32 * 4;
    std::uint32_t word = 0;
    for (unsigned i = 0; i < 4; i++)
        word |= static_cast<std::uint32_t>(rec[w + i]) << (8 * i);
    return (word >> (bit % 32)) & mask;
}

#define BG_PUT(rec, R, F, v) put(rec, BG_REC_##R##_##F##_BIT, BG_REC_##R##_##F##_WIDTH, (v))
#define BG_GET(rec, R, F) get(rec, BG_REC_##R##_##F##_BIT, BG_REC_##R##_##F##_WIDTH)

// The caller zeroes `rec` (BG_REC_DESC_BYTES) first; unused bits must be 0.
inline void pack(std::span<std::uint8_t> rec, const IoDesc &d)
{
    BG_PUT(rec, DESC, TAG, d.tag);
    BG_PUT(rec, DESC, TENANT, d.tenant);
    BG_PUT(rec, DESC, QUEUE, d.queue);
    BG_PUT(rec, DESC, PRODUCT, d.product);
    BG_PUT(rec, DESC, WRITE, d.write ? 1u : 0u);
    BG_PUT(rec, DESC, SIZE, d.size);
    BG_PUT(rec, DESC, SEGMENT, d.segment);
    BG_PUT(rec, DESC, REOFFER, d.reoffer ? 1u : 0u);
}

inline void pack(std::span<std::uint8_t> rec, const IoCompletion &c)
{
    BG_PUT(rec, COMPLETION, TAG, c.tag);
    BG_PUT(rec, COMPLETION, TENANT, c.tenant);
    BG_PUT(rec, COMPLETION, QUEUE, c.queue);
    BG_PUT(rec, COMPLETION, EGRESS, c.egress);
    BG_PUT(rec, COMPLETION, CHARGE_NS, c.charge_ns);
    BG_PUT(rec, COMPLETION, SA_DELAY_NS, c.sa_delay_ns);
}

inline IoDecision unpack_decision(std::span<const std::uint8_t> rec)
{
    IoDecision d;
    d.tag = static_cast<std::uint16_t>(BG_GET(rec, DECISION, TAG));
    d.tenant = static_cast<std::uint16_t>(BG_GET(rec, DECISION, TENANT));
    d.queue = static_cast<std::uint8_t>(BG_GET(rec, DECISION, QUEUE));
    d.source = static_cast<std::uint8_t>(BG_GET(rec, DECISION, SOURCE));
    d.egress = static_cast<std::uint8_t>(BG_GET(rec, DECISION, EGRESS));
    d.hot = BG_GET(rec, DECISION, HOT) != 0;
    d.prefill = BG_GET(rec, DECISION, PREFILL) != 0;
    d.lender = static_cast<std::uint16_t>(BG_GET(rec, DECISION, LENDER));
    for (unsigned i = 0; i < BG_REC_DECISION_COST_COUNT; i++)
        d.cost.d[i] = get(rec, BG_REC_DECISION_COST_BIT + i * BG_REC_DECISION_COST_WIDTH, BG_REC_DECISION_COST_WIDTH);
    return d;
}

#undef BG_PUT
#undef BG_GET

}  // namespace bg::records
