// SA-delay histogram: bucket edges, saturation, and the percentile query on known data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "burstgate/latency_hist.h"
#include "burstgate/lfsr.h"

namespace {

TEST(LatencyHist, BucketEdgesAreExact)
{
    EXPECT_EQ(bg_lh_bucket(0), 0u);
    EXPECT_EQ(bg_lh_bucket(1023), 0u);
    EXPECT_EQ(bg_lh_bucket(1024), 1u);
    EXPECT_EQ(bg_lh_bucket(1535), 1u);
    EXPECT_EQ(bg_lh_bucket(1536), 2u);
    EXPECT_EQ(bg_lh_bucket(2047), 2u);
    EXPECT_EQ(bg_lh_bucket(2048), 3u);
    EXPECT_EQ(bg_lh_bucket(3071), 3u);
    EXPECT_EQ(bg_lh_bucket(3072), 4u);
    EXPECT_EQ(bg_lh_bucket((1u << 25) - 1u), 30u);
    EXPECT_EQ(bg_lh_bucket(1u << 25), 31u);
    EXPECT_EQ(bg_lh_bucket(UINT32_MAX), 31u);

    EXPECT_EQ(bg_lh_lower(0), 0u);
    EXPECT_EQ(bg_lh_upper(0), 1023u);
    EXPECT_EQ(bg_lh_lower(30), (1u << 24) + (1u << 23));
    EXPECT_EQ(bg_lh_upper(30), (1u << 25) - 1u);
    EXPECT_EQ(bg_lh_lower(31), 1u << 25);
    EXPECT_EQ(bg_lh_upper(31), UINT32_MAX);
}

TEST(LatencyHist, EdgesTileTheWholeRange)
{
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++) {
        EXPECT_EQ(bg_lh_bucket(bg_lh_lower(b)), b);
        EXPECT_EQ(bg_lh_bucket(bg_lh_upper(b)), b);
        EXPECT_LE(bg_lh_lower(b), bg_lh_upper(b));
        if (b + 1 < BG_LH_BUCKETS) {
            EXPECT_EQ(bg_lh_upper(b) + 1u, bg_lh_lower(b + 1));
        }
    }
    // Every delay of every octave lands between its bucket's edges.
    for (uint32_t e = 0; e < 32; e++)
        for (uint32_t d : {1u << e, (1u << e) + ((1u << e) >> 1), (1u << e) | ((1u << e) - 1u)}) {
            uint32_t b = bg_lh_bucket(d);
            EXPECT_LE(bg_lh_lower(b), d);
            EXPECT_GE(bg_lh_upper(b), d);
        }
}

TEST(LatencyHist, RecordAndMergeSaturate)
{
    bg_lhist h;
    bg_lh_clear(&h);
    h.count[5] = UINT32_MAX - 1u;
    bg_lh_record(&h, 5000);  // bucket 5 = [4096, 6143]
    bg_lh_record(&h, 6000);
    EXPECT_EQ(h.count[5], UINT32_MAX);

    bg_lhist a, b;
    bg_lh_clear(&a);
    bg_lh_clear(&b);
    a.count[0] = 7;
    a.count[3] = UINT32_MAX - 2u;
    b.count[3] = 10;
    b.count[31] = 4;
    bg_lh_merge(&a, &b);
    EXPECT_EQ(a.count[0], 7u);
    EXPECT_EQ(a.count[3], UINT32_MAX);
    EXPECT_EQ(a.count[31], 4u);
    EXPECT_EQ(bg_lh_total(&a), uint64_t{7} + UINT32_MAX + 4u);
}

TEST(LatencyHist, PercentileOnKnownHistograms)
{
    bg_lhist h;
    bg_lh_clear(&h);
    EXPECT_EQ(bg_lh_percentile(&h, 950000, BG_LH_UPPER), 0u);

    bg_lh_record(&h, 5000);
    EXPECT_EQ(bg_lh_percentile(&h, 950000, BG_LH_UPPER), 6143u);
    EXPECT_EQ(bg_lh_percentile(&h, 950000, BG_LH_INTERP), 6143u);

    // 90 samples in bucket 0, 10 in bucket 9 = [16384, 24575].
    bg_lh_clear(&h);
    h.count[0] = 90;
    h.count[9] = 10;
    EXPECT_EQ(bg_lh_percentile(&h, 950000, BG_LH_UPPER), 24575u);
    EXPECT_EQ(bg_lh_percentile(&h, 950000, BG_LH_INTERP), 16384u + 4096u - 1u);  // k=5 of 10
    EXPECT_EQ(bg_lh_percentile(&h, 500000, BG_LH_UPPER), 1023u);
    EXPECT_EQ(bg_lh_percentile(&h, 500000, BG_LH_INTERP), 568u);  // ceil(1024*50/90) - 1
    EXPECT_EQ(bg_lh_percentile(&h, 900000, BG_LH_UPPER), 1023u);  // rank 90: still bucket 0
    EXPECT_EQ(bg_lh_percentile(&h, 900001, BG_LH_UPPER), 24575u); // rank 91
    EXPECT_EQ(bg_lh_percentile(&h, 0, BG_LH_INTERP), 11u);         // rank 1: ceil(1024/90) - 1
    EXPECT_EQ(bg_lh_percentile(&h, 1000000, BG_LH_INTERP), 24575u);
    EXPECT_EQ(bg_lh_percentile(&h, 2000000, BG_LH_INTERP), 24575u);

    // Rank rounds up: 20 samples, P95 is the 19th, P95.1 the 20th.
    bg_lh_clear(&h);
    h.count[2] = 19;
    h.count[4] = 1;
    EXPECT_EQ(bg_lh_percentile(&h, 950000, BG_LH_UPPER), bg_lh_upper(2));
    EXPECT_EQ(bg_lh_percentile(&h, 951000, BG_LH_UPPER), bg_lh_upper(4));

    // The overflow bucket has no upper edge to interpolate towards.
    bg_lh_clear(&h);
    bg_lh_record(&h, 1u << 26);
    EXPECT_EQ(bg_lh_percentile(&h, 500000, BG_LH_UPPER), UINT32_MAX);
    EXPECT_EQ(bg_lh_percentile(&h, 500000, BG_LH_INTERP), UINT32_MAX);
}

TEST(LatencyHist, UpperIsConservativeAndInterpStaysInBucket)
{
    uint32_t lfsr = bg_lfsr_seed(12345);
    bg_lhist h;
    bg_lh_clear(&h);
    std::vector<uint32_t> samples;
    for (int i = 0; i < 5000; i++) {
        // Log-uniform-ish delays from 256 ns to ~8 ms.
        uint32_t r = bg_lfsr_next(&lfsr);
        uint32_t d = (256u << (r % 15u)) + (bg_lfsr_next(&lfsr) & 0xFFFu);
        samples.push_back(d);
        bg_lh_record(&h, d);
    }
    std::sort(samples.begin(), samples.end());
    for (uint32_t p : {1000u, 500000u, 900000u, 950000u, 990000u, 999000u, 1000000u}) {
        uint64_t rank = std::max<uint64_t>(1, (uint64_t{p} * samples.size() + 999999u) / 1000000u);
        uint32_t exact = samples[rank - 1];
        uint32_t up = bg_lh_percentile(&h, p, BG_LH_UPPER);
        uint32_t in = bg_lh_percentile(&h, p, BG_LH_INTERP);
        EXPECT_GE(up, exact) << p;
        EXPECT_LE(in, up) << p;
        EXPECT_EQ(bg_lh_bucket(in), bg_lh_bucket(exact)) << p;
    }
}

TEST(LatencyHist, InterpolatedP95OfExponentialIsClose)
{
    // Quantile-spaced exponential delays with mean 4.37 us (the Figure 6 setting at 300 Mbps
    // background load: 8000 / 1830 us); exact P95 = mean * ln 20.
    const double mean_ns = 8000.0 / 1830.0 * 1000.0;
    bg_lhist h;
    bg_lh_clear(&h);
    const int n = 20000;
    for (int i = 0; i < n; i++)
        bg_lh_record(&h, static_cast<uint32_t>(-std::log(1.0 - (i + 0.5) / n) * mean_ns));
    const double exact = mean_ns * std::log(20.0);
    const double in = bg_lh_percentile(&h, 950000, BG_LH_INTERP);
    const double up = bg_lh_percentile(&h, 950000, BG_LH_UPPER);
    EXPECT_NEAR(in / exact, 1.0, 0.03);
    EXPECT_GE(up, exact);
    EXPECT_LE(up / exact, 1.5);
}

std::map<uint32_t, uint32_t> g_regs;

uint32_t fake_read(void*, uint32_t addr) { return g_regs[addr]; }
void fake_write(void*, uint32_t addr, uint32_t v) { g_regs[addr] = v; }

TEST(LatencyHist, ReadsConsecutiveRegisters)
{
    g_regs.clear();
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++)
        g_regs[0x9000u + 4u * b] = 100u + b;
    bg_hal hal{nullptr, fake_write, fake_read};
    bg_lhist h;
    bg_lh_read_hal(&hal, 0x9000u, &h);
    for (uint32_t b = 0; b < BG_LH_BUCKETS; b++)
        EXPECT_EQ(h.count[b], 100u + b);
}

}  // namespace
