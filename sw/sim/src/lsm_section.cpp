// `lsm:` in burstgate-sim scenarios: its loader, the store driven by the simulator's event
// loop through a burstgate tenant, and its part of the JSON report (lsm_section.hpp).
#include "burstgate/sim/lsm_section.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "burstgate/lsm/allocator.hpp"
#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/volume.hpp"
#include "burstgate/regs.h"
#include "burstgate/sim/scenario.hpp"
#include "yaml_fields.hpp"

namespace bg::sim {

namespace {

void load_tree(const Fields &F, const YAML::Node &n, const std::string &P, bg::lsm::LsmConfig &c)
{
    F.check_keys(n, P, {"keys", "key_bytes", "value_bytes", "sst", "memtable", "l1", "level_multiplier", "l0_trigger",
                  "l0_stop", "compaction_threads", "sync"});
    if (n["keys"]) c.keys = F.integer(n["keys"], P + ".keys", 1000, 1'000'000'000);
    if (n["key_bytes"]) c.key_bytes = static_cast<std::uint32_t>(F.integer(n["key_bytes"], P + ".key_bytes", 1, 4096));
    if (n["value_bytes"])
        c.value_bytes = static_cast<std::uint32_t>(F.integer(n["value_bytes"], P + ".value_bytes", 0, 4096 - c.key_bytes));
    if (c.key_bytes + c.value_bytes > bg::lsm::kPageBytes)
        F.fail(n["value_bytes"] ? n["value_bytes"] : n, P + ".value_bytes", "an entry must fit one 4 KiB block");
    if (n["sst"]) c.sst_bytes = F.bytes(n["sst"], P + ".sst");
    if (n["memtable"]) c.memtable_bytes = F.bytes(n["memtable"], P + ".memtable");
    if (n["l1"]) c.l1_bytes = F.bytes(n["l1"], P + ".l1");
    if (c.sst_bytes < bg::lsm::kEbsBlockBytes)
        F.fail(n["sst"], P + ".sst", "must be at least 256k (SSTs start on 256 KiB EBS blocks)");
    if (n["level_multiplier"])
        c.level_multiplier = static_cast<std::uint32_t>(F.integer(n["level_multiplier"], P + ".level_multiplier", 2, 100));
    if (n["l0_trigger"]) c.l0_trigger = static_cast<std::uint32_t>(F.integer(n["l0_trigger"], P + ".l0_trigger", 1, 64));
    if (n["l0_stop"]) c.l0_stop = static_cast<std::uint32_t>(F.integer(n["l0_stop"], P + ".l0_stop", 1, 1000));
    if (c.l0_stop < c.l0_trigger)
        F.fail(n["l0_stop"], P + ".l0_stop", "below l0_trigger: writes would stop before L0 compacts");
    if (n["compaction_threads"])
        c.compaction_threads = static_cast<std::uint32_t>(F.integer(n["compaction_threads"], P + ".compaction_threads", 1, 64));
    if (n["sync"]) c.sync_wal = F.boolean(n["sync"], P + ".sync");
}

void load_workload(const Fields &F, const YAML::Node &n, const std::string &P, const std::string &file, LsmSection &L)
{
    bg::lsm::RunSpec &r = L.spec;
    F.check_keys(n, P, {"kind", "read_ratio", "intensity", "amplitude", "period_ms", "threads", "file", "time_scale",
                        "key_ranges", "key_dist_a", "key_dist_b"});
    if (n["kind"])
        r.workload.kind = F.choice(n["kind"], P + ".kind",
                                   {"ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f", "ycsb-uniform", "mixgraph",
                                    "random-read", "replay"});
    if (r.workload.kind == "replay") {
        for (const char *k : {"read_ratio", "intensity", "amplitude", "period_ms", "threads", "key_ranges", "key_dist_a", "key_dist_b"})
            if (n[k])
                F.fail(n[k], P + "." + k, "not for kind: replay (the trace gives every I/O and its thread)");
        if (!n["file"])
            F.fail(n, P + ".file", "missing: kind: replay needs the trace file");
        L.trace_file = F.string(n["file"], P + ".file");
        // Relative to the scenario file, so a scenario runs from any working directory.
        const std::size_t slash = file.rfind('/');
        if (!L.trace_file.empty() && L.trace_file[0] != '/' && slash != std::string::npos)
            L.trace_file = file.substr(0, slash + 1) + L.trace_file;
        try {
            L.trace = std::make_shared<const std::vector<bg::lsm::TraceRecord>>(bg::lsm::read_trace(L.trace_file));
        } catch (const std::runtime_error &e) {
            F.fail(n["file"], P + ".file", e.what());
        }
        if (L.trace->empty())
            F.fail(n["file"], P + ".file", "'" + L.trace_file + "' holds no I/O");
        if (n["time_scale"]) L.time_scale = F.number(n["time_scale"], P + ".time_scale", 0, 1e9);
        return;
    }
    for (const char *k : {"file", "time_scale"})
        if (n[k])
            F.fail(n[k], P + "." + k, "only for kind: replay");
    if (n["read_ratio"]) {
        if (r.workload.kind != "mixgraph")
            F.fail(n["read_ratio"], P + ".read_ratio", "only for kind: mixgraph (YCSB fixes its mix)");
        r.workload.read_ratio = F.number(n["read_ratio"], P + ".read_ratio", 0, 1);
    }
    // Mixgraph's key model (db_bench keyrange_num, key_dist_a/b; docs/lsm.md).
    for (const char *k : {"key_ranges", "key_dist_a", "key_dist_b"})
        if (n[k] && r.workload.kind != "mixgraph")
            F.fail(n[k], P + "." + k, "only for kind: mixgraph");
    if (n["key_ranges"])
        r.workload.key_ranges = static_cast<std::uint32_t>(F.integer(n["key_ranges"], P + ".key_ranges", 1, 1000000));
    if (n["key_ranges"] && r.workload.key_ranges > r.lsm.keys)
        F.fail(n["key_ranges"], P + ".key_ranges", "more ranges than lsm.tree.keys");
    if (n["key_dist_a"]) r.workload.key_dist_a = F.number(n["key_dist_a"], P + ".key_dist_a", 0, 1);
    if (n["key_dist_b"]) r.workload.key_dist_b = F.number(n["key_dist_b"], P + ".key_dist_b", 0, 100);
    if ((r.workload.key_dist_a == 0) != (r.workload.key_dist_b == 0))
        F.fail(n[n["key_dist_a"] ? "key_dist_a" : "key_dist_b"], P + (n["key_dist_a"] ? ".key_dist_a" : ".key_dist_b"),
               "key_dist_a and key_dist_b: both 0 (uniform inside a range) or both > 0");
    if (n["intensity"]) r.intensity = F.number(n["intensity"], P + ".intensity", 1e-6, 1000);
    if (n["amplitude"]) r.workload.amplitude = F.number(n["amplitude"], P + ".amplitude", 0, 1);
    if (n["period_ms"])
        r.workload.period = static_cast<bg::lsm::Time>(std::llround(F.number(n["period_ms"], P + ".period_ms", 1, 1e9) * 1e6));
    if (n["threads"]) r.threads = static_cast<std::uint32_t>(F.integer(n["threads"], P + ".threads", 1, 4096));
}

}  // namespace

void load_lsm_section(const YAML::Node &n, const std::string &file, Scenario &s)
{
    const Fields F(file);
    const std::string P = "lsm";
    F.check_keys(n, P, {"tenant", "segment_size", "segments", "volume", "store", "calcspar", "cache_share", "tree", "workload"});
    auto sec = std::make_shared<LsmSection>();
    LsmSection &L = *sec;
    L.line = n.Mark().line + 1;
    bg::lsm::RunSpec &r = L.spec;
    if (n["tenant"]) {
        L.tenant = F.string(n["tenant"], P + ".tenant");
        bool found = false;
        for (std::size_t i = 0; i < s.tenants.size() && !found; i++)
            if (s.tenants[i].name == L.tenant) {
                L.tenant_index = static_cast<std::uint32_t>(i);
                found = true;
            }
        if (!found)
            F.fail(n["tenant"], P + ".tenant", "no tenant is named '" + L.tenant + "'");
        if (n["volume"])
            F.fail(n["volume"], P + ".volume", "not with lsm.tenant: the store's volume is that tenant's queue");
        if (n["segment_size"]) L.segment_bytes = F.bytes(n["segment_size"], P + ".segment_size");
        if (n["segments"])
            L.segments = static_cast<std::uint32_t>(F.integer(n["segments"], P + ".segments", 1, 1u << BG_SEGMENT_BITS));
    } else {
        for (const char *k : {"segment_size", "segments"})
            if (n[k])
                F.fail(n[k], P + "." + k, "only with lsm.tenant (the offset -> segment map of its I/O)");
        std::string type = "io2";
        std::uint32_t iops = 0, size_gb = 100;
        const YAML::Node v = n["volume"];
        if (v) {
            F.check_keys(v, P + ".volume", {"type", "iops", "size_gb"});
            if (v["type"]) type = F.choice(v["type"], P + ".volume.type", {"gp2", "gp3", "io1", "io2"});
            if (v["iops"]) iops = static_cast<std::uint32_t>(F.integer(v["iops"], P + ".volume.iops", 1, 10'000'000));
            if (v["size_gb"]) size_gb = static_cast<std::uint32_t>(F.integer(v["size_gb"], P + ".volume.size_gb", 1, 1'000'000));
        }
        try {
            r.volume = bg::lsm::volume_preset(type, iops, size_gb);
        } catch (const std::invalid_argument &e) {
            F.fail(v["iops"] ? v["iops"] : v, P + ".volume", e.what());
        }
    }
    if (n["store"]) r.store = F.choice(n["store"], P + ".store", {"calcspar", "rocksdb", "nocache"});
    if (const YAML::Node c = n["calcspar"]) {
        if (r.store != "calcspar")
            F.fail(c, P + ".calcspar", "only for store: calcspar");
        F.check_keys(c, P + ".calcspar", {"cache", "allocator", "token_slices"});
        if (c["cache"]) r.cache = F.choice(c["cache"], P + ".calcspar.cache", {"fa", "passive", "prefetch"});
        if (c["allocator"])
            r.allocator = F.choice(c["allocator"], P + ".calcspar.allocator", {"twa", "na", "sa", "da", "twa-reserve"});
        if (c["token_slices"])
            r.token_slices = static_cast<std::uint32_t>(F.integer(c["token_slices"], P + ".calcspar.token_slices", 1, 1000));
    }
    if (n["cache_share"]) {
        if (r.store == "nocache")
            F.fail(n["cache_share"], P + ".cache_share", "store: nocache has no block cache");
        r.cache_share = F.number(n["cache_share"], P + ".cache_share", 0, 1);
    }
    if (n["tree"]) load_tree(F, n["tree"], P + ".tree", r.lsm);
    if (n["workload"]) load_workload(F, n["workload"], P + ".workload", file, L);
    if (L.trace) {
        if (L.tenant.empty())
            F.fail(n["workload"]["kind"], P + ".workload.kind",
                   "replay needs lsm.tenant (burstgate-lsm replay runs a trace on a cloud volume)");
        for (const char *k : {"tree", "cache_share"})
            if (n[k])
                F.fail(n[k], P + "." + k, "not with workload kind: replay (the trace is the store's I/O)");
        if (r.store == "nocache")
            F.fail(n["store"], P + ".store",
                   "not with workload kind: replay: the trace passed the recorded RocksDB's own cache; rocksdb "
                   "replays it as recorded, calcspar through Calcspar's allocator");
        if (n["calcspar"] && n["calcspar"]["cache"])
            F.fail(n["calcspar"]["cache"], P + ".calcspar.cache", "not with workload kind: replay (no cache of ours)");
    }

    if (!L.tenant.empty()) {
        Tenant &t = s.tenants[L.tenant_index];
        const std::string tp = "tenants[" + std::to_string(L.tenant_index) + "]";
        if (!t.wl.sizes.empty() || t.wl.trace)
            throw ScenarioError(file + ":" + std::to_string(t.line) + ": " + tp +
                                ".workload: tenant '" + t.name + "' is lsm.tenant; the store's I/O is its workload, remove this one");
        const double paid = std::floor(t.base.iops);
        if (paid < 1 || paid > 4e9)
            throw ScenarioError(file + ":" + std::to_string(t.line) + ": " + tp +
                                ".base.iops: the store's paid IOPS (Calcspar's budget, the workload's unit) must be >= 1");
        // The sizes the store issues (4 KiB blocks, 256 KiB WAL / flush / compaction I/Os), read
        // and write: simulate() then refuses a provisioning that could never admit one.
        t.wl.sizes = {{bg::lsm::kPageBytes, 0.5}, {bg::lsm::kEbsBlockBytes, 0.5}};
        t.wl.read_share = 0.5;
        t.wl.closed = false;
        t.wl.rate_iops = 0;
        t.wl.segments = L.segments;
    }
    s.lsm = sec;
    check_tenant_workloads(s);
}

void check_tenant_workloads(const Scenario &s)
{
    for (std::size_t i = 0; i < s.tenants.size(); i++) {
        const Tenant &t = s.tenants[i];
        if (t.wl.trace || !t.wl.sizes.empty())
            continue;
        throw ScenarioError(s.file + ":" + std::to_string(t.line) + ": tenants[" + std::to_string(i) +
                            "].workload: missing" + (s.lsm ? " (only the tenant lsm.tenant names has none)" : ""));
    }
}

// ---------------------------------------------------------------------------------------------

namespace {

// The burstgate-scheduled disk: the store's I/O leaves through `out` during run_at, and comes
// back through complete().
class AgentVolume final : public bg::lsm::Volume {
public:
    AgentVolume(bg::lsm::EventLoop &loop, std::uint32_t paid, bg::lsm::Time measure_from)
        : loop_(loop), paid_(paid), measure_from_(measure_from)
    {
    }
    void submit(const bg::lsm::IoRequest &io, Completion done) override
    {
        if (!out_)
            throw std::logic_error("AgentVolume::submit outside LsmTenant::run_at");
        std::uint32_t cookie;
        if (!free_.empty()) {
            cookie = free_.back();
            free_.pop_back();
            slots_[cookie] = std::move(done);
        } else {
            cookie = static_cast<std::uint32_t>(slots_.size());
            slots_.push_back(std::move(done));
        }
        if (loop_.now() >= measure_from_)
            tokens_ += bg::lsm::io_tokens(io.bytes);
        out_->push_back({io.offset, io.bytes, io.op == bg::lsm::IoOp::write, cookie});
    }
    std::uint32_t paid_iops() const override { return paid_; }
    bg::lsm::EventLoop &loop() override { return loop_; }
    std::uint64_t tokens_measured() const { return tokens_; }

    void set_out(std::vector<LsmTenant::Io> *out) { out_ = out; }
    void complete(std::uint32_t cookie, bg::lsm::Time t)
    {
        if (cookie >= slots_.size() || !slots_[cookie])
            throw std::logic_error("AgentVolume::complete: unknown or finished I/O " + std::to_string(cookie));
        Completion done = std::move(slots_[cookie]);
        slots_[cookie] = nullptr;
        free_.push_back(cookie);
        loop_.at(t, std::move(done));
    }

private:
    bg::lsm::EventLoop &loop_;
    std::uint32_t paid_;
    bg::lsm::Time measure_from_;
    std::uint64_t tokens_ = 0;
    std::vector<LsmTenant::Io> *out_ = nullptr;
    std::vector<Completion> slots_;
    std::vector<std::uint32_t> free_;
};

bg::lsm::RunSpec run_spec(const Scenario &sc, std::uint64_t seed, std::uint64_t duration_ns, std::uint64_t warmup_ns)
{
    bg::lsm::RunSpec r = sc.lsm->spec;
    r.duration = static_cast<bg::lsm::Time>(duration_ns);
    r.warmup = static_cast<bg::lsm::Time>(warmup_ns);
    r.seed = seed;
    return r;
}

std::shared_ptr<LsmResult> describe(const LsmSection &L, std::uint32_t paid)
{
    auto res = std::make_shared<LsmResult>();
    res->store = L.spec.store;
    res->cache = L.trace ? "none" : L.spec.store == "calcspar" ? L.spec.cache : L.spec.store == "rocksdb" ? "lru" : "none";
    res->allocator = L.spec.store == "calcspar" ? L.spec.allocator : "none";
    res->workload = L.spec.workload.kind;
    res->volume = L.tenant.empty() ? L.spec.volume.type : "tenant " + L.tenant;
    res->paid_iops = paid;
    return res;
}

}  // namespace

struct LsmTenant::Impl {
    bg::lsm::EventLoop loop;
    AgentVolume volume;
    const LsmSection &sec;
    bg::lsm::Time duration, warmup;
    std::unique_ptr<bg::lsm::Experiment> exp;                    // the store
    std::unique_ptr<bg::lsm::CongestionAwareAllocator> allocator;  // replay through Calcspar
    std::unique_ptr<bg::lsm::Replayer> replayer;                 // replay
    Impl(const LsmSection &s, std::uint32_t paid, bg::lsm::Time d, bg::lsm::Time w)
        : volume(loop, paid, w), sec(s), duration(d), warmup(w)
    {
    }
};

LsmTenant::LsmTenant(const Scenario &sc, std::uint64_t seed, std::uint64_t duration_ns, std::uint64_t warmup_ns)
{
    if (!sc.lsm || sc.lsm->tenant.empty())
        throw std::logic_error("LsmTenant needs a scenario whose lsm: names a tenant");
    const auto paid = static_cast<std::uint32_t>(std::floor(sc.tenants[sc.lsm->tenant_index].base.iops));
    impl_ = std::make_unique<Impl>(*sc.lsm, paid, static_cast<bg::lsm::Time>(duration_ns),
                                   static_cast<bg::lsm::Time>(warmup_ns));
    try {
        Impl &m = *impl_;
        if (sc.lsm->trace) {
            bg::lsm::Volume *io = &m.volume;
            if (sc.lsm->spec.store == "calcspar") {
                using P = bg::lsm::CongestionAwareAllocator::Policy;
                const std::string &a = sc.lsm->spec.allocator;
                const P pol = a == "na" ? P::no_allocation : a == "sa" ? P::static_share : a == "da" ? P::dynamic_share
                              : a == "twa-reserve" ? P::time_window_reserve : P::time_window;
                m.allocator = std::make_unique<bg::lsm::CongestionAwareAllocator>(m.volume, pol, 0, sc.lsm->spec.token_slices);
                io = m.allocator.get();
            }
            m.replayer = std::make_unique<bg::lsm::Replayer>(*sc.lsm->trace, m.loop, *io, sc.lsm->time_scale, m.warmup);
        } else {
            m.exp = std::make_unique<bg::lsm::Experiment>(run_spec(sc, seed, duration_ns, warmup_ns), m.loop, &m.volume);
        }
    } catch (const std::invalid_argument &e) {
        throw ScenarioError(sc.file + ":" + std::to_string(sc.lsm->line) + ": lsm: " + e.what());
    }
}

LsmTenant::~LsmTenant() = default;

std::uint64_t LsmTenant::next_time() const
{
    const bg::lsm::Time t = impl_->loop.next_time();
    return t == std::numeric_limits<bg::lsm::Time>::max() ? UINT64_MAX : static_cast<std::uint64_t>(t);
}

void LsmTenant::run_at(std::uint64_t t, std::vector<Io> &out)
{
    impl_->volume.set_out(&out);
    impl_->loop.run_until(static_cast<bg::lsm::Time>(t));
    impl_->volume.set_out(nullptr);
}

void LsmTenant::complete(std::uint32_t cookie, std::uint64_t t)
{
    impl_->volume.complete(cookie, static_cast<bg::lsm::Time>(t));
}

std::shared_ptr<const LsmResult> LsmTenant::finish()
{
    Impl &m = *impl_;
    auto res = describe(m.sec, m.volume.paid_iops());
    if (m.exp) {
        res->run = m.exp->result();
        return res;
    }
    bg::lsm::RunResult &x = res->run;
    x.ops = m.replayer->latency();
    const double measured_s = static_cast<double>(m.duration - m.warmup) / 1e9;
    x.throughput = x.ops.count("all") ? static_cast<double>(x.ops.at("all").count) / measured_s : 0;
    x.volume_iops = static_cast<double>(m.volume.tokens_measured()) / measured_s;
    if (m.allocator)
        for (int q = 0; q < bg::lsm::kPriorities; ++q)
            x.allocator_max_wait_us[q] =
                static_cast<double>(m.allocator->max_wait_ns(static_cast<bg::lsm::Priority>(q))) / 1e3;
    x.events = m.loop.events_run();
    return res;
}

std::shared_ptr<const LsmResult> run_lsm_on_cloud_volume(const Scenario &sc, std::uint64_t seed)
{
    const bg::lsm::RunSpec spec = run_spec(sc, seed, sc.duration_ns, sc.warmup_ns);
    bg::lsm::EventLoop loop;
    auto res = describe(*sc.lsm, spec.volume.paid_iops);
    try {
        bg::lsm::Experiment exp(spec, loop);
        loop.run_until(spec.warmup);
        exp.mark_warmup();
        loop.run_until(spec.duration);
        res->run = exp.result();
    } catch (const std::invalid_argument &e) {
        throw ScenarioError(sc.file + ":" + std::to_string(sc.lsm->line) + ": lsm: " + e.what());
    }
    return res;
}

std::string lsm_report_json(const LsmResult &r)
{
    auto num = [](double v, int decimals = 3) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        return std::string(buf);
    };
    const bg::lsm::RunResult &x = r.run;
    std::string s = "  \"lsm\": {\"store\": \"" + r.store + "\", \"cache\": \"" + r.cache + "\", \"allocator\": \"" +
                    r.allocator + "\", \"workload\": \"" + r.workload + "\", \"volume\": \"" + r.volume +
                    "\", \"paid_iops\": " + std::to_string(r.paid_iops) + ",\n    \"lat_us\": {";
    bool first = true;
    for (const auto &[op, l] : x.ops) {
        s += std::string(first ? "" : ",") + "\n      \"" + op + "\": {\"count\": " + std::to_string(l.count) +
             ", \"avg\": " + num(l.avg_us) + ", \"p50\": " + num(l.p50_us) + ", \"p99\": " + num(l.p99_us) +
             ", \"p999\": " + num(l.p999_us) + ", \"max\": " + num(l.max_us) + "}";
        first = false;
    }
    s += "},\n    \"response_us\": {\"count\": " + std::to_string(x.response.count) + ", \"avg\": " +
         num(x.response.avg_us) + ", \"p99\": " + num(x.response.p99_us) + "},\n";
    s += "    \"throughput\": " + num(x.throughput, 1) + ", \"offered\": " + num(x.offered, 1) +
         ", \"volume_iops\": " + num(x.volume_iops, 1) + ", \"hit_ratio\": " + num(x.hit_ratio, 4) +
         ", \"data_hit_ratio\": " + num(x.data_hit_ratio, 4) + ", \"cache_pages\": " + std::to_string(x.cache_pages) +
         ",\n    \"backlog\": " + std::to_string(x.backlog) + ", \"flushes\": " + std::to_string(x.lsm.flushes) +
         ", \"compactions\": " + std::to_string(x.lsm.compactions) + ", \"write_stalls\": " +
         std::to_string(x.lsm.write_stalls) + ", \"wal_ios\": " + std::to_string(x.lsm.wal_ios) +
         ", \"volume_fast\": " + std::to_string(x.volume.fast) + ", \"volume_overdraft\": " +
         std::to_string(x.volume.overdraft) + ", \"volume_waited\": " + std::to_string(x.volume.waited) +
         ",\n    \"timeline\": [";
    // Per simulated second from 0 (the warm-up's too): operations completed, their average and
    // longest latency in us -- what a latency-over-time figure (BurstCBS Fig. 29) plots.
    for (std::size_t i = 0; i < x.timeline.size(); ++i) {
        const auto &t = x.timeline[i];
        s += std::string(i ? ", " : "") + "[" + std::to_string(t.completed) + ", " + num(t.avg_us) + ", " +
             num(t.max_us) + "]";
    }
    s += "]}";
    return s;
}

}  // namespace bg::sim
