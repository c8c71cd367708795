/* Libra's scheduler and resource policy ("Libra: From application requests to virtual IOPs",
 * EuroSys'14, §3, §4.1, §4.2, §4.3) at the window grain of the firmware loop.
 *
 * DDRR. Libra's scheduler threads run deficit round robin: "In each scheduling round, Libra
 * consumes IO resources for each tenant IO task according to the underlying cost model. Libra
 * interleaves IO operations from different tenants in a deficit round robin fashion, scheduling
 * tasks until all tenants have either run out of work or exhausted their IO allocation, which
 * starts a new round" (§3). Here one round is one window (the datapath refills grants only at a
 * window's end), so the per-window grant of tenant i is
 *   i not backlogged (it deferred no I/O in the window: it ran out of work, or offered none):
 *       quantum_i, deficit 0 (DRR empties the deficit counter of a flow whose queue empties)
 *   i backlogged (it offered I/O and deferred some: it exhausted its allocation):
 *       quantum_i + deficit_i + share_i
 * where deficit_i = min(deficit_max_i, last grant - usage) (DRR keeps the counter of a flow
 * still backlogged), and share_i is the capacity left after every quantum and deficit, split
 * over the backlogged tenants in proportion to their quanta ("If the storage node is
 * underbooked, the scheduler shares any unallocated resources among the tenants
 * proportionally", §4.1): Libra starts further rounds while work is left, and only the tenants
 * that exhausted their allocation have work for them. A tenant that ran out of work keeps its
 * quantum unlent: Libra's next round would hand it back the moment it has work again, which a
 * fixed window cannot see before it ends (the one gap to the paper's work conservation: the
 * unused quanta of tenants that ran out of work are idle for the window).
 * The sum of the grants never exceeds total in any dimension once the quanta fit in total.
 *
 * Units (p.vop). Libra charges one scalar, the virtual IOP: VOP_cost(size) = Max-IOP /
 * Achieved-IOP(size) (§4.3), an I/O's share of what the device does in a second at that size.
 * On a device whose capacity is a vector of limits (CPU, links, the software limit) an I/O's
 * achieved rate alone is min_d total_d / c_d, so its VOP share is max_d c_d / total_d: vop = 1
 * runs the DRR above on that scalar (quantum, deficit, usage each as max_d x_d / total_d, in
 * Q24) and writes grant_d = share x total_d, so a tenant may spend its share on whichever
 * dimension binds it. vop = 0 runs the same DRR per dimension, each dimension's spare shared on
 * its own (a tenant bound by CPU then leaves its share of the links unused: the named variation).
 *
 * §4.1 profiles. Every policy interval (the paper: once per second) the tenant's cost per
 * normalized (1 KiB) request is q = EWMA(u / s): u the cost units the tenant used over the
 * interval (per dimension), s its data bytes / 1024 (the software-limit dimension counts data
 * bytes). q is kept in Q16; EWMA(x) = q + w (x - q), w = ewma_w_q16 / 2^16 (the paper names an
 * EWMA but prints no weight), the first interval with traffic sets q = x. The allocation is
 * r = v q, v the tenant's reservation in normalized requests per window. Only direct I/O is
 * seen: the datapath carries no internal-operation tag (FLUSH, COMPACT), so the sum over i of
 * q_{a,i} is 0 here. An interval without traffic leaves q (and r) as they were.
 *
 * §4.2 floor. The allocations must fit the provisionable capacity (floor = total * floor_q16):
 * "the resource policy scales down each tenant's resource allocation proportionally to fit
 * within the capacity constraint"; quantum_i = r_i, scaled per dimension when sum r > floor.
 * Admission of a tenant set against the floor is the caller's (burstgate-sim's libra.floor).
 *
 * Fixed point only, no heap; arrays are the caller's, n tenants. */
#ifndef BURSTGATE_LIBRA_H
#define BURSTGATE_LIBRA_H

#include <stdint.h>

#include "burstgate/bios.h"
#include "burstgate/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_LIBRA_FRAC_BITS 16u
#define BG_LIBRA_ONE (1u << BG_LIBRA_FRAC_BITS)
#define BG_LIBRA_VOP_BITS 24u /* a VOP share of the capacity: Q24, 1 << 24 = all of it */

typedef struct bg_libra_params {
    bg_vec total;           /* capacity per window */
    uint32_t floor_q16;     /* provisionable share of total (§4.2), (0, 1] in Q16 */
    uint32_t ewma_w_q16;    /* EWMA weight of the newest interval, (0, 1] in Q16 */
    uint32_t policy_windows; /* windows per policy interval, >= 1; 0: profiles off */
    uint32_t vop;           /* 1: DRR over one scalar VOP per tenant (below); 0: per dimension */
} bg_libra_params;

typedef struct bg_libra_tenant {
    uint64_t v_q16;         /* reservation: normalized (1 KiB) requests per window, Q16 */
    bg_vec deficit_max;     /* the most deficit carried (one largest I/O's cost) */
    /* state */
    bg_vec r;               /* allocation r = v q (the initial quantum until profiled) */
    bg_vec quantum;         /* r after the floor's scaling: the DRR quantum */
    bg_vec deficit;
    bg_vec grant;           /* the grant written last window */
    uint64_t grant_vop, deficit_vop; /* vop: the same as shares of the capacity, Q24 */
    uint64_t q_q16[BG_COST_DIMS]; /* §4.1 profile: cost units per 1 KiB request, Q16 */
    uint32_t profiled;      /* 1 once an interval with traffic has set q */
    uint64_t acc_u[BG_COST_DIMS]; /* the interval's usage so far */
} bg_libra_tenant;

typedef struct bg_libra {
    bg_libra_params p;
    uint32_t n;
    uint32_t windows;       /* windows into the current policy interval */
    uint32_t overbooked;    /* policy intervals whose allocations were scaled to the floor */
} bg_libra;

/* One EWMA step, Q16: the first sample (have == 0) is taken as it is. */
uint64_t bg_libra_ewma(uint64_t q_q16, uint64_t x_q16, uint32_t w_q16, uint32_t have);

/* q = EWMA(u / s) for one dimension over an interval with s_bytes data bytes (s = bytes / 1024
 * normalized requests); returns 0 and leaves q when s_bytes == 0. */
int bg_libra_profile_update(uint64_t *q_q16, uint32_t *have, uint64_t u, uint64_t s_bytes, uint32_t w_q16);

/* Sets every tenant's quantum to r = v q (or keeps the caller's quantum while unprofiled) and
 * scales the set to the floor. Returns 1 when it had to scale. */
int bg_libra_provision(bg_libra *l, bg_libra_tenant *t);

/* Validates p (floor in (0, 1], weight in (0, 1]); returns NULL or the bad field's name. The
 * caller has set every t[i].quantum (the initial allocation) and deficit_max. */
const char *bg_libra_init(bg_libra *l, const bg_libra_params *p, bg_libra_tenant *t, uint32_t n);

/* One window: u[i] the window's counters, active bit i set when i offered an I/O. Writes
 * t[i].grant (the grant for the next window) for every tenant. */
void bg_libra_window(bg_libra *l, bg_libra_tenant *t, const bg_bios_usage *u, const uint64_t *active);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_LIBRA_H */
