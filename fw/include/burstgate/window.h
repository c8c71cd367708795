/* The firmware's window loop: the one control program that runs every window on any engine
 * (the C++ model, the Verilated kernel, an Alveo board) through the register HAL. It owns no
 * datapath state; everything it knows of the window it reads from the registers of the CTRL
 * and TENANT blocks, and everything it decides it writes back there (docs/registers.md).
 *
 * One window, bg_fw_window():
 *   WINDOW = TICK                      admission holds; once CTRL.WINDOW bit 1 reads 0 (the
 *                                      pipeline has drained) the window's counters stand still
 *   read ACTIVE, then per tenant the scheduler looks at: USAGE, THROTTLE, THROTTLE_N, SPILL_N
 *   bios:       bg_bios_run; write GRANT and LEND_GRANT of every scheduled tenant, the burst
 *               list, BURST_N and POOL (the reserved pool)
 *   base:       the static shares written at init stay in force (rewritten with the carry
 *               when cfg.carry_max is set)
 *   wild:       credits and limits (bg_wildcbs_window); GRANT = limit, GLOBAL = total (plus
 *               what is left of it, up to global_carry_max, with the carry on)
 *   ddrr:       every tenant's counters; bg_libra_window; GRANT = its DDRR grant
 *   dualbucket: POOL_DRAWN and POOL (the cheque left), bg_db_refill then bg_db_update on
 *               HIST_ALL; GLOBAL = main bucket, POOL = cheque; with cfg.db_contracts, also
 *               every tenant's counters, credits, and GRANT = its part of the main bucket
 *   cost adjustment (any scheduler, when enabled): bg_ca_window on HIST_ALL and the summed
 *               USAGE against total; it writes COST.FACTOR itself
 *   WINDOW = COMMIT                    grants refill, counters clear, admission resumes
 * Grant carry (cfg.carry_max): every grant the loop writes is the scheduler's grant plus
 * min(carry_max, grant written last window - usage of the window that just ended); under BIOS,
 * for a tenant active in that window, the grant written counts at least its base plus its
 * carry (what line 7's decay lent of its base is carried too).
 * IOPS cap (cfg.count_q16), any scheduler: the factor of the links and the limiter, every
 * tenant's USAGE ingress, egress, swlimit (the I/Os it was admitted), then COUNT_GRANT.
 * A tenant the loop does not rewrite keeps its grant (the datapath refills it every window),
 * which is how a tenant BIOS dropped from its schedule list (§6.6) costs no work.
 *
 * Storage is the caller's (no heap): arrays of n tenants, sized at most BG_TENANTS_MAX. */
#ifndef BURSTGATE_WINDOW_H
#define BURSTGATE_WINDOW_H

#include <stdint.h>

#include "burstgate/bios.h"
#include "burstgate/costadj.h"
#include "burstgate/dualbucket.h"
#include "burstgate/hal.h"
#include "burstgate/libra.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cfg.scheduler: Libra's DDRR (libra.h), a firmware scheduler with no datapath mode of its own:
 * the datapath runs BaseCBS's mode (a tenant's grant alone admits) and the loop rewrites every
 * grant each window. Not a CTRL.SCHEDULER value (that field's 2 bits are all taken). */
#define BG_FW_SCHED_DDRR 4u

/* cfg.costadj: what the delay-based cost adjustment's factor (costadj.h) scales.
 * COST: the cost of every I/O (COST.FACTOR), BurstCBS §5.3 as printed. Every grant then buys
 * f times fewer I/Os, a tenant's base included: a contract of 20000 IOPS serves 20000 / f.
 * BURST (a named variation): COST.FACTOR stays 1.0 and, under bios, only what a tenant is
 * granted above its base is divided by f (and what a bursting tenant lends, which is that
 * part): the delay says the machine serves less than its profile says, and what may give way
 * is the leftover BIOS shares out, not what tenants bought. Made for a gateway whose host is
 * shared with its clients (docs/contracts.md, "When the machine is smaller than its profile"). */
#define BG_FW_COSTADJ_COST 1u
#define BG_FW_COSTADJ_BURST 2u

/* Reads of CTRL.WINDOW after TICK before the loop gives up waiting for the drain. */
#define BG_FW_DRAIN_POLLS 4096u

enum {
    BG_FW_OK = 0,
    BG_FW_E_SCHEDULER = -10, /* scheduler is not a BG_SCHED_* value */
    BG_FW_E_DUALBUCKET = -11, /* bg_db_config_error() names the field */
    BG_FW_E_COSTADJ = -12,    /* bg_ca_config_error() names the field, or "costadj" */
    BG_FW_E_CARRY = -13,      /* carry_max and granted: both set or both NULL */
    BG_FW_E_LIBRA = -14,      /* bg_libra_init() names the field */
    BG_FW_E_COUNT = -15       /* count_q16 and count_have: both set or both NULL */
    /* otherwise a BG_BIOS_E_* code from bg_bios_init / bg_basecbs_alloc */
};

typedef struct bg_fw_config {
    uint32_t scheduler;     /* BG_SCHED_* */
    bg_bios_params bios;    /* total per window (every scheduler), BIOS ratios */
    bg_db_config db;        /* dual-bucket; main_size is the main bucket's issuance */
    uint32_t costadj;       /* BG_FW_COSTADJ_*: delay-based cost adjustment every window, or 0 */
    bg_ca_config ca;
    /* Grant carry (docs/contracts.md), off when NULL: [n] per tenant, the most of a window's
     * unspent grant that may roll into the next window's; and [n] caller storage for the
     * grant last written. The datapath refills a grant every window without carry-over, so
     * without it a tenant whose base buys a fractional number of its I/Os per window (2.29
     * 128 KiB I/Os in a 1 ms window) gets only the whole part; the carry, capped at one
     * largest I/O, pays the fractions out. */
    const bg_vec *carry_max;
    bg_vec *granted;
    /* wild, with the carry on: the most of the GLOBAL budget left at a window's end that rolls
     * into the next. burstgate-sim sets what one window of capacity lacks to hold one 1 MiB
     * I/O (1 MiB against 750 kB of a 3 GB/s limiter in a 250 us window), which would otherwise
     * never pass the global check; zero, WildCBS as printed, at the usual window lengths. */
    bg_vec global_carry_max;
    /* The exact IOPS cap (docs/contracts.md), off when NULL: [n] per tenant, the I/Os per
     * window the scheduler allows it (burstgate-sim: its burst IOPS times the window)
     * in 1/65536 I/O; and [n] caller storage for what the tenant has for the running window, in
     * 1/65536 I/O (its COUNT_GRANT plus the fraction not granted). Every window (and at init)
     * each tenant's TENANT.COUNT_GRANT is written as a token bucket: count_q16 plus what the
     * tenant left of the last window's count -- the fraction of an I/O, and the I/Os it was
     * granted but not admitted, which the loop derives from USAGE (ingress + egress - swlimit
     * is 2 x count_header per I/O) -- at most count_carry_max (one I/O, if that is less). So a
     * 2288 IOPS tenant in 1 ms windows is granted 2, 2, 3, ... and 2288 a second, and over any
     * T it is admitted at most IOPS x T + count_carry_max. */
    const uint64_t *count_q16;
    uint64_t *count_have;
    /* [n] per tenant, the most of the count it leaves unused that carries, in 1/65536 I/O;
     * NULL: count_q16, one window's worth. burstgate-sim sets one window's worth, or more where
     * the cost carry holds more than a window of base (a base that buys less than one largest
     * I/O a window): as many windows' worth as that carry holds, so the count accrued while the
     * bytes for one largest I/O accrue is not lost (docs/contracts.md). */
    const uint64_t *count_carry_max;
    /* The bytes of one header, as the cost table charges them to each link per I/O
     * (bg_cost_load_linear's header_bytes). 0: the count cannot be derived; only the fraction
     * of an I/O carries (an unused count is lost). Must be 0 with a table whose byte
     * dimensions do not follow cost_table.h's linear layout (bg_cost_load_vop's zeros would read
     * as no I/O admitted, and every window would carry the whole bound). */
    uint32_t count_header;
    /* dualbucket only. 0: Still Water as printed, the segment-level buckets alone (the datapath's
     * DUALBUCKET mode, which consults no tenant grant). 1: the buckets on top of the tenants'
     * contracts (docs/contracts.md): the datapath runs in BIOS mode with no lenders, the main
     * bucket's issuance is apportioned over the tenants every window (contracts first, capped
     * at each tenant's burst) as their grants, and the cheque is the pool, which the datapath
     * gives only to steady-segment I/Os of a tenant within its base. */
    uint32_t db_contracts;
    /* ddrr only: Libra's parameters and [n] caller storage, every tenant's quantum (its initial
     * allocation), v_q16 and deficit_max set (libra.h). Grant carry is not applied: DDRR's
     * deficit counter is its own carry. */
    bg_libra_params libra;
    bg_libra_tenant *libra_t;
} bg_fw_config;

typedef struct bg_fw {
    bg_fw_config cfg;
    uint32_t n;
    bg_bios_tenant *t;      /* [n]: res_base, res_burst, mode, credit, credit_max set by the caller */
    bg_bios_usage *u;       /* [n]: the window's counters as read */
    bg_bios bios;
    bg_db_state db;
    bg_ca_state ca;
    bg_libra libra;
    bg_lhist hist;          /* the last window's HIST_ALL */
    uint64_t active[BG_BIOS_BITMAP_WORDS];
    uint32_t count_factor;  /* the link and limiter cost factor of the running window (0: unequal) */
    uint32_t windows;       /* windows run */
    uint64_t ca_factor_sum; /* with costadj: the CPU factor summed over the windows run (telemetry: its mean) */
    uint32_t drain_timeouts; /* windows whose TICK did not drain within BG_FW_DRAIN_POLLS reads */
    const char *err_field;  /* with BG_FW_E_DUALBUCKET / BG_FW_E_COSTADJ */
} bg_fw;

/* Validate, then program the datapath: SCHEDULER, every tenant's RES_BASE, GRANT and
 * LEND_GRANT, the pools, BURST_N = 0; then TICK + COMMIT so the first window starts full.
 * sched_list and burst_list are [n] scratch for BIOS. Returns BG_FW_OK or an error code. */
int bg_fw_init(bg_fw *fw, const bg_fw_config *cfg, bg_bios_tenant *t, bg_bios_usage *u,
               uint16_t *sched_list, uint16_t *burst_list, uint32_t n, const bg_hal *hal);

/* One window, as above. */
void bg_fw_window(bg_fw *fw, const bg_hal *hal);

/* Dual-bucket with db.main_slices = k > 1: add slice j (1 <= j < k, bg_db_main_slice) of this
 * window's main-bucket issuance to CTRL.GLOBAL, j * T / k after the window's COMMIT (which
 * wrote slice 0); tokens left from earlier slices stay, the next tick's write drops them as
 * before. A read-modify-write of a live register: exact only where no admission decision is
 * in flight between the read and the write (burstgate-sim calls it between events, when the
 * device has answered every descriptor). A live agent needs the datapath to add the slice
 * itself (a write-to-add CTRL register or a per-cycle refill of GLOBAL); the gateway does not
 * call this. */
void bg_fw_db_meter(bg_fw *fw, const bg_hal *hal, uint32_t j);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_WINDOW_H */
