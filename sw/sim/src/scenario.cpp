// Scenario loader: yaml-cpp for the syntax, everything else (keys, types, ranges, cross-field
// rules) checked here so every message names the file, the line and the field path.
#include "burstgate/sim/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>

#include "burstgate/cost_table.h"
#include "burstgate/dualbucket.h"
#include "burstgate/regs.h"
#include "burstgate/sim/lsm_section.hpp"
#include "cost_cli.hpp"
#include "yaml_fields.hpp"

namespace bg::sim {

static_assert(kProducts == BG_PRODUCTS, "product classes must match the register map");

namespace {

// Names go into reports, plot titles and file names (the gateway's export and data file).
constexpr std::size_t kMaxName = 200;

class Loader : public Fields {
public:
    using Fields::Fields;

    std::uint32_t size(const YAML::Node &key, const std::string &path) const
    {
        try {
            const std::uint32_t s = bg::cli::parse_size(key.Scalar(), "size");
            if (s == 0)
                fail(key, path, "size must be at least 1 byte");
            return s;
        } catch (const bg::cli::InputError &e) {
            std::string msg = e.what();
            fail(key, path, msg.substr(msg.find(": ") + 2));
        }
    }

};

template <class T>
T choose(const Loader &L, const YAML::Node &n, const std::string &path,
         std::initializer_list<std::pair<const char *, T>> options)
{
    const std::string s = L.string(n, path);
    std::string list;
    for (const auto &[name, value] : options) {
        if (s == name)
            return value;
        list += std::string(list.empty() ? "" : " | ") + name;
    }
    L.fail(n, path, "unknown value '" + s + "' (expected " + list + ")");
}

void load_cpu(const Loader &L, const YAML::Node &n, const std::string &path, Dpu &dpu)
{
    L.require_map(n, path);
    for (auto it = n.begin(); it != n.end(); ++it) {
        const std::string prod = it->first.as<std::string>();
        const std::string pp = Loader::join(path, prod);
        if (prod.size() != 1 || prod[0] < 'A' || prod[0] >= static_cast<char>('A' + kProducts))
            L.fail(it->first, pp, "unknown product class (expected A..D)");
        const unsigned p = static_cast<unsigned>(prod[0] - 'A');
        L.check_keys(it->second, pp, {"read", "write"});
        for (unsigned w = 0; w < 2; w++) {
            const char *op = w ? "write" : "read";
            const std::string op_path = Loader::join(pp, op);
            const YAML::Node o = it->second[op];
            if (!o)
                L.fail(it->second, op_path, "missing");
            L.check_keys(o, op_path, {"base", "per_kib"});
            if (!o["base"] || !o["per_kib"])
                L.fail(o, op_path, "needs both base and per_kib");
            dpu.cpu[p][w].base_ns = L.u32(o["base"], op_path + ".base", 0, (1u << 24) - 1);
            dpu.cpu[p][w].per_kib_ns = L.u32(o["per_kib"], op_path + ".per_kib", 0, (1u << 24) - 1);
        }
        dpu.defined[p] = true;
    }
}

void load_sa_loop(const Loader &L, const YAML::Node &n, const std::string &P, Dpu &d)
{
    L.require_map(n, P);
    d.sa_loop_line = n.Mark().line + 1;
    L.check_keys(n, P, {"policy", "offload", "lt_us", "alpha", "per_io_us", "tasks", "gate"});
    if (!n["policy"])
        L.fail(n, P + ".policy", "missing: fifo (the event loop's baseline) or priority (§4.3)");
    d.sa_loop = choose<SaLoop>(L, n["policy"], P + ".policy", {{"fifo", SaLoop::kFifo}, {"priority", SaLoop::kPriority}});
    if (n["offload"]) d.sa_offload = L.boolean(n["offload"], P + ".offload");
    if (n["gate"])
        d.sa_gate_literal = choose<bool>(L, n["gate"], P + ".gate",
                                         {{"first_then_fit", false}, {"start_before_deadline", true}});
    // Integer ns, as bg::TaskLoop keeps time; alpha in 1/1000 (DLT = alpha * T_IO / 1000).
    if (n["lt_us"]) d.sa_lt_ns = static_cast<std::uint64_t>(std::llround(L.number(n["lt_us"], P + ".lt_us", 0, 1e6) * 1e3));
    if (n["alpha"]) d.sa_alpha_permille = static_cast<std::uint32_t>(std::lround(L.number(n["alpha"], P + ".alpha", 0, 1000) * 1e3));
    if (n["per_io_us"]) d.sa_per_io_ns = static_cast<std::uint64_t>(std::llround(L.number(n["per_io_us"], P + ".per_io_us", 0, 1e6) * 1e3));
    if (const YAML::Node ts = n["tasks"]) {
        if (!ts.IsSequence() || ts.size() > 64)
            L.fail(ts, P + ".tasks", "expected a list of at most 64 {period_us, us, offload}");
        for (std::size_t i = 0; i < ts.size(); i++) {
            const std::string tp = P + ".tasks[" + std::to_string(i) + "]";
            const YAML::Node t = ts[i];
            L.require_map(t, tp);
            L.check_keys(t, tp, {"period_us", "us", "offload"});
            if (!t["period_us"] || !t["us"])
                L.fail(t, tp, "needs both period_us and us");
            SaTask k;
            k.period_ns = static_cast<std::uint64_t>(std::llround(L.number(t["period_us"], tp + ".period_us", 1, 1e7) * 1e3));
            k.duration_ns = static_cast<std::uint64_t>(std::llround(L.number(t["us"], tp + ".us", 0, 1e6) * 1e3));
            if (t["offload"]) k.offload = L.boolean(t["offload"], tp + ".offload");
            d.sa_tasks.push_back(k);
        }
    }
}

// dpu.vop_curve: {per_s: VOP/s, points: [[bytes, read VOPs, write VOPs], ...]}; the points must
// be a curve the cost table holds (bg_cost_check_vop: rising sizes and costs, at most 7 or 8).
void load_vop_curve(const Loader &L, const YAML::Node &n, const std::string &P, Dpu &d)
{
    L.check_keys(n, P, {"per_s", "points"});
    if (!n["per_s"])
        L.fail(n, P + ".per_s", "missing: the device's capacity in VOP/s");
    d.vop_per_s = L.number(n["per_s"], P + ".per_s", 1, 1e9);
    const YAML::Node pts = n["points"];
    if (!pts || !pts.IsSequence() || pts.size() == 0 || pts.size() > BG_SIZE_CLASSES)
        L.fail(pts ? pts : n, P + ".points", "expected a list of 1.." + std::to_string(BG_SIZE_CLASSES) + " [bytes, read, write] points");
    std::vector<bg_vop_point> check;
    for (std::size_t i = 0; i < pts.size(); i++) {
        const std::string pp = P + ".points[" + std::to_string(i) + "]";
        const YAML::Node q = pts[i];
        if (!q.IsSequence() || q.size() != 3)
            L.fail(q, pp, "expected [bytes, read VOPs, write VOPs]");
        const std::uint32_t size = L.u32(q[0], pp + "[0]", 0, BG_COST_SIZE_UNUSED - 1);
        // milli-VOPs: the table's unit (cost_table.h).
        const auto mvop = [&](int k) { return static_cast<std::uint32_t>(std::llround(L.number(q[k], pp + "[" + std::to_string(k) + "]", 0, 1e6) * 1000)); };
        d.vop_points.push_back({size, mvop(1), mvop(2)});
        check.push_back({size, d.vop_points.back()[1], d.vop_points.back()[2]});
    }
    if (const int rc = bg_cost_check_vop(check.data(), static_cast<unsigned>(check.size())); rc != BG_COST_OK)
        L.fail(pts, P + ".points", "the cost table cannot hold this curve (code " + std::to_string(rc) +
                                       "): sizes must rise, costs must not fall, at most " + std::to_string(BG_SIZE_CLASSES - 1) +
                                       " points above 0 bytes, slopes below 2^24 milli-VOPs per KiB");
}

void load_dpu(const Loader &L, const YAML::Node &n, Dpu &d)
{
    const std::string P = "dpu";
    L.check_keys(n, P, {"threads", "lb_policy", "cpu_ns", "ingress_gbps", "egress_gbps", "swlimit_mbps",
                        "backend_us", "reserved_share", "target_delay_us", "adjust_max", "estimate_error", "cost_adjust", "sa_discipline",
                        "queue_depth", "header_bytes", "bios_alpha", "bios_weight_throttle", "buffers", "provision", "grant_carry", "iops_cap", "sa_loop", "vop_curve"});
    if (n["threads"]) d.threads = L.u32(n["threads"], P + ".threads", 1, BG_QUEUES_MAX);
    if (n["lb_policy"])
        d.lb_policy = choose<LbPolicy>(L, n["lb_policy"], P + ".lb_policy",
                                       {{"static", LbPolicy::kStatic}, {"rr", LbPolicy::kRoundRobin},
                                        {"jsq", LbPolicy::kJsq}, {"p2c", LbPolicy::kP2c},
                                        {"least_ios", LbPolicy::kLeastIos}});
    if (!n["cpu_ns"])
        L.fail(n, P + ".cpu_ns", "missing: the SA's CPU time per I/O is needed");
    load_cpu(L, n["cpu_ns"], P + ".cpu_ns", d);
    if (n["ingress_gbps"]) d.ingress_gbps = L.number(n["ingress_gbps"], P + ".ingress_gbps", 0.001, 1e4);
    if (n["egress_gbps"]) d.egress_gbps = L.number(n["egress_gbps"], P + ".egress_gbps", 0.001, 1e4);
    if (n["swlimit_mbps"]) d.swlimit_mbps = L.number(n["swlimit_mbps"], P + ".swlimit_mbps", 0.001, 1e6);
    if (const YAML::Node b = n["backend_us"]) {
        L.check_keys(b, P + ".backend_us", {"dist", "median", "p99"});
        if (b["dist"])
            choose<int>(L, b["dist"], P + ".backend_us.dist", {{"lognormal", 0}});
        if (b["median"]) d.backend_median_us = L.number(b["median"], P + ".backend_us.median", 0, 1e7);
        if (b["p99"]) d.backend_p99_us = L.number(b["p99"], P + ".backend_us.p99", 0, 1e7);
        if (d.backend_p99_us < d.backend_median_us)
            L.fail(b, P + ".backend_us.p99", "must not be below the median");
        if (d.backend_median_us == 0 && d.backend_p99_us > 0)
            L.fail(b, P + ".backend_us.median", "a lognormal with median 0 cannot have p99 > 0");
    }
    if (n["reserved_share"]) d.reserved_share = L.number(n["reserved_share"], P + ".reserved_share", 0, 1);
    if (n["target_delay_us"]) d.target_delay_us = L.number(n["target_delay_us"], P + ".target_delay_us", 0.001, 4e6);
    // COST.FACTOR is Q4.12 in 16 bits: 65535 / 4096, just under 16.
    if (n["adjust_max"]) d.adjust_max = L.number(n["adjust_max"], P + ".adjust_max", 1, 65535.0 / 4096);
    if (n["estimate_error"]) d.estimate_error = L.number(n["estimate_error"], P + ".estimate_error", 0.01, 100);
    if (n["sa_discipline"])
        d.sa_round_robin = choose<bool>(L, n["sa_discipline"], P + ".sa_discipline", {{"rr", true}, {"fifo", false}});
    if (const YAML::Node c = n["cost_adjust"]) {
        // A YAML boolean as every boolean key takes it (true: as printed), else a scope.
        bool on = false;
        const std::string v = c.IsScalar() ? c.Scalar() : "";
        if (c.IsScalar() && YAML::convert<bool>::decode(c, on))
            d.cost_adjust = on ? CostAdjust::kCost : CostAdjust::kOff;
        else if (v == "cost" || v == "burst")
            d.cost_adjust = v == "cost" ? CostAdjust::kCost : CostAdjust::kBurst;
        else
            L.fail(c, P + ".cost_adjust", "expected true, false, cost or burst");
    }
    if (n["provision"])
        d.envelope = choose<bool>(L, n["provision"], P + ".provision", {{"envelope", true}, {"io4k", false}});
    if (n["grant_carry"]) d.grant_carry = L.boolean(n["grant_carry"], P + ".grant_carry");
    if (n["iops_cap"]) d.iops_cap = L.boolean(n["iops_cap"], P + ".iops_cap");
    if (n["queue_depth"]) d.queue_depth = L.u32(n["queue_depth"], P + ".queue_depth", 1, BG_LB_DEPTH_MASK);
    if (const YAML::Node b = n["buffers"]) {
        const std::string B = P + ".buffers";
        L.check_keys(b, B, {"dedicated", "shared", "borrow_cap", "quiet_windows"});
        if (!b["dedicated"])
            L.fail(b, B + ".dedicated", "missing: the buffers each ingress queue owns");
        d.buf_dedicated = L.u32(b["dedicated"], B + ".dedicated", 1, BG_BPOOL_DEDICATED_MASK);
        if (b["shared"]) d.buf_shared = L.u32(b["shared"], B + ".shared", 0, BG_BPOOL_SHARED_MASK);
        if (b["borrow_cap"]) d.buf_borrow_cap = L.u32(b["borrow_cap"], B + ".borrow_cap", 0, BG_BPOOL_BORROW_CAP_MASK);
        if (b["quiet_windows"]) d.buf_quiet = L.u32(b["quiet_windows"], B + ".quiet_windows", 0, BG_BPOOL_QUIET_MASK);
    }
    if (const YAML::Node v = n["vop_curve"])
        load_vop_curve(L, v, P + ".vop_curve", d);
    if (n["header_bytes"]) d.header_bytes = L.u32(n["header_bytes"], P + ".header_bytes", 0, 65536);
    if (n["bios_alpha"]) d.bios_alpha = L.number(n["bios_alpha"], P + ".bios_alpha", 0, 1);
    if (n["bios_weight_throttle"]) d.bios_weight_throttle = L.number(n["bios_weight_throttle"], P + ".bios_weight_throttle", 0, 1000);
    if (n["sa_loop"])
        load_sa_loop(L, n["sa_loop"], P + ".sa_loop", d);
}

void load_bios(const Loader &L, const YAML::Node &n, BiosCfg &b)
{
    const std::string P = "bios";
    L.check_keys(n, P, {"floor_share", "usage_clamp", "spill_base", "reserve", "reserve_shortfall", "share_refill"});
    if (n["floor_share"]) b.floor_share = L.number(n["floor_share"], P + ".floor_share", 0, 1);
    if (n["usage_clamp"]) b.usage_clamp = L.boolean(n["usage_clamp"], P + ".usage_clamp");
    if (n["spill_base"]) b.spill_base = L.boolean(n["spill_base"], P + ".spill_base");
    if (n["reserve_shortfall"]) b.reserve_shortfall = L.boolean(n["reserve_shortfall"], P + ".reserve_shortfall");
    if (n["share_refill"]) b.share_refill = L.boolean(n["share_refill"], P + ".share_refill");
    if (n["reserve"])
        b.reserve_tenants = choose<std::uint32_t>(L, n["reserve"], P + ".reserve", {{"two_tenants", 2u}, {"share", 0u}});
}

void load_libra(const Loader &L, const YAML::Node &n, LibraCfg &b)
{
    const std::string P = "libra";
    L.check_keys(n, P, {"floor_share", "ewma_weight", "policy_ms", "admission", "unit", "swap"});
    if (const YAML::Node s = n["swap"]) {
        const std::string S = P + ".swap";
        L.check_keys(s, S, {"workloads_ms", "reservations_ms", "pairs"});
        if (s["workloads_ms"]) b.swap_workloads_ns = static_cast<std::uint64_t>(L.number(s["workloads_ms"], S + ".workloads_ms", 0, 1e9) * 1e6);
        if (s["reservations_ms"])
            b.swap_reservations_ns = static_cast<std::uint64_t>(L.number(s["reservations_ms"], S + ".reservations_ms", 0, 1e9) * 1e6);
        const YAML::Node pairs = s["pairs"];
        if (!pairs || !pairs.IsSequence() || pairs.size() == 0 || pairs.size() > BG_TENANTS_MAX)
            L.fail(pairs ? pairs : s, S + ".pairs", "expected a list of [tenant, tenant] name pairs");
        b.swap_line = pairs.Mark().line + 1;
        for (std::size_t i = 0; i < pairs.size(); i++) {
            const std::string pp = S + ".pairs[" + std::to_string(i) + "]";
            if (!pairs[i].IsSequence() || pairs[i].size() != 2)
                L.fail(pairs[i], pp, "expected [tenant, tenant]");
            b.swap_names.push_back({L.string(pairs[i][0], pp + "[0]"), L.string(pairs[i][1], pp + "[1]")});
        }
    }
    if (n["unit"]) b.vop = choose<bool>(L, n["unit"], P + ".unit", {{"vop", true}, {"vector", false}});
    if (n["floor_share"]) b.floor_share = L.number(n["floor_share"], P + ".floor_share", 1e-6, 1);
    if (n["ewma_weight"]) b.ewma_weight = L.number(n["ewma_weight"], P + ".ewma_weight", 1e-4, 1);
    if (n["policy_ms"]) b.policy_ms = L.number(n["policy_ms"], P + ".policy_ms", 0, 1e6);
    if (n["admission"])
        b.admit_floor = choose<bool>(L, n["admission"], P + ".admission", {{"floor", true}, {"envelope", false}});
}

void load_db(const Loader &L, const YAML::Node &n, DualBucketCfg &d)
{
    const std::string P = "dualbucket";
    L.check_keys(n, P, {"hot_threshold_iops", "hot_threshold_bps", "monitor_unit", "steady_intervals",
                        "cheque_share", "alpha", "percentile", "headroom_mbps", "mu_mbps", "main_share", "main_slices", "reoffer",
                        "tenant_contracts"});
    if (n["hot_threshold_iops"]) d.hot_threshold_iops = L.number(n["hot_threshold_iops"], P + ".hot_threshold_iops", 0, 1e9);
    if (n["monitor_unit"])
        d.monitor_bytes = choose<bool>(L, n["monitor_unit"], P + ".monitor_unit", {{"requests", false}, {"bytes", true}});
    if (n["hot_threshold_bps"]) {
        d.hot_threshold_bps = L.number(n["hot_threshold_bps"], P + ".hot_threshold_bps", 0, 1e13);
        if (!d.monitor_bytes)
            L.fail(n["hot_threshold_bps"], P + ".hot_threshold_bps", "applies to monitor_unit: bytes only");
    }
    if (n["steady_intervals"]) d.steady_intervals = L.u32(n["steady_intervals"], P + ".steady_intervals", 0, BG_SEGMON_STEADY_MAX);
    if (n["cheque_share"]) d.cheque_share = L.number(n["cheque_share"], P + ".cheque_share", 0, 1);
    if (n["alpha"]) d.alpha = L.u32(n["alpha"], P + ".alpha", 1, 0xFFFFFFFFu);
    if (n["percentile"]) {
        d.percentile = L.number(n["percentile"], P + ".percentile", 0, 1);
        const double ok[] = {0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.99999};
        bool found = false;
        for (double v : ok)
            found = found || std::fabs(v - d.percentile) < 1e-12;
        if (!found)
            L.fail(n["percentile"], P + ".percentile", "must be one of 0.5 0.9 0.95 0.99 0.999 0.9999 0.99999");
    }
    if (n["headroom_mbps"]) d.headroom_mbps = L.u32(n["headroom_mbps"], P + ".headroom_mbps", 0, 1u << 30);
    if (n["mu_mbps"]) d.mu_mbps = L.u32(n["mu_mbps"], P + ".mu_mbps", 1, 1u << 30);
    if (n["main_share"]) {
        d.main_share = L.number(n["main_share"], P + ".main_share", 0, 1);
        if (d.main_share <= 0)
            L.fail(n["main_share"], P + ".main_share", "must be above 0: the main bucket would admit nothing");
    }
    if (n["main_slices"]) {
        d.main_slices = L.u32(n["main_slices"], P + ".main_slices", 1, BG_DB_SLICES_MAX);
        d.main_slices_line = n["main_slices"].Mark().line + 1;
    }
    if (n["tenant_contracts"]) d.tenant_contracts = L.boolean(n["tenant_contracts"], P + ".tenant_contracts");
    if (n["reoffer"])
        d.steady_first = choose<bool>(L, n["reoffer"], P + ".reoffer", {{"fifo", false}, {"steady_first", true}});
}

Provision provision(const Loader &L, const YAML::Node &n, const std::string &path)
{
    if (!n)
        L.fail_line(1, path, "missing");
    L.check_keys(n, path, {"iops", "mbps"});
    if (!n["iops"] || !n["mbps"])
        L.fail(n, path, "needs both iops and mbps");
    return {L.number(n["iops"], path + ".iops", 0, 1e9), L.number(n["mbps"], path + ".mbps", 0, 1e7)};
}

// `trace:` of a `mode: trace` workload. The file must open now, so a wrong path is reported
// with its field path rather than in the middle of a run.
void load_trace(const Loader &L, const YAML::Node &n, const std::string &P, TraceSpec &tr, const LoadOptions &opt)
{
    L.check_keys(n, P, {"file", "format", "device", "time_scale", "skip_s", "loop", "segment_size"});
    tr.line = n.Mark().line + 1;
    if (!opt.trace_file.empty()) {
        tr.file = opt.trace_file;
    } else {
        if (!n["file"])
            L.fail(n, P + ".file", "missing");
        tr.file = L.string(n["file"], P + ".file");
        // Relative to the scenario file, so a scenario runs from any working directory.
        if (!tr.file.empty() && tr.file[0] != '/') {
            const std::filesystem::path dir = std::filesystem::absolute(L.file()).parent_path();
            tr.file = (dir / tr.file).lexically_normal().string();
        }
    }
    const std::string format = !opt.trace_format.empty() ? opt.trace_format
                               : n["format"]               ? L.string(n["format"], P + ".format")
                                                           : "";
    if (format.empty())
        L.fail(n, P + ".format", "missing");
    try {
        tr.format = bg::trace::parse_format(format);
    } catch (const std::invalid_argument &e) {
        L.fail(opt.trace_format.empty() ? n["format"] : n, P + ".format", e.what());
    }
    if (!std::ifstream(tr.file) || std::filesystem::is_directory(tr.file))
        L.fail(opt.trace_file.empty() ? n["file"] : n, P + ".file",
               "cannot open '" + tr.file + "'" +
                   (std::filesystem::is_directory(tr.file) ? " (it is a folder)"
                    : !opt.trace_file.empty()              ? " (given with --trace)"
                    : L.string(n["file"], "") != tr.file   ? " (a relative file is read from the scenario's folder)"
                                                           : ""));
    if (n["device"]) tr.device = L.string(n["device"], P + ".device");
    // A trace with nothing to replay is a mistake (a wrong file or format), not a run with an
    // idle tenant: read up to its first read or write now. The trace's own errors (gzip, a bad
    // first line) are found here too, with their line. (A device the trace lacks is the run's
    // warning: the device may be idle in this excerpt.)
    try {
        bg::trace::TraceReader rd(tr.file, tr.format);
        bg::trace::Record r;
        bool found = false;
        while (!found && rd.next(r))
            found = r.op != bg::trace::Op::kOther;
        if (!found)
            L.fail(opt.trace_file.empty() ? n["file"] : n, P + ".file",
                   "'" + tr.file + "' has no read or write record (read as " + bg::trace::format_name(tr.format) + ")");
    } catch (const bg::trace::TraceError &e) {
        throw ScenarioError(e.what());
    }
    if (n["time_scale"]) tr.time_scale = L.number(n["time_scale"], P + ".time_scale", 1e-9, 1e9);
    if (n["skip_s"])
        tr.skip_ns = static_cast<std::uint64_t>(std::llround(L.number(n["skip_s"], P + ".skip_s", 0, 1e9) * 1e9));
    if (n["loop"]) tr.loop = L.boolean(n["loop"], P + ".loop");
    if (n["segment_size"]) {
        const YAML::Node sz = n["segment_size"];
        tr.segment_bytes = L.size(sz, P + ".segment_size");
    }
}

void load_workload(const Loader &L, const YAML::Node &n, const std::string &P, Workload &w, std::uint64_t duration,
                   const LoadOptions &opt)
{
    L.check_keys(n, P, {"mode", "iodepth", "rate_iops", "sizes", "read_share", "segments", "hot_segments",
                        "hot_share", "start_ms", "stop_ms", "trace"});
    if (!n["mode"])
        L.fail(n, P + ".mode", "missing (closed, open or trace)");
    w.trace = choose<bool>(L, n["mode"], P + ".mode", {{"closed", false}, {"open", false}, {"trace", true}});
    if (w.trace) {
        // The trace gives every I/O's size, direction and place; read_share stays as the
        // weight of the provisioning's cost vector (its 4 KiB read/write mix).
        for (const char *k : {"iodepth", "rate_iops", "sizes", "hot_segments", "hot_share"})
            if (n[k])
                L.fail(n[k], P + "." + k, "not for mode: trace (the trace gives every I/O)");
        w.closed = false;
        if (!n["trace"])
            L.fail(n, P + ".trace", "missing: mode: trace needs trace: {file, format}");
        load_trace(L, n["trace"], P + ".trace", w.tr, opt);
        if (n["read_share"]) w.read_share = L.number(n["read_share"], P + ".read_share", 0, 1);
        if (n["segments"]) w.segments = L.u32(n["segments"], P + ".segments", 1, 1u << BG_SEGMENT_BITS);
        w.start_ns = n["start_ms"] ? L.ms(n["start_ms"], P + ".start_ms") : 0;
        w.stop_ns = n["stop_ms"] ? L.ms(n["stop_ms"], P + ".stop_ms") : duration;
        if (w.stop_ns < w.start_ns)
            L.fail(n["stop_ms"] ? n["stop_ms"] : n, P + ".stop_ms", "stop before start");
        return;
    }
    if (n["trace"])
        L.fail(n["trace"], P + ".trace", "only for mode: trace");
    w.closed = choose<bool>(L, n["mode"], P + ".mode", {{"closed", true}, {"open", false}});
    if (w.closed) {
        if (!n["iodepth"])
            L.fail(n, P + ".iodepth", "missing: a closed loop needs iodepth");
        w.iodepth = L.u32(n["iodepth"], P + ".iodepth", 1, 65536);
        if (n["rate_iops"])
            L.fail(n["rate_iops"], P + ".rate_iops", "only for mode: open");
    } else {
        if (!n["rate_iops"])
            L.fail(n, P + ".rate_iops", "missing: an open loop needs rate_iops");
        w.rate_iops = L.number(n["rate_iops"], P + ".rate_iops", 0, 1e9);
        if (n["iodepth"])
            L.fail(n["iodepth"], P + ".iodepth", "only for mode: closed");
    }
    const YAML::Node sizes = n["sizes"];
    if (!sizes)
        L.fail(n, P + ".sizes", "missing");
    L.require_map(sizes, P + ".sizes");
    double sum = 0;
    for (auto it = sizes.begin(); it != sizes.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        const std::string sp = P + ".sizes." + key;
        const std::uint32_t s = L.size(it->first, sp);
        const double share = L.number(it->second, sp, 0, 1);
        for (const auto &e : w.sizes)
            if (e.first == s)
                L.fail(it->first, sp, "size given twice");
        w.sizes.emplace_back(s, share);
        sum += share;
    }
    if (w.sizes.empty())
        L.fail(sizes, P + ".sizes", "needs at least one size");
    if (std::fabs(sum - 1.0) > 1e-6)
        L.fail(sizes, P + ".sizes", "shares sum to " + std::to_string(sum) + ", not 1");
    if (n["read_share"]) w.read_share = L.number(n["read_share"], P + ".read_share", 0, 1);
    if (n["segments"]) w.segments = L.u32(n["segments"], P + ".segments", 1, 1u << BG_SEGMENT_BITS);
    if (n["hot_segments"]) w.hot_segments = L.u32(n["hot_segments"], P + ".hot_segments", 0, 1u << BG_SEGMENT_BITS);
    if (n["hot_share"]) w.hot_share = L.number(n["hot_share"], P + ".hot_share", 0, 1);
    if (w.hot_segments > w.segments)
        L.fail(n["hot_segments"], P + ".hot_segments", "more hot segments than segments");
    if (w.hot_segments == 0 && w.hot_share > 0)
        L.fail(n["hot_share"], P + ".hot_share", "a hot share needs hot_segments > 0");
    if (w.hot_segments == w.segments && w.hot_share < 1 && w.hot_segments > 0)
        L.fail(n["hot_share"], P + ".hot_share", "every segment is hot, so hot_share must be 1");
    w.start_ns = n["start_ms"] ? L.ms(n["start_ms"], P + ".start_ms") : 0;
    w.stop_ns = n["stop_ms"] ? L.ms(n["stop_ms"], P + ".stop_ms") : duration;
    if (w.stop_ns < w.start_ns)
        L.fail(n["stop_ms"] ? n["stop_ms"] : n, P + ".stop_ms", "stop before start");
}

void load_tenant(const Loader &L, const YAML::Node &n, const std::string &P, const Dpu &dpu, Tenant &t,
                 std::uint64_t duration, const LoadOptions &opt)
{
    L.check_keys(n, P, {"name", "product", "base", "burst", "burst_mode", "burst_credits", "queues", "max_conns", "workload"});
    if (!n["name"])
        L.fail(n, P + ".name", "missing");
    t.name = L.string(n["name"], P + ".name");
    if (t.name.empty() || t.name.find_first_of("\",\n\\") != std::string::npos || t.name.size() > kMaxName)
        L.fail(n["name"], P + ".name", "must be non-empty without quotes, commas or backslashes, at most " +
                                           std::to_string(kMaxName) + " characters");
    const std::string prod = n["product"] ? L.string(n["product"], P + ".product") : "A";
    if (prod.size() != 1 || prod[0] < 'A' || prod[0] >= static_cast<char>('A' + kProducts))
        L.fail(n["product"], P + ".product", "unknown product class '" + prod + "' (expected A..D)");
    t.product = static_cast<unsigned>(prod[0] - 'A');
    if (!dpu.defined[t.product])
        L.fail(n["product"], P + ".product", "product " + prod + " has no dpu.cpu_ns profile");
    if (!n["base"])
        L.fail(n, P + ".base", "missing");
    t.base = provision(L, n["base"], P + ".base");
    t.burst = n["burst"] ? provision(L, n["burst"], P + ".burst") : t.base;
    if (t.burst.iops < t.base.iops || t.burst.mbps < t.base.mbps)
        L.fail(n["burst"], P + ".burst", "burst provisioning below base");
    if (n["burst_mode"])
        t.credit = choose<bool>(L, n["burst_mode"], P + ".burst_mode", {{"paid", false}, {"credit", true}});
    if (n["burst_credits"]) t.burst_credits = L.integer(n["burst_credits"], P + ".burst_credits", 0, UINT32_MAX);
    if (n["queues"]) t.queues = L.u32(n["queues"], P + ".queues", 1, BG_QUEUES_MAX);
    if (n["max_conns"]) t.max_conns = L.u32(n["max_conns"], P + ".max_conns", 1, 4096);
    if (n["workload"])  // only lsm.tenant's may be absent: check_tenant_workloads
        load_workload(L, n["workload"], P + ".workload", t.wl, duration, opt);
}

}  // namespace

const char *scheduler_name(Scheduler s)
{
    switch (s) {
    case Scheduler::kBios: return "bios";
    case Scheduler::kBase: return "base";
    case Scheduler::kWild: return "wild";
    case Scheduler::kDualBucket: return "dualbucket";
    case Scheduler::kDdrr: return "ddrr";
    }
    return "?";
}

Scheduler parse_scheduler(const std::string &name)
{
    for (Scheduler s : {Scheduler::kBios, Scheduler::kBase, Scheduler::kWild, Scheduler::kDualBucket, Scheduler::kDdrr})
        if (name == scheduler_name(s))
            return s;
    throw std::invalid_argument("unknown scheduler '" + name + "' (bios | wild | base | dualbucket | ddrr)");
}

Scenario parse_scenario(const std::string &text, const std::string &file, const LoadOptions &opt)
{
    Loader L(file);
    const YAML::Node root = L.parse(text);
    Scenario s;
    s.file = file;
    if (!root.IsMap())
        L.fail_line(1, "(top level)", "expected a mapping of scenario keys");
    L.check_keys(root, "", {"name", "seed", "duration_ms", "warmup_ms", "scheduler", "window_us", "dpu",
                            "dualbucket", "bios", "libra", "tenants", "lsm"});
    s.name = root["name"] ? L.string(root["name"], "name") : "unnamed";
    if (s.name.find_first_of("\"\\\n") != std::string::npos || s.name.size() > kMaxName)
        L.fail(root["name"], "name", "must not contain quotes or backslashes, and at most " + std::to_string(kMaxName) + " characters");
    if (root["seed"]) s.seed = L.integer(root["seed"], "seed", 0, UINT32_MAX);
    if (!root["duration_ms"])
        L.fail_line(1, "duration_ms", "missing");
    s.duration_ns = L.ms(root["duration_ms"], "duration_ms");
    if (opt.duration_ns)
        s.duration_ns = opt.duration_ns;
    if (s.duration_ns == 0)
        L.fail(root["duration_ms"], "duration_ms", "must be positive");
    if (root["warmup_ms"]) s.warmup_ns = L.ms(root["warmup_ms"], "warmup_ms");
    if (s.warmup_ns >= s.duration_ns)
        L.fail(root["warmup_ms"], "warmup_ms", "must be shorter than duration_ms");
    if (root["scheduler"]) {
        try {
            s.scheduler = parse_scheduler(L.string(root["scheduler"], "scheduler"));
        } catch (const std::invalid_argument &e) {
            L.fail(root["scheduler"], "scheduler", e.what());
        }
    }
    if (root["window_us"]) {
        const double w = L.number(root["window_us"], "window_us", 1, 100000);
        s.window_ns = static_cast<std::uint64_t>(std::llround(w * 1000));
    }
    if (!root["dpu"])
        L.fail_line(1, "dpu", "missing");
    load_dpu(L, root["dpu"], s.dpu);
    if (root["dualbucket"])
        load_db(L, root["dualbucket"], s.db);
    if (root["bios"])
        load_bios(L, root["bios"], s.bios);
    if (root["libra"])
        load_libra(L, root["libra"], s.libra);
    const YAML::Node ts = root["tenants"];
    if (!ts)
        L.fail_line(1, "tenants", "missing");
    if (!ts.IsSequence() || ts.size() == 0)
        L.fail(ts, "tenants", "expected a non-empty list of tenants");
    if (ts.size() > BG_TENANTS_MAX)
        L.fail(ts, "tenants", "more than " + std::to_string(BG_TENANTS_MAX) + " tenants");
    std::set<std::string> names;
    for (std::size_t i = 0; i < ts.size(); i++) {
        const std::string P = "tenants[" + std::to_string(i) + "]";
        Tenant t;
        t.line = ts[i].Mark().line + 1;
        load_tenant(L, ts[i], P, s.dpu, t, s.duration_ns, opt);
        if (!names.insert(t.name).second)
            L.fail(ts[i]["name"], P + ".name", "duplicate tenant name '" + t.name + "'");
        s.tenants.push_back(std::move(t));
    }
    // libra.swap's names, now that the tenants are known: each tenant in at most one pair.
    std::set<std::string> swapped;
    for (const auto &pair : s.libra.swap_names) {
        std::array<std::uint32_t, 2> ix{};
        for (int k = 0; k < 2; k++) {
            const auto it = std::find_if(s.tenants.begin(), s.tenants.end(), [&](const Tenant &t) { return t.name == pair[k]; });
            if (it == s.tenants.end())
                L.fail_line(s.libra.swap_line, "libra.swap.pairs", "no tenant named '" + pair[k] + "'");
            if (!swapped.insert(pair[k]).second)
                L.fail_line(s.libra.swap_line, "libra.swap.pairs", "tenant '" + pair[k] + "' is in more than one pair");
            ix[k] = static_cast<std::uint32_t>(it - s.tenants.begin());
            if (it->wl.trace)
                L.fail_line(s.libra.swap_line, "libra.swap.pairs", "tenant '" + pair[k] + "' replays a trace: only size mixes swap");
        }
        s.libra.swap_pairs.push_back(ix);
    }
    if (root["lsm"])
        load_lsm_section(root["lsm"], file, s);
    else
        check_tenant_workloads(s);
    return s;
}

Scenario load_scenario(const std::string &path, const LoadOptions &opt)
{
    return parse_scenario(Fields(path).read_file(), path, opt);
}

}  // namespace bg::sim
