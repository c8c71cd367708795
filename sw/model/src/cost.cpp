#include "burstgate/model/cost.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "burstgate/cost_table.h"

namespace bg {

namespace {

constexpr uint64_t kCostMax = (uint64_t{1} << BG_COST_BITS) - 1;
constexpr uint32_t kSizeLimit = uint32_t{1} << BG_SIZE_BITS;

// Out of line and cold, so the checks cost estimate() two compares and its message-building
// code stays off the hot path.
[[noreturn, gnu::cold, gnu::noinline]] void bad_size(const char *what, uint32_t size)
{
    throw std::invalid_argument(std::string(what) + ": size " + std::to_string(size) + " does not fit " +
                                std::to_string(BG_SIZE_BITS) + " bits (largest I/O is " +
                                std::to_string(kSizeLimit - 1) + " bytes)");
}

[[noreturn, gnu::cold, gnu::noinline]] void bad_product(unsigned product)
{
    throw std::invalid_argument("CostEstimator::estimate: product " + std::to_string(product) +
                                " out of range (0.." + std::to_string(BG_PRODUCTS - 1) + ")");
}

// Largest k >= 1 whose bound is <= size, else 0; any bounds, ascending or not. Branch-free
// (highest set bit of the compare mask) because random I/O sizes defeat a predictor.
static_assert(BG_COST_SIZE_LO_COUNT < 32, "class bounds are gathered in an unsigned mask");
unsigned class_of(const std::array<uint32_t, BG_COST_SIZE_LO_COUNT> &lo, uint32_t size)
{
    unsigned fits = 0;
    for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++)
        fits |= static_cast<unsigned>(lo[j] <= size) << j;
    return static_cast<unsigned>(std::bit_width(fits));
}

}  // namespace

CostEstimator::CostEstimator() { reset(); }

void CostEstimator::reset()
{
    factor_.fill(BG_COST_FACTOR_RESET);
    for (unsigned j = 0; j < size_lo_.size(); j++)
        size_lo_[j] = bg_cost_size_lo_reset(j);
    base_.fill(BG_COST_TABLE_BASE_RESET);
    slope_.fill(BG_COST_TABLE_SLOPE_RESET);
}

bool CostEstimator::owns(uint32_t addr) const { return addr - BG_COST_BASE < BG_COST_SIZE; }

// The register element at `addr` (storage, implemented bits, read-only), or a null reg. One decode
// for reads and writes; Self is CostEstimator or const CostEstimator.
template <typename Self>
auto CostEstimator::locate(Self &self, uint32_t addr)
{
    struct Element {
        decltype(&self.factor_[0]) reg;
        uint32_t mask;
        bool ro;
    };
    if (!self.owns(addr))
        return Element{nullptr, 0, true};
    const uint32_t a = addr & ~3u;  // the RTL bus ignores address bits 1..0
    auto index = [a](uint32_t first, uint32_t count) {
        return a >= first && (a - first) / 4 < count ? (a - first) / 4 : count;
    };
    if (uint32_t i = index(BG_COST_FACTOR(0), BG_COST_FACTOR_COUNT); i < BG_COST_FACTOR_COUNT)
        return Element{&self.factor_[i], BG_COST_FACTOR_MASK, BG_COST_FACTOR_RO != 0};
    if (uint32_t i = index(BG_COST_SIZE_LO(0), BG_COST_SIZE_LO_COUNT); i < BG_COST_SIZE_LO_COUNT)
        return Element{&self.size_lo_[i], BG_COST_SIZE_LO_MASK, BG_COST_SIZE_LO_RO != 0};
    if (uint32_t i = index(BG_COST_TABLE_BASE(0), BG_COST_TABLE_BASE_COUNT); i < BG_COST_TABLE_BASE_COUNT)
        return Element{&self.base_[i], BG_COST_TABLE_BASE_MASK, BG_COST_TABLE_BASE_RO != 0};
    if (uint32_t i = index(BG_COST_TABLE_SLOPE(0), BG_COST_TABLE_SLOPE_COUNT); i < BG_COST_TABLE_SLOPE_COUNT)
        return Element{&self.slope_[i], BG_COST_TABLE_SLOPE_MASK, BG_COST_TABLE_SLOPE_RO != 0};
    return Element{nullptr, 0, true};
}

void CostEstimator::write(uint32_t addr, uint32_t value)
{
    if (auto e = locate(*this, addr); e.reg && !e.ro)
        *e.reg = value & e.mask;
}

uint32_t CostEstimator::read(uint32_t addr) const
{
    auto e = locate(*this, addr);
    return e.reg ? *e.reg : 0;
}

unsigned CostEstimator::size_class(uint32_t size) const
{
    if (size >= kSizeLimit)
        bad_size("CostEstimator::size_class", size);
    return class_of(size_lo_, size);
}

CostVector CostEstimator::estimate(unsigned product, bool write, uint32_t size) const
{
    if (product >= BG_PRODUCTS)
        bad_product(product);
    if (size >= kSizeLimit)
        bad_size("CostEstimator::estimate", size);
    const unsigned k = class_of(size_lo_, size);
    const uint64_t delta = size - (k ? size_lo_[k - 1] : 0u);
    const unsigned first = bg_cost_entry(product, write, k) * BG_COST_DIMS;
    CostVector cost;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        const uint64_t raw =
            std::min(base_[first + d] + ((delta * slope_[first + d]) >> BG_SLOPE_SHIFT), kCostMax);
        cost.d[d] = static_cast<uint32_t>(std::min((raw * factor_[d]) >> BG_FACTOR_FRAC_BITS, kCostMax));
    }
    return cost;
}

bg_hal CostEstimator::hal() { return bg_hal{this, &CostEstimator::hal_write, &CostEstimator::hal_read}; }

void CostEstimator::hal_write(void *ctx, uint32_t addr, uint32_t value)
{
    static_cast<CostEstimator *>(ctx)->write(addr, value);
}

uint32_t CostEstimator::hal_read(void *ctx, uint32_t addr)
{
    return static_cast<const CostEstimator *>(ctx)->read(addr);
}

}  // namespace bg
