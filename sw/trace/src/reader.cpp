// The trace parsers. One line -> one record; every check names FILE:LINE.
#include <cctype>
#include <filesystem>
#include <limits>
#include <string_view>
#include <vector>

#include "burstgate/trace/trace.hpp"

namespace bg::trace {

namespace {

constexpr const char *kNames[] = {"cloudphysics", "alibaba", "tencent", "msr", "iolog2", "iolog3"};
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// CloudPhysics's header line, accepted (and only) as line 1.
constexpr std::string_view kCloudPhysicsHeader = "version,time,op,size,lbn";

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t k = s.find(sep, start);
        out.push_back(s.substr(start, k == std::string_view::npos ? std::string_view::npos : k - start));
        if (k == std::string_view::npos)
            return out;
        start = k + 1;
    }
}

std::vector<std::string_view> split_blanks(std::string_view s)
{
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            i++;
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i > start)
            out.push_back(s.substr(start, i - start));
    }
    return out;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

}  // namespace

const char *format_name(Format f)
{
    return kNames[static_cast<int>(f)];
}

Format parse_format(const std::string &name)
{
    for (int i = 0; i < 6; i++)
        if (name == kNames[i])
            return static_cast<Format>(i);
    throw std::invalid_argument("unknown trace format '" + name + "' (cloudphysics | alibaba | tencent | msr | iolog2 | iolog3)");
}

TraceReader::TraceReader(const std::string &path, Format format)
    : own_(std::make_unique<std::ifstream>(path)), in_(own_.get()), name_(path), format_(format)
{
    if (!*own_ || std::filesystem::is_directory(path))
        throw TraceError(path + ": cannot open" + (std::filesystem::is_directory(path) ? " (it is a folder)" : ""));
    // The traces are often published compressed; say so rather than "line 1: bad field".
    const int b0 = own_->get(), b1 = own_->get();
    own_->clear();
    own_->seekg(0);
    if (b0 == 0x1f && b1 == 0x8b)
        throw TraceError(path + ": gzip-compressed; decompress it first (gunzip -k '" + path + "')");
    if (b0 == 'B' && b1 == 'Z')
        throw TraceError(path + ": bzip2-compressed; decompress it first (bunzip2 -k '" + path + "')");
    if (b0 == 0x28 && b1 == 0xb5)
        throw TraceError(path + ": zstd-compressed; decompress it first (unzstd '" + path + "')");
}

TraceReader::TraceReader(std::istream &in, std::string name, Format format) : in_(&in), name_(std::move(name)), format_(format) {}

void TraceReader::fail(const std::string &msg) const
{
    throw TraceError(name_ + ":" + std::to_string(line_) + ": " + msg);
}

namespace {

// Parsers of one field; `what` names it in messages. They take the reader's fail via a lambda.
template <class Fail>
std::uint64_t u64(std::string_view f, const char *what, Fail &&fail)
{
    f = trim(f);
    if (f.empty())
        fail(std::string(what) + ": empty");
    if (f[0] == '-')
        fail(std::string(what) + ": must not be negative (got '" + std::string(f) + "')");
    std::uint64_t v = 0;
    for (char c : f) {
        if (c < '0' || c > '9')
            fail(std::string(what) + ": expected a non-negative integer, got '" + std::string(f) + "'");
        const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
        if (v > (kU64Max - d) / 10)
            fail(std::string(what) + ": " + std::string(f) + " does not fit in 64 bits");
        v = v * 10 + d;
    }
    return v;
}

// A non-negative decimal ("12", "12.5") as an integer count of 10^-digits units, exactly.
template <class Fail>
std::uint64_t fixed(std::string_view f, unsigned digits, const char *what, Fail &&fail)
{
    f = trim(f);
    const std::size_t dot = f.find('.');
    if (dot == std::string_view::npos) {
        std::uint64_t v = u64(f, what, fail), scaled = v;
        for (unsigned k = 0; k < digits; k++) {
            if (scaled > kU64Max / 10)
                fail(std::string(what) + ": " + std::string(f) + " is too large");
            scaled *= 10;
        }
        return scaled;
    }
    std::string_view frac = f.substr(dot + 1);
    if (frac.size() > digits)
        fail(std::string(what) + ": '" + std::string(f) + "' has more than " + std::to_string(digits) + " decimals");
    if (frac.empty() || dot == 0)
        fail(std::string(what) + ": expected a non-negative number, got '" + std::string(f) + "'");
    std::string joined(f.substr(0, dot));
    joined += frac;
    joined.append(digits - frac.size(), '0');
    if (f[0] == '-')
        fail(std::string(what) + ": must not be negative (got '" + std::string(f) + "')");
    for (char c : joined)
        if (c < '0' || c > '9')
            fail(std::string(what) + ": expected a non-negative number, got '" + std::string(f) + "'");
    return u64(joined, what, fail);
}

std::uint64_t mul(std::uint64_t a, std::uint64_t b, bool &overflow)
{
    if (b != 0 && a > kU64Max / b)
        overflow = true;
    return a * b;
}

}  // namespace

void TraceReader::set_time(std::uint64_t ticks, std::uint64_t unit_ns, Record &r)
{
    if (first_) {
        t0_ = last_ = ticks;
        first_ = false;
    }
    if (ticks < last_)
        fail("time goes backwards (" + std::to_string(ticks) + " after " + std::to_string(last_) + ")");
    last_ = ticks;
    bool overflow = false;
    r.time_ns = mul(ticks - t0_, unit_ns, overflow);
    if (overflow)
        fail("time " + std::to_string(ticks) + " is more than 584 years after the first record's");
}

void TraceReader::check_length(std::uint64_t length, Record &r) const
{
    if (r.op != Op::kOther) {
        if (length == 0)
            fail("length 0: a read or write moves at least one byte");
        if (length > kMaxLength)
            fail("length " + std::to_string(length) + " bytes is above the descriptor's largest I/O (" +
                 std::to_string(kMaxLength) + " bytes, BG_SIZE_BITS = " + std::to_string(BG_SIZE_BITS) + ")");
    } else if (length > UINT32_MAX) {
        fail("length " + std::to_string(length) + " does not fit in 32 bits");
    }
    r.length = static_cast<std::uint32_t>(length);
}

namespace {

// The longest line a reader takes: a record is under 200 bytes, so anything longer is not one
// (and a file without newlines, or /dev/zero, must not be read whole into memory).
constexpr std::size_t kMaxLine = 1u << 16;

// std::getline with a bound: false at the end of the input; `too_long` when the line exceeds kMaxLine.
bool read_line(std::istream &in, std::string &line, bool &too_long)
{
    line.clear();
    too_long = false;
    std::streambuf *sb = in.rdbuf();
    for (;;) {
        const int c = sb->sbumpc();
        if (c == std::char_traits<char>::eof()) {
            in.setstate(std::ios::eofbit);
            return !line.empty();
        }
        if (c == '\n')
            return true;
        if (line.size() == kMaxLine) {
            too_long = true;
            return true;
        }
        line.push_back(static_cast<char>(c));
    }
}

}  // namespace

bool TraceReader::next(Record &r)
{
    std::string line;
    bool too_long = false;
    for (;;) {
        try {
            if (!read_line(*in_, line, too_long))
                break;
        } catch (const std::ios_base::failure &) {  // the stream buffer's own read error
            fail("read error");
        }
        line_++;
        if (too_long)
            fail("line longer than " + std::to_string(kMaxLine) + " bytes: not a trace record");
        if (line.find('\0') != std::string::npos)
            fail("a NUL byte (a binary file?)");
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (trim(line).empty())
            continue;  // blank lines (a trailing newline pair, an editor's last line) carry nothing
        r = Record{};
        r.line = line_;
        if (parse_line(line, r))
            return true;
    }
    if (in_->bad())
        fail("read error");
    if (line_ == 0 && (format_ == Format::kIologV2 || format_ == Format::kIologV3))
        fail("empty file: expected the line 'fio version " + std::string(format_ == Format::kIologV2 ? "2" : "3") + " iolog'");
    return false;
}

bool TraceReader::parse_line(const std::string &text, Record &r)
{
    auto f = [this](const std::string &m) { fail(m); };
    auto count = [&](const std::vector<std::string_view> &v, std::size_t n, const char *fields) {
        if (v.size() != n)
            fail("expected " + std::to_string(n) + " fields (" + fields + "), got " + std::to_string(v.size()));
    };
    bool overflow = false;
    switch (format_) {
    case Format::kCloudPhysics: {
        if (line_ == 1 && text == kCloudPhysicsHeader)
            return false;
        const auto v = split(text, ',');
        count(v, 5, "version,time,op,size,lbn");
        u64(v[0], "version", f);
        const std::uint64_t t = fixed(v[1], 9, "time", f);  // seconds -> ns
        // SCSI opcodes: READ/WRITE(6), (10), (12), (16).
        const std::string op(trim(v[2]));
        if (op == "08" || op == "28" || op == "a8" || op == "88")
            r.op = Op::kRead;
        else if (op == "0a" || op == "2a" || op == "aa" || op == "8a")
            r.op = Op::kWrite;
        else
            fail("op: unknown SCSI opcode '" + op + "' (expected a READ 08/28/a8/88 or WRITE 0a/2a/aa/8a, lower-case hex)");
        check_length(u64(v[3], "size", f), r);
        r.offset = mul(u64(v[4], "lbn", f), 512, overflow);
        if (overflow)
            fail("lbn: the byte offset does not fit in 64 bits");
        r.device = "0";
        set_time(t, 1, r);
        return true;
    }
    case Format::kAlibaba: {
        const auto v = split(text, ',');
        count(v, 5, "device_id,opcode,offset,length,timestamp");
        r.device = std::to_string(u64(v[0], "device_id", f));
        const std::string_view op = trim(v[1]);
        if (op == "R")
            r.op = Op::kRead;
        else if (op == "W")
            r.op = Op::kWrite;
        else
            fail("opcode: unknown '" + std::string(op) + "' (expected R or W)");
        r.offset = u64(v[2], "offset", f);
        check_length(u64(v[3], "length", f), r);
        set_time(u64(v[4], "timestamp", f), 1000, r);  // microseconds
        return true;
    }
    case Format::kTencent: {
        const auto v = split(text, ',');
        count(v, 5, "Timestamp,Offset,Size,IOType,VolumeID");
        const std::uint64_t t = u64(v[0], "Timestamp", f);  // Unix seconds
        r.offset = mul(u64(v[1], "Offset", f), 512, overflow);
        if (overflow)
            fail("Offset: the byte offset does not fit in 64 bits");
        const std::uint64_t sectors = u64(v[2], "Size", f);
        if (sectors > kMaxLength)  // before the product can overflow
            fail("Size " + std::to_string(sectors) + " sectors is above the descriptor's largest I/O (" +
                 std::to_string(kMaxLength) + " bytes)");
        const std::string_view op = trim(v[3]);
        if (op == "0")
            r.op = Op::kRead;
        else if (op == "1")
            r.op = Op::kWrite;
        else
            fail("IOType: unknown '" + std::string(op) + "' (expected 0 read or 1 write)");
        check_length(sectors * 512, r);
        r.device = std::to_string(u64(v[4], "VolumeID", f));
        set_time(t, 1'000'000'000, r);
        return true;
    }
    case Format::kMsr: {
        const auto v = split(text, ',');
        count(v, 7, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime");
        const std::uint64_t t = u64(v[0], "Timestamp", f);  // Windows filetime, 100 ns
        const std::string_view host = trim(v[1]);
        if (host.empty() || host.find_first_of(" \t") != std::string_view::npos)
            fail("Hostname: must be non-empty without blanks");
        r.device = std::string(host) + "_" + std::to_string(u64(v[2], "DiskNumber", f));
        const std::string_view op = trim(v[3]);
        if (op == "Read")
            r.op = Op::kRead;
        else if (op == "Write")
            r.op = Op::kWrite;
        else
            fail("Type: unknown '" + std::string(op) + "' (expected Read or Write)");
        r.offset = u64(v[4], "Offset", f);
        check_length(u64(v[5], "Size", f), r);
        u64(v[6], "ResponseTime", f);
        set_time(t, 100, r);
        return true;
    }
    case Format::kIologV2:
    case Format::kIologV3: {
        const bool v3 = format_ == Format::kIologV3;
        if (line_ == 1) {
            const char *want = v3 ? "fio version 3 iolog" : "fio version 2 iolog";
            if (trim(text) != want)
                fail(std::string("expected the version line '") + want + "'");
            return false;
        }
        auto v = split_blanks(text);
        std::uint64_t us = 0;
        if (v3) {
            if (v.size() != 3 && v.size() != 5)
                fail("expected 'TIMESTAMP FILE add|open|close' or 'TIMESTAMP FILE ACTION OFFSET LENGTH', got " +
                     std::to_string(v.size()) + " fields");
            us = u64(v[0], "timestamp", f);
            v.erase(v.begin());
        } else if (v.size() != 2 && v.size() != 4) {
            fail("expected 'FILE add|open|close' or 'FILE ACTION OFFSET LENGTH', got " + std::to_string(v.size()) + " fields");
        }
        const std::string file(v[0]);
        const std::string_view act = v[1];
        if (v.size() == 2) {
            auto it = files_.find(file);
            if (act == "add") {
                if (it != files_.end())
                    fail("file '" + file + "' added twice");
                files_[file] = false;
            } else if (act == "open" || act == "close") {
                if (it == files_.end())
                    fail(std::string(act) + " of file '" + file + "' that was never added");
                if (it->second == (act == "open"))
                    fail("file '" + file + "' is already " + (act == "open" ? "open" : "closed"));
                it->second = act == "open";
            } else {
                fail("unknown file action '" + std::string(act) + "' (expected add, open or close)");
            }
            if (v3) {
                r.line = line_;
                set_time(us, 1000, r);  // file actions keep the clock monotonic too
            }
            return false;
        }
        const std::uint64_t a = u64(v[2], "offset", f), len = u64(v[3], "length", f);
        if (act == "wait") {
            if (v3)
                fail("action 'wait' is not allowed in iolog v3 (timestamps replace it)");
            if (a > kU64Max / 1000 - wait_us_)
                fail("wait: the total waiting time overflows");
            wait_us_ += a;  // "relative to the previous wait statement": the waits add up
            return false;
        }
        if (act == "read")
            r.op = Op::kRead;
        else if (act == "write")
            r.op = Op::kWrite;
        else if (act == "sync" || act == "datasync" || act == "trim")
            r.op = Op::kOther;
        else
            fail("unknown action '" + std::string(act) + "' (expected read, write, sync, datasync, trim" +
                 (v3 ? ")" : " or wait)"));
        const auto it = files_.find(file);
        if (it == files_.end() || !it->second)
            fail("I/O on file '" + file + "' that is not open (fio requires add, then open)");
        r.device = file;
        r.offset = a;
        check_length(len, r);
        set_time(v3 ? us : wait_us_, 1000, r);
        return true;
    }
    }
    return false;
}

}  // namespace bg::trace
