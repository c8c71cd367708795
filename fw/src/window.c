/* The firmware's window loop; see window.h. */
#include "burstgate/window.h"

#include <stddef.h>

#include "burstgate/regs.h"

static void write_vec(const bg_hal *hal, uint32_t first, uint32_t t, const bg_vec *v)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        bg_hal_write(hal, first + 4u * (t * BG_COST_DIMS + d), v->d[d]);
}

static void read_vec(const bg_hal *hal, uint32_t first, uint32_t t, bg_vec *v)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v->d[d] = bg_hal_read(hal, first + 4u * (t * BG_COST_DIMS + d));
}

static void write_pool(const bg_hal *hal, uint32_t first, const bg_vec *v)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        bg_hal_write(hal, first + 4u * d, v->d[d]);
}

static void read_counters(const bg_hal *hal, uint32_t t, bg_bios_usage *u)
{
    read_vec(hal, BG_TENANT_USAGE(0), t, &u->usage);
    read_vec(hal, BG_TENANT_THROTTLE(0), t, &u->throttle);
    u->throttle_n = bg_hal_read(hal, BG_TENANT_THROTTLE_N(t));
    u->spill_n = bg_hal_read(hal, BG_TENANT_SPILL_N(t));
}

static uint32_t sub0(uint32_t a, uint32_t b) { return a > b ? a - b : 0u; }

/* The grant the datapath gets for tenant i: `grant` plus the carry of what i left unspent of
 * the grant it had (usage counts every source, so a spill only lowers the carry). The carry pays
 * the fraction of an I/O a busy tenant's per-window grant leaves. A tenant that offered no I/O
 * in the window (a deferred I/O is offered again every window, so it keeps its tenant active)
 * keeps only alpha times its carry, as line 7 decays its allocation: a Poisson tenant loses
 * little to a quiet window, and an idle tenant's grant still falls to zero (§6.5). */
static void write_granted(bg_fw *fw, const bg_hal *hal, uint32_t i, const bg_vec *grant)
{
    bg_vec g = *grant;
    if (fw->cfg.carry_max) {
        const bool active = (fw->active[i / 64u] >> (i % 64u)) & 1u;
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint32_t left = sub0(fw->cfg.granted[i].d[d], fw->u[i].usage.d[d]);
            uint32_t c = left < fw->cfg.carry_max[i].d[d] ? left : fw->cfg.carry_max[i].d[d];
            if (!active)
                c = (uint32_t)(((uint64_t)c * fw->cfg.bios.alpha_q16) >> BG_BIOS_FRAC_BITS);
            /* A tenant BIOS drops (idle, its allocation decayed to the floor) keeps the grant
             * written now until it wakes: it carries nothing. */
            if (fw->cfg.scheduler == BG_SCHED_BIOS && ((fw->bios.dropped[i / 64u] >> (i % 64u)) & 1u))
                c = 0;
            g.d[d] = bg_u32_add_sat(g.d[d], c);
        }
        fw->cfg.granted[i] = g;
    }
    write_vec(hal, BG_TENANT_GRANT(0), i, &g);
}

/* The I/Os tenant i was admitted in the window that just ended, from its USAGE: every I/O
 * charges one header to each link and its data once to a link and once to the software limiter
 * (cost_table.h), so ingress + egress - swlimit = 2 x header per I/O, read or write, whatever
 * source paid -- no count register needed. The datapath scales each dimension by its factor f
 * (Q4.12, floored): an I/O then charges 2 floor(h f) + b, b in {0, 1} (b = 0 when h f is whole),
 * so the sum S of n I/Os gives n <= S / (2 floor(h f)) < n + 1 whenever n < 2 floor(h f) (always at
 * f = 1.0: b = 0); beyond that the quotient may exceed n by n / (2 floor(h f)) (at most 1/256 of n
 * at the usual 128-byte header and f >= 1.0), which only shortens the carry. Clamped to `granted`,
 * which the gate never exceeds. Without a header (count_header 0), with the link and limiter
 * factors unequal (the cost adjustment keeps them equal) or with a saturated counter the count
 * is unknown: `granted` (all used), so only the fraction carries. */
static uint32_t admitted_ios(const bg_fw *fw, const bg_hal *hal, uint32_t i, uint32_t granted)
{
    const uint32_t f = fw->count_factor;
    const uint64_t per_io = 2u * (((uint64_t)fw->cfg.count_header * f) >> BG_FACTOR_FRAC_BITS);
    if (per_io == 0)
        return granted;
    const uint32_t in = bg_hal_read(hal, BG_TENANT_USAGE(i * BG_COST_DIMS + BG_DIM_INGRESS));
    const uint32_t eg = bg_hal_read(hal, BG_TENANT_USAGE(i * BG_COST_DIMS + BG_DIM_EGRESS));
    const uint32_t sw = bg_hal_read(hal, BG_TENANT_USAGE(i * BG_COST_DIMS + BG_DIM_SWLIMIT));
    const uint64_t sum = (uint64_t)in + eg;
    if (in == UINT32_MAX || eg == UINT32_MAX || sw == UINT32_MAX || sum < sw)
        return granted;
    const uint64_t n = (sum - sw) / per_io;
    return n < granted ? (uint32_t)n : granted;
}

/* The exact IOPS cap: every tenant's COUNT_GRANT for the next window, a token bucket in
 * 1/65536 I/O. count_have[i] is what the tenant had for the window that just ended: the
 * COUNT_GRANT written (its whole part) plus the fraction not granted. What it left of that --
 * the fraction, and the count a window leaves unused (a closed-loop tenant's arrivals do not
 * line up with windows; a window whose byte grant binds leaves count) -- carries, up to
 * count_carry_max[i] (default count_q16[i], one window's worth), and at least one I/O: so over
 * any k windows the tenant is admitted at most k windows' worth plus that bound
 * (docs/contracts.md). `first`: at init, nothing used, nothing carried. Written while
 * admission is held: the datapath reads COUNT_GRANT live, so the grant applies from the
 * COMMIT on. */
static void write_count_grants(bg_fw *fw, const bg_hal *hal, bool first)
{
    if (!fw->cfg.count_q16)
        return;
    const uint64_t one = (uint64_t)1 << 16, no_cap = (uint64_t)UINT32_MAX << 16;
    for (uint32_t i = 0; i < fw->n; i++) {
        const uint64_t q = fw->cfg.count_q16[i];
        /* UINT32_MAX, the register's reset, is no cap: a rate that high (or UINT64_MAX, for a
         * tenant without an IOPS figure) writes it, and nothing carries. */
        if (q >= no_cap) {
            fw->cfg.count_have[i] = q;
            bg_hal_write(hal, BG_TENANT_COUNT_GRANT(i), UINT32_MAX);
            continue;
        }
        uint64_t carry = 0;
        if (!first) {
            const uint64_t have = fw->cfg.count_have[i];
            const uint32_t granted = (uint32_t)(have >> 16);
            const uint64_t left = have - ((uint64_t)admitted_ios(fw, hal, i, granted) << 16);
            uint64_t most = fw->cfg.count_carry_max ? fw->cfg.count_carry_max[i] : q;
            most = most > one ? most : one;
            carry = left < most ? left : most;
        }
        /* Below no_cap, so COUNT_GRANT stays a cap whatever count_carry_max is. */
        const uint64_t have = carry < no_cap - 1u - q ? q + carry : no_cap - 1u;
        fw->cfg.count_have[i] = have;
        bg_hal_write(hal, BG_TENANT_COUNT_GRANT(i), (uint32_t)(have >> 16));
    }
}

static void read_active(bg_fw *fw, const bg_hal *hal)
{
    for (unsigned w = 0; w < BG_BIOS_BITMAP_WORDS; w++) {
        uint64_t lo = bg_hal_read(hal, BG_CTRL_ACTIVE(2u * w));
        uint64_t hi = bg_hal_read(hal, BG_CTRL_ACTIVE(2u * w + 1u));
        fw->active[w] = lo | (hi << 32);
    }
}

/* After TICK, descriptors already in the pipeline are still being decided (CTRL.WINDOW bit 1);
 * the counters stand still only once it clears. Bounded, so a wedged datapath costs a counted
 * timeout rather than a hung control loop. */
static void wait_drained(bg_fw *fw, const bg_hal *hal)
{
    for (uint32_t polls = 0; polls < BG_FW_DRAIN_POLLS; polls++)
        if (!(bg_hal_read(hal, BG_CTRL_WINDOW) & 2u))
            return;
    fw->drain_timeouts++;
}

static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* Composed dual-bucket: the main bucket's issuance M split over the tenants as grants, per
 * dimension, from the window's counters (fw->u). demand_i = usage + throttle x weight, capped
 * at i's burst (credits included). First every tenant gets min(demand, base) -- its contract --
 * scaled down together if they exceed M (the proxy's limit is below the bases); what is left
 * goes to the unmet demands in proportion; what is still left, in proportion to the bases up to
 * each tenant's burst, so a tenant whose demand grows finds room in the next window. The sum of
 * the grants never exceeds M. */
static void db_apportion(bg_fw *fw, const bg_hal *hal)
{
    const uint32_t n = fw->n;
    bg_bios_tenant *t = fw->t;
    uint64_t base_sum[BG_COST_DIMS];
    bg_base_sum(t, n, base_sum);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        const uint64_t m = fw->db.main.d[d];
        uint64_t first = 0, want = 0;
        for (uint32_t i = 0; i < n; i++) {
            bg_vec cap;
            bg_burst_cap(&t[i], &cap);
            const bg_bios_usage *u = &fw->u[i];
            uint64_t dem = (uint64_t)u->usage.d[d] +
                           (((uint64_t)u->throttle.d[d] * fw->cfg.bios.weight_throttle_q16) >> BG_BIOS_FRAC_BITS);
            t[i].demand.d[d] = (uint32_t)(dem < cap.d[d] ? dem : cap.d[d]);
            t[i].lend.d[d] = cap.d[d]; /* parked: the cap, for the last pass */
            t[i].alloc.d[d] = min32(t[i].demand.d[d], t[i].res_base.d[d]);
            first += t[i].alloc.d[d];
            want += t[i].demand.d[d] - t[i].alloc.d[d];
        }
        if (first > m) {
            for (uint32_t i = 0; i < n; i++)
                t[i].alloc.d[d] = (uint32_t)(t[i].alloc.d[d] * m / first);
            continue;
        }
        uint64_t left = m - first;
        if (want > 0) {
            uint64_t given = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t w = t[i].demand.d[d] - t[i].alloc.d[d];
                uint64_t g = left >= want ? w : w * left / want;
                t[i].alloc.d[d] += (uint32_t)g;
                given += g;
            }
            left -= given;
        }
        if (left > 0 && base_sum[d] > 0) {
            for (uint32_t i = 0; i < n; i++) {
                uint64_t h = left * t[i].res_base.d[d] / base_sum[d];
                uint32_t room = t[i].lend.d[d] - t[i].alloc.d[d];
                t[i].alloc.d[d] += (uint32_t)(h < room ? h : room);
            }
        }
    }
    const bg_vec zero = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        t[i].lend = zero;
        write_granted(fw, hal, i, &t[i].alloc);
    }
}

int bg_fw_init(bg_fw *fw, const bg_fw_config *cfg, bg_bios_tenant *t, bg_bios_usage *u,
               uint16_t *sched_list, uint16_t *burst_list, uint32_t n, const bg_hal *hal)
{
    fw->err_field = NULL;
    if (cfg->scheduler > BG_SCHED_DUALBUCKET && cfg->scheduler != BG_FW_SCHED_DDRR)
        return BG_FW_E_SCHEDULER;
    if (cfg->scheduler == BG_FW_SCHED_DDRR && cfg->libra_t == NULL) {
        fw->err_field = "libra_t";
        return BG_FW_E_LIBRA;
    }
    if (cfg->scheduler == BG_FW_SCHED_DDRR && (fw->err_field = bg_libra_init(&fw->libra, &cfg->libra, cfg->libra_t, n)) != NULL)
        return BG_FW_E_LIBRA;
    if (cfg->scheduler == BG_SCHED_DUALBUCKET && (fw->err_field = bg_db_config_error(&cfg->db)) != NULL)
        return BG_FW_E_DUALBUCKET;
    if (cfg->costadj > BG_FW_COSTADJ_BURST) {
        fw->err_field = "costadj";
        return BG_FW_E_COSTADJ;
    }
    if (cfg->costadj && (fw->err_field = bg_ca_config_error(&cfg->ca)) != NULL)
        return BG_FW_E_COSTADJ;
    if ((cfg->carry_max == NULL) != (cfg->granted == NULL)) {
        fw->err_field = "carry_max";
        return BG_FW_E_CARRY;
    }
    if ((cfg->count_q16 == NULL) != (cfg->count_have == NULL)) {
        fw->err_field = "count_q16";
        return BG_FW_E_COUNT;
    }
    /* bg_bios_init validates the tenants (count, burst >= base, no oversubscription) for
     * every scheduler: what BIOS rejects is no valid provisioning for a baseline either. */
    bg_bios_params check = cfg->bios;
    if (cfg->scheduler != BG_SCHED_BIOS)
    {
        check.reserved_q16 = 0; /* only BIOS keeps a reserved pool out of the tenants' reach */
        check.reserve_tenants = 0;
    }
    int rc = bg_bios_init(&fw->bios, &check, t, sched_list, burst_list, n);
    if (rc != BG_BIOS_OK)
        return rc;
    fw->cfg = *cfg;
    fw->cfg.bios = check;
    fw->n = n;
    fw->t = t;
    fw->u = u;
    fw->windows = 0;
    fw->ca_factor_sum = 0;
    fw->drain_timeouts = 0;
    bg_lh_clear(&fw->hist);
    for (unsigned w = 0; w < BG_BIOS_BITMAP_WORDS; w++)
        fw->active[w] = 0;

    bg_hal_write(hal, BG_CTRL_WINDOW, BG_WINDOW_TICK);
    wait_drained(fw, hal);
    const int composed = cfg->scheduler == BG_SCHED_DUALBUCKET && cfg->db_contracts;
    /* Composed dual-bucket: the datapath's BIOS mode checks the tenant's grant, then (within
     * base, steady segment) the pool, which holds the cheque; BURST_N stays 0. */
    const int ddrr = cfg->scheduler == BG_FW_SCHED_DDRR;
    bg_hal_write(hal, BG_CTRL_SCHEDULER, composed ? BG_SCHED_BIOS : ddrr ? BG_SCHED_BASE : cfg->scheduler);
    bg_hal_write(hal, BG_CTRL_BURST_N, 0);
    const bg_vec zero = {{0}};
    uint64_t sum[BG_COST_DIMS];
    bg_base_sum(t, n, sum);
    for (uint32_t i = 0; i < n; i++) {
        u[i] = (bg_bios_usage){{{0}}, {{0}}, 0, 0};
        bg_vec grant = t[i].alloc; /* BIOS: res_base after bg_bios_init */
        if (cfg->scheduler == BG_SCHED_BASE)
            grant = bg_basecbs_share(&cfg->bios.total, sum, &t[i]);
        else if (cfg->scheduler == BG_SCHED_WILD)
            bg_burst_cap(&t[i], &grant);
        else if (ddrr)
            grant = cfg->libra_t[i].grant;
        else if (cfg->scheduler == BG_SCHED_DUALBUCKET)
            grant = zero; /* the buckets are shared; per-tenant grants are not consulted (or,
                           * composed, set below once the main bucket is known) */
        write_vec(hal, BG_TENANT_RES_BASE(0), i, &t[i].res_base);
        write_vec(hal, BG_TENANT_GRANT(0), i, &grant);
        if (cfg->granted)
            cfg->granted[i] = grant;
        write_vec(hal, BG_TENANT_LEND_GRANT(0), i, &zero);
    }
    bg_vec pool = zero, global = zero;
    if (cfg->scheduler == BG_SCHED_BIOS) {
        pool = fw->bios.reserved;
    } else if (cfg->scheduler == BG_SCHED_WILD) {
        global = cfg->bios.total;
    } else if (cfg->scheduler == BG_SCHED_DUALBUCKET) {
        bg_db_init(&fw->db, &cfg->db);
        pool = fw->db.cheque;
        bg_db_main_slice(&cfg->db, &fw->db.main, 0, &global);
        if (composed) {
            /* The first window's apportioning: as if every tenant asked for its base. */
            for (uint32_t i = 0; i < n; i++)
                u[i].usage = t[i].res_base;
            db_apportion(fw, hal);
            for (uint32_t i = 0; i < n; i++)
                u[i].usage = zero;
        }
    }
    write_pool(hal, BG_CTRL_POOL(0), &pool);
    write_pool(hal, BG_CTRL_GLOBAL(0), &global);
    if (cfg->costadj)
        bg_ca_init(&fw->ca, &cfg->ca, cfg->costadj == BG_FW_COSTADJ_COST ? hal : NULL);
    if (cfg->costadj == BG_FW_COSTADJ_BURST) /* a device reused after a COST run keeps no factor */
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            bg_hal_write(hal, BG_COST_FACTOR(d), BG_CA_ONE);
    fw->count_factor = BG_CA_ONE;
    write_count_grants(fw, hal, true);
    bg_hal_write(hal, BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    return BG_FW_OK;
}

static int bit(const uint64_t *bits, uint32_t i) { return (int)((bits[i >> 6] >> (i & 63u)) & 1u); }

/* x * BG_CA_ONE / f: at most x. A factor below 1.0 (a factor_min the configuration allows)
 * divides nothing: the burst is never raised above what BIOS allocated. */
static uint32_t div_factor(uint32_t x, uint32_t f)
{
    return f <= BG_CA_ONE ? x : (uint32_t)(((uint64_t)x << BG_FACTOR_FRAC_BITS) / f);
}

/* Under BG_FW_COSTADJ_BURST the part of the allocation above the base is divided by the
 * adjustment's factor (window.h), and so is the surplus the tenant lends: a borrower takes from
 * the lender's grant too, and a lend above the shrunk surplus would let it take the lender's
 * base. The base and BIOS's own state are left as they are, so the next run sees the same
 * history. */
static void write_grant(bg_fw *fw, const bg_hal *hal, uint32_t i)
{
    bg_vec alloc = fw->t[i].alloc, lend = fw->t[i].lend;
    if (fw->cfg.costadj == BG_FW_COSTADJ_BURST)
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            const uint32_t f = fw->ca.factor[d], base = fw->t[i].res_base.d[d];
            if (alloc.d[d] > base)
                alloc.d[d] = base + div_factor(alloc.d[d] - base, f);
            lend.d[d] = div_factor(lend.d[d], f);
        }
    write_granted(fw, hal, i, &alloc);
    write_vec(hal, BG_TENANT_LEND_GRANT(0), i, &lend);
}

static void window_bios(bg_fw *fw, const bg_hal *hal)
{
    bg_bios *b = &fw->bios;
    /* Only the tenants RUN_SCHEDULING will visit: the schedule list and the dropped tenants
     * that offered an I/O (they wake). A dropped, silent tenant's counters are all zero. */
    for (uint32_t j = 0; j < b->n_sched; j++)
        read_counters(hal, b->sched_list[j], &fw->u[b->sched_list[j]]);
    for (uint32_t i = 0; i < fw->n; i++)
        if (bit(b->dropped, i) && bit(fw->active, i))
            read_counters(hal, i, &fw->u[i]);
    /* The carry counts what an active tenant left of its base too, not only of its grant:
     * line 7 decays the allocation of a tenant that no I/O of its own was deferred in a window
     * (alloc_hist x alpha, lent to the others through line 10), and a closed loop of low
     * depth whose round trip is near the window length (through a gateway: the SA queue
     * behind its neighbours and the client's own turnaround) offers less than its grant in
     * some windows and more in the next. The decayed part of its base was then neither
     * spent nor carried: such a tenant got 86-90 % of its base MB/s beside a bursting
     * neighbour (docs/contracts.md). So the unspent part of the base rolls into the carry,
     * bounded by carry_max as any carry is, and over any T an active tenant is granted its
     * base x T less at most carry_max. Read here, before the run overwrites alloc with the
     * next window's. */
    if (fw->cfg.carry_max)
        for (uint32_t j = 0; j < b->n_sched; j++) {
            const uint32_t i = b->sched_list[j];
            if (!bit(fw->active, i))
                continue;
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                const uint32_t lent = sub0(fw->t[i].res_base.d[d], fw->t[i].alloc.d[d]);
                fw->cfg.granted[i].d[d] = bg_u32_add_sat(fw->cfg.granted[i].d[d], lent);
            }
        }
    bg_bios_run(b, fw->u, fw->active);
    /* Every tenant the run visited has a new grant: the schedule list, and the tenants this
     * run dropped (their grant is now the floor, which then stays in the datapath). */
    for (uint32_t j = 0; j < b->n_sched; j++)
        write_grant(fw, hal, b->sched_list[j]);
    for (unsigned w = 0; w < BG_BIOS_BITMAP_WORDS; w++)
        for (uint64_t bits = b->dropped[w]; bits; bits &= bits - 1u) {
            uint32_t i = w * 64u + (uint32_t)__builtin_ctzll(bits);
            if (fw->t[i].dropped_at + 1u == b->window)
                write_grant(fw, hal, i);
        }
    for (uint32_t j = 0; j < b->n_burst; j++)
        bg_hal_write(hal, BG_TENANT_BURST_LIST(j), b->burst_list[j]);
    bg_hal_write(hal, BG_CTRL_BURST_N, b->n_burst);
    write_pool(hal, BG_CTRL_POOL(0), &b->reserved);
}

static void window_wild(bg_fw *fw, const bg_hal *hal)
{
    for (uint32_t i = 0; i < fw->n; i++) {
        read_counters(hal, i, &fw->u[i]);
        bg_vec limit;
        bg_credit_update(&fw->t[i], &fw->u[i].usage);
        bg_burst_cap(&fw->t[i], &limit);
        write_granted(fw, hal, i, &limit);
    }
    bg_vec global = fw->cfg.bios.total;
    if (fw->cfg.carry_max)
        for (unsigned d = 0; d < BG_COST_DIMS; d++) {
            uint32_t left = bg_hal_read(hal, BG_CTRL_GLOBAL(0) + 4u * d);
            uint32_t c = min32(left, fw->cfg.global_carry_max.d[d]);
            global.d[d] = bg_u32_add_sat(global.d[d], c);
        }
    write_pool(hal, BG_CTRL_GLOBAL(0), &global);
}

/* BaseCBS: the static shares of init, plus the carry when it is on. */
static void window_base(bg_fw *fw, const bg_hal *hal)
{
    if (!fw->cfg.carry_max)
        return;
    uint64_t sum[BG_COST_DIMS];
    bg_base_sum(fw->t, fw->n, sum);
    for (uint32_t i = 0; i < fw->n; i++) {
        read_vec(hal, BG_TENANT_USAGE(0), i, &fw->u[i].usage);
        const bg_vec share = bg_basecbs_share(&fw->cfg.bios.total, sum, &fw->t[i]);
        write_granted(fw, hal, i, &share);
    }
}

static void window_dualbucket(bg_fw *fw, const bg_hal *hal)
{
    const bool drawn = bg_hal_read(hal, BG_CTRL_POOL_DRAWN) & 1u;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        fw->db.cheque.d[d] = bg_hal_read(hal, BG_CTRL_POOL(d));
    /* The refill uses the target the previous window's estimate set; the estimate from this
     * window's histogram sets the next one (dualbucket.h). */
    bg_db_refill(&fw->db, &fw->cfg.db, drawn);
    bg_db_update(&fw->db, &fw->cfg.db, &fw->hist);
    if (fw->cfg.db_contracts) {
        for (uint32_t i = 0; i < fw->n; i++) {
            read_counters(hal, i, &fw->u[i]);
            bg_credit_update(&fw->t[i], &fw->u[i].usage);
        }
        db_apportion(fw, hal);
    }
    bg_vec first;
    bg_db_main_slice(&fw->cfg.db, &fw->db.main, 0, &first);
    write_pool(hal, BG_CTRL_GLOBAL(0), &first);
    write_pool(hal, BG_CTRL_POOL(0), &fw->db.cheque);
}

void bg_fw_db_meter(bg_fw *fw, const bg_hal *hal, uint32_t j)
{
    bg_vec slice;
    bg_db_main_slice(&fw->cfg.db, &fw->db.main, j, &slice);
    for (unsigned d = 0; d < BG_COST_DIMS; d++) {
        const uint32_t left = bg_hal_read(hal, BG_CTRL_GLOBAL(0) + 4u * d);
        bg_hal_write(hal, BG_CTRL_GLOBAL(0) + 4u * d, bg_u32_add_sat(left, slice.d[d]));
    }
}

static void window_ddrr(bg_fw *fw, const bg_hal *hal)
{
    for (uint32_t i = 0; i < fw->n; i++)
        read_counters(hal, i, &fw->u[i]);
    bg_libra_window(&fw->libra, fw->cfg.libra_t, fw->u, fw->active);
    for (uint32_t i = 0; i < fw->n; i++) {
        write_vec(hal, BG_TENANT_GRANT(0), i, &fw->cfg.libra_t[i].grant);
        if (fw->cfg.granted)
            fw->cfg.granted[i] = fw->cfg.libra_t[i].grant;
    }
}

static void window_costadj(bg_fw *fw, const bg_hal *hal)
{
    bg_vec used = {{0}};
    for (uint32_t i = 0; i < fw->n; i++) {
        bg_vec v;
        read_vec(hal, BG_TENANT_USAGE(0), i, &v);
        bg_vec_add_sat(&used, &v);
    }
    /* BURST: the factor stays in the state for write_grant; COST.FACTOR keeps its 1.0. */
    bg_ca_window(&fw->ca, &fw->cfg.ca, fw->cfg.costadj == BG_FW_COSTADJ_COST ? hal : NULL, &fw->hist, &used,
                 &fw->cfg.bios.total);
    fw->ca_factor_sum += fw->ca.factor[BG_DIM_CPU];
}

void bg_fw_window(bg_fw *fw, const bg_hal *hal)
{
    bg_hal_write(hal, BG_CTRL_WINDOW, BG_WINDOW_TICK);
    wait_drained(fw, hal);
    read_active(fw, hal);
    /* The factor the links and the limiter were charged at in the window that just ended
     * (admitted_ios), before the cost adjustment below changes it for the next. */
    if (fw->cfg.count_q16) {
        const uint32_t f = bg_hal_read(hal, BG_COST_FACTOR(BG_DIM_INGRESS));
        const bool same = bg_hal_read(hal, BG_COST_FACTOR(BG_DIM_EGRESS)) == f &&
                          bg_hal_read(hal, BG_COST_FACTOR(BG_DIM_SWLIMIT)) == f;
        fw->count_factor = same ? f : 0u;
    }
    if (fw->cfg.scheduler == BG_SCHED_DUALBUCKET || fw->cfg.costadj)
        bg_lh_read_hal(hal, BG_CTRL_HIST_ALL(0), &fw->hist);
    if (fw->cfg.costadj)
        window_costadj(fw, hal);
    switch (fw->cfg.scheduler) {
    case BG_SCHED_BIOS: window_bios(fw, hal); break;
    case BG_SCHED_WILD: window_wild(fw, hal); break;
    case BG_SCHED_DUALBUCKET: window_dualbucket(fw, hal); break;
    case BG_FW_SCHED_DDRR: window_ddrr(fw, hal); break;
    default: window_base(fw, hal); break;
    }
    write_count_grants(fw, hal, false);
    bg_hal_write(hal, BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
    fw->windows++;
}
