// The gateway's arrival recorder; see arrivals.hpp.
#include "arrivals.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "nbd_proto.hpp"
#include "write_all.hpp"

namespace bg::gw {

std::vector<std::string> ArrivalRecorder::checked(const std::vector<std::string> &tenants)
{
    for (const std::string &n : tenants)
        if (n.empty() || n.find_first_of(" \t\r\n") != std::string::npos)
            throw std::invalid_argument("--arrivals: tenant name '" + n + "' has a blank, which an iolog file name cannot");
    return tenants;
}

ArrivalRecorder::ArrivalRecorder(const std::string &path, const std::vector<std::string> &tenants,
                                 std::uint64_t max_records, std::uint64_t window_ns)
    : path_(path), lines_(checked(tenants)), max_records_(max_records), window_ns_(window_ns),
      sink_(std::make_shared<Sink>())
{
    sink_->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (sink_->fd < 0)
        throw std::invalid_argument("--arrivals: cannot write '" + path + "': " + std::strerror(errno));
    cur_.reserve(kChunkBytes);
    lines_.header(cur_);
    writer_ = std::thread([s = sink_] { writer_loop(s); });
}

ArrivalRecorder::~ArrivalRecorder()
{
    finish();
}

void ArrivalRecorder::record(std::uint64_t t_ns, std::uint64_t windows, std::uint64_t commit_ns, std::uint16_t tenant,
                             std::uint16_t type, std::uint64_t offset, std::uint32_t length)
{
    std::lock_guard<std::mutex> g(sink_->mu);
    if (type != nbd::kCmdRead && type != nbd::kCmdWrite) {
        other_++;
        return;
    }
    if (recorded_ + lost_ >= max_records_) {
        over_cap_++;
        return;
    }
    const std::size_t line = lines_.max_record_bytes(tenant);
    if (cur_.size() + line > kChunkBytes)
        hand_off_locked();
    if (cur_.size() + line > kChunkBytes) {  // the writer is that far behind
        lost_++;
        return;
    }
    if (window_ns_ > 0) {
        const std::uint64_t into = t_ns > commit_ns ? t_ns - commit_ns : 0;
        t_ns = windows * window_ns_ + std::min(into, window_ns_ - std::min<std::uint64_t>(window_ns_, 1000));
    }
    // Microseconds, as iolog v3 counts (truncated, so never ahead of the offer), never back.
    lines_.record(cur_, std::max(lines_.last_us(), t_ns / 1000), tenant,
                  type == nbd::kCmdRead ? bg::trace::Op::kRead : bg::trace::Op::kWrite, offset, length);
    recorded_++;
    chunk_records_++;
}

void ArrivalRecorder::hand_off_locked()
{
    Sink &s = *sink_;
    if (cur_.empty() || s.pending.size() >= kMaxPending)
        return;
    s.pending.emplace_back(std::move(cur_), chunk_records_);
    chunk_records_ = 0;
    if (!s.spare.empty()) {
        cur_ = std::move(s.spare.back());
        s.spare.pop_back();
    } else {
        cur_ = std::string();
        cur_.reserve(kChunkBytes);
    }
    cur_.clear();
    s.cv.notify_one();
}

void ArrivalRecorder::writer_loop(const std::shared_ptr<Sink> &sp)
{
    // Signals are the main thread's (its signalfd): this thread, started before the gateway
    // blocks them, must not take a SIGTERM's default action for the whole process.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    Sink &s = *sp;
    std::unique_lock<std::mutex> g(s.mu);
    for (;;) {
        s.cv.wait(g, [&] { return s.stop || !s.pending.empty(); });
        if (s.pending.empty() || s.abandoned)
            break;  // stopping, everything written (or given up on)
        auto [c, records] = std::move(s.pending.front());
        s.pending.pop_front();
        s.writing = records;
        g.unlock();
        const int err = write_all(s.fd, c);
        g.lock();
        s.writing = 0;
        if (err != 0 && s.error.empty())
            s.error = std::strerror(err);
        c.clear();
        if (s.spare.size() < 2)
            s.spare.push_back(std::move(c));
    }
    s.returned = true;
    if (s.abandoned) {  // finish() has gone: the descriptor is this thread's to close
        ::close(s.fd);
        s.fd = -1;
    }
    s.idle_cv.notify_all();
}

std::string ArrivalRecorder::finish()
{
    Sink &s = *sink_;
    std::unique_lock<std::mutex> g(s.mu);
    if (finished_)
        return {};
    finished_ = true;
    lines_.close(cur_);
    s.stop = true;
    s.cv.notify_one();
    // The writer writes every pending chunk first, unless the file stops taking them.
    std::uint64_t unwritten = 0;
    if (!s.idle_cv.wait_for(g, kStopWait, [&] { return s.returned; })) {
        s.abandoned = true;
        unwritten = s.writing + chunk_records_;
        for (const auto &p : s.pending)
            unwritten += p.second;
        s.pending.clear();
        g.unlock();
        writer_.detach();  // it holds the sink; closes the descriptor if its write() ever returns
    } else {
        g.unlock();
        writer_.join();
        g.lock();
        // The last chunk, here: the hot path is over.
        if (s.error.empty())
            if (const int err = write_all(s.fd, cur_))
                s.error = std::strerror(err);
        if (::close(s.fd) != 0 && s.error.empty())
            s.error = std::strerror(errno);
        s.fd = -1;
        g.unlock();
    }
    g.lock();
    std::string out = std::to_string(recorded_ - unwritten) + " arrivals recorded to " + path_;
    if (over_cap_)
        out += "; " + std::to_string(over_cap_) + " later ones left out (--arrivals-max " + std::to_string(max_records_) + ")";
    if (lost_)
        out += "; " + std::to_string(lost_) + " lost (the disk fell behind)";
    if (other_)
        out += "; " + std::to_string(other_) + " commands other than READ and WRITE not recorded";
    if (unwritten || s.abandoned)
        out += "; FILE STOPPED TAKING WRITES: abandoned after " + std::to_string(kStopWait.count()) + " ms at exit, " +
               std::to_string(unwritten) + " records not written (the file is incomplete)";
    else if (!s.error.empty())
        out += "; WRITE ERROR: " + s.error + " (the file is incomplete)";
    return out;
}

}  // namespace bg::gw
