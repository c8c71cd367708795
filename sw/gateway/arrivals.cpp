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
#include "thread_name.hpp"
#include "write_all.hpp"

namespace bg::gw {

bg::trace::IologV3Lines ArrivalRecorder::lines_for(const std::vector<std::string> &tenants)
{
    try {
        return bg::trace::IologV3Lines(tenants);
    } catch (const std::invalid_argument &e) {
        throw std::invalid_argument(std::string("--arrivals: ") + e.what());
    }
}

ArrivalRecorder::ArrivalRecorder(const std::string &path, const std::vector<std::string> &tenants,
                                 std::uint64_t max_records, std::uint64_t window_ns)
    : path_(path), lines_(lines_for(tenants)), max_records_(max_records), window_ns_(window_ns)
{
    sh_->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (sh_->fd < 0)
        throw std::invalid_argument("--arrivals: cannot write '" + path + "': " + std::strerror(errno));
    cur_.reserve(kChunkBytes);
    lines_.header(cur_);
    writer_ = std::thread([sh = sh_] { writer_loop(sh); });
}

ArrivalRecorder::~ArrivalRecorder()
{
    finish();
}

void ArrivalRecorder::record(std::uint64_t t_ns, std::uint64_t windows, std::uint64_t commit_ns, std::uint16_t tenant,
                             std::uint16_t type, std::uint64_t offset, std::uint32_t length)
{
    std::lock_guard<std::mutex> g(sh_->mu);
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
}

void ArrivalRecorder::hand_off_locked()
{
    if (cur_.empty() || sh_->pending.size() >= kMaxPending)
        return;
    sh_->pending.push_back(std::move(cur_));
    if (!sh_->spare.empty()) {
        cur_ = std::move(sh_->spare.back());
        sh_->spare.pop_back();
    } else {
        cur_ = std::string();
        cur_.reserve(kChunkBytes);
    }
    cur_.clear();
    sh_->cv.notify_one();
}

void ArrivalRecorder::writer_loop(const std::shared_ptr<Shared> &sh)
{
    name_thread("bg-arrivals");
    // Signals are the main thread's (its signalfd): this thread, started before the gateway
    // blocks them, must not take a SIGTERM's default action for the whole process.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock<std::mutex> g(sh->mu);
    for (;;) {
        sh->cv.wait(g, [&] { return sh->stop || !sh->pending.empty(); });
        if (sh->pending.empty())
            break;  // stopping, everything written
        std::string c = std::move(sh->pending.front());
        sh->pending.pop_front();
        g.unlock();
        const int err = write_all(sh->fd, c);
        g.lock();
        if (err != 0 && sh->error.empty())
            sh->error = std::strerror(err);
        c.clear();
        if (sh->spare.size() < 2)
            sh->spare.push_back(std::move(c));
    }
    sh->done = true;
    sh->done_cv.notify_all();
}

std::string ArrivalRecorder::finish()
{
    std::unique_lock<std::mutex> g(sh_->mu);
    if (finished_)
        return {};
    finished_ = true;
    lines_.close(cur_);
    sh_->stop = true;
    sh_->cv.notify_one();
    if (!sh_->done_cv.wait_for(g, kStopDeadline, [&] { return sh_->done; })) {
        // The file stopped taking writes (a FIFO nobody reads, a hung network file system):
        // the writer is blocked in write() and may stay there. It holds only the shared state,
        // so it is let go, and the process's exit ends it; the gateway's stop does not wait
        // for a file. Its fd stays open until then (closing it under a blocked write could
        // hand the number to another file).
        const std::size_t left = sh_->pending.size() + 1;  // + the chunk in write() now
        g.unlock();
        writer_.detach();
        return std::to_string(recorded_) + " arrivals recorded to " + path_ + "; WRITE ERROR: the file took no write for " +
               std::to_string(kStopDeadline.count()) + " s at the stop, recording abandoned with " +
               std::to_string(left) + " chunk(s) of up to " + std::to_string(kChunkBytes >> 10) +
               " KiB and the last records not written (the file is incomplete)";
    }
    g.unlock();
    writer_.join();
    g.lock();
    // The last chunk, here: the hot path is over.
    if (sh_->error.empty())
        if (const int err = write_all(sh_->fd, cur_))
            sh_->error = std::strerror(err);
    if (::close(sh_->fd) != 0 && sh_->error.empty())
        sh_->error = std::strerror(errno);
    sh_->fd = -1;
    std::string s = std::to_string(recorded_) + " arrivals recorded to " + path_;
    if (over_cap_)
        s += "; " + std::to_string(over_cap_) + " later ones left out (--arrivals-max " + std::to_string(max_records_) + ")";
    if (lost_)
        s += "; " + std::to_string(lost_) + " lost (the disk fell behind)";
    if (other_)
        s += "; " + std::to_string(other_) + " commands other than READ and WRITE not recorded";
    if (!sh_->error.empty())
        s += "; WRITE ERROR: " + sh_->error + " (the file is incomplete)";
    return s;
}

}  // namespace bg::gw
