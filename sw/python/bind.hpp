// burstgate_model is one extension module assembled from one bind_*.cpp per part of the model;
// each defines its bind_<part>() and registers it in bindings.cpp.
#pragma once

#include <nanobind/nanobind.h>

namespace bg::py {

void bind_cost(nanobind::module_ &m);
void bind_agent(nanobind::module_ &m);
void bind_firmware(nanobind::module_ &m);
void bind_blocks(nanobind::module_ &m);

}  // namespace bg::py
