// fio iolog v3 writer; see trace.hpp for the format.
#include "burstgate/trace/trace.hpp"

namespace bg::trace {

IologV3Writer::IologV3Writer(std::ostream &out, std::string file) : out_(out), file_(std::move(file))
{
    if (file_.empty() || file_.find_first_of(" \t\r\n") != std::string::npos)
        throw std::invalid_argument("iolog file name '" + file_ + "' must be non-empty without blanks");
    out_ << "fio version 3 iolog\n0 " << file_ << " add\n0 " << file_ << " open\n";
}

void IologV3Writer::write(const Record &r)
{
    if (closed_)
        throw std::logic_error("IologV3Writer::write after close");
    if (r.op == Op::kOther) {
        skipped_++;
        return;
    }
    // Microseconds, truncated: fio cannot wait for less.
    const std::uint64_t us = r.time_ns / 1000;
    if (us < last_us_)
        throw std::invalid_argument("iolog v3: record of line " + std::to_string(r.line) + " goes back in time");
    last_us_ = us;
    out_ << us << ' ' << file_ << (r.op == Op::kRead ? " read " : " write ") << r.offset << ' ' << r.length << '\n';
    written_++;
}

void IologV3Writer::close()
{
    if (closed_)
        return;
    closed_ = true;
    out_ << last_us_ << ' ' << file_ << " close\n";
}

IologV3Writer::~IologV3Writer()
{
    try {
        close();
    } catch (...) {  // a destructor must not throw; the stream's state reports the failure
    }
}

}  // namespace bg::trace
