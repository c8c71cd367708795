#include "burstgate/model/cost.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "burstgate/cost_table.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The entry past the SIZE_LO registers: above every size a descriptor can carry, and a
// positive int32, so a signed lane compare orders it like the 24-bit bounds.
constexpr uint32_t kNoBound = 0x7FFFFFFFu;
static_assert(kNoBound >= kSizeLimit && BG_COST_SIZE_LO_MASK < kNoBound);

using SizeBounds = std::array<uint32_t, BG_COST_SIZE_LO_COUNT + 1>;

// Largest k >= 1 whose bound is <= size, else 0; any bounds, ascending or not. Branch-free
// (highest set bit of the compare mask) because random I/O sizes defeat a predictor. With
// SSE2 the eight bounds (seven and kNoBound) are two signed lane compares: bounds and size
// are below 2^24, so signed and unsigned order agree.
static_assert(BG_COST_SIZE_LO_COUNT < 32, "class bounds are gathered in an unsigned mask");
unsigned class_of(const SizeBounds &lo, uint32_t size)
{
#if defined(__SSE2__)
    static_assert(BG_COST_SIZE_LO_COUNT + 1 == 8, "two four-lane compares cover the bounds");
    const __m128i s = _mm_set1_epi32(static_cast<int>(size));
    const __m128i above0 = _mm_cmpgt_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(&lo[0])), s);
    const __m128i above1 = _mm_cmpgt_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(&lo[4])), s);
    const unsigned above = static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(above0)) |
                                                 (_mm_movemask_ps(_mm_castsi128_ps(above1)) << 4));
    const unsigned fits = ~above & ((1u << BG_COST_SIZE_LO_COUNT) - 1u);
#else
    unsigned fits = 0;
    for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++)
        fits |= static_cast<unsigned>(lo[j] <= size) << j;
#endif
    return static_cast<unsigned>(std::bit_width(fits));
}

#if defined(__SSE2__)
// x's 64-bit lanes saturated at 2^32 - 1, read from their low halves: all ones where the
// high half is non-zero.
inline __m128i sat_lo32(__m128i x)
{
    const __m128i hi_zero = _mm_cmpeq_epi32(_mm_srli_epi64(x, 32), _mm_setzero_si128());
    return _mm_or_si128(x, _mm_andnot_si128(hi_zero, _mm_set1_epi32(-1)));
}
#endif

}  // namespace

CostEstimator::CostEstimator() { reset(); }

void CostEstimator::reset()
{
    factor_.fill(BG_COST_FACTOR_RESET);
    for (unsigned j = 0; j < BG_COST_SIZE_LO_COUNT; j++)
        size_lo_[j] = bg_cost_size_lo_reset(j);
    size_lo_[BG_COST_SIZE_LO_COUNT] = kNoBound;
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
#if defined(__SSE2__)
    // The loop below, four dimensions at once: pmuludq multiplies lanes 0 and 2 (u32 x u32
    // -> u64), a second one lanes 1 and 3. Every operand fits its u32 lane (delta and slope
    // < 2^24, base and raw < 2^32, factor < 2^16) and every product its u64 one, so each
    // step is the scalar step exactly: shift, add, saturate at 2^32 - 1, multiply, shift,
    // saturate.
    static_assert(BG_COST_DIMS == 4 && BG_COST_BITS == 32 && BG_COST_TABLE_BASE_MASK == 0xFFFFFFFFu);
    static_assert(BG_COST_TABLE_SLOPE_MASK < (1u << 24) && BG_COST_FACTOR_MASK <= 0xFFFFu && BG_SIZE_BITS <= 32);
    const __m128i dv = _mm_set1_epi32(static_cast<int>(delta));
    const __m128i slope = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&slope_[first]));
    const __m128i base = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&base_[first]));
    const __m128i factor = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&factor_[0]));
    const __m128i lo32 = _mm_set_epi32(0, -1, 0, -1);
    const __m128i raw_even = sat_lo32(_mm_add_epi64(_mm_srli_epi64(_mm_mul_epu32(slope, dv), BG_SLOPE_SHIFT),
                                                    _mm_and_si128(base, lo32)));
    const __m128i raw_odd = sat_lo32(_mm_add_epi64(
        _mm_srli_epi64(_mm_mul_epu32(_mm_srli_epi64(slope, 32), dv), BG_SLOPE_SHIFT), _mm_srli_epi64(base, 32)));
    const __m128i even = sat_lo32(_mm_srli_epi64(_mm_mul_epu32(raw_even, factor), BG_FACTOR_FRAC_BITS));
    const __m128i odd =
        sat_lo32(_mm_srli_epi64(_mm_mul_epu32(raw_odd, _mm_srli_epi64(factor, 32)), BG_FACTOR_FRAC_BITS));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(cost.d.data()),
                     _mm_or_si128(_mm_and_si128(even, lo32), _mm_slli_epi64(odd, 32)));
#else
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        const uint64_t raw =
            std::min(base_[first + d] + ((delta * slope_[first + d]) >> BG_SLOPE_SHIFT), kCostMax);
        cost.d[d] = static_cast<uint32_t>(std::min((raw * factor_[d]) >> BG_FACTOR_FRAC_BITS, kCostMax));
    }
#endif
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
