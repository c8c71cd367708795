// The segment monitor, load balancer and buffer pool in Python, for the RTL testbenches. Each
// class also has a `run` that replays a whole ordered event log in one call (kinds and
// arguments as equally long integer sequences), so a testbench checking 1e5 events pays the
// Python call overhead once; the event kinds are class attributes (e.g. LoadBalancer.DISPATCH).
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "burstgate/model/buffer_pool.hpp"
#include "burstgate/model/load_balancer.hpp"
#include "burstgate/model/segment_monitor.hpp"
#include "bind.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using Ints = std::vector<std::int64_t>;

void check_lengths(const char *where, std::size_t a, std::size_t b)
{
    if (a != b)
        throw nb::value_error((std::string(where) + ": sequences differ in length (" + std::to_string(a) + ", " +
                               std::to_string(b) + ")")
                                  .c_str());
}

// An argument as the unsigned type the model takes; a value that does not fit is the
// testbench's bug, named by at_event with its position in the log.
template <typename T>
T arg(std::int64_t v)
{
    if (v < 0 || static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(static_cast<T>(~T{0})))
        throw std::invalid_argument("argument " + std::to_string(v) + " out of range");
    return static_cast<T>(v);
}

// Runs one event, re-raising a model exception as ValueError naming the event's position.
template <typename F>
void at_event(const char *where, std::size_t n, F &&f)
{
    try {
        f();
    } catch (const std::exception &e) {
        throw nb::value_error((std::string(where) + ": event " + std::to_string(n) + ": " + e.what()).c_str());
    }
}

// --- segment monitor -------------------------------------------------------------------------
// kSegReoffer: an I/O on_io does not count (the descriptor's reoffer bit). An IO's or REOFFER's
// argument is segment | size << 16 (size in bytes, 0..2**32-1).
enum SegEvent : std::int64_t {
    kSegIo = 0, kSegTick = 1, kSegSetThreshold = 2, kSegSetSteady = 3, kSegReoffer = 4, kSegSetUnit = 5
};

std::vector<bool> seg_run(bg::SegmentMonitor &sm, const Ints &kinds, const Ints &args)
{
    check_lengths("SegmentMonitor.run", kinds.size(), args.size());
    std::vector<bool> hot;
    for (std::size_t n = 0; n < kinds.size(); n++) {
        at_event("SegmentMonitor.run", n, [&] {
            switch (kinds[n]) {
            case kSegIo:
            case kSegReoffer:
            {
                const std::int64_t a = args[n];
                if (a < 0 || a >= (std::int64_t{1} << 48))
                    throw std::invalid_argument("segment | size << 16 out of range: " + std::to_string(a));
                hot.push_back(sm.on_io(static_cast<std::uint16_t>(a & 0xFFFF), kinds[n] == kSegIo,
                                       static_cast<std::uint32_t>(a >> 16)));
                break;
            }
            case kSegSetUnit:
                sm.set_unit(arg<std::uint32_t>(args[n]));
                break;
            case kSegTick:
                sm.tick();
                break;
            case kSegSetThreshold:
                sm.set_hot_threshold(arg<std::uint16_t>(args[n]));
                break;
            case kSegSetSteady:
                sm.set_steady_intervals(arg<std::uint32_t>(args[n]));
                break;
            default:
                throw std::invalid_argument("unknown event kind " + std::to_string(kinds[n]));
            }
        });
    }
    return hot;
}

// --- load balancer ---------------------------------------------------------------------------
enum LbEvent : std::int64_t {
    kLbDispatch = 0,  // a = ingress, b = cpu_ns; result: egress, or -1 for a stall
    kLbComplete = 1,  // a = egress, b = cpu_ns
    kLbSetMap = 2,    // a = ingress, b = mask
    kLbSetPolicy = 3, // a = policy
    kLbSetDepth = 4,  // a = depth
    kLbSetSeed = 5,   // a = seed
};

std::vector<std::int32_t> lb_run(bg::LoadBalancer &lb, const Ints &kinds, const Ints &a, const Ints &b)
{
    check_lengths("LoadBalancer.run", kinds.size(), a.size());
    check_lengths("LoadBalancer.run", kinds.size(), b.size());
    const char *w = "LoadBalancer.run";
    std::vector<std::int32_t> out;
    for (std::size_t n = 0; n < kinds.size(); n++) {
        at_event(w, n, [&] {
            switch (kinds[n]) {
            case kLbDispatch: {
                const bg::LbDecision d = lb.dispatch(arg<std::uint32_t>(a[n]), arg<std::uint32_t>(b[n]));
                out.push_back(d.stall ? -1 : d.egress);
                break;
            }
            case kLbComplete:
                lb.complete(arg<std::uint32_t>(a[n]), arg<std::uint32_t>(b[n]));
                break;
            case kLbSetMap:
                lb.set_map(arg<std::uint32_t>(a[n]), arg<std::uint16_t>(b[n]));
                break;
            case kLbSetPolicy:
                lb.set_policy(static_cast<bg::LbPolicy>(arg<std::uint8_t>(a[n])));
                break;
            case kLbSetDepth:
                lb.set_depth(arg<std::uint32_t>(a[n]));
                break;
            case kLbSetSeed:
                lb.set_seed(arg<std::uint32_t>(a[n]));
                break;
            default:
                throw std::invalid_argument("unknown event kind " + std::to_string(kinds[n]));
            }
        });
    }
    return out;
}

// --- buffer pool -----------------------------------------------------------------------------
enum BpEvent : std::int64_t { kBpAcquire = 0, kBpRelease = 1, kBpTick = 2 };

std::vector<std::int32_t> bp_run(bg::BufferPool &bp, const Ints &kinds, const Ints &args)
{
    check_lengths("BufferPool.run", kinds.size(), args.size());
    const char *w = "BufferPool.run";
    std::vector<std::int32_t> out;
    for (std::size_t n = 0; n < kinds.size(); n++) {
        at_event(w, n, [&] {
            switch (kinds[n]) {
            case kBpAcquire:
                out.push_back(static_cast<std::int32_t>(bp.acquire(arg<std::uint32_t>(args[n]))));
                break;
            case kBpRelease:
                bp.release(arg<std::uint32_t>(args[n]));
                break;
            case kBpTick:
                bp.tick();
                break;
            default:
                throw std::invalid_argument("unknown event kind " + std::to_string(kinds[n]));
            }
        });
    }
    return out;
}

nb::dict pool_stats(const bg::BufferPoolStats &s)
{
    nb::dict d;
    d["acquired"] = s.acquired;
    d["released"] = s.released;
    d["borrowed"] = s.borrowed;
    d["returned"] = s.returned;
    d["prefills"] = s.prefills;
    d["stalls"] = s.stalls;
    return d;
}

}  // namespace

void bg::py::bind_blocks(nb::module_ &m)
{
    auto seg = nb::class_<bg::SegmentMonitor>(
        m, "SegmentMonitor",
        "Segment-level I/O rate monitor (segment_monitor.hpp): hot above R I/Os per interval, steady after N "
        "intervals at or below R.");
    seg.def(nb::init<std::uint16_t, std::uint32_t>(), "hot_threshold"_a, "steady_intervals"_a,
            "ValueError when steady_intervals exceeds 254.")
        .def("on_io", &bg::SegmentMonitor::on_io, "segment"_a, "counted"_a = true, "size"_a = 0,
             "The per-I/O read-modify-write; whether the segment is hot for this I/O. counted=False "
             "(a re-offer) classifies without counting; size (bytes) is what a counted I/O adds under "
             "the sector unit.")
        .def(
            "on_io_many",
            [](bg::SegmentMonitor &sm, const std::vector<std::uint16_t> &segments) {
                std::vector<bool> hot(segments.size());
                for (std::size_t n = 0; n < segments.size(); n++)
                    hot[n] = sm.on_io(segments[n], true, 0);
                return hot;
            },
            "segments"_a, "on_io (counted) for each segment in order; a list of bools.")
        .def("is_hot", &bg::SegmentMonitor::is_hot, "segment"_a, "Whether the segment is hot now (no state change).")
        .def("tick", &bg::SegmentMonitor::tick, "The interval tick.")
        .def_prop_ro("interval", &bg::SegmentMonitor::interval)
        .def_prop_rw("hot_threshold", &bg::SegmentMonitor::hot_threshold, &bg::SegmentMonitor::set_hot_threshold)
        .def_prop_rw("steady_intervals", &bg::SegmentMonitor::steady_intervals,
                     &bg::SegmentMonitor::set_steady_intervals)
        .def_prop_rw("unit", &bg::SegmentMonitor::unit, &bg::SegmentMonitor::set_unit,
                     "SEGMON.UNIT: UNIT_REQUESTS or UNIT_SECTORS.")
        .def_static("sectors_of", &bg::SegmentMonitor::sectors_of, "size"_a,
                    "What a counted I/O of size bytes adds under the sector unit.")
        .def_static("threshold_from_bytes", &bg::SegmentMonitor::threshold_from_bytes, "bytes"_a,
                    "R in sectors from a threshold in bytes per interval (saturates at 65535).")
        .def(
            "entry",
            [](const bg::SegmentMonitor &sm, std::uint16_t s) {
                const bg::SegmentEntry &e = sm.entry(s);
                return nb::make_tuple(e.stamp, e.count, e.hold);
            },
            "segment"_a, "The segment's RAM entry as (stamp, count, hold).")
        .def("run", &seg_run, "kinds"_a, "args"_a,
             "Replay an ordered event log: IO(segment | size << 16), REOFFER(same), TICK, SET_THRESHOLD(r), "
             "SET_STEADY(n), SET_UNIT(u). Returns the hot bit "
             "of every IO in order. ValueError names the first bad event.");
    seg.attr("IO") = static_cast<std::int64_t>(kSegIo);
    seg.attr("TICK") = static_cast<std::int64_t>(kSegTick);
    seg.attr("SET_THRESHOLD") = static_cast<std::int64_t>(kSegSetThreshold);
    seg.attr("SET_STEADY") = static_cast<std::int64_t>(kSegSetSteady);
    seg.attr("REOFFER") = static_cast<std::int64_t>(kSegReoffer);
    seg.attr("SET_UNIT") = static_cast<std::int64_t>(kSegSetUnit);
    seg.attr("UNIT_REQUESTS") = BG_SEGMON_UNIT_REQUESTS;
    seg.attr("UNIT_SECTORS") = BG_SEGMON_UNIT_SECTORS;
    seg.attr("SEGMENTS") = bg::SegmentMonitor::kSegments;
    seg.attr("MAX_STEADY_INTERVALS") = bg::SegmentMonitor::kMaxSteadyIntervals;

    nb::enum_<bg::LbPolicy>(m, "LbPolicy", "Load-balancing policy (the LB policy register's encoding).")
        .value("STATIC", bg::LbPolicy::kStatic)
        .value("ROUND_ROBIN", bg::LbPolicy::kRoundRobin)
        .value("JSQ", bg::LbPolicy::kJsq)
        .value("P2C", bg::LbPolicy::kP2c)
        .value("LEAST_IOS", bg::LbPolicy::kLeastIos);

    auto lb = nb::class_<bg::LoadBalancer>(m, "LoadBalancer",
                                           "Queue-scaling load balancer (load_balancer.hpp): one decision per I/O "
                                           "over the ingress queue's egress set.");
    lb.def(
          "__init__",
          [](bg::LoadBalancer *self, unsigned ingress_queues, unsigned egress_queues, unsigned policy,
             std::uint32_t egress_depth, std::uint32_t lfsr_seed) {
              bg::LbConfig cfg;
              cfg.ingress_queues = ingress_queues;
              cfg.egress_queues = egress_queues;
              cfg.policy = static_cast<bg::LbPolicy>(policy);
              cfg.egress_depth = egress_depth;
              cfg.lfsr_seed = lfsr_seed;
              new (self) bg::LoadBalancer(cfg);
          },
          nb::kw_only(), "ingress_queues"_a = 1, "egress_queues"_a = 1, "policy"_a = 0, "egress_depth"_a = 64,
          "lfsr_seed"_a = 1, "ValueError when a count, the depth or the policy (0..3) is out of range.")
        .def("set_map", &bg::LoadBalancer::set_map, "ingress"_a, "egress_mask"_a)
        .def("map", &bg::LoadBalancer::map, "ingress"_a)
        .def("set_policy", [](bg::LoadBalancer &l, unsigned p) { l.set_policy(static_cast<bg::LbPolicy>(p)); },
             "policy"_a)
        .def("set_depth", &bg::LoadBalancer::set_depth, "depth"_a)
        .def("set_seed", &bg::LoadBalancer::set_seed, "seed"_a)
        .def(
            "dispatch",
            [](bg::LoadBalancer &l, unsigned ingress, std::uint32_t cpu_ns) -> nb::object {
                const bg::LbDecision d = l.dispatch(ingress, cpu_ns);
                return d.stall ? nb::none() : nb::int_(d.egress);
            },
            "ingress"_a, "cpu_ns"_a, "One decision: the egress queue, or None for a stall.")
        .def("complete", &bg::LoadBalancer::complete, "egress"_a, "cpu_ns"_a)
        .def("outstanding_ios", &bg::LoadBalancer::outstanding_ios, "egress"_a)
        .def("outstanding_ns", &bg::LoadBalancer::outstanding_ns, "egress"_a)
        .def("rr_pointer", &bg::LoadBalancer::rr_pointer, "ingress"_a)
        .def("eligible", &bg::LoadBalancer::eligible, "ingress"_a)
        .def_prop_ro("lfsr_state", &bg::LoadBalancer::lfsr_state)
        .def_prop_ro("policy", [](const bg::LoadBalancer &l) { return static_cast<unsigned>(l.config().policy); })
        .def_prop_ro("egress_depth", [](const bg::LoadBalancer &l) { return l.config().egress_depth; })
        .def(
            "egress_stats",
            [](const bg::LoadBalancer &l, unsigned e) {
                const bg::LbEgressStats &s = l.egress_stats(e);
                nb::dict d;
                d["dispatched"] = s.dispatched;
                d["dispatched_ns"] = s.dispatched_ns;
                d["peak_outstanding"] = s.peak_outstanding;
                return d;
            },
            "egress"_a)
        .def(
            "ingress_stats",
            [](const bg::LoadBalancer &l, unsigned i) {
                const bg::LbIngressStats &s = l.ingress_stats(i);
                nb::dict d;
                d["dispatched"] = s.dispatched;
                d["stalled_ios"] = s.stalled_ios;
                return d;
            },
            "ingress"_a)
        .def_static("clamp_charge", &bg::LoadBalancer::clamp_charge, "cpu_ns"_a)
        .def_static("nth_set_bit", &bg::LoadBalancer::nth_set_bit, "mask"_a, "idx"_a)
        .def_static("scale_draw", &bg::LoadBalancer::scale_draw, "r"_a, "n"_a)
        .def_static(
            "lfsr_draw",
            [](std::uint32_t state) {
                bg::LoadBalancer::lfsr_draw(&state);
                return state;
            },
            "state"_a, "The LFSR state one draw (32 steps) after state.")
        .def("run", &lb_run, "kinds"_a, "a"_a, "b"_a,
             "Replay an ordered event log: DISPATCH(ingress, cpu_ns), COMPLETE(egress, cpu_ns), SET_MAP(ingress, "
             "mask), SET_POLICY(p, -), SET_DEPTH(d, -), SET_SEED(s, -). Returns each DISPATCH's egress, -1 for a "
             "stall. ValueError names the first bad event.");
    lb.attr("DISPATCH") = static_cast<std::int64_t>(kLbDispatch);
    lb.attr("COMPLETE") = static_cast<std::int64_t>(kLbComplete);
    lb.attr("SET_MAP") = static_cast<std::int64_t>(kLbSetMap);
    lb.attr("SET_POLICY") = static_cast<std::int64_t>(kLbSetPolicy);
    lb.attr("SET_DEPTH") = static_cast<std::int64_t>(kLbSetDepth);
    lb.attr("SET_SEED") = static_cast<std::int64_t>(kLbSetSeed);

    auto bp = nb::class_<bg::BufferPool>(m, "BufferPool",
                                         "Two-tier I/O buffer pool (buffer_pool.hpp): dedicated buffers per queue "
                                         "plus a shared pool, credit accounting.");
    bp.def(
          "__init__",
          [](bg::BufferPool *self, const std::vector<std::uint32_t> &dedicated, std::uint32_t shared,
             std::uint32_t borrow_cap, std::uint32_t quiet_windows) {
              bg::BufferPoolConfig cfg;
              cfg.dedicated = dedicated;
              cfg.shared = shared;
              cfg.borrow_cap = borrow_cap;
              cfg.quiet_windows = quiet_windows;
              new (self) bg::BufferPool(cfg);
          },
          nb::kw_only(), "dedicated"_a, "shared"_a = 0, "borrow_cap"_a = bg::kBpMaxCount, "quiet_windows"_a = 1,
          "ValueError when a count is out of range.")
        .def("acquire", [](bg::BufferPool &p, unsigned q) { return static_cast<int>(p.acquire(q)); }, "queue"_a,
             "0 own, 1 borrowed, 2 stall (the class attributes OWN, BORROWED, STALL).")
        .def("can_acquire", &bg::BufferPool::can_acquire, "queue"_a,
             "Whether acquire(queue) would not stall, changing nothing.")
        .def("release", &bg::BufferPool::release, "queue"_a)
        .def("tick", &bg::BufferPool::tick, "Window boundary.")
        .def_prop_ro("queues", &bg::BufferPool::queues)
        .def("dedicated", &bg::BufferPool::dedicated, "queue"_a)
        .def("extra", &bg::BufferPool::extra, "queue"_a)
        .def("inflight", &bg::BufferPool::inflight, "queue"_a)
        .def("peak", &bg::BufferPool::peak, "queue"_a)
        .def("quiet", &bg::BufferPool::quiet, "queue"_a)
        .def_prop_ro("shared_free", &bg::BufferPool::shared_free)
        .def_prop_ro("shared_total", &bg::BufferPool::shared_total)
        .def("conserved", &bg::BufferPool::conserved)
        .def("stats", [](const bg::BufferPool &p) { return pool_stats(p.stats()); })
        .def("queue_stats", [](const bg::BufferPool &p, unsigned q) { return pool_stats(p.queue_stats(q)); },
             "queue"_a)
        .def("run", &bp_run, "kinds"_a, "args"_a,
             "Replay an ordered event log: ACQUIRE(queue), RELEASE(queue), TICK(-). Returns each ACQUIRE's result "
             "(OWN, BORROWED, STALL). ValueError names the first bad event.");
    bp.attr("ACQUIRE") = static_cast<std::int64_t>(kBpAcquire);
    bp.attr("RELEASE") = static_cast<std::int64_t>(kBpRelease);
    bp.attr("TICK") = static_cast<std::int64_t>(kBpTick);
    bp.attr("OWN") = static_cast<int>(bg::Acquire::kOwn);
    bp.attr("BORROWED") = static_cast<int>(bg::Acquire::kBorrowed);
    bp.attr("STALL") = static_cast<int>(bg::Acquire::kStall);
}
