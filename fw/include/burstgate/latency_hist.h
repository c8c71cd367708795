/* SA-delay histogram: the format the datapath's completion path keeps per tenant (plus one
 * aggregate row) and the firmware's percentile query over it.
 *
 * Format: BG_LH_BUCKETS (32) saturating u32 counts of SA delay in ns (backend time excluded).
 * The buckets are log-linear: below 2^BG_LH_FLOOR_BITS ns everything shares bucket 0, and
 * every octave above is split in 2^BG_LH_SUB_BITS equal sub-buckets. Pure log2 buckets would
 * be off by up to 2x, which moves the dual-bucket estimate delta_p = alpha*|ln(1-p)|/w_p - h_p
 * by hundreds of Mbps; two sub-buckets per octave plus in-bucket interpolation keep it within
 * a few percent while the gateware stays a priority encoder and a one-bit mux.
 *
 * Bucket of a delay d (ns, u32):
 *   d < 1024                        -> 0
 *   e = floor(log2 d) (10..31), h = bit (e-1) of d
 *   b = 1 + 2*(e - 10) + h, capped at 31
 * Edges (inclusive): bucket 0 = [0, 1023]; for 1 <= b <= 30 with e = 10 + (b-1)/2 and
 * h = (b-1)&1: [2^e + h*2^(e-1), lower(b+1) - 1]; bucket 31 = [2^25, UINT32_MAX] (33.5 ms and
 * up, an overflow bucket). So bucket 1 = [1024, 1535], 2 = [1536, 2047], 3 = [2048, 3071] ...
 * 30 = [25165824, 33554431]. */
#ifndef BURSTGATE_LATENCY_HIST_H
#define BURSTGATE_LATENCY_HIST_H

#include <stdint.h>

#include "burstgate/hal.h"
#include "burstgate/regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_LH_BUCKETS BG_HIST_BUCKETS /* the register map's, so the datapath agrees */
#define BG_LH_FLOOR_BITS BG_HIST_FLOOR_BITS /* bucket 0 holds [0, 2^10) ns */
#define BG_LH_SUB_BITS BG_HIST_SUB_BITS     /* 2^1 sub-buckets per octave */
#define BG_LH_PPM 1000000u   /* percentiles are given in parts per million: P95 = 950000 */

typedef struct bg_lhist {
    uint32_t count[BG_LH_BUCKETS];
} bg_lhist;

typedef enum bg_lh_mode {
    /* Inclusive upper edge of the bucket holding the rank: never below the true percentile. */
    BG_LH_UPPER = 0,
    /* Samples assumed evenly spread over the bucket's width; the rank-th of c samples is
     * reported at the upper end of its 1/c slot: lo + ceil(width * k / c) - 1, where k is the
     * rank within the bucket. Equals BG_LH_UPPER when k = c and for the overflow bucket. */
    BG_LH_INTERP = 1
} bg_lh_mode;

uint32_t bg_lh_bucket(uint32_t delay_ns);
uint32_t bg_lh_lower(uint32_t bucket);
uint32_t bg_lh_upper(uint32_t bucket);

void bg_lh_clear(bg_lhist *h);
/* One completion, as the hardware does it: count[bucket(d)] += 1, saturating. */
void bg_lh_record(bg_lhist *h, uint32_t delay_ns);
/* dst += src per bucket, saturating (tenant rows into an aggregate). */
void bg_lh_merge(bg_lhist *dst, const bg_lhist *src);
uint64_t bg_lh_total(const bg_lhist *h);

/* Delay at percentile p_ppm (0..1000000): the rank is r = max(1, ceil(p * total / 1e6)), the
 * bucket is the first whose cumulative count reaches r. Returns 0 for an empty histogram
 * (callers check bg_lh_total first when "no data" must differ from "zero delay"). p_ppm above
 * 1000000 is treated as 1000000. */
uint32_t bg_lh_percentile(const bg_lhist *h, uint32_t p_ppm, bg_lh_mode mode);

/* Reads BG_LH_BUCKETS consecutive 32-bit registers starting at byte address base. */
void bg_lh_read_hal(const bg_hal *hal, uint32_t base, bg_lhist *h);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_LATENCY_HIST_H */
