// Segment monitor: hot strictly above R, steady only after N whole intervals not above R, with
// lazy per-segment rollover.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "burstgate/model/segment_monitor.hpp"

namespace {

using bg::SegmentMonitor;

// Feeds n I/Os to a segment; returns the hotness reported for the last one.
bool feed(SegmentMonitor& m, uint16_t seg, int n)
{
    bool hot = false;
    for (int i = 0; i < n; i++)
        hot = m.on_io(seg, true, 4096);
    return hot;
}

TEST(SegmentMonitor, HotOnlyAboveR)
{
    SegmentMonitor m(4, 3);
    for (int i = 1; i <= 4; i++)
        EXPECT_FALSE(m.on_io(7, true, 4096)) << "count " << i << " is not above R";
    EXPECT_TRUE(m.on_io(7, true, 4096)) << "count 5 > R = 4";
    EXPECT_TRUE(m.is_hot(7));
    EXPECT_FALSE(m.is_hot(8));
    EXPECT_EQ(m.entry(7).count, 5u);
}

TEST(SegmentMonitor, SteadyOnlyAfterNIntervalsBelowR)
{
    const uint32_t n = 3;
    SegmentMonitor m(4, n);
    ASSERT_TRUE(feed(m, 1, 5));  // hot in interval 0
    // Intervals 1..N: at or below R (including exactly R), still hot.
    for (uint32_t k = 1; k <= n; k++) {
        m.tick();
        EXPECT_TRUE(m.is_hot(1)) << "interval " << k;
        EXPECT_TRUE(feed(m, 1, 4)) << "interval " << k;
    }
    m.tick();  // interval N + 1: N whole intervals below R have passed
    EXPECT_FALSE(m.is_hot(1));
    EXPECT_FALSE(feed(m, 1, 4));
    // Hot again the moment the count exceeds R, and the hold restarts.
    EXPECT_TRUE(m.on_io(1, true, 4096));
    for (uint32_t k = 1; k <= n; k++) {
        m.tick();
        EXPECT_TRUE(m.is_hot(1));
    }
    m.tick();
    EXPECT_FALSE(m.is_hot(1));
}

TEST(SegmentMonitor, HotIntervalInsideHoldRestartsIt)
{
    SegmentMonitor m(2, 2);
    feed(m, 9, 3);  // hot at 0
    m.tick();
    feed(m, 9, 3);  // hot again at 1: hot through 3
    m.tick();
    m.tick();
    EXPECT_TRUE(m.is_hot(9));  // interval 3
    m.tick();
    EXPECT_FALSE(m.is_hot(9));  // interval 4
}

TEST(SegmentMonitor, LazyRolloverWithoutIO)
{
    // No I/O at all in the N intervals after the hot one; the entry is touched only once,
    // long after, and must still decay correctly.
    SegmentMonitor m(10, 5);
    feed(m, 3, 11);
    for (int i = 0; i < 5; i++)
        m.tick();
    EXPECT_TRUE(m.is_hot(3));  // interval 5
    EXPECT_EQ(m.entry(3).stamp, 0u);  // nothing was swept
    m.tick();
    EXPECT_FALSE(m.is_hot(3));  // interval 6
    for (int i = 0; i < 1000; i++)
        m.tick();
    EXPECT_FALSE(m.on_io(3, true, 4096));
    EXPECT_EQ(m.entry(3).count, 1u);
    EXPECT_EQ(m.entry(3).stamp, 1006u);
    EXPECT_EQ(m.entry(3).hold, 0u);
}

TEST(SegmentMonitor, CountRestartsEachInterval)
{
    SegmentMonitor m(3, 0);
    feed(m, 0, 3);
    m.tick();
    EXPECT_FALSE(feed(m, 0, 3));  // 3 + 3 across two intervals is not 6 in one
    EXPECT_TRUE(m.on_io(0, true, 4096));
    m.tick();
    EXPECT_FALSE(m.is_hot(0));  // N = 0: hot only in the interval it exceeded R
}

TEST(SegmentMonitor, SaturatesAndDisables)
{
    SegmentMonitor m(UINT16_MAX, 1);
    EXPECT_FALSE(feed(m, 2, 70000));
    EXPECT_EQ(m.entry(2).count, UINT16_MAX);

    SegmentMonitor z(0, 1);
    EXPECT_TRUE(z.on_io(2, true, 4096));  // R = 0: the first I/O exceeds it
}

// Still Water §4.2 counts requests: a re-offered I/O (counted = false) is classified but does
// not add to the count, so a steady segment's own deferred I/Os cannot make it hot.
TEST(SegmentMonitor, ReofferIsClassifiedButNotCounted)
{
    SegmentMonitor m(2, 1);
    EXPECT_FALSE(feed(m, 4, 2));  // two requests: count 2 = R
    for (int i = 0; i < 10; i++)
        EXPECT_FALSE(m.on_io(4, false, 4096)) << "re-offer " << i;
    EXPECT_EQ(m.entry(4).count, 2u);
    EXPECT_FALSE(m.is_hot(4));
    EXPECT_TRUE(m.on_io(4, true, 4096));  // the third request exceeds R
    EXPECT_EQ(m.entry(4).count, 3u);
    // A re-offered I/O of a hot segment is hot, and it rolls the entry forward like any I/O.
    m.tick();
    EXPECT_TRUE(m.on_io(4, false, 4096));
    EXPECT_EQ(m.entry(4).stamp, 1u);
    EXPECT_EQ(m.entry(4).count, 0u);
    EXPECT_EQ(m.entry(4).hold, 1u);
    m.tick();
    EXPECT_FALSE(m.on_io(4, false, 4096));  // N = 1 interval at or below R has passed
    EXPECT_EQ(m.entry(4).hold, 0u);
    EXPECT_EQ(m.entry(4).count, 0u);
}

TEST(SegmentMonitor, SegmentsAreIndependentAndCoverFullRange)
{
    SegmentMonitor m(1, 1);
    feed(m, 0xFFFF, 2);
    EXPECT_TRUE(m.is_hot(0xFFFF));
    EXPECT_FALSE(m.is_hot(0xFFFE));
    EXPECT_FALSE(m.is_hot(0));
}

TEST(SegmentMonitor, ThresholdFromIopsAndLimits)
{
    EXPECT_EQ(SegmentMonitor::threshold_from_iops(2000, 1000), 2u);   // scenario.yaml
    EXPECT_EQ(SegmentMonitor::threshold_from_iops(2500, 1000), 2u);   // > 2.5 iff > 2
    EXPECT_EQ(SegmentMonitor::threshold_from_iops(2000, 10000), 20u);  // T = 10 ms
    EXPECT_EQ(SegmentMonitor::threshold_from_iops(1u << 30, 1000000), UINT16_MAX);
    EXPECT_THROW(SegmentMonitor(4, 255), std::invalid_argument);
    SegmentMonitor m(4, 254);
    feed(m, 5, 5);
    EXPECT_EQ(m.entry(5).hold, 255u);
}

}  // namespace

// SEGMON.UNIT = sectors: Still Water §4.2's "volume of requests" read as bytes. R = 40 sectors
// is 20 KiB per interval: five 4 KiB I/Os are not above it, the sixth is, one 24 KiB I/O is
// at once, and a partial sector counts whole (20 KiB + 1 byte is 41). Catches counting requests
// under the sector unit, a floor for the ceiling and >= for >.
TEST(SegmentMonitor, SectorUnitCountsBytes)
{
    SegmentMonitor m(SegmentMonitor::threshold_from_bytes(5 * 4096), 0);
    EXPECT_EQ(m.hot_threshold(), 40u);
    EXPECT_EQ(m.unit(), BG_SEGMON_UNIT_REQUESTS);  // reset: requests
    m.set_unit(BG_SEGMON_UNIT_SECTORS);
    for (int i = 0; i < 5; i++)
        EXPECT_FALSE(m.on_io(1, true, 4096)) << "4 KiB I/O " << i;
    EXPECT_EQ(m.entry(1).count, 40u);
    EXPECT_TRUE(m.on_io(1, true, 4096));
    EXPECT_TRUE(m.on_io(2, true, 24576));
    EXPECT_FALSE(m.on_io(3, true, 20480));
    EXPECT_TRUE(m.on_io(4, true, 20481));
    EXPECT_EQ(m.entry(4).count, 41u);
    EXPECT_FALSE(m.on_io(5, false, 1 << 20));  // a re-offer adds nothing, whatever its size
    EXPECT_EQ(m.entry(5).count, 0u);
    EXPECT_EQ(SegmentMonitor::sectors_of(0), 0u);
    EXPECT_EQ(SegmentMonitor::sectors_of(1), 1u);
    EXPECT_EQ(SegmentMonitor::sectors_of(512), 1u);
    EXPECT_EQ(SegmentMonitor::sectors_of((1u << 24) - 1), 32768u);
    EXPECT_EQ(SegmentMonitor::sectors_of(1u << 24), 0u);  // low SIZE_BITS only, as the RTL
    m.set_unit(BG_SEGMON_UNIT_REQUESTS);
    m.tick();
    for (int i = 0; i < 40; i++)
        EXPECT_FALSE(m.on_io(6, true, 1 << 20)) << "requests unit: the size is ignored";
    EXPECT_TRUE(m.on_io(6, true, 0));
}

// Sector sums saturate at 65535 and still compare unsaturated: two 16 MiB - 1 I/Os (32768 each)
// exceed R = 65534 and leave the count at 65535; R = 65535 is never hot.
TEST(SegmentMonitor, SectorSumSaturates)
{
    SegmentMonitor m(65534, 1);
    m.set_unit(BG_SEGMON_UNIT_SECTORS);
    EXPECT_FALSE(m.on_io(9, true, (1u << 24) - 1));
    EXPECT_TRUE(m.on_io(9, true, (1u << 24) - 1));
    EXPECT_EQ(m.entry(9).count, UINT16_MAX);
    SegmentMonitor off(UINT16_MAX, 1);
    off.set_unit(BG_SEGMON_UNIT_SECTORS);
    for (int i = 0; i < 4; i++)
        EXPECT_FALSE(off.on_io(9, true, (1u << 24) - 1));
    EXPECT_EQ(SegmentMonitor::threshold_from_bytes(65535ull * 512), UINT16_MAX);
    EXPECT_EQ(SegmentMonitor::threshold_from_bytes(511), 0u);
}
