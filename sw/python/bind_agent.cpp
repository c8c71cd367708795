// The whole datapath model in Python, for the core's differential testbenches: registers at
// absolute byte addresses, descriptors and completions one at a time or in batches (a
// testbench checking 1e5 decisions pays the Python call overhead once, not per descriptor).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bind.hpp"
#include "burstgate/model/agent.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// (tag, tenant, queue, product, write, size, segment, reoffer), the Descriptor layout's fields.
using DescTuple = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                             std::uint32_t, std::uint32_t, std::uint32_t>;
// (tag, tenant, queue, egress, charge_ns, sa_delay_ns)
using ComplTuple = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                              std::uint32_t>;

std::uint32_t fit(std::uint32_t v, unsigned bits, const char *field, std::size_t i)
{
    if (bits < 32 && v >> bits)
        throw nb::value_error(("item " + std::to_string(i) + ": " + field + " " + std::to_string(v) +
                               " does not fit " + std::to_string(bits) + " bits")
                                  .c_str());
    return v;
}

bg::IoDesc to_desc(const DescTuple &t, std::size_t i)
{
    const auto &[tag, tenant, queue, product, write, size, segment, reoffer] = t;
    bg::IoDesc d;
    d.tag = static_cast<std::uint16_t>(fit(tag, BG_TAG_BITS, "tag", i));
    d.tenant = static_cast<std::uint16_t>(fit(tenant, BG_TENANT_BITS, "tenant", i));
    d.queue = static_cast<std::uint8_t>(fit(queue, BG_QUEUE_BITS, "queue", i));
    d.product = static_cast<std::uint8_t>(fit(product, 8, "product", i));
    d.write = fit(write, 1, "write", i) != 0;
    d.size = size;
    d.segment = static_cast<std::uint16_t>(fit(segment, BG_SEGMENT_BITS, "segment", i));
    d.reoffer = fit(reoffer, 1, "reoffer", i) != 0;
    return d;
}

nb::dict to_dict(const bg::IoDecision &x)
{
    nb::dict r;
    r["tag"] = x.tag;
    r["tenant"] = x.tenant;
    r["queue"] = x.queue;
    r["source"] = x.source;
    r["lender"] = x.lender;
    r["egress"] = x.egress;
    r["hot"] = x.hot;
    r["prefill"] = x.prefill;
    r["cost"] = nb::make_tuple(x.cost.d[0], x.cost.d[1], x.cost.d[2], x.cost.d[3]);
    return r;
}

// The decision as the flat tuple a testbench compares against the RTL's output port.
nb::tuple to_tuple(const bg::IoDecision &x)
{
    return nb::make_tuple(x.tag, x.tenant, x.queue, x.source, x.lender, x.egress, x.hot, x.prefill,
                          nb::make_tuple(x.cost.d[0], x.cost.d[1], x.cost.d[2], x.cost.d[3]));
}

template <class F>
auto rethrow(std::size_t i, F &&f)
{
    try {
        return f();
    } catch (const std::invalid_argument &e) {
        throw nb::value_error(("item " + std::to_string(i) + ": " + e.what()).c_str());
    }
}

}  // namespace

void bg::py::bind_agent(nb::module_ &m)
{
    nb::class_<bg::AgentParams>(m, "AgentParams", "Sizes of one build (the INFO block).")
        .def(nb::init<>())
        .def_rw("tenants", &bg::AgentParams::tenants)
        .def_rw("ingress", &bg::AgentParams::ingress)
        .def_rw("egress", &bg::AgentParams::egress)
        .def_rw("segment_bits", &bg::AgentParams::segment_bits);

    nb::class_<bg::Agent>(m, "Agent",
                          "The whole datapath (burstgate/model/agent.hpp), configured by register writes at "
                          "absolute byte addresses exactly like the RTL core.")
        .def(
            "__init__",
            [](bg::Agent *self, std::uint32_t tenants, std::uint32_t ingress, std::uint32_t egress,
               std::uint32_t segment_bits) {
                try {
                    new (self) bg::Agent(bg::AgentParams{tenants, ingress, egress, segment_bits});
                } catch (const std::invalid_argument &e) {
                    throw nb::value_error(e.what());
                }
            },
            nb::kw_only(), "tenants"_a, "ingress"_a, "egress"_a, "segment_bits"_a = BG_SEGMENT_BITS)
        .def("write", &bg::Agent::write, "addr"_a, "value"_a)
        .def("read", &bg::Agent::read, "addr"_a)
        .def_prop_ro("held", &bg::Agent::held)
        .def_prop_ro("window", &bg::Agent::window)
        .def(
            "io",
            [](bg::Agent &a, std::uint32_t tag, std::uint32_t tenant, std::uint32_t queue, std::uint32_t product,
               bool write, std::uint32_t size, std::uint32_t segment, bool reoffer) {
                const DescTuple t{tag, tenant, queue, product, write, size, segment, reoffer};
                return to_dict(rethrow(0, [&] { return a.io(to_desc(t, 0)); }));
            },
            nb::kw_only(), "tag"_a, "tenant"_a, "queue"_a = 0, "product"_a = 0, "write"_a = false, "size"_a,
            "segment"_a = 0, "reoffer"_a = false, "One descriptor; returns its decision as a dict.")
        .def(
            "io_many",
            [](bg::Agent &a, const std::vector<DescTuple> &descs) {
                nb::list out;
                for (std::size_t i = 0; i < descs.size(); i++)
                    out.append(to_tuple(rethrow(i, [&] { return a.io(to_desc(descs[i], i)); })));
                return out;
            },
            "descs"_a,
            "Descriptors as (tag, tenant, queue, product, write, size, segment, reoffer) tuples; returns one "
            "(tag, tenant, queue, source, lender, egress, hot, prefill, cost4) tuple each.")
        .def(
            "complete",
            [](bg::Agent &a, std::uint32_t tag, std::uint32_t tenant, std::uint32_t queue, std::uint32_t egress,
               std::uint32_t charge_ns, std::uint32_t sa_delay_ns) {
                a.complete(bg::IoCompletion{static_cast<std::uint16_t>(tag), static_cast<std::uint16_t>(tenant),
                                            static_cast<std::uint8_t>(queue), static_cast<std::uint8_t>(egress),
                                            charge_ns, sa_delay_ns});
            },
            nb::kw_only(), "tag"_a, "tenant"_a, "queue"_a, "egress"_a, "charge_ns"_a, "sa_delay_ns"_a)
        .def(
            "complete_many",
            [](bg::Agent &a, const std::vector<ComplTuple> &cs) {
                for (std::size_t i = 0; i < cs.size(); i++) {
                    const auto &[tag, tenant, queue, egress, charge, delay] = cs[i];
                    a.complete(bg::IoCompletion{
                        static_cast<std::uint16_t>(fit(tag, BG_TAG_BITS, "tag", i)),
                        static_cast<std::uint16_t>(fit(tenant, BG_TENANT_BITS, "tenant", i)),
                        static_cast<std::uint8_t>(fit(queue, BG_QUEUE_BITS, "queue", i)),
                        static_cast<std::uint8_t>(fit(egress, BG_QUEUE_BITS, "egress", i)), charge, delay});
                }
            },
            "completions"_a, "Completions as (tag, tenant, queue, egress, charge_ns, sa_delay_ns) tuples.");
}
