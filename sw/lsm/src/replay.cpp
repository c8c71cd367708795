#include "burstgate/lsm/replay.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "burstgate/lsm/allocator.hpp"

namespace bg::lsm {

namespace {
bool parse_source(const std::string& s, IoSource& out)
{
    for (IoSource v : {IoSource::user, IoSource::wal, IoSource::flush, IoSource::compaction, IoSource::prefetch}) {
        if (s == to_string(v)) {
            out = v;
            return true;
        }
    }
    return false;
}
}  // namespace

void write_trace_header(std::FILE* f)
{
    std::fputs("# burstgate block-I/O trace v1: t_ns thread op source level file offset bytes\n", f);
}

std::string format_trace_record(const TraceRecord& r)
{
    std::ostringstream o;
    o << r.t << ' ' << r.thread << ' ' << (r.op == IoOp::read ? 'R' : 'W') << ' ' << to_string(r.source) << ' '
      << static_cast<int>(r.level) << ' ' << r.file << ' ' << r.offset << ' ' << r.bytes << '\n';
    return o.str();
}

std::vector<TraceRecord> read_trace(const std::string& path, std::uint64_t max_records)
{
    if (std::filesystem::is_directory(path)) throw std::runtime_error(path + ": cannot open (it is a folder)");
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open");
    std::vector<TraceRecord> out;
    // Lines are read with a bound: a record is under 100 bytes, and a file without newlines
    // (or a device) must not be read whole into memory.
    constexpr std::streamsize kMaxLine = 1 << 16;
    std::vector<char> buf(kMaxLine + 1);
    std::size_t n = 0;
    for (;;) {
        in.getline(buf.data(), kMaxLine + 1);
        const std::streamsize got = in.gcount();
        if (in.bad()) throw std::runtime_error(path + ":" + std::to_string(n + 1) + ": read error");
        if (in.fail() && !in.eof())
            throw std::runtime_error(path + ":" + std::to_string(n + 1) + ": line longer than " + std::to_string(kMaxLine) +
                                     " bytes: not a trace record");
        if (got == 0 && in.eof()) break;
        ++n;
        std::string line(buf.data(), static_cast<std::size_t>(got - (in.eof() ? 0 : 1)));
        const auto hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        if (line.find_first_not_of(" \t\r") != std::string::npos) {
            auto bad = [&](const std::string& what) { throw std::runtime_error(path + ":" + std::to_string(n) + ": " + what); };
            // Every field is a count or a name: a '-' would wrap an unsigned field to a huge value.
            if (line.find('-') != std::string::npos) bad("a negative number (every field is 0 or more)");
            std::istringstream s(line);
            TraceRecord r;
            long long t;
            std::string op, src, extra;
            int level;
            if (!(s >> t >> r.thread >> op >> src >> level >> r.file >> r.offset >> r.bytes) || (s >> extra))
                bad("expected 't_ns thread op source level file offset bytes'");
            if (op != "R" && op != "W") bad("op must be R or W, not '" + op + "'");
            if (!parse_source(src, r.source)) bad("unknown source '" + src + "'");
            if (level < 0 || level > 63) bad("level out of range");
            if (r.bytes == 0) bad("zero-byte I/O");
            r.t = t;
            r.op = op == "R" ? IoOp::read : IoOp::write;
            r.level = static_cast<std::uint8_t>(level);
            if (out.size() >= max_records)
                bad("more than " + std::to_string(max_records) +
                    " I/O records: replay keeps the whole trace in memory; split the trace or raise --max-records");
            out.push_back(r);
        }
        if (in.eof()) break;
    }
    if (out.empty())
        throw std::runtime_error(path + ":" + std::to_string(n ? n : 1) +
                                 ": no I/O record (lines 't_ns thread op source level file offset bytes')");
    return out;
}

struct Replayer::Impl {
    struct Cursor {
        std::vector<const TraceRecord*>* recs;
        std::size_t i = 0;
    };
    EventLoop& loop;
    Volume& io;
    double time_scale;
    Time measure_from;
    // One in-order stream per recorded thread.
    std::map<std::uint32_t, std::vector<const TraceRecord*>> threads;
    std::vector<std::unique_ptr<Cursor>> cursors;
    std::map<std::string, std::vector<Time>> lat;
    Time last = 0;
    std::uint64_t completed = 0;

    Impl(EventLoop& l, Volume& v, double scale, Time from) : loop(l), io(v), time_scale(scale), measure_from(from) {}
    void next(Cursor* c)
    {
        if (c->i >= c->recs->size()) return;
        const TraceRecord& r = *(*c->recs)[c->i];
        const Time at = std::max(loop.now(), static_cast<Time>(static_cast<double>(r.t) * time_scale));
        loop.at(at, [this, c, &r] {
            IoRequest req;
            req.offset = (r.file << 36) + r.offset;  // files 64 GiB apart on the volume
            req.bytes = r.bytes;
            req.op = r.op;
            req.source = r.source;
            req.level = r.level;
            const Time start = loop.now();
            io.submit(req, [this, c, start, src = r.source] {
                if (start >= measure_from) {
                    lat[to_string(src)].push_back(loop.now() - start);
                    lat["all"].push_back(loop.now() - start);
                }
                last = loop.now();
                ++completed;
                ++c->i;
                next(c);
            });
        });
    }
};

Replayer::Replayer(const std::vector<TraceRecord>& trace, EventLoop& loop, Volume& io, double time_scale,
                   Time measure_from)
    : impl_(std::make_unique<Impl>(loop, io, time_scale, measure_from))
{
    if (time_scale < 0) throw std::invalid_argument("replay: time_scale must be >= 0");
    for (const auto& r : trace) impl_->threads[r.thread].push_back(&r);
    for (auto& [id, recs] : impl_->threads) {
        impl_->cursors.push_back(std::make_unique<Impl::Cursor>(Impl::Cursor{&recs}));
        impl_->next(impl_->cursors.back().get());
    }
}

Replayer::~Replayer() = default;

std::map<std::string, LatencySummary> Replayer::latency() const
{
    std::map<std::string, LatencySummary> out;
    for (auto [src, v] : impl_->lat) out[src] = summarize(v);  // a copy: summarize sorts
    return out;
}

Time Replayer::last_completion() const { return impl_->last; }
std::uint64_t Replayer::completed() const { return impl_->completed; }

ReplayResult replay(const std::vector<TraceRecord>& trace, const ReplaySpec& spec)
{
    if (spec.time_scale < 0) throw std::invalid_argument("replay: time_scale must be >= 0");
    EventLoop loop;
    CloudVolume volume(loop, spec.volume, spec.seed);
    std::unique_ptr<CongestionAwareAllocator> alloc;
    Volume* io = &volume;
    if (spec.store == "calcspar") {
        CongestionAwareAllocator::Policy pol = CongestionAwareAllocator::Policy::time_window;
        if (spec.allocator == "na") pol = CongestionAwareAllocator::Policy::no_allocation;
        else if (spec.allocator == "twa-reserve") pol = CongestionAwareAllocator::Policy::time_window_reserve;
        else if (spec.allocator == "sa") pol = CongestionAwareAllocator::Policy::static_share;
        else if (spec.allocator == "da") pol = CongestionAwareAllocator::Policy::dynamic_share;
        else if (spec.allocator != "twa") throw std::invalid_argument("unknown allocator '" + spec.allocator + "'");
        alloc = std::make_unique<CongestionAwareAllocator>(volume, pol, spec.volume.phase);
        io = alloc.get();
    } else if (spec.store != "direct") {
        throw std::invalid_argument("replay: store must be calcspar or direct, not '" + spec.store + "'");
    }
    Replayer player(trace, loop, *io, spec.time_scale);
    // Run until every thread has finished (completions keep scheduling the next I/O).
    while (!loop.empty()) loop.run_until(loop.now() + kSec);
    ReplayResult out;
    out.by_source = player.latency();
    out.volume = volume.stats();
    out.span = player.last_completion();
    out.volume_iops = out.span > 0 ? static_cast<double>(out.volume.tokens) / (static_cast<double>(out.span) / 1e9) : 0;
    return out;
}

}  // namespace bg::lsm
