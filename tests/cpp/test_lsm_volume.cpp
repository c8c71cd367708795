// Cloud volume model (Calcspar §2.3, Unwritten Contract §III): the overdraft rule with its repayment,
// W = L/A congestion, the Table 1 presets, and latency vs I/O size under the bandwidth cap.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <vector>

#include "burstgate/lsm/cloud_volume.hpp"

using namespace bg::lsm;

namespace {

// One synchronous thread sending `quota[s]` I/Os back to back in second s (Fig. 3's driver).
// Returns, per second, how many of that second's I/Os took longer than 500 us.
std::vector<int> slow_per_second(const std::vector<int>& quota, std::uint32_t iops)
{
    EventLoop loop;
    CloudVolume vol(loop, volume_preset("io2", iops), 1);
    std::vector<int> sent(quota.size(), 0), slow(quota.size(), 0);
    std::function<void(std::size_t)> issue = [&](std::size_t s) {
        if (s >= quota.size()) return;
        const Time t = loop.now();
        if (sent[s] >= quota[s] || t >= static_cast<Time>(s + 1) * kSec) {
            const std::size_t next = std::max(s + 1, static_cast<std::size_t>(t / kSec));
            loop.at(std::max(t, static_cast<Time>(next) * kSec), [&, next] { issue(next); });
            return;
        }
        ++sent[s];
        vol.submit(IoRequest{}, [&, t, s] {
            if (loop.now() - t > 500 * kUs) ++slow[s];
            issue(s);
        });
    };
    issue(0);
    loop.run_until(static_cast<Time>(quota.size() + 3) * kSec);
    for (std::size_t s = 0; s < quota.size(); ++s) EXPECT_EQ(sent[s], quota[s]) << "second " << s;
    return slow;
}

// L closed-loop threads, each sending its next I/O when the previous one completes (or at its
// pace). Returns the mean latency in us over [5 s, 20 s).
double closed_loop_avg_us(std::uint32_t threads, Time pace, std::uint32_t iops)
{
    EventLoop loop;
    CloudVolume vol(loop, volume_preset("io2", iops), threads);
    double sum = 0;
    std::uint64_t n = 0;
    std::function<void(Time)> thread = [&](Time t) {
        loop.at(t, [&, t] {
            vol.submit(IoRequest{}, [&, t] {
                if (t >= 5 * kSec) {
                    sum += static_cast<double>(loop.now() - t);
                    ++n;
                }
                thread(std::max(loop.now(), t + pace));
            });
        });
    };
    for (std::uint32_t i = 0; i < threads; ++i) thread(i * (pace / threads));
    loop.run_until(20 * kSec);
    return sum / static_cast<double>(n) / 1e3;
}

}  // namespace

// Fig. 3 / Speculative Reason #1: the first A I/Os of a second are fast; the 600 beyond
// A = 1000 borrow from the next second and return at 1/IOPS; the next second's tokens repay
// the pool first, so only 400 are fast there and 600 are slow again -- and this persists at
// 1.0A -- until an idle second repays the debt. Catches: no borrowing pool (excess I/Os wait
// for the next second instead), repayment not taken first (second 3 all fast), or a bucket
// that keeps the debt after an idle second.
TEST(LsmCloudVolume, Figure3OverdraftAndRepayment)
{
    const auto slow = slow_per_second({1000, 1600, 1000, 1000, 0, 1000, 1000}, 1000);
    EXPECT_EQ(slow[0], 0);
    EXPECT_EQ(slow[1], 600);
    EXPECT_EQ(slow[2], 600);
    EXPECT_EQ(slow[3], 600);
    EXPECT_EQ(slow[5], 0);
    EXPECT_EQ(slow[6], 0);
}

// The punitive latency of an overdraft I/O is 1/IOPS for a single thread (Fig. 3: ~1000 us at
// 1000 IOPS), so it scales with the contract. Catches a fixed penalty instead of 1/A.
TEST(LsmCloudVolume, OverdraftLatencyIsOneOverIops)
{
    for (std::uint32_t iops : {500u, 1000u, 2000u}) {
        EventLoop loop;
        CloudVolume vol(loop, volume_preset("io2", iops), 3);
        // Use the second's A regular tokens, let them complete, then time one more I/O.
        for (std::uint32_t i = 0; i < iops; ++i) vol.submit(IoRequest{}, [] {});
        loop.run_until(kSec / 2);
        Time done = -1;
        vol.submit(IoRequest{}, [&] { done = loop.now(); });
        loop.run_until(kSec - 1);
        EXPECT_EQ(vol.stats().overdraft, 1u);
        EXPECT_EQ(done, kSec / 2 + kSec / iops) << iops;
    }
}

// Speculative Reason #2, Fig. 4: above the paid IOPS, L threads see W = L/A; below it the
// latency stays at the volume's base (~100 us for io2) whatever L. Catches overdraft I/Os
// served in parallel (W would not grow with L) or a below-contract path that queues.
TEST(LsmCloudVolume, LittlesLawAboveContractFlatBelow)
{
    for (std::uint32_t l : {1u, 4u, 10u, 20u}) {
        const double above = closed_loop_avg_us(l, 0, 1000);
        EXPECT_NEAR(above, 1e6 * l / 1000, 0.02 * 1e6 * l / 1000) << l;
        const double below = closed_loop_avg_us(l, static_cast<Time>(kSec * l / 800.0), 1000);
        EXPECT_LT(below, 130.0) << l;
        EXPECT_GT(below, 80.0) << l;
    }
}

// When both the bucket and the pool are empty, I/Os wait in the I/O domain for the next
// refill, FIFO, and nothing is lost. Catches dropping or reordering I/Os at exhaustion.
TEST(LsmCloudVolume, ExhaustedWaitsForRefillInOrder)
{
    EventLoop loop;
    CloudVolume vol(loop, volume_preset("io2", 100), 1);
    std::vector<int> order;
    for (int i = 0; i < 250; ++i) vol.submit(IoRequest{}, [&, i] { order.push_back(i); });
    EXPECT_EQ(vol.waiting(), 50u);
    loop.run_until(5 * kSec);
    ASSERT_EQ(order.size(), 250u);
    EXPECT_EQ(vol.stats().waited, 50u);
    // Overdraft I/Os and refilled ones complete in submission order after the fast 100.
    for (int i = 101; i < 250; ++i) EXPECT_LT(order[static_cast<std::size_t>(i - 1)], order[static_cast<std::size_t>(i)]) << i;
}

// Table 1 presets; gp2 earns 3 IOPS per GB; one token per started 256 KiB.
TEST(LsmCloudVolume, PresetsAndTokens)
{
    EXPECT_EQ(volume_preset("gp2", 0, 500).paid_iops, 1500u);
    EXPECT_EQ(volume_preset("gp2", 0, 10).paid_iops, 100u);
    EXPECT_EQ(volume_preset("gp3", 0).paid_iops, 3000u);
    EXPECT_EQ(volume_preset("io1", 0).paid_iops, 1000u);
    EXPECT_EQ(volume_preset("io2", 5000).paid_iops, 5000u);
    EXPECT_EQ(volume_preset("gp2", 0).base_latency, 200 * kUs);
    EXPECT_EQ(volume_preset("gp3", 0).base_latency, 300 * kUs);
    EXPECT_EQ(volume_preset("io1", 0).base_latency, 100 * kUs);
    EXPECT_THROW(volume_preset("st1", 0), std::invalid_argument);
    EXPECT_THROW(volume_preset("gp2", 3000), std::invalid_argument);
    EXPECT_EQ(io_tokens(4096), 1u);
    EXPECT_EQ(io_tokens(256 * 1024), 1u);
    EXPECT_EQ(io_tokens(256 * 1024 + 1), 2u);
    EXPECT_EQ(io_tokens(1 << 20), 4u);
}

// Unwritten Contract Observations #1 and #4: latency grows with I/O size, and at queue depth 16 large
// I/Os saturate the volume's bandwidth cap, not more (io2: 1000 MB/s). Catches a latency
// independent of size or a bandwidth cap that is per I/O instead of per volume.
TEST(LsmCloudVolume, SizeLatencyAndBandwidthCap)
{
    auto run = [](std::uint32_t bytes, std::uint32_t qd, double& avg_us, double& mbps) {
        EventLoop loop;
        VolumeSpec spec = volume_preset("io2", 100000);
        CloudVolume vol(loop, spec, 9);
        double sum = 0;
        std::uint64_t n = 0, total = 0;
        std::function<void()> go = [&] {
            const Time t = loop.now();
            IoRequest io;
            io.bytes = bytes;
            vol.submit(io, [&, t] {
                sum += static_cast<double>(loop.now() - t);
                ++n;
                total += bytes;
                if (loop.now() < kSec / 2) go();
            });
        };
        for (std::uint32_t i = 0; i < qd; ++i) go();
        loop.run_until(kSec);
        avg_us = sum / static_cast<double>(n) / 1e3;
        mbps = static_cast<double>(total) / 0.5 / 1e6;
    };
    double small_lat, small_bw, big_lat, big_bw, big16_lat, big16_bw;
    run(4096, 1, small_lat, small_bw);
    run(256 * 1024, 1, big_lat, big_bw);
    run(256 * 1024, 16, big16_lat, big16_bw);
    EXPECT_NEAR(big_lat - small_lat, 262.144 - 4.096, 15.0);  // transfer at 1000 MB/s
    EXPECT_NEAR(big16_bw, 1000.0, 30.0);                        // the cap, not 16x one stream
    EXPECT_GT(big16_lat, 3 * big_lat);                          // queueing behind the cap
}
