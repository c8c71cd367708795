/* A cost or resource vector: one unsigned 32-bit amount per dimension (cpu ns, ingress
 * bytes, egress bytes, software-limit bytes; see BG_DIM_* in regs.h). Every scheduler in
 * burstgate compares, adds and subtracts these element-wise: an I/O is admitted from a
 * source only if the source covers every dimension (BurstCBS §5.3). */
#ifndef BURSTGATE_VEC_H
#define BURSTGATE_VEC_H

#include <stdbool.h>
#include <stdint.h>

#include "burstgate/regs.h"

typedef struct bg_vec {
    uint32_t d[BG_COST_DIMS];
} bg_vec;

/* True when a covers b in every dimension. */
static inline bool bg_vec_covers(const bg_vec *a, const bg_vec *b)
{
    for (unsigned i = 0; i < BG_COST_DIMS; i++)
        if (a->d[i] < b->d[i])
            return false;
    return true;
}

/* a -= b, element-wise; the caller has checked bg_vec_covers(a, b). */
static inline void bg_vec_sub(bg_vec *a, const bg_vec *b)
{
    for (unsigned i = 0; i < BG_COST_DIMS; i++)
        a->d[i] -= b->d[i];
}

/* a + b, saturating at UINT32_MAX. */
static inline uint32_t bg_u32_add_sat(uint32_t a, uint32_t b)
{
    return a + b < a ? UINT32_MAX : a + b;
}

/* a += b, element-wise, saturating at UINT32_MAX. */
static inline void bg_vec_add_sat(bg_vec *a, const bg_vec *b)
{
    for (unsigned i = 0; i < BG_COST_DIMS; i++)
        a->d[i] = bg_u32_add_sat(a->d[i], b->d[i]);
}

#endif /* BURSTGATE_VEC_H */
