/* BIOS RUN_SCHEDULING (BurstCBS §5.2, Algorithm 1 lines 1-13), credit-based burst (Table 1,
 * EBS gp2 style) and the per-window parts of the baselines BaseCBS and WildCBS. Runs once
 * per window over caller-owned arrays indexed by tenant id; no heap, no floating point.
 * The per-I/O half (THROTTLE_IO) is sw/model/src/admission.cpp and, later, gateware.
 *
 * Units. Every resource amount is a bg_vec of cost units per window (cpu ns, ingress B,
 * egress B, swlimit B). Throttle is kept twice per tenant: the number of deferred I/Os
 * (the user-visible counter, and the "throttle_i > 0" test of line 4) and the summed cost
 * vector of those deferrals, which is what line 10 weights: usage is a cost vector, so
 * usage + throttle * weight_throttle is only meaningful per dimension when throttle is in
 * the same cost units; a bare count would add I/Os to nanoseconds and weigh a deferred
 * 4 KiB I/O like a deferred 1 MiB one. A retried I/O deferred again counts again: repeated
 * deferral is exactly the "more follow-up I/Os" pressure the paper weights up.
 *
 * One instance. The paper runs BIOS "on every SA control thread" and divides "the global
 * limit by the number of threads to get the per-thread limit" (§5.3). Here admission happens
 * in the datapath before the load balancer picks a thread, and the firmware reads usage and
 * throttle per tenant only (TENANT.USAGE/THROTTLE/THROTTLE_N, summed over threads; LB.OUT_*
 * are per thread, summed over tenants): per-thread instances cannot be fed. They would need
 * per-(tenant, thread) usage counters and grants in the datapath, and the balancer's pick
 * before admission for a deferred I/O to have a thread (docs/results.md, "BIOS: Algorithm 1
 * as printed, and the project's variations"). So one instance runs over all tenants with
 * total = the capacity of all threads.
 *
 * Fixed point. alpha, weight_throttle, reserved share and floor share are Q16.16 in a
 * uint32_t (BG_BIOS_ONE = 1.0). x * q is computed in 64 bits and shifted right by 16, i.e.
 * truncated toward zero. demand_i saturates at 2^32 - 1. Line 10-11's share, per dimension:
 * k = max(0, bitlength(sum demand) - 32), D = (sum demand) >> k, f = ceil(unused * 2^32 / D)
 * (one 64-bit division per dimension and window), share_i = ((demand_i >> k) * f) >> 32.
 * share_i is floor(exact) or floor(exact) + 1 of the shifted ratio, a sole demander gets
 * exactly unused, and the shares never add up to more than unused (proof in bios.c).
 *
 * Lines 4-7, concretely (per tenant i, per dimension d). The printed lines are the default;
 * each of the project's variations is a named option (bg_bios_params.options, floor_q16):
 *   alloc_hist_i  = the allocation granted to i for the window that just ended ("alloc_hist"
 *                   is not defined in the paper; the grant of the last window is the history
 *                   line 7 can decay window after window, and §6.5 "drops to zero" needs it).
 *   base path     : line 4, "status_i = burst or throttle_i > 0": i was granted above
 *                   res_base last window (status_i == BURST), or i deferred an I/O
 *                   (throttle_n > 0). alloc_i = res_base_i.
 *                   BG_BIOS_OPT_SPILL_BASE also takes this path when i spilled (spill_n > 0:
 *                   an I/O paid by BORROW or RESERVED because its own allocation no longer
 *                   covered it), the prose's "did not consume all resources" read as "its own
 *                   allocation ran out"; the pseudo-code tests throttle only.
 *   decay path    : line 7, "alloc_i <- alloc_hist_i x alpha": alloc_i = alloc_hist_i * alpha,
 *                   so an idle tenant's allocation falls geometrically to zero (§6.5: it
 *                   "drops to zero"; truncation makes x * alpha < x for every x > 0), and a
 *                   resuming tenant is served by reclaim (lines 18-20) and the reserved pool
 *                   (lines 21-22) until line 4 restores its base. Options:
 *                   BG_BIOS_OPT_USAGE_CLAMP  alloc_i = max(alloc_hist_i * alpha, usage_i): a
 *                                            steady tenant below base is not lowered below
 *                                            what it just used;
 *                   floor_q16 > 0            alloc_i = min(res_base, max(floor_i, ...)): a
 *                                            decayed allocation stops at the floor.
 *                   min(res_base, .) is the identity on the printed path: a NORMAL tenant's
 *                   grant is at most res_base in every dimension and alpha <= 1.
 *   floor_i       = res_base_i * floor_q16 (truncated); 0 with the default floor_q16 = 0.
 * Line 8's indentation does not say whether it belongs to the else branch. Read as part of
 * the loop (both paths subtract their first-round allocation): under the other reading
 * line 11's unused would also hand out the base of every tenant on the base path, and the
 * sum of allocations could exceed total - reserved, which §5.2's "enforcing the total
 * resource allocation limit" rules out. So the sum of allocations never exceeds total -
 * reserved; bg_bios_init rejects a configuration whose res_base sum does not fit in it.
 *
 * Lines 9-13: demand_i = usage_i + (throttle_i * weight_throttle >> 16); cap_i = res_burst_i
 * (paid) or min(res_burst_i, res_base_i + credit_i) (credit, after this window's credit
 * update); alloc_i = min(alloc_i + share_i, cap_i); i is a burst tenant when alloc_i > res_base_i in any dimension, and then
 * lend_i = alloc_i - res_base_i (per dimension, 0 where not above): only this surplus may be
 * borrowed by others ("reclaim the extra resources from bursting tenants"). Whatever unused
 * is left after the shares and caps is added to the reserved pool, so
 * sum(alloc) + reserved == total exactly.
 *
 * Reserved pool (lines 21-22). §5.2: "we reserve a small amount of pooled resources that are
 * just enough for two tenants to resume base-level provisioning". Default (reserve_tenants =
 * 2): per dimension, the sum of the two largest res_base, so any two tenants can resume at
 * once whichever they are; where the tenants' bases leave less than that of total, the pool
 * is what they leave (bg_bios.reserve says what was set aside). reserve_tenants = 0 is the
 * project's variation: a fixed share of total, reserved_q16.
 * BG_BIOS_OPT_RESERVE_SHORTFALL reads "to resume" literally: a tenant already granted its base
 * (line 4's base path) has nothing to resume, so the window's pool is at most the sum over
 * tenants of res_base - alloc after lines 4-8 (the decay path's shortfalls, and the dropped
 * tenants' bases less their floors), and what the fixed reserve holds beyond that goes to
 * line 11's shares. With every tenant on the base path, the fixed two-tenant pool stays
 * idle: only a tenant within its base may draw it (agent.hpp), and none is short of its base.
 * (Four tenants of 20000 / 5000 / 2000 / 1000 base IOPS, all bursting, on a host whose CPU
 * prices them at 40 us: the two largest bases are 44 % of the machine, idle, and the bursting
 * tenants got 67 % of what WildCBS gives them.)
 *
 * Line 11's leftover. min(alloc_i + unused * w_i, res_burst_i) leaves unallocated whatever a
 * tenant's share had beyond its cap, and as printed it joins the reserved pool (above), which
 * only a tenant within its base may draw. BG_BIOS_OPT_SHARE_REFILL hands it again, in rounds
 * of line 10-11's rule (the same demands and share arithmetic, so a round never hands out more
 * than is left) restricted to the tenants still below their cap in that dimension; a dimension
 * takes another round, up to BG_BIOS_REFILL_ROUNDS, only while its last one brought a tenant
 * to its cap (else what is left is the shares' rounding). Then lend and the burst list follow. (compare-qemu's second
 * case on a 2-core host: the two largest tenants' shares cut at their bursts left 86 MB/s
 * of 763 unallocated while the two smallest were deferred at about their shares.)
 *
 * Idle tenants (§6.6). A tenant that offered no I/O in the last window and whose allocation
 * has decayed to its floor (zero by default) is dropped: it leaves the scheduled list, so
 * RUN_SCHEDULING no longer visits it and runs in time linear in the scheduled tenants only. Its grant stays
 * at the floor window after window (the datapath keeps refilling it), the floor stays
 * subtracted from unused, and its first I/Os on resuming are admitted from that floor, then
 * from a lender's surplus or the reserved pool up to its base (fast recovery); the active
 * bitmap the datapath sets on any offered I/O puts it back on the list at the next run, with
 * the credits it earned while dropped.
 *
 * Credits (burst_mode credit). Kept per dimension in cost units: the allocation they gate is
 * a vector, and an I/O count has no fixed cost. Per window, credit += res_base - usage where
 * usage is below base (capped at credit_max), credit -= usage - res_base where above
 * (floored at 0). The scenario's burst_credits (I/Os) enter as I/Os times a reference
 * per-I/O cost (bg_credit_from_ios). With no credit left, cap = res_base: no burst. */
#ifndef BURSTGATE_BIOS_H
#define BURSTGATE_BIOS_H

#include <stdint.h>

#include "burstgate/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_BIOS_FRAC_BITS 16u
#define BG_BIOS_ONE (1u << BG_BIOS_FRAC_BITS) /* 1.0 in Q16.16 */
#define BG_BIOS_MAX_TENANTS (1u << BG_TENANT_BITS)
#define BG_BIOS_BITMAP_WORDS (BG_BIOS_MAX_TENANTS / 64u)

enum { BG_BURST_PAID = 0, BG_BURST_CREDIT = 1 };

/* The project's variations of Algorithm 1 (bg_bios_params.options; see lines 4-7 above). */
#define BG_BIOS_OPT_USAGE_CLAMP 1u /* line 7: max(alloc_hist * alpha, usage) */
#define BG_BIOS_OPT_SPILL_BASE 2u  /* line 4: a spilled tenant (spill_n > 0) takes the base path */
/* The reserved pool of a window is at most what the tenants' allocations fall short of their
 * bases by (first round, dropped tenants included): see "Reserved pool" above. */
#define BG_BIOS_OPT_RESERVE_SHORTFALL 4u
/* Line 11's leftover (shares cut at a tenant's cap) handed again to the tenants still below
 * theirs, in proportion to demand: see "Line 11's leftover" above. */
#define BG_BIOS_OPT_SHARE_REFILL 8u
#define BG_BIOS_OPT_ALL \
    (BG_BIOS_OPT_USAGE_CLAMP | BG_BIOS_OPT_SPILL_BASE | BG_BIOS_OPT_RESERVE_SHORTFALL | BG_BIOS_OPT_SHARE_REFILL)
/* The project's earlier default's bits (with a floor and the share pool: bios: of "project"). */
#define BG_BIOS_OPT_PROJECT (BG_BIOS_OPT_USAGE_CLAMP | BG_BIOS_OPT_SPILL_BASE)
#define BG_BIOS_RESERVE_TENANTS_MAX 16u
#define BG_BIOS_REFILL_ROUNDS 2u
enum { BG_BIOS_NORMAL = 0, BG_BIOS_BURST = 1 };

/* Configuration errors of bg_bios_init / bg_basecbs_alloc (0 = accepted). */
enum {
    BG_BIOS_OK = 0,
    BG_BIOS_E_COUNT = -1,     /* n is 0 or above BG_BIOS_MAX_TENANTS */
    BG_BIOS_E_RATIO = -2,     /* alpha, reserved or floor share above 1.0 */
    BG_BIOS_E_BURST = -3,     /* a tenant's res_burst below its res_base (err_tenant) */
    BG_BIOS_E_OVERSUB = -4,   /* sum(res_base) above total - reserved (err_dim) */
    BG_BIOS_E_MODE = -5,      /* burst mode neither paid nor credit (err_tenant) */
    BG_BIOS_E_OPTION = -6     /* unknown option bit or reserve_tenants above the maximum */
};

typedef struct bg_bios_params {
    bg_vec total;                 /* per-window capacity of this SA thread */
    uint32_t reserved_q16;        /* reserved pool / total, Q16.16 in [0, 1.0] */
    uint32_t alpha_q16;           /* line 7 decay factor, Q16.16 in [0, 1.0] */
    uint32_t weight_throttle_q16; /* line 10 weight of throttled cost, Q16.16 */
    uint32_t floor_q16;           /* variation: floor allocation / res_base, Q16.16 in [0, 1.0]; 0 = line 7 */
    uint32_t options;             /* BG_BIOS_OPT_* variations; 0 = Algorithm 1 as printed */
    uint32_t reserve_tenants;     /* pool = the n largest bases (2 = §5.2); 0: total * reserved_q16 */
} bg_bios_params;

/* A bg_bios_tenant starts on 16 bytes: 144 bytes a tenant (nine 16-byte rows, the last
 * holding the scalars), so bg_bios_run's 16-byte loads never straddle two cache lines and
 * a tenant's address is one lea and one shift from its id (136 bytes took four steps). */
#ifdef __cplusplus
#define BG_BIOS_ALIGN16 alignas(16)
#else
#define BG_BIOS_ALIGN16 _Alignas(16)
#endif

/* One tenant: configuration (set by the caller before init) and firmware state. */
typedef struct bg_bios_tenant {
    BG_BIOS_ALIGN16 bg_vec res_base; /* base-level provisioning per window */
    bg_vec res_burst;   /* burst provisioning per window (>= res_base) */
    bg_vec credit_max;  /* credit mode: bucket size */
    bg_vec credit;      /* credit mode: balance; the caller sets the initial credits */
    bg_vec alloc;       /* grant for the current window; run() replaces it with the next */
    bg_vec lend;        /* part of alloc above res_base that others may borrow (run()
                         * parks the line-11 cap here between its passes) */
    bg_vec floor;       /* res_base * floor share, set by init */
    bg_vec demand;      /* line 10 numerator of the last window (run() scratch) */
    uint32_t dropped_at; /* window index at which the tenant was dropped */
    uint8_t mode;       /* BG_BURST_PAID / BG_BURST_CREDIT */
    uint8_t status;     /* BG_BIOS_NORMAL / BG_BIOS_BURST, for the granted alloc */
} bg_bios_tenant;

/* One tenant's counters for the window that just ended, read from the datapath. */
typedef struct bg_bios_usage {
    bg_vec usage;        /* cost admitted for this tenant, from any source */
    bg_vec throttle;     /* summed cost of its deferrals */
    uint32_t throttle_n; /* deferrals (== deferred decisions, always) */
    uint32_t spill_n;    /* I/Os paid by BORROW or RESERVED */
} bg_bios_usage;

typedef struct bg_bios {
    bg_bios_params p;
    bg_bios_tenant *t;     /* [n] */
    uint16_t *sched_list;  /* [n] scheduled tenants, in list order */
    uint16_t *burst_list;  /* [n] out: burst tenants of the next window */
    uint32_t n;
    uint32_t n_sched;
    uint32_t n_burst;      /* out: entries of burst_list */
    uint32_t window;       /* index of the window whose counters run() consumes next */
    bg_vec reserve;        /* the fixed part of the pool (two largest bases, or the share) */
    bg_vec reserved;       /* out: reserved pool of the next window */
    bg_vec reserve_now;    /* out: the part of it held back, not left over (reserve, or at most the shortfall) */
    bg_vec dropped_sum;    /* floors granted to dropped tenants */
    bg_vec dropped_base;   /* their bases (BG_BIOS_OPT_RESERVE_SHORTFALL) */
    uint64_t dropped[BG_BIOS_BITMAP_WORDS];
    int32_t err_tenant;    /* tenant / dimension an init error refers to, else -1 */
    int32_t err_dim;
    uint16_t scratch[2][BG_BIOS_MAX_TENANTS]; /* run() only: its credit and (without AVX2) throttled lists */
} bg_bios;

/* Validate, then start every tenant scheduled, NORMAL, granted res_base, lending nothing;
 * reserved = total - sum(res_base). Credits keep the caller's initial values (clamped to
 * credit_max). Returns BG_BIOS_OK or a BG_BIOS_E_* code. */
int bg_bios_init(bg_bios *b, const bg_bios_params *p, bg_bios_tenant *tenants,
                 uint16_t *sched_list, uint16_t *burst_list, uint32_t n);

/* RUN_SCHEDULING for the window whose counters are u[0..n) and active (bit i set when
 * tenant i offered an I/O, BG_BIOS_BITMAP_WORDS words). Writes t[i].alloc, t[i].lend and
 * t[i].status for every scheduled tenant, burst_list/n_burst and reserved. */
void bg_bios_run(bg_bios *b, const bg_bios_usage *u, const uint64_t *active);

/* The line-11 ceiling of tenant t for the next window. */
void bg_burst_cap(const bg_bios_tenant *t, bg_vec *cap);

/* One window of credit accounting with that window's usage (no-op for paid tenants). */
void bg_credit_update(bg_bios_tenant *t, const bg_vec *usage);

/* ios I/Os of cost io_cost as a credit vector (saturating). */
bg_vec bg_credit_from_ios(uint32_t ios, const bg_vec *io_cost);

/* BaseCBS: alloc[i] = min(res_burst_i, floor(total * res_base_i / sum(res_base))) per
 * dimension, static; the proportional share of Gimbal-style admission. */
int bg_basecbs_alloc(const bg_vec *total, const bg_bios_tenant *t, uint32_t n, bg_vec *alloc);
/* The same, one tenant at a time: sum is bg_base_sum over all n tenants. */
void bg_base_sum(const bg_bios_tenant *t, uint32_t n, uint64_t sum[BG_COST_DIMS]);
bg_vec bg_basecbs_share(const bg_vec *total, const uint64_t sum[BG_COST_DIMS], const bg_bios_tenant *t);

/* WildCBS per window: update credits from u, limit[i] = the tenant's burst cap (its
 * per-tenant rate limiter); the global budget is total, refilled by the caller. */
void bg_wildcbs_window(bg_bios_tenant *t, const bg_bios_usage *u, uint32_t n, bg_vec *limit);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_BIOS_H */
