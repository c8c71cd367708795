/* Dual-bucket throttling, per-interval part (Still Water §4.2; conventions in dualbucket.h). */
#include "burstgate/dualbucket.h"

#include <stddef.h>

#define NS_PER_US 1000u

/* |ln(1-p)| * 65536 rounded to nearest, for the percentiles a histogram can resolve in one
 * interval (P50..P95) and the tails the paper predicts from them (P99..P99999). */
static const struct {
    uint32_t p_ppm;
    uint32_t ln_q16;
} ln_table[] = {
    {500000u, 45426u},  {900000u, 150902u}, {950000u, 196328u}, {990000u, 301804u},
    {999000u, 452707u}, {999900u, 603609u}, {999990u, 754511u},
};

uint32_t bg_db_ln_q16(uint32_t p_ppm)
{
    for (size_t i = 0; i < sizeof ln_table / sizeof ln_table[0]; i++)
        if (ln_table[i].p_ppm == p_ppm)
            return ln_table[i].ln_q16;
    return 0;
}

const char *bg_db_config_error(const bg_db_config *cfg)
{
    if (cfg->cheque_share_q16 > BG_DB_ONE)
        return "cheque_share";
    if (cfg->alpha == 0)
        return "alpha";
    if (bg_db_ln_q16(cfg->pct_ppm) == 0)
        return "percentile";
    if (cfg->mu_mbps == 0)
        return "mu_mbps";
    if (cfg->hist_mode != BG_LH_UPPER && cfg->hist_mode != BG_LH_INTERP)
        return "hist_mode";
    if (cfg->main_slices > BG_DB_SLICES_MAX)
        return "main_slices";
    return NULL;
}

void bg_db_cheque_cap(const bg_db_config *cfg, bg_vec *cap)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        cap->d[d] = (uint32_t)(((uint64_t)cfg->main_size.d[d] * cfg->cheque_share_q16) >>
                               BG_DB_FRAC_BITS);
}

void bg_db_init(bg_db_state *st, const bg_db_config *cfg)
{
    st->main = cfg->main_size;
    bg_db_cheque_cap(cfg, &st->cheque);
    st->target = st->cheque;
    st->delta_q16 = (uint64_t)cfg->mu_mbps << BG_DB_FRAC_BITS;
    st->wp_ns = 0;
}

/* alpha * L_p * 1000 in Q16 Mbps*ns: alpha < 2^32 and L_p(Q16) < 2^20, so < 2^62. */
static uint64_t alpha_ln_ns_q16(const bg_db_config *cfg)
{
    return (uint64_t)cfg->alpha * bg_db_ln_q16(cfg->pct_ppm) * NS_PER_US;
}

uint32_t bg_db_predict_wp_ns(const bg_db_config *cfg, uint32_t residual_mbps)
{
    if (residual_mbps == 0)
        return UINT32_MAX;
    uint64_t den = (uint64_t)residual_mbps << BG_DB_FRAC_BITS;
    uint64_t w = (alpha_ln_ns_q16(cfg) + den / 2u) / den;
    return w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

uint64_t bg_db_delta_q16(const bg_db_config *cfg, uint32_t wp_ns)
{
    uint64_t residual = alpha_ln_ns_q16(cfg) / (wp_ns ? wp_ns : 1u);
    uint64_t head = (uint64_t)cfg->headroom_mbps << BG_DB_FRAC_BITS;
    uint64_t mu = (uint64_t)cfg->mu_mbps << BG_DB_FRAC_BITS;
    uint64_t delta = residual > head ? residual - head : 0;
    return delta < mu ? delta : mu;
}

void bg_db_target(const bg_db_config *cfg, uint64_t delta_q16, bg_vec *target)
{
    uint64_t share = cfg->mu_mbps ? delta_q16 / cfg->mu_mbps : 0;
    if (share > BG_DB_ONE)
        share = BG_DB_ONE;
    bg_vec cap;
    bg_db_cheque_cap(cfg, &cap);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint32_t k = cfg->capacity.d[d] ? cfg->capacity.d[d] : cfg->main_size.d[d];
        uint64_t c = ((uint64_t)k * share) >> BG_DB_FRAC_BITS;
        target->d[d] = c < cap.d[d] ? (uint32_t)c : cap.d[d];
    }
}

uint64_t bg_db_delta_bytes(const bg_db_config *cfg, uint64_t delta_q16)
{
    /* delta_q16 * T can need 80 bits; whole Mbps * T and frac * T each fit in 64, and
     * floor((W*T + floor(F*T / 2^16)) / 8) equals floor(delta_q16 * T / 2^19). */
    uint64_t whole = delta_q16 >> BG_DB_FRAC_BITS;
    uint64_t frac = delta_q16 & (BG_DB_ONE - 1u);
    uint64_t bits = whole * cfg->interval_us + ((frac * cfg->interval_us) >> BG_DB_FRAC_BITS);
    return bits / 8u;
}

void bg_db_update(bg_db_state *st, const bg_db_config *cfg, const bg_lhist *window)
{
    uint64_t n = bg_lh_total(window);
    if (n == 0 || n < cfg->min_samples)
        return;
    st->wp_ns = bg_lh_percentile(window, cfg->pct_ppm, cfg->hist_mode);
    st->delta_q16 = bg_db_delta_q16(cfg, st->wp_ns);
    bg_db_target(cfg, st->delta_q16, &st->target);
}

void bg_db_refill(bg_db_state *st, const bg_db_config *cfg, bool cheque_drawn)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint32_t c_t = st->target.d[d];
        uint32_t have = st->cheque.d[d] < c_t ? st->cheque.d[d] : c_t;
        uint32_t paid = cheque_drawn ? c_t : c_t - have;
        uint32_t s = cfg->main_size.d[d];
        st->main.d[d] = s - (paid < s ? paid : s);
        st->cheque.d[d] = c_t;
    }
}

void bg_db_main_slice(const bg_db_config *cfg, const bg_vec *main, uint32_t j, bg_vec *slice)
{
    const uint64_t k = cfg->main_slices > 1u ? cfg->main_slices : 1u;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        const uint64_t m = main->d[d];
        slice->d[d] = (uint32_t)((j + 1u) * m / k - j * m / k);
    }
}
