/* The one pseudo-random source of every per-I/O choice (power of two choices in admission
 * and in the load balancer). A 32-bit Galois LFSR, polynomial x^32 + x^22 + x^2 + x + 1
 * (maximal length, period 2^32 - 1), shifting right: cheap in gateware (one XOR per tap)
 * and identical in the model, the firmware and the RTL, so a seed reproduces a run. */
#ifndef BURSTGATE_LFSR_H
#define BURSTGATE_LFSR_H

#include <stdint.h>

#include "burstgate/regs.h" /* BG_LFSR_TAPS, BG_LFSR_ZERO_SEED: the register map's */

/* A zero state would lock the LFSR; seeds are mapped away from it. */
static inline uint32_t bg_lfsr_seed(uint32_t seed)
{
    return seed ? seed : BG_LFSR_ZERO_SEED;
}

/* Advance one step and return the new state. */
static inline uint32_t bg_lfsr_next(uint32_t *state)
{
    uint32_t s = *state;
    s = (s >> 1) ^ ((uint32_t)-(int32_t)(s & 1u) & BG_LFSR_TAPS);
    *state = s;
    return s;
}

#endif /* BURSTGATE_LFSR_H */
