// What the LSM store tests share: a volume that records every I/O, and a small tree.
#pragma once

#include <cstdint>
#include <vector>

#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/lsm_store.hpp"

namespace bg::lsm::test {

// A volume that records every I/O and completes it after a fixed 100 us.
class RecordingVolume final : public Volume {
public:
    explicit RecordingVolume(EventLoop& loop) : loop_(loop) {}
    void submit(const IoRequest& io, Completion done) override
    {
        ios.push_back(io);
        loop_.after(100 * kUs, std::move(done));
    }
    std::uint32_t paid_iops() const override { return 1000; }
    EventLoop& loop() override { return loop_; }
    std::uint64_t count(IoSource s, IoOp op) const
    {
        std::uint64_t n = 0;
        for (const auto& io : ios) n += io.source == s && io.op == op;
        return n;
    }
    std::vector<IoRequest> ios;

private:
    EventLoop& loop_;
};

// 200k keys of 272 B in 1 MiB SSTs under a 2 MiB L1: three levels, flushes every 256 KiB.
inline LsmConfig small_tree()
{
    LsmConfig c;
    c.keys = 200000;
    c.sst_bytes = 1 << 20;
    c.l1_bytes = 2 << 20;
    c.memtable_bytes = 256 << 10;
    return c;
}

}  // namespace bg::lsm::test
