/* Delay-based cost adjustment (BurstCBS §5.3): once per window the firmware compares the SA
 * delay (backend time excluded) with its target and moves the per-dimension adjustment factors
 * COST.FACTOR(d) (Q4.12, 4096 = 1.0) up while the delay is above target and down while it is
 * below, within [factor_min, factor_max].
 *
 * Statistic: the window's P_p (default P95) from the aggregate SA-delay histogram, not the
 * mean. The paper wants a signal that reacts within a few windows on few samples and ignores
 * irrelevant outliers; with the backend excluded, what remains is SA queueing, which shows
 * up first in the upper percentiles, while the mean is dragged by single outliers (a retried
 * I/O) and the histogram carries no exact sum anyway. A window with fewer than min_samples
 * completions holds the factors: no evidence, no move.
 *
 * Steps are multiplicative in Q4.12: the error being corrected is a ratio (true cost = k x
 * estimate), so a constant relative step reaches k in log(k)/log(1+s) windows whatever the
 * table's scale. Raise: f += max(1, floor(f * step_up / 4096)); lower: f -= max(1,
 * floor(f * step_down / 4096)); then clamp to [min, max]. A slower lower step than raise step
 * damps the oscillation around the equilibrium.
 *
 * Which dimensions move: all of them, together. BurstCBS §5.3 adjusts "the cost" as one: "when
 * the target delay is breached, we gradually increase the cost ... and we reduce the cost when
 * the delay drops below the target"; its misestimation case (FPGA error handling) makes an I/O
 * cost more "CPU resources and bandwidth" at once. The SA delay does not say which resource is
 * short, and the estimated utilization cannot either: the dimension that is underestimated is
 * exactly the one whose estimated utilization reads too low. (An earlier rule raised only the
 * dimensions within a margin of the highest estimated utilization; with the CPU cost
 * underestimated 2x it raised the software-limit factor to its ceiling and left CPU at 1.0.)
 * The window's estimated utilization is still kept in the state, for telemetry. */
#ifndef BURSTGATE_COSTADJ_H
#define BURSTGATE_COSTADJ_H

#include <stdint.h>

#include "burstgate/hal.h"
#include "burstgate/latency_hist.h"
#include "burstgate/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_CA_ONE (1u << BG_FACTOR_FRAC_BITS) /* factor 1.0 */
#define BG_CA_UTIL_ONE 65536u                 /* utilization 1.0 in Q0.16 */

typedef struct bg_ca_config {
    uint32_t target_ns;       /* SA-delay target (dpu.target_delay_us * 1000) */
    uint32_t pct_ppm;         /* statistic: this percentile of the window's SA delays */
    bg_lh_mode hist_mode;     /* how the percentile is read from the histogram */
    uint32_t min_samples;     /* fewer completions in a window: hold */
    uint32_t step_up_q12;     /* relative raise per window, Q4.12 (256 = 6.25 %) */
    uint32_t step_down_q12;   /* relative lowering per window, Q4.12 (64 = 1.5625 %) */
    uint32_t factor_min;      /* Q4.12, >= 1 */
    uint32_t factor_max;      /* Q4.12, >= factor_min, <= BG_COST_FACTOR_MASK */
} bg_ca_config;

typedef struct bg_ca_state {
    uint32_t factor[BG_COST_DIMS];   /* current COST.FACTOR(d) values */
    uint32_t util_q16[BG_COST_DIMS]; /* last window's estimated utilization (telemetry) */
    uint32_t delay_ns;               /* last window's statistic (0 when held for no data) */
    int action;                      /* last window: +1 raised, -1 lowered, 0 held */
} bg_ca_state;

/* A configuration usable as-is: P95 interpolated, 6.25 % up, 1.5625 % down, [1.0, 8.0],
 * 16 samples, the given target. */
void bg_ca_default_config(bg_ca_config *cfg, uint32_t target_ns);

/* NULL when the configuration is usable, else the name of the first bad field. */
const char *bg_ca_config_error(const bg_ca_config *cfg);

/* Factors start at 1.0 clamped into [min, max] and are written through hal (if not NULL). */
void bg_ca_init(bg_ca_state *st, const bg_ca_config *cfg, const bg_hal *hal);

/* floor(used * 65536 / capacity), at most 65536; 0 when capacity is 0. */
uint32_t bg_ca_util_q16(uint32_t used, uint32_t capacity);

/* Pure step rules, exposed for tests and for the model. */
uint32_t bg_ca_raise(const bg_ca_config *cfg, uint32_t factor);
uint32_t bg_ca_lower(const bg_ca_config *cfg, uint32_t factor);

/* One window: window is the aggregate SA-delay histogram of the window that ended; used and
 * capacity are the window's estimated (factored) usage and capacity vectors, recorded as
 * util_q16 (either may be NULL: utilization 0). Every factor rises when the statistic is above
 * target and falls when below (each clamped). Changed factors are written to COST.FACTOR(d)
 * through hal (if not NULL). Returns the mask of dimensions that changed. */
unsigned bg_ca_window(bg_ca_state *st, const bg_ca_config *cfg, const bg_hal *hal,
                      const bg_lhist *window, const bg_vec *used, const bg_vec *capacity);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_COSTADJ_H */
