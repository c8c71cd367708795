// The Calcspar figure reproductions; see figures.hpp.
#include "burstgate/lsm/figures.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "burstgate/lsm/cache.hpp"
#include "burstgate/lsm/event_loop.hpp"
#include "burstgate/lsm/lsm_store.hpp"
#include "burstgate/lsm/workload.hpp"

namespace bg::lsm {

FigureRunner::FigureRunner(RunSpec base, Progress progress, std::function<void()> done)
    : base_(std::move(base)), progress_(std::move(progress)), done_(std::move(done))
{
}

const RunResult& FigureRunner::go(const std::string& label, RunSpec s, int index, int total)
{
    if (progress_) {
        s.progress = [this, &label, index, total](double f) { progress_(label, index, total, f); };
    }
    runs_.push_back(LabelledRun{label, s, run(s)});
    if (done_) done_();
    return runs_.back().result;
}

std::vector<Fig3Second> fig3(const VolumeSpec& spec, std::uint64_t seed)
{
    const std::uint32_t a = spec.paid_iops;
    const std::vector<double> pattern = {1.0, 1.6, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0,
                                         1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0};
    EventLoop loop;
    CloudVolume vol(loop, spec, seed);
    struct Sec {
        std::uint64_t n = 0, slow = 0;
        double sum = 0, max = 0;
    };
    std::vector<Sec> secs(pattern.size());
    // Each second the thread sends that second's quota back to back, one I/O at a time
    // (synchronous), then idles until the next second.
    std::vector<std::uint64_t> sent(pattern.size(), 0);
    std::function<void(std::size_t)> issue = [&](std::size_t s) {
        if (s >= pattern.size()) return;
        const Time t = loop.now();
        if (static_cast<double>(sent[s]) >= pattern[s] * a || t >= (static_cast<Time>(s) + 1) * kSec) {
            const std::size_t next = std::max<std::size_t>(s + 1, static_cast<std::size_t>(t / kSec));
            loop.at(std::max(t, static_cast<Time>(next) * kSec), [&, next] { issue(next); });
            return;
        }
        ++sent[s];
        vol.submit(IoRequest{}, [&, t, s] {
            const double us = static_cast<double>(loop.now() - t) / 1e3;
            secs[s].n++;
            secs[s].sum += us;
            secs[s].max = std::max(secs[s].max, us);
            if (us > 500) secs[s].slow++;
            issue(s);
        });
    };
    issue(0);
    loop.run_until(static_cast<Time>(pattern.size()) * kSec + 5 * kSec);
    std::vector<Fig3Second> out;
    for (std::size_t s = 0; s < secs.size(); ++s) {
        Fig3Second x;
        x.submit_per_s = pattern[s] * a;
        x.done = secs[s].n;
        x.slow = secs[s].slow;
        x.avg_us = secs[s].n ? secs[s].sum / static_cast<double>(secs[s].n) : 0.0;
        x.max_us = secs[s].max;
        out.push_back(x);
    }
    return out;
}

std::vector<Fig4Row> fig4(const VolumeSpec& spec, std::uint64_t seed)
{
    const std::uint32_t a = spec.paid_iops;
    std::vector<Fig4Row> out;
    for (std::uint32_t l : {1u, 2u, 4u, 8u, 16u, 32u}) {
        double res[2];
        for (int above = 0; above < 2; ++above) {
            EventLoop loop;
            CloudVolume vol(loop, spec, seed + l);
            double sum = 0;
            std::uint64_t n = 0;
            const Time pace = above ? 0 : static_cast<Time>(kSec * l / (0.8 * a));
            std::function<void(Time)> thread = [&](Time t) {
                loop.at(t, [&, t] {
                    vol.submit(IoRequest{}, [&, t] {
                        if (t >= 5 * kSec) {
                            sum += static_cast<double>(loop.now() - t);
                            ++n;
                        }
                        thread(std::max(loop.now(), t + pace));
                    });
                });
            };
            for (std::uint32_t i = 0; i < l; ++i) thread(static_cast<Time>(i) * (pace / l));
            loop.run_until(20 * kSec);
            res[above] = n ? sum / static_cast<double>(n) / 1e3 : 0;
        }
        out.push_back(Fig4Row{l, res[0], res[1], 1e6 * l / a});
    }
    return out;
}

const RunResult& fig7(FigureRunner& r)
{
    RunSpec s = r.base();
    s.store = "raw";
    s.threads = 1;
    s.workload.kind = "random-read";
    s.warmup = 0;
    return r.go("raw io2, 1 thread", s, 1, 1);
}

Comparison compare_layout(const std::string& figure)
{
    Comparison c;
    c.stores = figure == "fig14" ? std::vector<std::string>{"calcspar", "rocksdb", "nocache"}
                                 : std::vector<std::string>{"calcspar", "rocksdb"};
    c.op = "read";
    if (figure == "fig18") c.key_name = "threads";
    else if (figure == "fig14") c.key_name = "read";
    else if (figure == "fig16") {
        c.key_name = "workload";
        c.op = "all";
    } else if (figure == "fig21") c.key_name = "cache";
    else throw std::invalid_argument("no comparison figure '" + figure + "'");
    return c;
}

Comparison compare(FigureRunner& r, const std::string& figure)
{
    Comparison c = compare_layout(figure);
    std::vector<std::string> keys;
    std::function<void(RunSpec&, const std::string&)> apply;
    if (figure == "fig18") {
        keys = {"1", "2", "5", "10", "20"};
        apply = [](RunSpec& s, const std::string& k) { s.threads = static_cast<std::uint32_t>(std::stoul(k)); };
    } else if (figure == "fig14") {
        keys = {"0.5", "0.6", "0.7", "0.8", "0.9", "1.0"};
        apply = [](RunSpec& s, const std::string& k) { s.workload.read_ratio = std::stod(k); };
    } else if (figure == "fig16") {
        keys = {"ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"};
        apply = [](RunSpec& s, const std::string& k) { s.workload.kind = k; };
    } else {  // fig21
        keys = {"0.001", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2"};
        apply = [](RunSpec& s, const std::string& k) { s.cache_share = std::stod(k); };
    }
    const int total = static_cast<int>(keys.size() * c.stores.size());
    int i = 0;
    for (const auto& k : keys) {
        for (const auto& st : c.stores) {
            RunSpec s = r.base();
            s.store = st;
            apply(s, k);
            const RunResult& x = r.go(figure + " " + k + " " + st, s, ++i, total);
            const auto it = x.ops.find(c.op);
            c.rows.push_back(CompareRow{k, st, it == x.ops.end() ? LatencySummary{} : it->second, x.throughput,
                                        x.volume_iops, x.hit_ratio});
        }
    }
    return c;
}

std::vector<Fig19Row> fig19(FigureRunner& r)
{
    std::vector<Fig19Row> out;
    int i = 0;
    for (const std::string a : {"na", "sa", "da", "twa"}) {
        RunSpec s = r.base();
        s.allocator = a;
        s.workload.read_ratio = 0.05;
        const RunResult& x = r.go("fig19 " + a, s, ++i, 4);
        const auto g = x.ops.find("read");
        out.push_back(Fig19Row{a, x.throughput, x.ops.at("all"), g == x.ops.end() ? 0.0 : g->second.p99_us,
                               x.lsm.compactions, x.lsm.write_stalls});
    }
    return out;
}

std::vector<Headroom> headroom(const RunSpec& spec, const std::vector<double>& shares)
{
    EventLoop loop;
    CloudVolume volume(loop, spec.volume, 1);
    NoCache none;
    LsmConfig cfg = spec.lsm;
    cfg.seed = spec.seed;
    LsmStore store(loop, volume, none, cfg);
    Workload wl(spec.workload, cfg.keys);
    Rng rng(spec.seed ^ 0x4ead);
    const std::uint64_t data_bytes = cfg.keys * (cfg.key_bytes + cfg.value_bytes);
    std::vector<std::uint64_t> caps;
    std::vector<std::unique_ptr<LruBlockCache>> lrus;
    for (double sh : shares) {
        caps.push_back(static_cast<std::uint64_t>(sh * static_cast<double>(data_bytes) / kPageBytes));
        lrus.push_back(std::make_unique<LruBlockCache>(caps.back()));
    }
    std::vector<std::uint64_t> hits(shares.size(), 0);
    std::unordered_map<std::uint64_t, std::uint64_t> freq;
    std::uint64_t reads = 0;
    for (int i = 0; i < 400000; ++i) {
        const Op op = wl.next(rng, store.latest_key());
        std::vector<std::uint64_t> plan;
        if (op.type == OpType::read || op.type == OpType::rmw) plan = store.get_plan(op.key);
        else if (op.type == OpType::scan) plan = store.scan_plan(op.key, op.scan_len);
        for (std::uint64_t p : plan) {
            ++reads;
            ++freq[p];
            for (std::size_t c = 0; c < lrus.size(); ++c) {
                if (lrus[c]->lookup(p)) ++hits[c];
                else lrus[c]->fill(p);
            }
        }
    }
    std::vector<std::uint64_t> f;
    std::unordered_map<std::uint64_t, std::uint64_t> per_block;
    for (const auto& [p, n] : freq) {
        f.push_back(n);
        per_block[p * kPageBytes / kEbsBlockBytes] += n;
    }
    std::sort(f.rbegin(), f.rend());
    std::vector<std::uint64_t> b;
    for (const auto& [blk, n] : per_block) b.push_back(n);
    std::sort(b.rbegin(), b.rend());
    const auto ratio = [&](std::uint64_t x) { return reads ? static_cast<double>(x) / static_cast<double>(reads) : 0.0; };
    std::vector<Headroom> out;
    for (std::size_t c = 0; c < shares.size(); ++c) {
        Headroom h;
        h.share = shares[c];
        h.reads = reads;
        h.pages = freq.size();
        h.lru = ratio(hits[c]);
        std::uint64_t top = 0;
        for (std::size_t i = 0; i < f.size() && i < caps[c]; ++i) top += f[i];
        h.page_opt = ratio(top);
        top = 0;
        const std::uint64_t blocks = caps[c] / (kEbsBlockBytes / kPageBytes);
        for (std::size_t i = 0; i < b.size() && i < blocks; ++i) top += b[i];
        h.block_opt = ratio(top);
        out.push_back(h);
    }
    return out;
}

Fig20 fig20(FigureRunner& r)
{
    Fig20 out;
    int i = 0;
    for (const std::string wl : {"ycsb-b", "mixgraph"}) {
        Fig20Row row;
        row.workload = wl;
        int j = 0;
        for (const std::string c : {"fa", "passive", "prefetch"}) {
            RunSpec s = r.base();
            s.workload.kind = wl;
            s.cache = c;
            const RunResult& x = r.go("fig20 " + wl + " " + c, s, ++i, 6);
            row.hit[j] = x.hit_ratio;
            row.data_hit[j++] = x.data_hit_ratio;
        }
        out.rows.push_back(row);
    }
    for (const std::string wl : {"ycsb-b", "mixgraph"}) {
        RunSpec s = r.base();
        s.workload.kind = wl;
        const std::vector<double> shares =
            wl == "mixgraph" ? std::vector<double>{0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2} : std::vector<double>{0.02};
        for (const Headroom& h : headroom(s, shares)) out.headroom.push_back(Fig20HeadroomRow{wl, h});
    }
    return out;
}

std::vector<Fig18LoadRow> fig18_load(FigureRunner& r)
{
    const std::vector<double> loads = {0.6, 0.7, 0.8, 0.9, 1.0};
    const int total = static_cast<int>(loads.size()) * 2 * 3;
    std::vector<Fig18LoadRow> out;
    int i = 0;
    for (double load : loads) {
        for (std::uint32_t t : {1u, 20u}) {
            for (const std::string st : {"calcspar", "calcspar+borrow", "rocksdb"}) {
                RunSpec s = r.base();
                s.intensity = load;
                s.threads = t;
                s.store = st == "rocksdb" ? "rocksdb" : "calcspar";
                s.stabilizer = st == "calcspar+borrow" ? "borrow" : "strict";
                char label[96];
                std::snprintf(label, sizeof label, "fig18-load %.2f %u %s", load, t, st.c_str());
                const RunResult& x = r.go(label, s, ++i, total);
                const auto it = x.ops.find("read");
                out.push_back(Fig18LoadRow{load, t, st, it == x.ops.end() ? LatencySummary{} : it->second,
                                           x.throughput > 0 ? x.volume_iops / x.throughput : 0.0, x.backlog,
                                           x.allocator_max_wait_us[0] / 1e3});
            }
        }
    }
    return out;
}

std::vector<Fig18CacheRow> fig18_cache(FigureRunner& r)
{
    const std::vector<double> shares = {0.02, 0.04};
    const std::vector<std::uint32_t> threads = {1, 10, 20};
    const int total = static_cast<int>(shares.size() * threads.size()) * 3;
    std::vector<Fig18CacheRow> out;
    int i = 0;
    for (double share : shares) {
        for (std::uint32_t t : threads) {
            for (const std::string st : {"calcspar", "calcspar+oracle", "rocksdb"}) {
                RunSpec s = r.base();
                s.cache_share = share;
                s.threads = t;
                s.store = st == "rocksdb" ? "rocksdb" : "calcspar";
                if (st == "calcspar+oracle") s.cache = "oracle";
                char label[96];
                std::snprintf(label, sizeof label, "fig18-cache %.2f %u %s", share, t, st.c_str());
                const RunResult& x = r.go(label, s, ++i, total);
                const auto it = x.ops.find("read");
                Fig18CacheRow row{share, t, st, it == x.ops.end() ? LatencySummary{} : it->second,
                                  x.throughput > 0 ? x.volume_iops / x.throughput : 0.0, x.hit_ratio, 0.0,
                                  x.volume.overdraft};
                const auto all = x.ops.find("all");
                if (all != x.ops.end() && all->second.count) {
                    row.wait_per_op_us = x.allocator_wait_s[0] * 1e6 / static_cast<double>(all->second.count);
                }
                out.push_back(row);
            }
        }
    }
    return out;
}

std::vector<Fig20LoadRow> fig20_load(FigureRunner& r)
{
    const std::vector<double> loads = {0.3, 0.5, 0.7, 0.8, 0.9, 1.0};
    const int total = static_cast<int>(loads.size()) * 3;
    std::vector<Fig20LoadRow> out;
    int i = 0;
    for (double load : loads) {
        Fig20LoadRow row;
        row.load = load;
        int j = 0;
        for (const std::string c : {"fa", "passive", "prefetch"}) {
            RunSpec s = r.base();
            s.intensity = load;
            s.cache = c;
            char label[64];
            std::snprintf(label, sizeof label, "fig20-load %.2f %s", load, c.c_str());
            const RunResult& x = r.go(label, s, ++i, total);
            if (j == 0) {
                row.heavy = x.heavy_share;
                row.backlog = x.backlog;
            }
            row.hit[j] = x.hit_ratio;
            row.data_hit[j++] = x.data_hit_ratio;
        }
        out.push_back(row);
    }
    return out;
}

}  // namespace bg::lsm
