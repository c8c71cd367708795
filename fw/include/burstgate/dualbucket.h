/* Dual-bucket throttling (Still Water §4.2): the per-interval part. The firmware turns the
 * monitored P_p SA delay into an available-bandwidth estimate delta_p (equations (1)-(2)) and
 * a cheque target; the interval tick refills the main and cheque buckets from it.
 *
 * Sign convention. ln(1-p) < 0 for 0 < p < 1, so (1)-(2) as printed give a negative latency;
 * the CDF of Appendix A, F(w) = 1 - exp(-(mu-lambda) w), gives w_p = -ln(1-p) / (mu-lambda).
 * We therefore use L_p = |ln(1-p)| = -ln(1-p) > 0 throughout:
 *   (1) w_p     = alpha * L_p / (mu - lambda)
 *   (2) delta_p = alpha * L_p / w_p - h_p           (negative results clamp to 0)
 * Units are the paper's: bandwidth in Mbps, w_p in us, so alpha * L_p is in Mbps*us. The
 * firmware measures w_p in ns and multiplies by 1000 instead of dividing w_p.
 *
 * Buckets hold cost vectors (bg_vec), one independent level per dimension, and an I/O draws
 * from a bucket only if the bucket covers every dimension. The paper's buckets are bandwidth
 * only, but our SA saturates on CPU for small I/Os and on link bytes for large ones (BurstCBS
 * §5.3); a bytes-only cheque would let a 4 KiB burst overdraw CPU unchecked. delta_p is a
 * bandwidth, so it enters each dimension as the share delta_p / mu of that dimension's
 * per-interval capacity K[d] = mu * T: cheque target C[d] = min(K[d] * delta_p / mu,
 * share * S[d]), i.e. delta_p * T ("refill the cheque bucket with delta_p T") up to the share's
 * Q0.16 rounding (at most K[d] / 65536 low). The main bucket's issuance S is the proxy's
 * rate limit, which Still Water sets below what the server can serve (1.2 GB/s, "100 % load",
 * against the mu = 2130 of its Fig. 6) so that the residual mu - lambda the cheque overdraws
 * exists; delta_p measures that residual against mu, not against S.
 *
 * Fixed point: L_p in Q16.16 (table of supported p), alpha * L_p * 1000 / w_ns in Q16 Mbps,
 * delta_p in Q16 Mbps, delta_p / mu as a Q0.16 share (0..65536), cheque_share Q0.16. Every
 * division and shift truncates (floor) unless stated. */
#ifndef BURSTGATE_DUALBUCKET_H
#define BURSTGATE_DUALBUCKET_H

#include <stdbool.h>
#include <stdint.h>

#include "burstgate/latency_hist.h"
#include "burstgate/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_DB_FRAC_BITS 16u
#define BG_DB_ONE (1u << BG_DB_FRAC_BITS) /* 1.0 in Q0.16 / Q16.16 */

typedef struct bg_db_config {
    bg_vec main_size;          /* S: tokens the main bucket issues per interval, per dimension */
    bg_vec capacity;           /* mu * T per dimension: what delta_p / mu is a share of; a zero
                                * dimension means S (a main bucket issued at capacity) */
    uint32_t cheque_share_q16; /* cheque bucket size / S, Q0.16 in [0, 65536]; 0.2 -> 13107 */
    uint32_t alpha;            /* correction factor alpha (8000 in production) */
    uint32_t pct_ppm;          /* monitored percentile p in ppm; must have a bg_db_ln_q16 entry */
    uint32_t headroom_mbps;    /* h_p */
    uint32_t mu_mbps;          /* mu: serving capacity in the bandwidth unit of alpha and h_p */
    uint32_t interval_us;      /* T, used only to express delta_p * T in bytes */
    uint32_t min_samples;      /* fewer completions in an interval keep the previous target */
    bg_lh_mode hist_mode;      /* how w_p is read from the histogram */
    uint32_t main_slices;      /* k: the main bucket's tokens of an interval released in k slices
                                * across it (bg_db_main_slice); 0 and 1: all at the tick */
} bg_db_config;

/* Largest main_slices: a slice of T = 10 ms is then 10 us, below any I/O's SA time. */
#define BG_DB_SLICES_MAX 1024u

typedef struct bg_db_state {
    bg_vec main;          /* main bucket level */
    bg_vec cheque;        /* cheque bucket level */
    bg_vec target;        /* C: cheque level the next refill restores (firmware-written) */
    uint64_t delta_q16;   /* last delta_p estimate, Q16 Mbps, clamped to [0, mu] */
    uint32_t wp_ns;       /* w_p the last estimate used */
} bg_db_state;

/* L_p = |ln(1-p)| in Q16.16 for p in {500000, 900000, 950000, 990000, 999000, 999900,
 * 999990} ppm (round to nearest); 0 for any other p. */
uint32_t bg_db_ln_q16(uint32_t p_ppm);

/* NULL when the configuration is usable, else the name of the first bad field. */
const char *bg_db_config_error(const bg_db_config *cfg);

/* Cheque bucket size per dimension: floor(S[d] * cheque_share_q16 / 65536). */
void bg_db_cheque_cap(const bg_db_config *cfg, bg_vec *cap);

/* Both buckets full (main = S, cheque = cap), target = cap, delta = mu. */
void bg_db_init(bg_db_state *st, const bg_db_config *cfg);

/* Equation (1): w_p in ns for a residual capacity mu - lambda in Mbps, rounded to nearest;
 * UINT32_MAX when the residual is 0 or the result does not fit. */
uint32_t bg_db_predict_wp_ns(const bg_db_config *cfg, uint32_t residual_mbps);

/* Equation (2) in Q16 Mbps: floor(alpha * L_p(Q16) * 1000 / max(w_ns, 1)) - h_p * 65536,
 * clamped to [0, mu * 65536]. */
uint64_t bg_db_delta_q16(const bg_db_config *cfg, uint32_t wp_ns);

/* Cheque target from delta: share = floor(delta_q16 / mu) (Q0.16),
 * C[d] = min(floor(K[d] * share / 65536), cap[d]) with K = capacity (S where it is 0). */
void bg_db_target(const bg_db_config *cfg, uint64_t delta_q16, bg_vec *target);

/* delta_p * T in bytes: floor(delta_q16 * T_us / (8 * 65536)) (Mbps * us = bits). */
uint64_t bg_db_delta_bytes(const bg_db_config *cfg, uint64_t delta_q16);

/* Firmware, once per interval, on the SA-delay histogram of the interval that just ended:
 * reads w_p, updates delta_q16 / wp_ns and the target used by the next bg_db_refill. With
 * fewer than min_samples completions the previous estimate and target stay. */
void bg_db_update(bg_db_state *st, const bg_db_config *cfg, const bg_lhist *window);

/* The interval tick (division-free; the datapath applies it atomically at the tick):
 *   c    = min(cheque[d], C[d])
 *   paid = cheque_drawn ? C[d] : C[d] - c
 *   main[d] = S[d] - min(paid, S[d]);  cheque[d] = C[d]
 * The main bucket holds one interval's issuance, so refilling it always makes it full, and it
 * then funds the cheque. After an interval in which the cheque paid for any I/O, the whole
 * cheque is paid again from this interval's issuance ("refill the cheque with delta_p T and
 * fill the main bucket with the remaining tokens"), so that interval spends at most S: an
 * overdraw beyond S can happen only in an interval that follows one without cheque draws,
 * i.e. never in two consecutive intervals. Otherwise only the cheque's shortfall is paid
 * ("if the cheque bucket is not full, the main bucket fills it first"). */
void bg_db_refill(bg_db_state *st, const bg_db_config *cfg, bool cheque_drawn);

/* Slice j (0 <= j < k, k = max(main_slices, 1)) of the interval's main-bucket issuance main:
 *   slice[d] = floor((j + 1) * main[d] / k) - floor(j * main[d] / k)
 * so the k slices sum to main[d] exactly and differ by at most one token. Still Water's main
 * bucket "functions as usual", a token bucket whose tokens arrive continuously; T is the
 * cheque's interval only. The tick writes slice 0 (the firmware's window), slice j is added
 * j * T / k into the interval (bg_fw_db_meter), so the SA never sees one interval's tokens as
 * one clump. k = 1 is the tick's whole issuance, as before. */
void bg_db_main_slice(const bg_db_config *cfg, const bg_vec *main, uint32_t j, bg_vec *slice);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_DUALBUCKET_H */
