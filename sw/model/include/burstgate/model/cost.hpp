// Bit-exact reference model of the COST block: the vectorized I/O cost estimator
// (BurstCBS §5.3, Libra §4.3). It implements the formula in docs/registers.md and is
// configured only by the register writes that configure the RTL, so the same ordered
// stream of writes and descriptors yields the same cost vectors on both.
#pragma once

#include <array>
#include <cstdint>

#include "burstgate/hal.h"
#include "burstgate/regs.h"

namespace bg {

// One cost per dimension, indexed by BG_DIM_*: cpu ns, ingress bytes, egress bytes,
// software-limit bytes (or milli-VOPs in the dimension a Libra curve was loaded into).
struct CostVector {
    std::array<uint32_t, BG_COST_DIMS> d{};

    uint32_t operator[](unsigned dim) const { return d[dim]; }
    friend bool operator==(const CostVector &, const CostVector &) = default;
};

class CostEstimator {
public:
    CostEstimator();  // registers at their reset values

    void reset();

    // True when byte address `addr` falls in the COST block.
    bool owns(uint32_t addr) const;

    // Register access at absolute byte addresses. As on the RTL bus, bits 1..0 of the
    // address are ignored; a write keeps value & MASK; writes outside the block's registers
    // are ignored and reads there return 0.
    void write(uint32_t addr, uint32_t value);
    uint32_t read(uint32_t addr) const;

    // Largest k in 1..BG_SIZE_CLASSES-1 with SIZE_LO[k-1] <= size, else 0. Defined for
    // any bounds, ascending or not. Throws std::invalid_argument if size >= 2^BG_SIZE_BITS.
    unsigned size_class(uint32_t size) const;

    // Cost of one I/O. No allocation on success. Throws std::invalid_argument if
    // product >= BG_PRODUCTS or size >= 2^BG_SIZE_BITS (the descriptor cannot carry them).
    CostVector estimate(unsigned product, bool write, uint32_t size) const;

    // A HAL whose register accesses go to this estimator, so firmware (fw/ cost_table.h)
    // programs the model exactly as it programs the hardware. Valid while *this lives.
    bg_hal hal();

private:
    static void hal_write(void *ctx, uint32_t addr, uint32_t value);
    static uint32_t hal_read(void *ctx, uint32_t addr);
    template <typename Self>
    static auto locate(Self &self, uint32_t addr);

    // Register storage. size_lo_ has one entry past the registers, a bound no size reaches,
    // so estimate() can compare all bounds as two four-lane vectors; it is never addressed.
    std::array<uint32_t, BG_COST_FACTOR_COUNT> factor_;
    std::array<uint32_t, BG_COST_SIZE_LO_COUNT + 1> size_lo_;
    std::array<uint32_t, BG_COST_TABLE_BASE_COUNT> base_;
    std::array<uint32_t, BG_COST_TABLE_SLOPE_COUNT> slope_;
};

}  // namespace bg
