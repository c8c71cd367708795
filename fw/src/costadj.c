/* Delay-based cost adjustment (BurstCBS §5.3; rules and rationale in costadj.h). */
#include "burstgate/costadj.h"

#include <stddef.h>

#include "burstgate/regs.h"

void bg_ca_default_config(bg_ca_config *cfg, uint32_t target_ns)
{
    cfg->target_ns = target_ns;
    cfg->pct_ppm = 950000u;
    cfg->hist_mode = BG_LH_INTERP;
    cfg->min_samples = 16u;
    cfg->step_up_q12 = 256u;
    cfg->step_down_q12 = 64u;
    cfg->factor_min = BG_CA_ONE;
    cfg->factor_max = 8u * BG_CA_ONE;
}

const char *bg_ca_config_error(const bg_ca_config *cfg)
{
    if (cfg->target_ns == 0)
        return "target_delay";
    if (cfg->pct_ppm > BG_LH_PPM)
        return "percentile";
    if (cfg->hist_mode != BG_LH_UPPER && cfg->hist_mode != BG_LH_INTERP)
        return "hist_mode";
    if (cfg->step_up_q12 == 0 || cfg->step_up_q12 > BG_COST_FACTOR_MASK)
        return "step_up";
    if (cfg->step_down_q12 == 0 || cfg->step_down_q12 >= BG_CA_ONE)
        return "step_down";
    if (cfg->factor_min == 0 || cfg->factor_min > cfg->factor_max)
        return "factor_min";
    if (cfg->factor_max > BG_COST_FACTOR_MASK)
        return "factor_max";
    return NULL;
}

static uint32_t clamp_factor(const bg_ca_config *cfg, uint32_t f)
{
    if (f < cfg->factor_min)
        return cfg->factor_min;
    if (f > cfg->factor_max)
        return cfg->factor_max;
    return f;
}

static void write_factor(const bg_hal *hal, unsigned d, uint32_t f)
{
    if (hal)
        bg_hal_write(hal, BG_COST_FACTOR(d), f & BG_COST_FACTOR_MASK);
}

void bg_ca_init(bg_ca_state *st, const bg_ca_config *cfg, const bg_hal *hal)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        st->factor[d] = clamp_factor(cfg, BG_CA_ONE);
        st->util_q16[d] = 0;
        write_factor(hal, d, st->factor[d]);
    }
    st->delay_ns = 0;
    st->action = 0;
}

uint32_t bg_ca_util_q16(uint32_t used, uint32_t capacity)
{
    if (capacity == 0)
        return 0;
    uint64_t u = ((uint64_t)used << 16) / capacity;
    return u > BG_CA_UTIL_ONE ? BG_CA_UTIL_ONE : (uint32_t)u;
}

/* factor <= 65535 and steps <= 65535: every product fits in 32 bits. */
uint32_t bg_ca_raise(const bg_ca_config *cfg, uint32_t factor)
{
    uint32_t step = (factor * cfg->step_up_q12) >> BG_FACTOR_FRAC_BITS;
    return clamp_factor(cfg, factor + (step ? step : 1u));
}

uint32_t bg_ca_lower(const bg_ca_config *cfg, uint32_t factor)
{
    uint32_t step = (factor * cfg->step_down_q12) >> BG_FACTOR_FRAC_BITS;
    if (step == 0)
        step = 1;
    return clamp_factor(cfg, factor > step ? factor - step : 0u);
}

unsigned bg_ca_window(bg_ca_state *st, const bg_ca_config *cfg, const bg_hal *hal,
                      const bg_lhist *window, const bg_vec *used, const bg_vec *capacity)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        st->util_q16[d] = (used && capacity) ? bg_ca_util_q16(used->d[d], capacity->d[d]) : 0;

    uint64_t n = bg_lh_total(window);
    st->action = 0;
    st->delay_ns = 0;
    if (n == 0 || n < cfg->min_samples)
        return 0;
    st->delay_ns = bg_lh_percentile(window, cfg->pct_ppm, cfg->hist_mode);
    if (st->delay_ns > cfg->target_ns)
        st->action = 1;
    else if (st->delay_ns < cfg->target_ns)
        st->action = -1;
    else
        return 0;

    unsigned changed = 0;
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        uint32_t f = st->action > 0 ? bg_ca_raise(cfg, st->factor[d]) : bg_ca_lower(cfg, st->factor[d]);
        if (f != st->factor[d]) {
            st->factor[d] = f;
            write_factor(hal, d, f);
            changed |= 1u << d;
        }
    }
    return changed;
}
