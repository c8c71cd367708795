/* BIOS RUN_SCHEDULING, credits and the baselines' per-window parts; see bios.h for the
 * semantics. Everything here is O(scheduled tenants) per window with four 64-bit divisions
 * in total: per-tenant shares use a per-dimension reciprocal, so a wimpy embedded core
 * without a fast divider keeps the same cost, and the per-tenant loops are kept to a few
 * multiplies per dimension because that, not memory, bounds the 1024-tenant window time. */
#include "burstgate/bios.h"

#include <stddef.h>
#include <string.h>

static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t sat32(uint64_t x) { return x > UINT32_MAX ? UINT32_MAX : (uint32_t)x; }
static uint32_t sub0(uint32_t a, uint32_t b) { return a > b ? a - b : 0u; }

/* x * q for q <= 1.0: cannot exceed x, so no saturation. */
static uint32_t mul_q16(uint32_t x, uint32_t q) { return (uint32_t)(((uint64_t)x * q) >> BG_BIOS_FRAC_BITS); }

static int bit_test(const uint64_t *bits, uint32_t i) { return (int)((bits[i >> 6] >> (i & 63u)) & 1u); }

/* Line 10's numerator for one dimension. Saturating at 2^32 - 1 only merges demands that
 * already exceed a whole window of any capacity (total is a u32), so no share changes that
 * could have been granted, and the column sum stays below 2^42. */
static uint32_t demand(const bg_bios_usage *u, unsigned d, uint32_t wt_q16)
{
    return sat32((uint64_t)u->usage.d[d] + (((uint64_t)u->throttle.d[d] * wt_q16) >> BG_BIOS_FRAC_BITS));
}

/* Share of `unused` for demand dp out of den (both after the same right shift, so den <
 * 2^32): q = floor(dp * f / 2^32) with f = ceil(unused * 2^32 / den). Each q lies in
 * [floor(exact), floor(exact) + 1], a sole demander gets exactly `unused`, and
 * sum(q) < unused + sum(dp) / 2^32 <= unused + den / 2^32 < unused + 1, so the shares never
 * add up to more than unused. dp * f <= unused * 2^32 + dp < 2^64. */
typedef struct share_ctx {
    uint64_t f;
    unsigned shift;
} share_ctx;

static void share_prepare(share_ctx *s, uint32_t unused, uint64_t den_full)
{
    unsigned shift = 0;
    if (den_full >> 32)
        shift = 32u - (unsigned)__builtin_clzll(den_full);
    uint64_t den = den_full >> shift;
    s->shift = shift;
    /* No demand anywhere: every dp is 0 and f is irrelevant. */
    s->f = den ? (((uint64_t)unused << 32) + den - 1u) / den : 0u;
}

/* One window of credits for a credit-mode tenant. */
static inline void credit_step(bg_bios_tenant *t, const bg_vec *usage)
{
#pragma GCC unroll 4
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint32_t base = t->res_base.d[d], use = usage->d[d], c = t->credit.d[d];
        uint32_t earn = min32(t->credit_max.d[d], sat32((uint64_t)c + (base - use)));
        uint32_t spend = sub0(c, use - base);
        t->credit.d[d] = use < base ? earn : spend;
    }
}

static inline void burst_cap(const bg_bios_tenant *t, bg_vec *cap)
{
    uint32_t credit_mode = 0u - (uint32_t)(t->mode == BG_BURST_CREDIT);
#pragma GCC unroll 4
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint32_t lim = sat32((uint64_t)t->res_base.d[d] + t->credit.d[d]) | ~credit_mode;
        cap->d[d] = min32(t->res_burst.d[d], lim);
    }
}

void bg_burst_cap(const bg_bios_tenant *t, bg_vec *cap) { burst_cap(t, cap); }

void bg_credit_update(bg_bios_tenant *t, const bg_vec *usage)
{
    if (t->mode == BG_BURST_CREDIT)
        credit_step(t, usage);
}

/* Credits a dropped tenant earned over `windows` idle windows (usage 0: full base each). */
static void credit_idle(bg_bios_tenant *t, uint32_t windows)
{
    if (t->mode != BG_BURST_CREDIT || windows == 0)
        return;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint64_t c = (uint64_t)t->credit.d[d] + (uint64_t)t->res_base.d[d] * windows;
        t->credit.d[d] = c > t->credit_max.d[d] ? t->credit_max.d[d] : (uint32_t)c;
    }
}

bg_vec bg_credit_from_ios(uint32_t ios, const bg_vec *io_cost)
{
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = sat32((uint64_t)ios * io_cost->d[d]);
    return v;
}

int bg_bios_init(bg_bios *b, const bg_bios_params *p, bg_bios_tenant *tenants,
                 uint16_t *sched_list, uint16_t *burst_list, uint32_t n)
{
    b->err_tenant = -1;
    b->err_dim = -1;
    if (n == 0 || n > BG_BIOS_MAX_TENANTS)
        return BG_BIOS_E_COUNT;
    if (p->alpha_q16 > BG_BIOS_ONE || p->reserved_q16 > BG_BIOS_ONE || p->floor_q16 > BG_BIOS_ONE)
        return BG_BIOS_E_RATIO;
    if ((p->options & ~BG_BIOS_OPT_ALL) || p->reserve_tenants > BG_BIOS_RESERVE_TENANTS_MAX)
        return BG_BIOS_E_OPTION;
    uint64_t sum[BG_COST_DIMS] = {0};
    /* The reserve_tenants largest bases per dimension, descending (insertion into a short
     * array: reserve_tenants is at most 16). */
    uint32_t top[BG_COST_DIMS][BG_BIOS_RESERVE_TENANTS_MAX] = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        const bg_bios_tenant *t = &tenants[i];
        if (t->mode != BG_BURST_PAID && t->mode != BG_BURST_CREDIT) {
            b->err_tenant = (int32_t)i;
            return BG_BIOS_E_MODE;
        }
        if (!bg_vec_covers(&t->res_burst, &t->res_base)) {
            b->err_tenant = (int32_t)i;
            return BG_BIOS_E_BURST;
        }
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint32_t x = t->res_base.d[d];
            sum[d] += x;
            for (uint32_t k = 0; k < p->reserve_tenants; k++)
                if (x > top[d][k]) {
                    uint32_t y = top[d][k];
                    top[d][k] = x;
                    x = y;
                }
        }
    }
    bg_vec reserve;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        if (p->reserve_tenants == 0) {
            reserve.d[d] = mul_q16(p->total.d[d], p->reserved_q16);
        } else {
            /* "Just enough for two tenants" (bios.h): what the bases leave, if less. */
            uint64_t two = 0;
            for (uint32_t k = 0; k < p->reserve_tenants; k++)
                two += top[d][k];
            const uint64_t room = sum[d] < p->total.d[d] ? p->total.d[d] - sum[d] : 0u;
            reserve.d[d] = (uint32_t)(two < room ? two : room);
        }
        if (sum[d] > (uint64_t)(p->total.d[d] - reserve.d[d])) {
            b->err_dim = (int32_t)d;
            return BG_BIOS_E_OVERSUB;
        }
    }
    b->p = *p;
    b->t = tenants;
    b->sched_list = sched_list;
    b->burst_list = burst_list;
    b->n = n;
    b->n_sched = n;
    b->n_burst = 0;
    b->window = 0;
    b->reserve = reserve;
    b->reserve_now = reserve;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        b->reserved.d[d] = p->total.d[d] - (uint32_t)sum[d];
        b->dropped_sum.d[d] = 0;
        b->dropped_base.d[d] = 0;
    }
    for (unsigned w = 0; w < BG_BIOS_BITMAP_WORDS; w++)
        b->dropped[w] = 0;
    for (uint32_t i = 0; i < n; i++) {
        bg_bios_tenant *t = &tenants[i];
        t->alloc = t->res_base;
        t->lend = (bg_vec){{0}};
        t->demand = (bg_vec){{0}};
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            t->floor.d[d] = mul_q16(t->res_base.d[d], p->floor_q16);
        t->status = BG_BIOS_NORMAL;
        t->dropped_at = 0;
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            t->credit.d[d] = min32(t->credit.d[d], t->credit_max.d[d]);
        sched_list[i] = (uint16_t)i;
    }
    return BG_BIOS_OK;
}

/* Dropped tenants that offered an I/O rejoin the list (ascending id) before the passes. */
static void wake(bg_bios *b, const uint64_t *active)
{
    for (unsigned w = 0; w < BG_BIOS_BITMAP_WORDS; w++) {
        uint64_t bits = active[w] & b->dropped[w];
        b->dropped[w] &= ~bits;
        while (bits) {
            uint32_t i = w * 64u + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1u;
            bg_bios_tenant *t = &b->t[i];
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                b->dropped_sum.d[d] -= t->alloc.d[d];
                b->dropped_base.d[d] -= t->res_base.d[d];
            }
            credit_idle(t, b->window - t->dropped_at - 1u);
            b->sched_list[b->n_sched++] = (uint16_t)i;
        }
    }
}

/* The two passes treat the four dimensions of a bg_vec as the four lanes of one vector
 * (BG_COST_DIMS == 4 is checked below): min, max, compare, select, add and subtract are
 * element-wise on u32, and every mask is all-ones or zero per lane. Three implementations
 * of those few primitives run the same pass code (bios_passes.inc):
 *   - GCC/Clang vector extensions (one 128-bit register per bg_vec: SSE2 on x86-64, NEON
 *     on Arm cores that have it; the compiler lowers them to scalar code elsewhere), the
 *     default where the compiler has them;
 *   - on x86-64 with GCC, the same plus SSE4.1/AVX forms of min, max, blend and test,
 *     compiled for AVX2 and taken per window when the CPU has it (see BG_BIOS_AVX2);
 *   - plain C11 over a struct of four u32 (-DBG_BIOS_PORTABLE, and any other compiler).
 * tests/cpp/test_bios_reference.cpp compares each, window by window, with the
 * pre-optimization implementation. The 64-bit products stay scalar (line 10's throttle
 * weight; the shares, except on SSE2, see lshare32): a u32 x u32 -> u64 lane multiply has
 * no portable vector form, and scalar they are one multiply each. Before this layout the
 * two passes cost about 350 instructions per tenant; see docs/results.md for the numbers
 * after. */
_Static_assert(BG_COST_DIMS == 4, "bios.c's lanes are the four cost dimensions");
_Static_assert(offsetof(bg_bios_tenant, res_base) == 0, "pass1 picks res_base or alloc by offset");

#if defined(__GNUC__) || defined(__clang__)
#define BG_ALWAYS_INLINE __attribute__((always_inline))
#define BG_NOINLINE __attribute__((noinline))
#else
#define BG_ALWAYS_INLINE
#define BG_NOINLINE
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(BG_BIOS_PORTABLE)
typedef uint32_t lanes __attribute__((vector_size(16)));
static inline lanes lv(const bg_vec *p)
{
    lanes v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void ls(bg_vec *p, lanes v) { memcpy(p, &v, sizeof v); }
static inline lanes lsplat(uint32_t x) { return (lanes){x, x, x, x}; }
static inline lanes lmake(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return (lanes){a, b, c, d}; }
static inline lanes ladd(lanes a, lanes b) { return a + b; }
static inline lanes lsub(lanes a, lanes b) { return a - b; }
static inline lanes land(lanes a, lanes b) { return a & b; }
static inline lanes lor(lanes a, lanes b) { return a | b; }
static inline lanes lnot(lanes a) { return ~a; }
static inline lanes lshr(lanes a, unsigned k) { return a >> k; }
static inline lanes lmul(lanes a, lanes b) { return a * b; }
static inline lanes llt(lanes a, lanes b) { return (lanes)(a < b); }
/* True when any lane is non-zero. */
static inline int lany(lanes a)
{
    uint64_t h[2];
    memcpy(h, &a, sizeof h);
    return (h[0] | h[1]) != 0;
}
#else
typedef bg_vec lanes;
#define LANEWISE(expr)                                                                             \
    lanes r;                                                                                       \
    for (unsigned d = 0; d < BG_COST_DIMS; d++)                                                    \
        r.d[d] = (expr);                                                                           \
    return r
static inline lanes lv(const bg_vec *p) { return *p; }
static inline void ls(bg_vec *p, lanes v) { *p = v; }
static inline lanes lsplat(uint32_t x) { LANEWISE(x); }
static inline lanes lmake(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return (lanes){{a, b, c, d}}; }
static inline lanes ladd(lanes a, lanes b) { LANEWISE(a.d[d] + b.d[d]); }
static inline lanes lsub(lanes a, lanes b) { LANEWISE(a.d[d] - b.d[d]); }
static inline lanes land(lanes a, lanes b) { LANEWISE(a.d[d] & b.d[d]); }
static inline lanes lor(lanes a, lanes b) { LANEWISE(a.d[d] | b.d[d]); }
static inline lanes lnot(lanes a) { LANEWISE(~a.d[d]); }
static inline lanes lshr(lanes a, unsigned k) { LANEWISE(a.d[d] >> k); }
static inline lanes lmul(lanes a, lanes b) { LANEWISE(a.d[d] * b.d[d]); }
static inline lanes llt(lanes a, lanes b) { LANEWISE(0u - (uint32_t)(a.d[d] < b.d[d])); }
static inline int lany(lanes a) { return (a.d[0] | a.d[1] | a.d[2] | a.d[3]) != 0; }
#undef LANEWISE
#endif

/* mask ? a : b, mask all-ones or zero per lane. */
static inline lanes lsel(lanes mask, lanes a, lanes b) { return lor(land(mask, a), land(lnot(mask), b)); }
#if (defined(__GNUC__) || defined(__clang__)) && !defined(BG_BIOS_PORTABLE)
static inline lanes lmin(lanes a, lanes b) { return lsel(llt(a, b), a, b); }
static inline lanes lmax(lanes a, lanes b) { return lsel(llt(a, b), b, a); }
/* a > b ? a - b : 0 */
static inline lanes lsub0(lanes a, lanes b) { return lsub(a, lmin(a, b)); }
/* a + b saturating at UINT32_MAX: a wrapped sum is below a. */
static inline lanes ladd_sat(lanes a, lanes b)
{
    lanes s = ladd(a, b);
    return lor(s, llt(s, a));
}
#else
/* Plain C: the same functions lane by lane as conditionals, which a scalar core does in
 * one or two instructions (compare and conditional move) rather than through masks. */
static inline lanes lmin(lanes a, lanes b)
{
    lanes r;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        r.d[d] = min32(a.d[d], b.d[d]);
    return r;
}
static inline lanes lmax(lanes a, lanes b)
{
    lanes r;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        r.d[d] = a.d[d] < b.d[d] ? b.d[d] : a.d[d];
    return r;
}
static inline lanes lsub0(lanes a, lanes b)
{
    lanes r;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        r.d[d] = sub0(a.d[d], b.d[d]);
    return r;
}
static inline lanes ladd_sat(lanes a, lanes b)
{
    lanes r;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        r.d[d] = sat32((uint64_t)a.d[d] + b.d[d]);
    return r;
}
#endif
/* mul_q16 per lane for q <= 1.0 (2^16): x * q = (x_hi * 2^16 + x_lo) * q, and x_hi * q and
 * x_lo * q are below 2^32, so (x * q) >> 16 == x_hi * q + ((x_lo * q) >> 16) exactly. */
static inline lanes lmul_q16(lanes x, lanes q)
{
    return ladd(lmul(lshr(x, 16), q), lshr(lmul(land(x, lsplat(0xFFFFu)), q), 16));
}

/* A column sum kept exact in 64 bits over u32 lanes: the low words (lo = lo + x) and, per
 * lane, the count of their wraps (carry = carry - (lo < x), all-ones being -1); read out here. */
static inline void lsum64_read(lanes lo, lanes carry, uint64_t out[BG_COST_DIMS])
{
    bg_vec l, c;
    ls(&l, lo);
    ls(&c, carry);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        out[d] = ((uint64_t)c.d[d] << 32) + l.d[d];
}

/* Line 10's share for the four dimensions at once, in the usual window: no demand column
 * sum reaches 2^32 (no shift) and unused < den in every dimension, so f < 2^32 and share_of's
 * u32 x u64 product is a u32 x u32 -> u64 one, which SSE2 does two lanes at a time
 * (pmuludq on lanes 0 and 2, then on 1 and 3); the high halves are the shares. Elsewhere
 * (other ISAs, the portable build, the rare windows with f >= 2^32) share_of runs per
 * dimension as four scalar multiplies; both give ((dp >> k) * f) >> 32 exactly. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(BG_BIOS_PORTABLE) && defined(__SSE2__)
#include <emmintrin.h>
#define BG_BIOS_SIMD_SHARE 1
static inline lanes lshare32(lanes dp, __m128i f_even, __m128i f_odd)
{
    __m128i d;
    memcpy(&d, &dp, sizeof d);
    const __m128i even = _mm_mul_epu32(d, f_even);                    /* dp0 * f0, dp2 * f2 */
    const __m128i odd = _mm_mul_epu32(_mm_srli_epi64(d, 32), f_odd);  /* dp1 * f1, dp3 * f3 */
    const __m128i hi = _mm_or_si128(_mm_srli_epi64(even, 32), _mm_and_si128(odd, _mm_set_epi32(-1, 0, -1, 0)));
    lanes r;
    memcpy(&r, &hi, sizeof r);
    return r;
}
#else
#define BG_BIOS_SIMD_SHARE 0
#endif

enum { SHARE_SIMD = 0, SHARE_SCALAR = 1, SHARE_SHIFTED = 2 };

typedef struct pass1_out {
    lanes unused;
    uint64_t den[BG_COST_DIMS]; /* line 10's column sums (without AVX2: of usage only) */
    uint32_t n_decay, n_credit, n_throttle;
} pass1_out;

/* Line 13's dropping (§6.6), after the second pass: a scheduled tenant that offered no I/O
 * this window, is not bursting and was granted no more than its floor leaves the schedule
 * list. The scheduled tenants are exactly those outside the dropped bitmap (wake() has
 * just taken back the active ones), so the candidates are read from the bitmaps, and only
 * they are visited: in the usual window every scheduled tenant offered an I/O and this is
 * sixteen word operations. The list is rewritten, order kept, only when a tenant leaves.
 * dropped_sum is a u32 sum modulo 2^32, so adding in id order rather than list order
 * gives the same value. */
static void drop_idle(bg_bios *b, const uint64_t *active)
{
    const uint32_t words = (b->n + 63u) >> 6, rest = b->n & 63u;
    uint64_t gone[BG_BIOS_BITMAP_WORDS];
    uint64_t any = 0;
    for (uint32_t w = 0; w < words; w++) {
        uint64_t idle = ~(active[w] | b->dropped[w]);
        if (w + 1u == words && rest)
            idle &= (1ull << rest) - 1u;
        gone[w] = 0;
        while (idle) {
            const uint32_t bit = (uint32_t)__builtin_ctzll(idle);
            idle &= idle - 1u;
            bg_bios_tenant *t = &b->t[w * 64u + bit];
            if (t->status == BG_BIOS_BURST || !bg_vec_covers(&t->floor, &t->alloc))
                continue;
            gone[w] |= 1ull << bit;
            t->dropped_at = b->window;
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                b->dropped_sum.d[d] += t->alloc.d[d];
                b->dropped_base.d[d] += t->res_base.d[d];
            }
        }
        any |= gone[w];
    }
    if (!any)
        return;
    uint32_t keep = 0;
    for (uint32_t j = 0; j < b->n_sched; j++) {
        const uint32_t i = b->sched_list[j];
        b->sched_list[keep] = (uint16_t)i;
        keep += (uint32_t)!bit_test(gone, i);
    }
    b->n_sched = keep;
    for (uint32_t w = 0; w < words; w++)
        b->dropped[w] |= gone[w];
}

/* Per lane: x where a < b (unsigned), else y. */
static inline lanes lpick_lt(lanes a, lanes b, lanes x, lanes y) { return lsel(llt(a, b), x, y); }

#define BG_PASS(name) name
#define BG_PASS_AVX2 0
#include "bios_passes.inc"
#undef BG_PASS
#undef BG_PASS_AVX2

/* The AVX2 variant (x86-64 with GCC, which has `#pragma GCC target`; not the portable
 * build): the same passes over SSE4.1/AVX primitives in 128-bit registers, one bg_vec
 * each. On SSE2 an unsigned min, max, saturating add or compare is three to seven
 * instructions (no pminud, no unsigned compare, no blend); here each is one or two, and
 * VEX's three-operand forms drop the register copies. Every primitive is exact in u32 lanes like its SSE2 form:
 *   lmin/lmax       pminud/pmaxud
 *   lsub0(a, b)     a - min(a, b)                  (0 where b >= a)
 *   ladd_sat(a, b)  a + min(b, ~a)                 (~a = UINT32_MAX - a: the sum stops there)
 *   lsel            pblendvb on lane masks (all-ones or zero per lane)
 *   lpick_lt        pblendvb on max(a, b) == a     (a >= b: y, else x)
 *   lany            ptest
 * The generic add, sub, and, or, shift and multiply are the same source, compiled for this
 * target (a * b on u32 lanes becomes one pmulld). Line 10's 64-bit products are where the
 * two variants' code differs (BG_PASS_AVX2 in bios_passes.inc): here the four dimensions
 * go in one 256-bit register as u64 lanes (vpmovzxdq, vpmuludq, vpermd), the throttle
 * weight for every tenant in pass1 (the baseline lists throttled tenants for a scalar
 * loop) and the share in pass2 (the baseline pairs two pmuludq, lshare32). A CPU
 * without AVX2 (or a build with -DBG_BIOS_NO_AVX2) runs the baseline passes above;
 * tests/cpp/test_bios_reference.cpp, the frozen oracle, runs against both (bg_tests and
 * bg_tests_bios_no_avx2) and the portable build (bg_tests_bios_portable). */
#if defined(__GNUC__) && !defined(__clang__) && !defined(BG_BIOS_PORTABLE) && !defined(BG_BIOS_NO_AVX2) && \
    defined(__x86_64__)
#define BG_BIOS_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2")
#include <immintrin.h>

static inline __m128i lx(lanes a)
{
    __m128i x;
    memcpy(&x, &a, sizeof x);
    return x;
}
static inline lanes xl(__m128i x)
{
    lanes a;
    memcpy(&a, &x, sizeof a);
    return a;
}
static inline lanes lmin_avx2(lanes a, lanes b) { return xl(_mm_min_epu32(lx(a), lx(b))); }
static inline lanes lmax_avx2(lanes a, lanes b) { return xl(_mm_max_epu32(lx(a), lx(b))); }
static inline lanes lsub0_avx2(lanes a, lanes b) { return lsub(a, lmin_avx2(a, b)); }
static inline lanes ladd_sat_avx2(lanes a, lanes b) { return ladd(a, lmin_avx2(b, lnot(a))); }
static inline lanes lsel_avx2(lanes mask, lanes a, lanes b) { return xl(_mm_blendv_epi8(lx(b), lx(a), lx(mask))); }
static inline lanes lpick_lt_avx2(lanes a, lanes b, lanes x, lanes y)
{
    const __m128i ge = _mm_cmpeq_epi32(_mm_max_epu32(lx(a), lx(b)), lx(a));
    return xl(_mm_blendv_epi8(lx(x), lx(y), ge));
}
static inline int lany_avx2(lanes a) { return !_mm_testz_si128(lx(a), lx(a)); }

#define lmin lmin_avx2
#define lmax lmax_avx2
#define lsub0 lsub0_avx2
#define ladd_sat ladd_sat_avx2
#define lsel lsel_avx2
#define lpick_lt lpick_lt_avx2
#define lany lany_avx2
#define BG_PASS(name) name##_avx2
#define BG_PASS_AVX2 1
#include "bios_passes.inc"
#undef lmin
#undef lmax
#undef lsub0
#undef ladd_sat
#undef lsel
#undef lpick_lt
#undef lany
#undef BG_PASS
#undef BG_PASS_AVX2
#pragma GCC pop_options
#else
#define BG_BIOS_AVX2 0
#endif

/* BG_BIOS_OPT_SHARE_REFILL (bios.h, "Line 11's leftover"): after the passes, what line 11
 * left of unused (reserved less the window's pool) is shared again among the scheduled
 * tenants below their cap, per dimension, by line 10's demands and line 11's arithmetic
 * (share_prepare's reciprocal: no division per tenant). A dimension takes another round only
 * while the last one brought a tenant to its cap: otherwise what is left is the shares'
 * rounding (at most one unit a tenant), not capacity a capped tenant gave up. Each tenant's
 * cap is parked in lend for the rounds, as pass1 parks it for pass2; lend, status and the
 * burst list then follow the new allocations. Off the default path: about one extra pass
 * over the schedule list per round. */
static void share_refill(bg_bios *b)
{
    bg_bios_tenant *const tt = b->t;
    const uint16_t *const sched = b->sched_list;
    const uint32_t n = b->n_sched;
    bg_vec left;
    unsigned live = 0; /* bit d: dimension d takes this round */
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        left.d[d] = b->reserved.d[d] - b->reserve_now.d[d];
        live |= (unsigned)(left.d[d] != 0) << d;
    }
    /* Caps parked in lend (burst_cap over lanes), and the first round's demand sums of the
     * tenants below their cap (lsum64_read). */
    uint64_t den[BG_COST_DIMS];
    {
        lanes den_lo = lsplat(0), den_carry = lsplat(0);
        for (uint32_t j = 0; j < n; j++) {
            bg_bios_tenant *t = &tt[sched[j]];
            const lanes cap = lburst_cap(t, lv(&t->credit));
            ls(&t->lend, cap);
            const lanes dem = land(lv(&t->demand), llt(lv(&t->alloc), cap));
            den_lo = ladd(den_lo, dem);
            den_carry = lsub(den_carry, llt(den_lo, dem));
        }
        lsum64_read(den_lo, den_carry, den);
    }
    /* One pass over the list a round: the shares, and the next round's demand sums from what
     * is still below its cap after them. Branch-free per tenant (a dimension out of the round
     * has f = 0, a tenant at its cap room = 0, and both get q = 0): the branches were taken
     * about half the time, and mispredicted, at 1024 tenants. */
    for (unsigned round = 0; round < BG_BIOS_REFILL_ROUNDS && live; round++) {
        uint64_t f[BG_COST_DIMS];
        unsigned shift[BG_COST_DIMS];
        uint32_t taken[BG_COST_DIMS] = {0}, capped[BG_COST_DIMS] = {0};
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            if (den[d] == 0)
                live &= ~(1u << d);
            share_ctx sc;
            share_prepare(&sc, left.d[d], den[d]);
            f[d] = live >> d & 1u ? sc.f : 0u;
            shift[d] = sc.shift;
            den[d] = 0;
        }
        uint32_t j0 = 0;
#if BG_BIOS_SIMD_SHARE
        /* The usual round: no demand sum reaches 2^32 and less is left than is demanded, so
         * every f < 2^32 and the four shares are pass2's lshare32; the demand sums run in u32
         * lanes with a carry count (lsum64_read). Same results as the loop below, which takes
         * the other rounds (and every round in the portable build). */
        if ((shift[0] | shift[1] | shift[2] | shift[3]) == 0 && ((f[0] | f[1] | f[2] | f[3]) >> 32) == 0) {
            const __m128i f_even = _mm_set_epi32(0, (int)(uint32_t)f[2], 0, (int)(uint32_t)f[0]);
            const __m128i f_odd = _mm_set_epi32(0, (int)(uint32_t)f[3], 0, (int)(uint32_t)f[1]);
            const lanes zero = lsplat(0);
            lanes took = zero, full = zero, den_lo = zero, den_carry = zero;
            for (; j0 < n; j0++) {
                bg_bios_tenant *t = &tt[sched[j0]];
                const lanes alloc = lv(&t->alloc), dem = lv(&t->demand);
                const lanes room = lsub(lv(&t->lend), alloc);
                const lanes q = lmin(lshare32(dem, f_even, f_odd), room);
                const lanes at_cap = (lanes)(q == room);
                full = lor(full, land(at_cap, (lanes)(room != zero)));
                ls(&t->alloc, ladd(alloc, q));
                took = ladd(took, q);
                const lanes kept = land(dem, lnot(at_cap));
                den_lo = ladd(den_lo, kept);
                den_carry = lsub(den_carry, llt(den_lo, kept));
            }
            bg_vec tk, fl;
            ls(&tk, took);
            ls(&fl, full);
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                taken[d] = tk.d[d];
                capped[d] = fl.d[d];
            }
            lsum64_read(den_lo, den_carry, den);
        }
#endif
        for (uint32_t j = j0; j < n; j++) {
            bg_bios_tenant *t = &tt[sched[j]];
#pragma GCC unroll 4
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                const uint32_t room = t->lend.d[d] - t->alloc.d[d], dem = t->demand.d[d];
                /* At most left in sum (share_prepare), so left cannot underflow. */
                const uint32_t q = min32((uint32_t)(((uint64_t)(dem >> shift[d]) * f[d]) >> 32), room);
                capped[d] |= (uint32_t)(q == room) & (uint32_t)(room != 0);
                t->alloc.d[d] += q;
                taken[d] += q;
                den[d] += (uint64_t)dem & (0u - (uint64_t)(q != room));
            }
        }
        unsigned more = 0;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            left.d[d] -= taken[d];
            more |= (unsigned)(capped[d] != 0 && left.d[d] != 0) << d;
        }
        live &= more;
    }
    uint32_t nb = 0;
    for (uint32_t j = 0; j < n; j++) {
        const uint32_t i = sched[j];
        bg_bios_tenant *t = &tt[i];
        const lanes lend = lsub0(lv(&t->alloc), lv(&t->res_base));
        ls(&t->lend, lend);
        const uint32_t burst = (uint32_t)lany(lend);
        t->status = (uint8_t)(burst ? BG_BIOS_BURST : BG_BIOS_NORMAL);
        b->burst_list[nb] = (uint16_t)i;
        nb += burst;
    }
    b->n_burst = nb;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        b->reserved.d[d] = b->reserve_now.d[d] + left.d[d];
}

void bg_bios_run(bg_bios *b, const bg_bios_usage *u, const uint64_t *active)
{
    wake(b, active);
#if BG_BIOS_AVX2
    if (__builtin_cpu_supports("avx2"))
        run_passes_avx2(b, u, active);
    else
#endif
        run_passes(b, u, active);
    if (b->p.options & BG_BIOS_OPT_SHARE_REFILL)
        share_refill(b);
}

bg_vec bg_basecbs_share(const bg_vec *total, const uint64_t sum[BG_COST_DIMS], const bg_bios_tenant *t)
{
    bg_vec share;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint64_t s = sum[d] ? (uint64_t)total->d[d] * t->res_base.d[d] / sum[d] : 0u;
        share.d[d] = min32(sat32(s), t->res_burst.d[d]);
    }
    return share;
}

void bg_base_sum(const bg_bios_tenant *t, uint32_t n, uint64_t sum[BG_COST_DIMS])
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        sum[d] = 0;
    for (uint32_t i = 0; i < n; i++)
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            sum[d] += t[i].res_base.d[d];
}

int bg_basecbs_alloc(const bg_vec *total, const bg_bios_tenant *t, uint32_t n, bg_vec *alloc)
{
    if (n == 0 || n > BG_BIOS_MAX_TENANTS)
        return BG_BIOS_E_COUNT;
    uint64_t sum[BG_COST_DIMS];
    bg_base_sum(t, n, sum);
    for (uint32_t i = 0; i < n; i++)
        alloc[i] = bg_basecbs_share(total, sum, &t[i]);
    return BG_BIOS_OK;
}

void bg_wildcbs_window(bg_bios_tenant *t, const bg_bios_usage *u, uint32_t n, bg_vec *limit)
{
    for (uint32_t i = 0; i < n; i++) {
        bg_credit_update(&t[i], &u[i].usage);
        bg_burst_cap(&t[i], &limit[i]);
    }
}
