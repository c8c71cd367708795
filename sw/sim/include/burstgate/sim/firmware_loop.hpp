// burstgate-sim's control plane: the device programmed from the scenario (program_device), the
// firmware's tenants provisioned (init_firmware, provision.hpp), then one bg_fw_window per
// window over the device's HAL, as the firmware runs on a real agent. The simulator calls
// window() at each window's end; what the firmware granted is read back from the registers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "burstgate/hal.h"
#include "burstgate/host/device.hpp"
#include "burstgate/sim/provision.hpp"
#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

struct SimResult;

class FirmwareLoop {
public:
    // Throws ScenarioError for a provisioning the firmware rejects; its warnings are appended
    // to `warnings`.
    FirmwareLoop(const Scenario &sc, Scheduler sched, std::uint64_t seed, Device &dev, std::vector<std::string> &warnings);

    // One window's end: bg_fw_window reads the datapath's usage and commits the next grants.
    void window() { bg_fw_window(&fw_.fw, &hal_); }
    // Slice j of the window's main-bucket tokens into CTRL.GLOBAL (dualbucket.main_slices).
    void meter(std::uint32_t j) { bg_fw_db_meter(&fw_.fw, &hal_, j); }
    // libra.swap's reservation event: each pair swaps v and r, then Libra re-provisions at once.
    void swap_reservations(const std::vector<std::array<std::uint32_t, 2>> &pairs);
    const Firmware &firmware() const { return fw_; }
    const bg_hal &hal() const { return hal_; }
    // TENANT.GRANT of tenant ti in dimension d, as the last window committed it.
    std::uint32_t grant(std::uint32_t ti, unsigned d) const;
    // The SA delay (ns) the last window read, at P95 as the dual-bucket estimate reads it, and
    // how many completions it holds (0: none, then the percentile is meaningless).
    std::uint32_t sa_p95_ns() const;
    std::uint64_t sa_samples() const;
    // CTRL.BAD_COMPLETIONS and COST.FACTOR at the end of the run.
    void read_final(SimResult &r) const;

private:
    bg_hal hal_;
    Firmware fw_;
};

}  // namespace bg::sim
