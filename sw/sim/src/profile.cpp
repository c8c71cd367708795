// Host profiles; see profile.hpp.
#include "burstgate/sim/profile.hpp"

#include <fstream>

#include "burstgate/regs.h"

#include "yaml_fields.hpp"

namespace bg::sim {

void apply_profile(Scenario &sc, const std::string &path)
{
    const Fields L(path);
    std::string text;
    try {
        text = L.read_file();
    } catch (const ScenarioError &e) {
        throw ScenarioError(path + ":1: cannot read the profile (" + std::string(e.what()).substr(path.size() + 2) + ")");
    }
    const YAML::Node n = L.parse(text);
    L.check_keys(n, "", {"threads", "cpu_ns", "swlimit_mbps", "measured"});
    for (const char *k : {"threads", "cpu_ns", "swlimit_mbps"})
        if (!n[k])
            L.fail(n, k, "missing");
    Dpu d = sc.dpu;
    d.threads = L.u32(n["threads"], "threads", 1, BG_QUEUES_MAX);
    L.check_keys(n["cpu_ns"], "cpu_ns", {"read", "write"});
    CpuProfile cpu[2];
    for (unsigned w = 0; w < 2; w++) {
        const std::string p = std::string("cpu_ns.") + (w ? "write" : "read");
        const YAML::Node o = n["cpu_ns"][w ? "write" : "read"];
        if (!o)
            L.fail(n["cpu_ns"], p, "missing");
        L.check_keys(o, p, {"base", "per_kib"});
        if (!o["base"] || !o["per_kib"])
            L.fail(o, p, "needs both base and per_kib");
        cpu[w].base_ns = L.u32(o["base"], p + ".base", 1, (1u << 24) - 1);
        cpu[w].per_kib_ns = L.u32(o["per_kib"], p + ".per_kib", 0, (1u << 24) - 1);
    }
    // The host's cost does not depend on the product class: every profiled product gets it.
    for (unsigned p = 0; p < kProducts; p++)
        if (d.defined[p])
            d.cpu[p] = {cpu[0], cpu[1]};
    d.swlimit_mbps = L.number(n["swlimit_mbps"], "swlimit_mbps", 0.001, 1e6);
    sc.dpu = d;
}

}  // namespace bg::sim
