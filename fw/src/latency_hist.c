/* SA-delay histogram and percentile query (format in latency_hist.h). Integer only. */
#include "burstgate/latency_hist.h"

#define BG_LH_SUB_MASK ((1u << BG_LH_SUB_BITS) - 1u)

/* The last regular bucket's octave must fit in 32 bits, or the overflow bucket would start
 * past UINT32_MAX. */
_Static_assert(BG_LH_FLOOR_BITS + ((BG_LH_BUCKETS - 2u) >> BG_LH_SUB_BITS) <= 31u,
               "histogram range exceeds 32-bit delays");
_Static_assert(BG_LH_FLOOR_BITS >= BG_LH_SUB_BITS, "sub-buckets finer than 1 ns");

/* Index of the most significant set bit; d != 0. Written out rather than a compiler builtin
 * so an embedded core without CLZ builds the same code. */
static uint32_t msb_index(uint32_t d)
{
    uint32_t e = 0;
    for (uint32_t step = 16; step != 0; step >>= 1) {
        if (d >> step) {
            d >>= step;
            e += step;
        }
    }
    return e;
}

uint32_t bg_lh_bucket(uint32_t delay_ns)
{
    if (delay_ns < (1u << BG_LH_FLOOR_BITS))
        return 0;
    uint32_t e = msb_index(delay_ns);
    uint32_t sub = (delay_ns >> (e - BG_LH_SUB_BITS)) & BG_LH_SUB_MASK;
    uint32_t b = 1u + ((e - BG_LH_FLOOR_BITS) << BG_LH_SUB_BITS) + sub;
    return b < BG_LH_BUCKETS ? b : BG_LH_BUCKETS - 1u;
}

uint32_t bg_lh_lower(uint32_t bucket)
{
    if (bucket == 0)
        return 0;
    if (bucket >= BG_LH_BUCKETS)
        bucket = BG_LH_BUCKETS - 1u;
    uint32_t e = BG_LH_FLOOR_BITS + ((bucket - 1u) >> BG_LH_SUB_BITS);
    uint32_t sub = (bucket - 1u) & BG_LH_SUB_MASK;
    return (1u << e) + (sub << (e - BG_LH_SUB_BITS));
}

uint32_t bg_lh_upper(uint32_t bucket)
{
    if (bucket >= BG_LH_BUCKETS - 1u)
        return UINT32_MAX;
    return bg_lh_lower(bucket + 1u) - 1u;
}

void bg_lh_clear(bg_lhist *h)
{
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++)
        h->count[b] = 0;
}

void bg_lh_record(bg_lhist *h, uint32_t delay_ns)
{
    uint32_t b = bg_lh_bucket(delay_ns);
    if (h->count[b] != UINT32_MAX)
        h->count[b]++;
}

void bg_lh_merge(bg_lhist *dst, const bg_lhist *src)
{
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++) {
        uint32_t s = dst->count[b] + src->count[b];
        dst->count[b] = s < dst->count[b] ? UINT32_MAX : s;
    }
}

uint64_t bg_lh_total(const bg_lhist *h)
{
    uint64_t n = 0;
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++)
        n += h->count[b];
    return n;
}

uint32_t bg_lh_percentile(const bg_lhist *h, uint32_t p_ppm, bg_lh_mode mode)
{
    uint64_t total = bg_lh_total(h);
    if (total == 0)
        return 0;
    if (p_ppm > BG_LH_PPM)
        p_ppm = BG_LH_PPM;
    /* total < 2^37 and p_ppm < 2^20: the product fits in 64 bits. */
    uint64_t rank = ((uint64_t)p_ppm * total + (BG_LH_PPM - 1u)) / BG_LH_PPM;
    if (rank == 0)
        rank = 1;

    uint64_t before = 0;
    uint32_t b = 0;
    for (; b < BG_LH_BUCKETS - 1u; b++) {
        if (before + h->count[b] >= rank)
            break;
        before += h->count[b];
    }
    if (mode == BG_LH_UPPER || b == BG_LH_BUCKETS - 1u)
        return bg_lh_upper(b);

    uint64_t lo = bg_lh_lower(b);
    uint64_t width = (uint64_t)bg_lh_upper(b) - lo + 1u;
    uint64_t k = rank - before;
    uint64_t c = h->count[b];
    /* width <= 2^24 and k <= 2^32 here: no overflow. */
    return (uint32_t)(lo + (width * k + c - 1u) / c - 1u);
}

void bg_lh_read_hal(const bg_hal *hal, uint32_t base, bg_lhist *h)
{
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++)
        h->count[b] = bg_hal_read(hal, base + 4u * b);
}
