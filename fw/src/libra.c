/* Libra's DDRR, §4.1 profiles and §4.2 floor at the window grain; see libra.h. */
#include "burstgate/libra.h"

#include <stddef.h>

static uint32_t sat32(uint64_t x) { return x > UINT32_MAX ? UINT32_MAX : (uint32_t)x; }

uint64_t bg_libra_ewma(uint64_t q_q16, uint64_t x_q16, uint32_t w_q16, uint32_t have)
{
    if (!have)
        return x_q16;
    /* q + w (x - q), without a signed intermediate. */
    if (x_q16 >= q_q16)
        return q_q16 + (((x_q16 - q_q16) * w_q16) >> BG_LIBRA_FRAC_BITS);
    return q_q16 - (((q_q16 - x_q16) * w_q16) >> BG_LIBRA_FRAC_BITS);
}

int bg_libra_profile_update(uint64_t *q_q16, uint32_t *have, uint64_t u, uint64_t s_bytes, uint32_t w_q16)
{
    if (s_bytes == 0)
        return 0;
    /* u / (s_bytes / 1024) in Q16 = u * 2^26 / s_bytes; u is at most a few 2^32 per interval,
     * so cap it before the shift keeps the product in 64 bits. */
    const uint64_t u_c = u > (UINT64_MAX >> 27) ? (UINT64_MAX >> 27) : u;
    const uint64_t x = (u_c << (BG_LIBRA_FRAC_BITS + 10u)) / s_bytes;
    *q_q16 = bg_libra_ewma(*q_q16, x, w_q16, *have);
    *have = 1;
    return 1;
}

int bg_libra_provision(bg_libra *l, bg_libra_tenant *t)
{
    int scaled = 0;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < l->n; i++) {
            if (t[i].profiled)
                t[i].r.d[d] = sat32((t[i].v_q16 * t[i].q_q16[d]) >> (2u * BG_LIBRA_FRAC_BITS));
            t[i].quantum.d[d] = t[i].r.d[d];
            sum += t[i].quantum.d[d];
        }
        const uint64_t floor = ((uint64_t)l->p.total.d[d] * l->p.floor_q16) >> BG_LIBRA_FRAC_BITS;
        if (sum > floor) {
            /* §4.1 overflow: scale every allocation down proportionally to fit. */
            for (uint32_t i = 0; i < l->n; i++)
                t[i].quantum.d[d] = (uint32_t)((uint64_t)t[i].quantum.d[d] * floor / sum);
            scaled = 1;
        }
    }
    return scaled;
}

/* x as a share of the capacity in Q24, rounded up (the dimension it fills most). */
static uint64_t vop_of(const bg_vec *x, const bg_vec *total)
{
    uint64_t m = 0;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        if (total->d[d] == 0)
            continue;
        const uint64_t f = (((uint64_t)x->d[d] << BG_LIBRA_VOP_BITS) + total->d[d] - 1u) / total->d[d];
        if (f > m)
            m = f;
    }
    return m;
}

const char *bg_libra_init(bg_libra *l, const bg_libra_params *p, bg_libra_tenant *t, uint32_t n)
{
    if (p->floor_q16 == 0 || p->floor_q16 > BG_LIBRA_ONE)
        return "floor_q16";
    if (p->policy_windows && (p->ewma_w_q16 == 0 || p->ewma_w_q16 > BG_LIBRA_ONE))
        return "ewma_w_q16";
    l->p = *p;
    l->n = n;
    l->windows = 0;
    l->overbooked = 0;
    const bg_vec zero = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        t[i].r = t[i].quantum;
        t[i].deficit = zero;
        t[i].profiled = 0;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            t[i].q_q16[d] = 0;
            t[i].acc_u[d] = 0;
        }
    }
    l->overbooked += (uint32_t)bg_libra_provision(l, t);
    for (uint32_t i = 0; i < n; i++) {
        t[i].grant = t[i].quantum;
        t[i].grant_vop = vop_of(&t[i].quantum, &p->total);
        t[i].deficit_vop = 0;
    }
    return NULL;
}

static int bit(const uint64_t *bits, uint32_t i) { return (int)((bits[i >> 6] >> (i & 63u)) & 1u); }

static void policy(bg_libra *l, bg_libra_tenant *t, const bg_bios_usage *u)
{
    if (!l->p.policy_windows)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            t[i].acc_u[d] += u[i].usage.d[d];
    if (++l->windows < l->p.policy_windows)
        return;
    l->windows = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const uint64_t bytes = t[i].acc_u[BG_DIM_SWLIMIT];
        uint32_t have = t[i].profiled;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            have = t[i].profiled;
            bg_libra_profile_update(&t[i].q_q16[d], &have, t[i].acc_u[d], bytes, l->p.ewma_w_q16);
            t[i].acc_u[d] = 0;
        }
        t[i].profiled = have;
    }
    l->overbooked += (uint32_t)bg_libra_provision(l, t);
}

/* VOP accounting: the DRR over one scalar per tenant; grant vector = grant share x total. */
static void window_vop(bg_libra *l, bg_libra_tenant *t, const bg_bios_usage *u, const uint64_t *active)
{
    const bg_vec *total = &l->p.total;
    uint64_t left = (uint64_t)1 << BG_LIBRA_VOP_BITS, wq = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const int backlogged = bit(active, i) && u[i].throttle_n > 0;
        uint64_t def = 0;
        if (backlogged) {
            const uint64_t used = vop_of(&u[i].usage, total), g = t[i].grant_vop;
            const uint64_t max = vop_of(&t[i].deficit_max, total);
            def = g > used ? g - used : 0;
            if (def > max)
                def = max;
        }
        t[i].deficit_vop = def;
        const uint64_t q = vop_of(&t[i].quantum, total), take = q + def;
        left = left > take ? left - take : 0;
        if (backlogged)
            wq += q;
    }
    for (uint32_t i = 0; i < l->n; i++) {
        const int backlogged = bit(active, i) && u[i].throttle_n > 0;
        const uint64_t q = vop_of(&t[i].quantum, total);
        uint64_t g = q + t[i].deficit_vop;
        if (backlogged && wq > 0)
            g += left * q / wq;
        t[i].grant_vop = g;
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            t[i].grant.d[d] = sat32((g * total->d[d]) >> BG_LIBRA_VOP_BITS);
    }
}

void bg_libra_window(bg_libra *l, bg_libra_tenant *t, const bg_bios_usage *u, const uint64_t *active)
{
    policy(l, t, u);
    if (l->p.vop) {
        window_vop(l, t, u, active);
        return;
    }
    uint64_t left[BG_COST_DIMS], wq[BG_COST_DIMS];
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        left[d] = l->p.total.d[d];
        wq[d] = 0;
    }
    for (uint32_t i = 0; i < l->n; i++) {
        const int backlogged = bit(active, i) && u[i].throttle_n > 0;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint32_t def = 0;
            if (backlogged) {
                /* Still backlogged: DRR keeps what the round left of the counter. */
                const uint32_t g = t[i].grant.d[d], used = u[i].usage.d[d];
                def = g > used ? g - used : 0;
                if (def > t[i].deficit_max.d[d])
                    def = t[i].deficit_max.d[d];
            }
            t[i].deficit.d[d] = def;
            const uint64_t take = (uint64_t)t[i].quantum.d[d] + def;
            left[d] = left[d] > take ? left[d] - take : 0;
            if (backlogged)
                wq[d] += t[i].quantum.d[d];
        }
    }
    for (uint32_t i = 0; i < l->n; i++) {
        const int backlogged = bit(active, i) && u[i].throttle_n > 0;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint64_t g = (uint64_t)t[i].quantum.d[d] + t[i].deficit.d[d];
            if (backlogged && wq[d] > 0)
                g += left[d] * t[i].quantum.d[d] / wq[d];
            t[i].grant.d[d] = sat32(g);
        }
    }
}
