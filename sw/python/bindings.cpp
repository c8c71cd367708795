// burstgate_model: the C++ reference model for Python testbenches. Register constants are not
// exposed: Python takes them from the Python register map (burstgate.regmap), the source.
#include "bind.hpp"

NB_MODULE(burstgate_model, m)
{
    m.doc() = "burstgate's bit-exact C++ reference model (the RTL is verified against it).";
    bg::py::bind_cost(m);
    bg::py::bind_agent(m);
    bg::py::bind_firmware(m);
    bg::py::bind_blocks(m);
}
