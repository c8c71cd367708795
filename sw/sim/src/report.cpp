// The JSON report of contract 4. Hand-written so the bytes are fixed by the inputs alone:
// fixed key order, fixed number formats, no wall-clock figures.
#include <cstdio>
#include <string>

#include "burstgate/regs.h"
#include "burstgate/sim/lsm_section.hpp"
#include "burstgate/sim/simulator.hpp"

namespace bg::sim {

namespace {

std::string num(double v, int decimals = 3)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string lat_block(const LatencyHist &h)
{
    auto us = [&](double q) { return num(h.quantile(q) / 1e3); };
    std::string s = "{\"avg\": " + num(h.mean() / 1e3) + ", \"p50\": " + us(0.5) + ", \"p90\": " + us(0.9) +
                    ", \"p99\": " + us(0.99) + ", \"p999\": " + us(0.999) + ", \"p9999\": " + us(0.9999) +
                    ", \"p99999\": " + us(0.99999) + ", \"max\": " + num(static_cast<double>(h.max()) / 1e3) +
                    ", \"count\": " + std::to_string(h.count()) + "}";
    return s;
}

// The non-empty buckets as [upper edge in us, count]: enough for an exact CDF plot.
std::string hist_block(const LatencyHist &h)
{
    std::string s = "[";
    bool first = true;
    const auto &c = h.counts();
    for (std::uint32_t b = 0; b < c.size(); b++) {
        if (!c[b])
            continue;
        s += (first ? "" : ", ") + std::string("[") + num(static_cast<double>(LatencyHist::upper(b)) / 1e3) + ", " +
             std::to_string(c[b]) + "]";
        first = false;
    }
    return s + "]";
}

}  // namespace

std::string report_json(const SimResult &r)
{
    std::string s = "{\n";
    s += "  \"scenario\": \"" + r.scenario + "\",\n";
    s += "  \"engine\": \"" + r.engine + "\",\n";
    s += "  \"scheduler\": \"" + r.scheduler + "\",\n";
    s += "  \"seed\": " + std::to_string(r.seed) + ",\n";
    s += "  \"duration_ms\": " + num(static_cast<double>(r.duration_ns) / 1e6) + ",\n";
    s += "  \"warmup_ms\": " + num(static_cast<double>(r.warmup_ns) / 1e6) + ",\n";
    s += "  \"window_us\": " + num(static_cast<double>(r.window_ns) / 1e3) + ",\n";
    s += "  \"tenants\": [\n";
    for (std::size_t i = 0; i < r.tenants.size(); i++) {
        const TenantResult &t = r.tenants[i];
        s += "    {\"name\": \"" + t.name + "\", \"iops\": " + num(t.iops, 1) + ", \"mbps\": " + num(t.mbps) +
             ",\n     \"lat_us\": " + lat_block(t.lat) + ",\n     \"throttled\": " + std::to_string(t.throttled) +
             ", \"deferred_ios\": " + std::to_string(t.deferred_ios) +
             (t.deferred_withheld ? ", \"deferred_withheld\": " + std::to_string(*t.deferred_withheld) : std::string()) +
             (t.deferred_below_base ? ", \"deferred_below_base\": " + std::to_string(*t.deferred_below_base) : std::string()) +
             ", \"completed\": " + std::to_string(t.completed) +
             ", \"admitted_own\": " + std::to_string(t.admitted_by[0]) +
             ", \"admitted_borrow\": " + std::to_string(t.admitted_by[1]) +
             ", \"admitted_reserved\": " + std::to_string(t.admitted_by[2]) +
             ", \"buffer_borrows\": " + std::to_string(t.buffer_borrows) +
             ", \"generated\": " + std::to_string(t.generated) + ", \"finished\": " + std::to_string(t.finished);
        if (t.lat_hot)
            s += ",\n     \"lat_hot_us\": " + lat_block(*t.lat_hot) + ",\n     \"lat_steady_us\": " + lat_block(*t.lat_steady) +
                 ",\n     \"steady_as_hot\": " + std::to_string(t.steady_as_hot) +
                 ", \"steady_new_as_hot\": " + std::to_string(t.steady_new_as_hot) +
                 ", \"hot_new\": " + std::to_string(t.hot_new) + ", \"hot_new_as_hot\": " +
                 std::to_string(t.hot_new_as_hot);
        s += ",\n     \"hist_us\": " + hist_block(t.lat) + "}" + (i + 1 < r.tenants.size() ? "," : "") + "\n";
    }
    s += "  ],\n";
    s += "  \"utilization\": {\"cpu\": " + num(r.utilization[0], 4) + ", \"ingress\": " + num(r.utilization[1], 4) +
         ", \"egress\": " + num(r.utilization[2], 4) + ", \"swlimit\": " + num(r.utilization[3], 4) + "},\n";
    s += "  \"admitted_load\": {\"cpu\": " + num(r.admitted_load[0], 4) + ", \"ingress\": " +
         num(r.admitted_load[1], 4) + ", \"egress\": " + num(r.admitted_load[2], 4) + ", \"swlimit\": " +
         num(r.admitted_load[3], 4) + "},\n";
    constexpr double kFactorOne = 1u << BG_FACTOR_FRAC_BITS;  // COST.FACTOR is Q4.12
    s += "  \"cost_factor\": {\"cpu\": " + num(r.final_factor[0] / kFactorOne, 4) + ", \"ingress\": " +
         num(r.final_factor[1] / kFactorOne, 4) + ", \"egress\": " + num(r.final_factor[2] / kFactorOne, 4) +
         ", \"swlimit\": " + num(r.final_factor[3] / kFactorOne, 4) + "},\n";
    s += "  \"burst_factor\": " + num(r.burst_factor / kFactorOne, 4) + ", \"burst_factor_mean\": " +
         num(r.burst_factor_mean, 4) + ",\n";
    s += "  \"threads_completed\": [";
    for (std::size_t i = 0; i < r.thread_completed.size(); i++)
        s += (i ? ", " : "") + std::to_string(r.thread_completed[i]);
    s += "],\n";
    if (r.sa_loop)
        s += "  \"sa_loop\": {\"loops\": " + std::to_string((*r.sa_loop)[0]) + ", \"unrelated_tasks\": " +
             std::to_string((*r.sa_loop)[1]) + "},\n";
    s += "  \"events\": " + std::to_string(r.events) + ", \"windows\": " + std::to_string(r.windows) +
         (r.window_overruns ? ", \"window_overruns\": " + std::to_string(*r.window_overruns) : std::string()) + ",\n";
    s += "  \"ios\": {\"generated\": " + std::to_string(r.generated) + ", \"finished\": " + std::to_string(r.finished) +
         ", \"in_flight\": " + std::to_string(r.in_flight) + ", \"deferred_pending\": " +
         std::to_string(r.deferred_pending) + ", \"bad_completions\": " + std::to_string(r.bad_completions) + "}\n";
    if (r.lsm)
        s.insert(s.size() - 1, ",\n" + lsm_report_json(*r.lsm));
    if (!r.gateway_json.empty())
        s.insert(s.size() - 1, ",\n  " + r.gateway_json);
    s += "}\n";
    return s;
}

}  // namespace bg::sim
