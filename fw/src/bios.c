/* BIOS RUN_SCHEDULING, credits and the baselines' per-window parts; see bios.h for the
 * semantics. Everything here is O(scheduled tenants) per window with four 64-bit divisions
 * in total: per-tenant shares use a per-dimension reciprocal, so a wimpy embedded core
 * without a fast divider keeps the same cost, and the per-tenant loops are kept to a few
 * multiplies per dimension because that, not memory, bounds the 1024-tenant window time. */
#include "burstgate/bios.h"

#include <stddef.h>

static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t max32(uint32_t a, uint32_t b) { return a > b ? a : b; }
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

static uint32_t share_of(const share_ctx *s, uint32_t dem)
{
    return (uint32_t)(((uint64_t)(dem >> s->shift) * s->f) >> 32);
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
    uint64_t sum[BG_COST_DIMS] = {0};
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
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            sum[d] += t->res_base.d[d];
    }
    bg_vec reserve;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        reserve.d[d] = mul_q16(p->total.d[d], p->reserved_q16);
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
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        b->reserved.d[d] = p->total.d[d] - (uint32_t)sum[d];
        b->dropped_sum.d[d] = 0;
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
            for (unsigned d = 0; d < BG_COST_DIMS; d++)
                b->dropped_sum.d[d] -= t->alloc.d[d];
            credit_idle(t, b->window - t->dropped_at - 1u);
            b->sched_list[b->n_sched++] = (uint16_t)i;
        }
    }
}

void bg_bios_run(bg_bios *b, const bg_bios_usage *u, const uint64_t *active)
{
    const uint32_t alpha = b->p.alpha_q16, wt = b->p.weight_throttle_q16;
    uint32_t unused[BG_COST_DIMS];
    uint64_t den[BG_COST_DIMS] = {0};

    wake(b, active);
    /* Line 2; dropped tenants' floors are allocations too. */
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        unused[d] = sub0(b->p.total.d[d] - b->reserve.d[d], b->dropped_sum.d[d]);

    /* Lines 3-8 and line 10's column sums. The room line 11 leaves above the first round,
     * cap - alloc (after this window's credits; cap >= res_base >= alloc), is parked in
     * lend, which the second pass overwrites. unused cannot underflow: every
     * first-round grant is at most res_base and init checked sum(res_base) against it. */
    for (uint32_t j = 0; j < b->n_sched; j++) {
        uint32_t i = b->sched_list[j];
        bg_bios_tenant *t = &b->t[i];
        const bg_bios_usage *c = &u[i];
        /* A mask, not a branch: which path a tenant takes is data-dependent along the list,
         * so a branch (which GCC makes of ?: here) mispredicts about as often as taken. */
        const uint32_t base_path = (t->status == BG_BIOS_BURST) | (c->throttle_n > 0) | (c->spill_n > 0);
        const uint32_t keep_base = 0u - base_path; /* all ones on the base path */
#pragma GCC unroll 4
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint32_t base = t->res_base.d[d];
            uint32_t a = max32(mul_q16(t->alloc.d[d], alpha), c->usage.d[d]);
            a = min32(max32(a, t->floor.d[d]), base);
            a = (base & keep_base) | (a & ~keep_base);
            uint32_t dem = demand(c, d, wt);
            t->alloc.d[d] = a;
            t->demand.d[d] = dem;
            unused[d] -= a;
            den[d] += dem;
        }
        if (t->mode == BG_BURST_CREDIT)
            credit_step(t, &c->usage);
        bg_vec cap;
        burst_cap(t, &cap);
#pragma GCC unroll 4
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            t->lend.d[d] = cap.d[d] - t->alloc.d[d];
    }

    share_ctx s[BG_COST_DIMS];
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        share_prepare(&s[d], unused[d], den[d]);

    /* Lines 9-13, the burst list, and dropping idle tenants at their floor. */
    uint32_t keep = 0, nb = 0;
    for (uint32_t j = 0; j < b->n_sched; j++) {
        uint32_t i = b->sched_list[j];
        bg_bios_tenant *t = &b->t[i];
        uint32_t burst = 0;
#pragma GCC unroll 4
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint32_t q = min32(share_of(&s[d], t->demand.d[d]), t->lend.d[d]);
            uint32_t a = t->alloc.d[d] + q, base = t->res_base.d[d];
            unused[d] -= q;
            t->alloc.d[d] = a;
            t->lend.d[d] = sub0(a, base);
            burst |= a > base;
        }
        t->status = burst ? BG_BIOS_BURST : BG_BIOS_NORMAL;
        b->burst_list[nb] = (uint16_t)i;
        nb += burst;
        b->sched_list[keep++] = (uint16_t)i;
        const uint32_t drop = !burst & !bit_test(active, i) & bg_vec_covers(&t->floor, &t->alloc);
        if (!drop)
            continue;
        keep--;
        b->dropped[i >> 6] |= 1ull << (i & 63u);
        t->dropped_at = b->window;
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            b->dropped_sum.d[d] += t->alloc.d[d];
    }
    b->n_sched = keep;
    b->n_burst = nb;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        b->reserved.d[d] = b->reserve.d[d] + unused[d];
    b->window++;
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
