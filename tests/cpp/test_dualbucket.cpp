// Dual-bucket throttling: equations (1)-(2) against the Figure 6 setting, the firmware's
// cheque target and refill rule, and the agent's dual-bucket admission under a hot-segment
// burst with the firmware's window loop reading the SA-delay histogram from the registers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "burstgate/dualbucket.h"
#include "burstgate/latency_hist.h"
#include "burstgate/model/agent.hpp"
#include "burstgate/window.h"
#include "agent_fixture.hpp"

namespace {

constexpr uint32_t kT = 10000;    // interval T in us (the paper's 10 ms)
constexpr uint32_t kMu = 2130;    // Mbps, Figure 6
constexpr uint32_t kSwBytes = kMu * kT / 8;  // S[swlimit] = mu * T in bytes: 2 662 500

const double kL95 = -std::log(1.0 - 0.95);

bg_db_config fig6_config()
{
    bg_db_config c{};
    c.main_size = bg_vec{{20000000u, 125000000u, 125000000u, kSwBytes}};
    c.cheque_share_q16 = 13107;  // 0.2
    c.alpha = 8000;
    c.pct_ppm = 950000;
    c.headroom_mbps = 330;
    c.mu_mbps = kMu;
    c.interval_us = kT;
    c.min_samples = 1;
    c.hist_mode = BG_LH_INTERP;
    return c;
}

// One dual-bucket tenant on a model agent, with the state bg_fw_init takes.
struct OneTenantFw {
    explicit OneTenantFw(const bg_db_config &db)
    {
        cfg.scheduler = BG_SCHED_DUALBUCKET;
        cfg.db = db;
    }
    int init() { return bg_fw_init(&fw, &cfg, &t, &u, &sched, &burst, 1, &hal); }
    bg::Agent a{bg::AgentParams{1, 1, 1, 16}};
    bg_hal hal = a.hal();
    bg_fw_config cfg{};
    bg_bios_tenant t{};
    bg_bios_usage u{};
    uint16_t sched = 0, burst = 0;
    bg_fw fw{};
};

double delta_ref(uint32_t wp_ns)
{
    return std::max(0.0, 8000.0 * kL95 / (wp_ns / 1000.0) - 330.0);
}

TEST(DualBucketFw, Figure6PredictAndInvert)
{
    const bg_db_config c = fig6_config();
    for (uint32_t background : {300u, 600u}) {
        const uint32_t residual = kMu - background;
        const uint32_t w = bg_db_predict_wp_ns(&c, residual);
        const double w_ref = 8000.0 * kL95 / residual * 1000.0;  // 13096.1 / 15663.9 ns
        EXPECT_NEAR(w, w_ref, 1.0) << background;
        // Invert: the residual capacity minus h_p, within 0.5 Mbps.
        const double delta = bg_db_delta_q16(&c, w) / 65536.0;
        EXPECT_NEAR(delta, residual - 330.0, 0.5) << background;
    }
    EXPECT_EQ(bg_db_predict_wp_ns(&c, 1830), 13096u);
    EXPECT_EQ(bg_db_predict_wp_ns(&c, 1530), 15664u);

    // The paper's use of (1): P95 over a short window predicts the P99999 tail.
    bg_db_config tail = c;
    tail.pct_ppm = 999990;
    const uint32_t w5 = bg_db_predict_wp_ns(&tail, 1830);
    EXPECT_NEAR(w5, 8000.0 * std::log(1e5) / 1830 * 1000.0, 1.0);
    EXPECT_NEAR(double(w5) / bg_db_predict_wp_ns(&c, 1830), std::log(1e5) / kL95, 1e-4);
}

TEST(DualBucketFw, LnTableAndConfigErrors)
{
    for (uint32_t p : {500000u, 900000u, 950000u, 990000u, 999000u, 999900u, 999990u}) {
        const double exact = -std::log(1.0 - p / 1e6) * 65536.0;
        EXPECT_LE(std::fabs(bg_db_ln_q16(p) - exact), 0.5) << p;
    }
    EXPECT_EQ(bg_db_ln_q16(960000), 0u);

    bg_db_config c = fig6_config();
    EXPECT_EQ(bg_db_config_error(&c), nullptr);
    c.pct_ppm = 960000;
    EXPECT_STREQ(bg_db_config_error(&c), "percentile");
    c = fig6_config();
    c.mu_mbps = 0;
    EXPECT_STREQ(bg_db_config_error(&c), "mu_mbps");
    c = fig6_config();
    c.cheque_share_q16 = 65537;
    EXPECT_STREQ(bg_db_config_error(&c), "cheque_share");

    // The firmware refuses it at init and names the field.
    c = fig6_config();
    c.alpha = 0;
    OneTenantFw f(c);
    EXPECT_EQ(f.init(), BG_FW_E_DUALBUCKET);
    EXPECT_STREQ(f.fw.err_field, "alpha");
}

// main_slices: a window's main-bucket tokens released in k slices (bg_db_main_slice) that sum to
// the issuance exactly and differ by at most one token; bg_fw_db_meter adds slice j to what
// GLOBAL still holds. A slice rounding that loses or mints a token per window, a meter that
// overwrote GLOBAL (dropping the earlier slices' unspent tokens) or a tick that still wrote the
// whole issuance fails here; k = 0 and 1 are the whole issuance at the tick.
TEST(DualBucketFw, MainSlicesSumToTheIssuance)
{
    bg_db_config c = fig6_config();
    const bg_vec main = {{1000003u, 7u, 0u, 0xFFFFFFFFu}};
    for (uint32_t k : {0u, 1u, 3u, 100u, BG_DB_SLICES_MAX}) {
        c.main_slices = k;
        const uint32_t n = k > 1 ? k : 1;
        uint64_t sum[BG_COST_DIMS] = {0};
        for (uint32_t j = 0; j < n; j++) {
            bg_vec s;
            bg_db_main_slice(&c, &main, j, &s);
            for (unsigned d = 0; d < BG_COST_DIMS; d++) {
                sum[d] += s.d[d];
                EXPECT_LE(s.d[d], uint64_t{main.d[d]} / n + 1) << k << " " << j << " " << d;
                EXPECT_GE(s.d[d], uint64_t{main.d[d]} / n) << k << " " << j << " " << d;
            }
        }
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            EXPECT_EQ(sum[d], main.d[d]) << k << " " << d;
    }
    c.main_slices = BG_DB_SLICES_MAX + 1;
    EXPECT_STREQ(bg_db_config_error(&c), "main_slices");

    c = fig6_config();
    c.main_slices = 4;
    c.cheque_share_q16 = 0;
    OneTenantFw f(c);
    ASSERT_EQ(f.init(), BG_FW_OK);
    bg_hal &hal = f.hal;
    bg_fw &fw = f.fw;
    const uint32_t sw = BG_CTRL_GLOBAL(0) + 4u * BG_DIM_SWLIMIT;
    EXPECT_EQ(bg_hal_read(&hal, sw), kSwBytes / 4);  // 2 662 500 / 4: slice 0 at the start
    bg_hal_write(&hal, sw, 5u);                        // admission spent all but 5
    bg_fw_db_meter(&fw, &hal, 1);
    EXPECT_EQ(bg_hal_read(&hal, sw), 5u + (2 * kSwBytes / 4 - kSwBytes / 4));
    bg_fw_window(&fw, &hal);  // the tick drops what is left and writes slice 0 again
    EXPECT_EQ(bg_hal_read(&hal, sw), kSwBytes / 4);
}

TEST(DualBucketFw, DeltaClamps)
{
    const bg_db_config c = fig6_config();
    EXPECT_EQ(bg_db_delta_q16(&c, UINT32_MAX), 0u);        // saturated SA: nothing spare
    EXPECT_EQ(bg_db_delta_q16(&c, 1), uint64_t{kMu} << 16);  // idle SA: at most mu
    EXPECT_EQ(bg_db_delta_q16(&c, 0), uint64_t{kMu} << 16);
    // Residual exactly h_p: delta 0, not negative.
    const uint32_t w_at_h = static_cast<uint32_t>(std::ceil(8000.0 * kL95 / 330.0 * 1000.0));
    EXPECT_EQ(bg_db_delta_q16(&c, w_at_h), 0u);
}

TEST(DualBucketFw, ChequeTargetTracksDeltaT)
{
    const bg_db_config c = fig6_config();
    bg_vec cap;
    bg_db_cheque_cap(&c, &cap);
    EXPECT_EQ(cap.d[BG_DIM_SWLIMIT], uint32_t(uint64_t{kSwBytes} * 13107 >> 16));
    for (uint32_t residual = 350; residual <= 2130; residual += 50) {
        const uint32_t w = bg_db_predict_wp_ns(&c, residual);
        const uint64_t dq = bg_db_delta_q16(&c, w);
        const double delta = delta_ref(w);
        // delta * T in bytes, Mbps * us = bits.
        // Tolerance: L_p's Q16 rounding (< 2e-6 of the residual alpha*L_p/w_p = delta + h_p)
        // plus the floors.
        const double want = delta * kT / 8.0;
        const double tol = 2e-6 * (delta + 330.0) * kT / 8.0 + 1.0;
        EXPECT_NEAR(double(bg_db_delta_bytes(&c, dq)), want, tol) << residual;
        bg_vec t;
        bg_db_target(&c, dq, &t);
        const double want_sw = std::min(delta * kT / 8.0, double(cap.d[BG_DIM_SWLIMIT]));
        EXPECT_NEAR(double(t.d[BG_DIM_SWLIMIT]), want_sw, tol + kSwBytes / 65536.0) << residual;
        // Other dimensions get the same share delta / mu of their issuance.
        const double share = std::min(delta / kMu, 0.2);
        EXPECT_NEAR(double(t.d[BG_DIM_CPU]), share * 20000000.0, 40 + 20000000.0 / 65536.0 + 1.0);
        for (unsigned d = 0; d < BG_COST_DIMS; d++)
            EXPECT_LE(t.d[d], cap.d[d]);
    }
}

// Still Water's main bucket issues the proxy's limit (1.2 GB/s, "100 % load"), below what the
// server serves (mu = 2130 in Fig. 6). delta_p is a residual of mu, so the cheque refill is
// delta_p * T of the capacity, not delta_p / mu of the smaller main issuance (which would
// shrink every cheque by S / (mu * T)).
TEST(DualBucketFw, ChequeTargetIsDeltaTWhenTheMainBucketIsBelowCapacity)
{
    bg_db_config c = fig6_config();
    c.capacity = c.main_size;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        c.main_size.d[d] = static_cast<uint32_t>(uint64_t{c.capacity.d[d]} * 1200 / 2130);
    c.cheque_share_q16 = 65536;  // uncapped: the target is delta_p * T itself
    for (uint32_t residual : {400u, 700u, 930u}) {
        const uint32_t w = bg_db_predict_wp_ns(&c, residual);
        const uint64_t dq = bg_db_delta_q16(&c, w);
        bg_vec t;
        bg_db_target(&c, dq, &t);
        const double want = delta_ref(w) * kT / 8.0;  // bytes
        EXPECT_NEAR(double(t.d[BG_DIM_SWLIMIT]), want, 2e-6 * residual * kT / 8.0 + kSwBytes / 65536.0 + 1.0)
            << residual;
        EXPECT_NEAR(double(t.d[BG_DIM_SWLIMIT]), double(bg_db_delta_bytes(&c, dq)), kSwBytes / 65536.0 + 1.0);
        EXPECT_NEAR(double(t.d[BG_DIM_CPU]), delta_ref(w) / kMu * 20000000.0, 20000000.0 / 65536.0 + 40.0);
    }
    // The share cap still applies to the main bucket's size.
    c.cheque_share_q16 = 13107;
    bg_vec cap, t;
    bg_db_cheque_cap(&c, &cap);
    bg_db_target(&c, uint64_t{kMu} << 16, &t);
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        EXPECT_EQ(t.d[d], cap.d[d]);
}

TEST(DualBucketFw, RefillRule)
{
    const bg_db_config c = fig6_config();
    bg_db_state st;
    bg_db_init(&st, &c);
    EXPECT_EQ(st.main.d[BG_DIM_SWLIMIT], kSwBytes);
    bg_vec cap;
    bg_db_cheque_cap(&c, &cap);
    EXPECT_EQ(st.cheque.d[BG_DIM_SWLIMIT], cap.d[BG_DIM_SWLIMIT]);

    // Undrawn cheque below a grown target: main pays only the shortfall.
    st.target.d[BG_DIM_SWLIMIT] = 400000;
    st.cheque.d[BG_DIM_SWLIMIT] = 300000;
    st.main.d[BG_DIM_SWLIMIT] = 17;
    bg_db_refill(&st, &c, false);
    EXPECT_EQ(st.main.d[BG_DIM_SWLIMIT], kSwBytes - 100000);
    EXPECT_EQ(st.cheque.d[BG_DIM_SWLIMIT], 400000u);

    // Unused cheque above a shrunk target: trimmed, main full.
    st.target.d[BG_DIM_SWLIMIT] = 250000;
    bg_db_refill(&st, &c, false);
    EXPECT_EQ(st.main.d[BG_DIM_SWLIMIT], kSwBytes);
    EXPECT_EQ(st.cheque.d[BG_DIM_SWLIMIT], 250000u);

    // Drawn: the whole cheque is paid from this interval's issuance, leftovers or not.
    st.cheque.d[BG_DIM_SWLIMIT] = 200000;
    bg_db_refill(&st, &c, true);
    EXPECT_EQ(st.main.d[BG_DIM_SWLIMIT], kSwBytes - 250000);
    EXPECT_EQ(st.cheque.d[BG_DIM_SWLIMIT], 250000u);
}

bg_lhist histogram(uint32_t fast, uint32_t slow_count, uint32_t slow_ns)
{
    bg_lhist h;
    bg_lh_clear(&h);
    for (uint32_t i = 0; i < fast; i++)
        bg_lh_record(&h, 500);
    for (uint32_t i = 0; i < slow_count; i++)
        bg_lh_record(&h, slow_ns);
    return h;
}

TEST(DualBucketFw, UpdateFromHistogram)
{
    const bg_db_config c = fig6_config();
    bg_db_state st;
    bg_db_init(&st, &c);

    // Exponential SA delays at 300 Mbps background load: delta ~ 1830 - 330 = 1500 Mbps,
    // capped by the cheque share.
    const double mean_ns = 8000.0 / 1830.0 * 1000.0;
    bg_lhist h;
    bg_lh_clear(&h);
    for (int i = 0; i < 20000; i++)
        bg_lh_record(&h, static_cast<uint32_t>(-std::log(1.0 - (i + 0.5) / 20000) * mean_ns));
    bg_db_update(&st, &c, &h);
    EXPECT_NEAR(st.delta_q16 / 65536.0, 1500.0, 75.0);  // 5 %: histogram resolution
    bg_vec cap;
    bg_db_cheque_cap(&c, &cap);
    EXPECT_EQ(st.target.d[BG_DIM_SWLIMIT], cap.d[BG_DIM_SWLIMIT]);

    // A congested interval: P95 = 70997 ns gives delta ~ 7.6 Mbps.
    bg_lhist slow = histogram(94, 6, 80000);
    bg_db_update(&st, &c, &slow);
    EXPECT_EQ(st.wp_ns, 70997u);
    EXPECT_NEAR(st.delta_q16 / 65536.0, delta_ref(70997), 0.01);
    const bg_vec before = st.target;

    // Too few samples: hold.
    bg_db_config strict = c;
    strict.min_samples = 200;
    const bg_lhist other = histogram(94, 6, 40000);
    bg_db_update(&st, &strict, &other);
    EXPECT_EQ(st.wp_ns, 70997u);
    EXPECT_EQ(st.target.d[BG_DIM_SWLIMIT], before.d[BG_DIM_SWLIMIT]);
    bg_lhist empty;
    bg_lh_clear(&empty);
    bg_db_update(&st, &c, &empty);
    EXPECT_EQ(st.wp_ns, 70997u);
}

// ---- the agent in dual-bucket mode, run by the firmware's window loop ------------------

constexpr uint16_t kSegs = 100;
constexpr uint16_t kHotSegs = 20;
constexpr uint16_t kR = 20;
constexpr uint32_t kN = 3;
const bg_vec kIo{{2000, 0, 4096, 4096}};  // a 4 KiB write

struct Interval {
    uint64_t steady_main = 0, steady_cheque = 0, steady_deferred = 0;
    uint64_t hot_main = 0, hot_cheque = 0, hot_deferred = 0;
    uint64_t spent_sw = 0;  // admitted swlimit bytes
};

// The agent with one tenant, a flat cost of kIo, segments monitored with R and N, and the
// firmware in dual-bucket mode with the Figure 6 estimator.
struct DualBucketAgent {
    bg::Agent a{bg::AgentParams{1, 1, 1, 16}};
    bg_hal hal = a.hal();
    bg_bios_tenant t{};
    bg_bios_usage u{};
    uint16_t sched = 0, burst = 0;
    bg_fw fw{};

    DualBucketAgent()
    {
        EXPECT_TRUE(bg::test::flat_cost(hal, kIo));
        a.write(BG_LB_DEPTH, BG_LB_DEPTH_MASK);
        a.write(BG_SEGMON_HOT_THRESHOLD, kR);
        a.write(BG_SEGMON_STEADY_WINDOWS, kN);
        bg_fw_config cfg{};
        cfg.scheduler = BG_SCHED_DUALBUCKET;
        cfg.db = fig6_config();
        cfg.bios.total = cfg.db.main_size;
        EXPECT_EQ(bg_fw_init(&fw, &cfg, &t, &u, &sched, &burst, 1, &hal), BG_FW_OK);
    }
    bg::IoDecision io(uint16_t segment, uint32_t sa_delay_ns)
    {
        bg::IoDesc d;
        d.segment = segment;
        d.write = true;
        const bg::IoDecision x = a.io(d);
        if (x.admitted())  // the SA finishes it within the interval
            a.complete(bg::IoCompletion{0, 0, 0, x.egress, x.cost.d[BG_DIM_CPU], sa_delay_ns});
        return x;
    }
    bg_vec cheque() const { return bg::test::read_pool(a, BG_CTRL_POOL(0)); }
    bg_vec main() const { return bg::test::read_pool(a, BG_CTRL_GLOBAL(0)); }
};

// Burst: 1.5 x the main bucket's worth of I/Os, 80 % of them on 20 % of the segments,
// interleaved 4 hot : 1 steady. Calm: 400 I/Os spread evenly, 4 per segment. Of every 100
// completions 94 take 500 ns and 6 take 40 us in the SA, so P95 lands in the slow bucket.
Interval run_interval(DualBucketAgent& db, bool burst)
{
    Interval r;
    const int n = burst ? 975 : 400;
    int hot_i = 0, steady_i = 0, done = 0;
    for (int i = 0; i < n; i++) {
        uint16_t seg;
        bool hot_seg;
        if (!burst) {
            seg = static_cast<uint16_t>(i % kSegs);
            hot_seg = seg < kHotSegs;
        } else if (i % 5 != 4) {
            seg = static_cast<uint16_t>(hot_i++ % kHotSegs);
            hot_seg = true;
        } else {
            seg = static_cast<uint16_t>(kHotSegs + steady_i++ % (kSegs - kHotSegs));
            hot_seg = false;
        }
        const bg::IoDecision d = db.io(seg, done % 100 < 94 ? 500 : 40000);
        done += d.admitted();
        if (d.source == BG_SRC_RESERVED) {
            EXPECT_FALSE(d.hot) << "a hot segment drew a cheque";
        }
        EXPECT_EQ(d.hot, db.a.segments().is_hot(seg));
        uint64_t* slot[2][3] = {{&r.steady_main, &r.steady_cheque, &r.steady_deferred},
                                {&r.hot_main, &r.hot_cheque, &r.hot_deferred}};
        const int k = d.source == BG_SRC_OWN ? 0 : d.source == BG_SRC_RESERVED ? 1 : 2;
        ++*slot[hot_seg][k];
        if (d.admitted())
            r.spent_sw += d.cost.d[BG_DIM_SWLIMIT];
    }
    return r;
}

// What the firmware must have done with this window's histogram: delta_p * T as a share of S.
uint32_t expected_target(const bg_lhist& h)
{
    const bg_db_config c = fig6_config();
    bg_vec t;
    bg_db_target(&c, bg_db_delta_q16(&c, bg_lh_percentile(&h, c.pct_ppm, c.hist_mode)), &t);
    return t.d[BG_DIM_SWLIMIT];
}

TEST(DualBucketAgent, HotBurstSteadySegmentsUseCheque)
{
    DualBucketAgent db;
    bool prev_overdrawn = false;
    uint32_t target = db.cheque().d[BG_DIM_SWLIMIT];  // init: target = cap
    uint64_t deferred_total = 0, deferred_hot_total = 0;
    for (uint32_t k = 0; k < 20; k++) {
        const bool burst = k >= 3 && k < 10;
        const Interval r = run_interval(db, burst);
        bg_lhist h;
        bg_lh_read_hal(&db.hal, BG_CTRL_HIST_ALL(0), &h);
        EXPECT_EQ(db.a.read(BG_CTRL_DEFERRED), deferred_total + r.steady_deferred + r.hot_deferred);
        deferred_total += r.steady_deferred + r.hot_deferred;
        deferred_hot_total += r.hot_deferred;
        bg_fw_window(&db.fw, &db.hal);

        // The cheque was refilled with the target the previous window's P95 set ...
        EXPECT_EQ(db.cheque().d[BG_DIM_SWLIMIT], target) << k;
        // ... and the new target is delta_p * T from this window's P95, read from HIST_ALL.
        target = db.fw.db.target.d[BG_DIM_SWLIMIT];
        EXPECT_EQ(target, expected_target(h)) << k;
        EXPECT_LT(target, bg_db_config{fig6_config()}.main_size.d[BG_DIM_SWLIMIT] / 5 + 1) << k;

        const bool overdrawn = r.spent_sw > kSwBytes;
        EXPECT_FALSE(overdrawn && prev_overdrawn) << "overdraw in two intervals, k=" << k;
        prev_overdrawn = overdrawn;
        if (k == 3) {
            EXPECT_TRUE(overdrawn) << "first burst interval draws the full main and the cheque";
        } else {
            EXPECT_FALSE(overdrawn) << k;
        }
        if (burst) {
            EXPECT_GT(r.steady_cheque, 0u) << k;
            EXPECT_EQ(r.steady_deferred, 0u) << k;
            EXPECT_EQ(r.hot_cheque, 0u) << k;
            EXPECT_GT(r.hot_deferred, 0u) << k;
        } else {
            EXPECT_EQ(r.steady_deferred + r.hot_deferred, 0u) << k;
            EXPECT_EQ(r.steady_cheque + r.hot_cheque, 0u) << k;
        }
    }
    // Hot segments last exceeded R in interval 9: hot through 12, steady from 13.
    EXPECT_FALSE(db.a.segments().is_hot(0));
    EXPECT_EQ(deferred_total, deferred_hot_total);
    EXPECT_EQ(db.main().d[BG_DIM_SWLIMIT], kSwBytes);
}

TEST(DualBucketAgent, HoldAfterBurstThenSteady)
{
    DualBucketAgent db;
    run_interval(db, true);
    bg_fw_window(&db.fw, &db.hal);
    for (uint32_t k = 1; k <= kN; k++) {
        EXPECT_TRUE(db.a.segments().is_hot(0)) << k;
        run_interval(db, false);
        bg_fw_window(&db.fw, &db.hal);
    }
    EXPECT_FALSE(db.a.segments().is_hot(0));
    EXPECT_FALSE(db.a.segments().is_hot(kHotSegs));
}

// The refill rule through the registers: after a window in which the cheque paid, the whole
// target is paid again from the new window's issuance; after one without, only the shortfall.
TEST(DualBucketAgent, DrawnChequeIsPaidFromTheNextMainBucket)
{
    DualBucketAgent db;
    const uint32_t cheque0 = db.cheque().d[BG_DIM_SWLIMIT];
    bg::test::write_pool(db.a, BG_CTRL_GLOBAL(0), bg_vec{});  // main empty: the cheque pays
    EXPECT_EQ(db.io(1, 500).source, BG_SRC_RESERVED);
    EXPECT_EQ(db.a.read(BG_CTRL_POOL_DRAWN), 1u);
    EXPECT_EQ(db.cheque().d[BG_DIM_SWLIMIT], cheque0 - 4096);
    bg_fw_window(&db.fw, &db.hal);
    EXPECT_EQ(db.main().d[BG_DIM_SWLIMIT], kSwBytes - cheque0);
    EXPECT_EQ(db.cheque().d[BG_DIM_SWLIMIT], cheque0);
    EXPECT_EQ(db.a.read(BG_CTRL_POOL_DRAWN), 0u);
    // One fast completion (500 ns): delta_p is mu (clamped), the target the full cap; nothing drawn.
    bg_fw_window(&db.fw, &db.hal);
    EXPECT_EQ(db.main().d[BG_DIM_SWLIMIT], kSwBytes);
}

TEST(DualBucketAgent, DeferredWhenNothingCoversAndTheSegmentStillCounts)
{
    DualBucketAgent db;
    bg::test::write_pool(db.a, BG_CTRL_GLOBAL(0), bg_vec{});
    bg::test::write_pool(db.a, BG_CTRL_POOL(0), bg_vec{});
    const bg::IoDecision d = db.io(50, 500);
    EXPECT_EQ(d.source, BG_SRC_DEFER);
    EXPECT_EQ(db.a.read(BG_CTRL_DEFERRED), 1u);
    EXPECT_EQ(db.a.read(BG_TENANT_THROTTLE_N(0)), 1u);
    EXPECT_EQ(db.a.read(BG_TENANT_USAGE(0 * 4 + BG_DIM_SWLIMIT)), 0u);
    // Demand, not admissions, decides hotness: the segment's count still moved.
    EXPECT_EQ(db.a.segments().entry(50).count, 1u);
}

}  // namespace
