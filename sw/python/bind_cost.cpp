// The COST block in Python: the cost estimator, configured by register writes like the RTL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "burstgate/model/cost.hpp"
#include "bind.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

nb::tuple as_tuple(const bg::CostVector &v)
{
    return nb::make_tuple(v[0], v[1], v[2], v[3]);
}

// One call for a whole batch, so a testbench checking 1e5 descriptors pays the Python
// call and conversion overhead once instead of per descriptor.
nb::list estimate_many(const bg::CostEstimator &est, const std::vector<uint32_t> &products,
                       const std::vector<uint32_t> &writes, const std::vector<uint32_t> &sizes)
{
    if (products.size() != writes.size() || products.size() != sizes.size())
        throw nb::value_error(("estimate_many: products, writes and sizes differ in length (" +
                               std::to_string(products.size()) + ", " + std::to_string(writes.size()) + ", " +
                               std::to_string(sizes.size()) + ")")
                                  .c_str());
    nb::list out;
    for (size_t i = 0; i < products.size(); i++) {
        if (writes[i] > 1)
            throw nb::value_error(("estimate_many: descriptor " + std::to_string(i) + ": write must be 0/1 or a "
                                   "bool, not " + std::to_string(writes[i]))
                                      .c_str());
        try {
            out.append(as_tuple(est.estimate(products[i], writes[i] != 0, sizes[i])));
        } catch (const std::invalid_argument &e) {
            throw nb::value_error(("estimate_many: descriptor " + std::to_string(i) + ": " + e.what()).c_str());
        }
    }
    return out;
}

}  // namespace

void bg::py::bind_cost(nb::module_ &m)
{
    nb::class_<bg::CostEstimator>(m, "CostEstimator",
                                  "The COST block: vectorized I/O cost estimator, configured by register writes "
                                  "at absolute byte addresses exactly like the RTL (docs/registers.md).")
        .def(nb::init<>(), "All registers at their reset values.")
        .def("reset", &bg::CostEstimator::reset, "Return every register to its reset value.")
        .def("owns", &bg::CostEstimator::owns, "addr"_a, "True when byte address addr is in the COST block.")
        .def("write", &bg::CostEstimator::write, "addr"_a, "value"_a,
             "Write a register: keeps value & mask; unmapped addresses are ignored.")
        .def("read", &bg::CostEstimator::read, "addr"_a, "Read a register; unmapped addresses read 0.")
        .def("size_class", &bg::CostEstimator::size_class, "size"_a,
             "The size class of an I/O of size bytes under the current bounds.")
        .def(
            "estimate",
            [](const bg::CostEstimator &est, unsigned product, bool write, uint32_t size) {
                return as_tuple(est.estimate(product, write, size));
            },
            "product"_a, "write"_a, "size"_a,
            "Cost vector (cpu, ingress, egress, swlimit) of one I/O. ValueError if product or size is out of "
            "range.")
        .def("estimate_many", &estimate_many, "products"_a, "writes"_a, "sizes"_a,
             "Cost vectors of many I/Os: three equally long sequences of ints (writes: 0/1 or bools); returns a "
             "list of 4-tuples. ValueError names the first bad descriptor.");
}
