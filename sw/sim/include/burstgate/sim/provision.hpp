// How a scenario configures a device and its firmware: the estimator's cost table and the load
// balancer's registers (program_device), then the firmware's tenants -- base/burst provisioning
// as per-window cost vectors, burst mode and credits -- and bg_fw_init (init_firmware). One
// source for burstgate-sim and burstgate-gateway, so a tenant is provisioned the same way in
// simulated time and on the real clock.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "burstgate/host/device.hpp"

#include "burstgate/hal.h"
#include "burstgate/sim/scenario.hpp"
#include "burstgate/window.h"

namespace bg::sim {

inline constexpr const char *kDimNames[4] = {"cpu", "ingress", "egress", "swlimit"};

// Rounds to the nearest integer, saturating into [0, UINT32_MAX].
std::uint32_t sat32(double v);

// The DPU's capacity per second in each dimension: CPU ns (all SA threads), ingress bytes,
// egress bytes, software-limit bytes.
std::array<double, 4> capacity_per_s(const Dpu &d);

// The estimator's CPU ns for one I/O of tenant t: what the cost table program_device loads
// (the true profile / estimate_error) charges it, read from a CostEstimator model programmed
// by the same register writes. Throws ScenarioError for a profile the table rejects.
double est_io_cpu(const Dpu &d, const Tenant &t, std::uint32_t size, bool write);
// The whole estimated cost vector of one I/O, from the same estimator.
bg_vec io_cost(const Dpu &d, const Tenant &t, std::uint32_t size, bool write);

// The contract (docs/contracts.md). A tenant provisioned {iops, mbps} is entitled to
// min(iops, mbps x 10^6 / size) I/Os per second of any size from kContractMinSize to
// kContractMaxSize, read or write (an I/O of any size counts as one I/O).
inline constexpr std::uint32_t kContractMinSize = 512;
inline constexpr std::uint32_t kContractMaxSize = 1u << 20;
double contract_ios_per_s(const Provision &pv, std::uint32_t size);
// The per-window cost vector that pays for that entitlement at every size: per dimension, the
// envelope max over sizes and read/write of entitlement(size) x cost(size) x window, from the
// estimator's own table, rounded up. It peaks at the knee size mbps / iops.
bg_vec contract_vector(const Dpu &d, const Tenant &t, const Provision &pv, std::uint64_t window_ns);
// The depth of both of a tenant's carries, the grant carry's and the count carry's, in I/Os of
// its knee size (docs/contracts.md, "Exactly at the knee"): a tenant held at its knee loses what
// one bucket accrues while the other blocks, and that loss falls with the depth of both buckets
// in I/Os, whatever the rate or the window.
inline constexpr double kCarryIos = 128;
// The grant carry's knee term never holds more than this much of the device's capacity (per
// dimension): a bound on what one tenant's carry, spent at once, queues ahead of others.
inline constexpr double kCarryCapacitySeconds = 0.005;
// The firmware's grant carry cap (window.h), per dimension the largest of one window of base
// (res_base), the cost of one kContractMaxSize I/O, read or write, and -- when window_ns > 0 --
// kCarryIos times the base's cost per I/O, res_base / (base IOPS x window) (the cost of one I/O
// at the knee, as credit_ref). A tenant's bucket then holds two windows of base, enough for
// Poisson arrivals within base to pass undeferred; always one largest I/O, which a base below
// one such I/O per window could not admit otherwise; and kCarryIos I/Os at the knee.
// window_ns 0 leaves the knee term out (Libra's deficit bound, which is no grant carry).
bg_vec carry_vector(const Dpu &d, const Tenant &t, const bg_vec &res_base, std::uint64_t window_ns);
// One I/O credit as a cost vector: the base vector's share of one I/O (res_base / base IOPS).
bg_vec credit_ref(const Dpu &d, const Tenant &t, std::uint64_t window_ns);

// Opens `engine` at the default build's sizes unless the scenario needs more tenants or SA
// threads: the verilator and xrt engines are built with fixed sizes and refuse others, and a
// model of the same sizes is what makes their reports comparable. Tenants' vCPU queues share
// the build's ingress queues round robin (queue q of the scenario is ingress q mod INGRESS).
// Throws runtime_error for an engine too small, ScenarioError for more segments than the
// datapath has (segment ids are taken modulo 2^SEGMENT_BITS and must not alias).
std::unique_ptr<Device> open_scenario_device(const Scenario &sc, const std::string &engine);

// Seeds, load balancer policy/depth/map, the cost table. `ingress` is the build's ingress queues.
void program_device(const Scenario &sc, Scheduler sched, std::uint64_t seed, const bg_hal &hal, std::uint32_t ingress);

// The firmware and the storage it runs on (window.h: the caller's). Not copyable: bg_fw
// points into the vectors.
struct Firmware {
    bg_fw fw{};
    std::vector<bg_bios_tenant> t;
    std::vector<bg_bios_usage> u;
    std::vector<std::uint16_t> sched_list, burst_list;
    std::vector<bg_vec> carry_max, granted;  // the grant carry (window.h), when the scenario has it on
    std::vector<bg_libra_tenant> libra;     // scheduler: ddrr (libra.h)
    std::vector<std::uint64_t> count_q16;    // the exact IOPS cap (window.h), when dpu.iops_cap is on
    std::vector<std::uint64_t> count_have, count_carry_max;
    Firmware() = default;
    Firmware(const Firmware &) = delete;
    Firmware &operator=(const Firmware &) = delete;
};

// The factor that divides what bios grants above a base under `dpu.cost_adjust: burst`
// (window.h BG_FW_COSTADJ_BURST), Q4.12; 1.0 under any other setting or scheduler.
std::uint32_t burst_factor(const Firmware &fw);
// Its mean over the windows run (1.0 likewise).
double burst_factor_mean(const Firmware &fw);

// Fills fw.t from the tenants' provisioning and runs bg_fw_init over `hal`. Throws
// ScenarioError (file:line: path: message) for a provisioning the firmware rejects or an I/O
// size no burst grant covers; appends a warning for a size only a burst share covers.
// `meters`: the caller calls bg_fw_db_meter within each window (burstgate-sim's FirmwareLoop);
// without it a dualbucket.main_slices above 1 is refused (the gateway's main bucket would get
// slice 0 alone).
void init_firmware(const Scenario &sc, Scheduler sched, const bg_hal &hal, Firmware &fw,
                   std::vector<std::string> &warnings, bool meters = false);

}  // namespace bg::sim
