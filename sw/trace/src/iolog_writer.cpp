// fio iolog v3 writers; see trace.hpp for the format.
#include <charconv>

#include "burstgate/trace/trace.hpp"

namespace bg::trace {

IologV3Lines::IologV3Lines(std::vector<std::string> files) : files_(std::move(files))
{
    if (files_.empty())
        throw std::invalid_argument("iolog: no file to write");
    for (const std::string &f : files_)
        if (f.empty() || f.find_first_of(" \t\r\n") != std::string::npos)
            throw std::invalid_argument("iolog file name '" + f + "' must be non-empty without blanks");
}

void IologV3Lines::header(std::string &out) const
{
    out += "fio version 3 iolog\n";
    for (const std::string &f : files_)
        out += "0 " + f + " add\n0 " + f + " open\n";
}

void IologV3Lines::record(std::string &out, std::uint64_t us, std::size_t file, Op op, std::uint64_t offset,
                          std::uint32_t length)
{
    if (us < last_us_)
        throw std::invalid_argument("iolog v3: a record at " + std::to_string(us) + " us after one at " +
                                    std::to_string(last_us_) + " us: times must not go back");
    if (op == Op::kOther)
        throw std::invalid_argument("iolog v3: only reads and writes are records");
    last_us_ = us;
    char b[24];
    out.append(b, std::to_chars(b, b + sizeof b, us).ptr);
    out += ' ';
    out += files_.at(file);
    out += op == Op::kRead ? " read " : " write ";
    out.append(b, std::to_chars(b, b + sizeof b, offset).ptr);
    out += ' ';
    out.append(b, std::to_chars(b, b + sizeof b, length).ptr);
    out += '\n';
}

void IologV3Lines::close(std::string &out) const
{
    char b[24];
    const std::string t(b, std::to_chars(b, b + sizeof b, last_us_).ptr);
    for (const std::string &f : files_)
        out += t + " " + f + " close\n";
}

IologV3Writer::IologV3Writer(std::ostream &out, std::string file) : out_(out), lines_({std::move(file)})
{
    lines_.header(buf_);
    out_ << buf_;
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
    if (us < lines_.last_us())
        throw std::invalid_argument("iolog v3: record of line " + std::to_string(r.line) + " goes back in time");
    buf_.clear();
    lines_.record(buf_, us, 0, r.op, r.offset, r.length);
    out_ << buf_;
    written_++;
}

void IologV3Writer::close()
{
    if (closed_)
        return;
    closed_ = true;
    buf_.clear();
    lines_.close(buf_);
    out_ << buf_;
}

IologV3Writer::~IologV3Writer()
{
    try {
        close();
    } catch (...) {  // a destructor must not throw; the stream's state reports the failure
    }
}

}  // namespace bg::trace
