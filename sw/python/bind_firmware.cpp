// The firmware window loop (fw/include/burstgate/window.h) in Python, driving a model Agent
// through its register HAL, so property tests and notebooks run whole windows: the same C
// code an embedded core or the host runs against the Verilated kernel or a board.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "bind.hpp"
#include "burstgate/model/agent.hpp"
#include "burstgate/window.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using Vec4 = std::array<std::uint32_t, BG_COST_DIMS>;

bg_vec vec(const Vec4 &a)
{
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = a[d];
    return v;
}

Vec4 arr(const bg_vec &v) { return {v.d[0], v.d[1], v.d[2], v.d[3]}; }

class Firmware {
public:
    // tenants: (base, burst) pairs of 4-vectors, paid burst.
    Firmware(bg::Agent &agent, std::uint32_t scheduler, const Vec4 &total,
             const std::vector<std::tuple<Vec4, Vec4>> &tenants, std::uint32_t reserved_q16, std::uint32_t alpha_q16,
             std::uint32_t weight_throttle_q16, std::uint32_t floor_q16, std::uint32_t options,
             std::uint32_t reserve_tenants)
        : hal_(agent.hal()), t_(tenants.size()), u_(tenants.size()), sched_(tenants.size()), burst_(tenants.size())
    {
        for (std::size_t i = 0; i < tenants.size(); i++) {
            t_[i].res_base = vec(std::get<0>(tenants[i]));
            t_[i].res_burst = vec(std::get<1>(tenants[i]));
        }
        bg_fw_config cfg{};
        cfg.scheduler = scheduler;
        cfg.bios = bg_bios_params{vec(total), reserved_q16, alpha_q16, weight_throttle_q16, floor_q16, options, reserve_tenants};
        const int rc = bg_fw_init(&fw_, &cfg, t_.data(), u_.data(), sched_.data(), burst_.data(),
                                  static_cast<std::uint32_t>(t_.size()), &hal_);
        if (rc != BG_FW_OK)
            throw nb::value_error(("firmware configuration rejected: code " + std::to_string(rc) +
                                   (fw_.bios.err_tenant >= 0 ? ", tenant " + std::to_string(fw_.bios.err_tenant) : "") +
                                   (fw_.bios.err_dim >= 0 ? ", dimension " + std::to_string(fw_.bios.err_dim) : ""))
                                      .c_str());
    }
    void window() { bg_fw_window(&fw_, &hal_); }
    Vec4 alloc(std::uint32_t t) const { return arr(t_.at(t).alloc); }
    Vec4 reserved() const { return arr(fw_.bios.reserved); }
    std::uint32_t scheduled() const { return fw_.bios.n_sched; }
    std::uint32_t windows() const { return fw_.windows; }

private:
    bg_hal hal_;
    std::vector<bg_bios_tenant> t_;
    std::vector<bg_bios_usage> u_;
    std::vector<std::uint16_t> sched_, burst_;
    bg_fw fw_{};
};

}  // namespace

void bg::py::bind_firmware(nb::module_ &m)
{
    nb::class_<Firmware>(m, "Firmware",
                         "The firmware's window loop (fw/include/burstgate/window.h) programming and running an "
                         "Agent through its registers.")
        .def(nb::init<bg::Agent &, std::uint32_t, const Vec4 &, const std::vector<std::tuple<Vec4, Vec4>> &,
                      std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>(),
             "agent"_a, nb::kw_only(), "scheduler"_a, "total"_a, "tenants"_a, "reserved_q16"_a = 3277,
             "alpha_q16"_a = 0x8000, "weight_throttle_q16"_a = 0x20000, "floor_q16"_a = 0,
             "options"_a = 0, "reserve_tenants"_a = 2,
             nb::keep_alive<1, 2>(),
             "Validate and program the agent (ValueError names the code, tenant and dimension). BIOS is "
             "Algorithm 1 as printed by default: floor_q16 = 0, options = 0 (bit 1 usage clamp, bit 2 spill "
             "takes line 4, bit 4 the pool at most the allocations' shortfall, bit 8 line 11's leftover shared again), reserve_tenants = 2 (the pool holds the two largest bases; 0: reserved_q16 of total).")
        .def("window", &Firmware::window, "One window: TICK, the scheduler, COMMIT.")
        .def("alloc", &Firmware::alloc, "t"_a, "The firmware's grant of tenant t for this window.")
        .def_prop_ro("reserved", &Firmware::reserved)
        .def_prop_ro("scheduled", &Firmware::scheduled)
        .def_prop_ro("windows", &Firmware::windows);
}
