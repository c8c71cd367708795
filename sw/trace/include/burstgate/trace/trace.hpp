// Real block I/O traces: one streaming reader for the formats docs/references.md lists
// (CloudPhysics, Alibaba, Tencent CBS, MSR Cambridge, fio iolog v2 and v3) and the fio iolog v3
// writers (several files into a string; one file onto a stream). A reader holds one line at a
// time, so a multi-gigabyte trace costs no memory.
//
// Every record's time is relative to the first record of the file (so MSR's Windows filetimes
// and Tencent's Unix seconds need no epoch), in integer nanoseconds. Every malformed line
// throws TraceError "FILE:LINE: message"; nothing is truncated, clamped or skipped silently.
#pragma once

#include <cstdint>
#include <fstream>
#include <istream>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "burstgate/regs.h"

namespace bg::trace {

// The largest I/O one datapath descriptor carries (its size field is BG_SIZE_BITS wide).
inline constexpr std::uint32_t kMaxLength = (1u << BG_SIZE_BITS) - 1u;

struct TraceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Format { kCloudPhysics, kAlibaba, kTencent, kMsr, kIologV2, kIologV3 };
// "cloudphysics" | "alibaba" | "tencent" | "msr" | "iolog2" | "iolog3".
const char *format_name(Format f);
// Throws std::invalid_argument naming the accepted names.
Format parse_format(const std::string &name);

// kOther: an operation that moves no data (fio's sync, datasync, trim): parsed and checked,
// but the simulator and trace2iolog skip it.
enum class Op : std::uint8_t { kRead, kWrite, kOther };

struct Record {
    std::uint64_t time_ns = 0;   // since the file's first record
    std::string device;          // Alibaba device_id, Tencent VolumeID, MSR "host_disk", fio file name, CloudPhysics "0"
    Op op = Op::kRead;
    std::uint64_t offset = 0;    // bytes
    std::uint32_t length = 0;    // bytes, 1..kMaxLength for reads and writes
    std::uint64_t line = 0;      // of the source file, for messages found later
};

class TraceReader {
public:
    // Throws TraceError "PATH: cannot open" when the file cannot be read.
    TraceReader(const std::string &path, Format format);
    // `name` is used in messages.
    TraceReader(std::istream &in, std::string name, Format format);
    TraceReader(const TraceReader &) = delete;
    TraceReader &operator=(const TraceReader &) = delete;

    // The next record, false at the end of the file. Throws TraceError on a malformed line.
    bool next(Record &r);
    const std::string &name() const { return name_; }
    Format format() const { return format_; }

private:
    [[noreturn]] void fail(const std::string &msg) const;
    bool parse_line(const std::string &line, Record &r);
    // ticks in the format's native unit; `unit_ns` converts them.
    void set_time(std::uint64_t ticks, std::uint64_t unit_ns, Record &r);
    void check_length(std::uint64_t length, Record &r) const;

    std::unique_ptr<std::ifstream> own_;
    std::istream *in_;
    std::string name_;
    Format format_;
    std::uint64_t line_ = 0;
    bool first_ = true;             // no record yet
    std::uint64_t t0_ = 0, last_ = 0;  // ticks of the first and the previous record
    std::uint64_t wait_us_ = 0;     // iolog v2: the sum of the wait actions so far
    std::map<std::string, bool> files_;  // iolog: added files -> opened
};

// fio iolog v3 of several files in one log, formatted into a caller's string: no stream, no
// system call, no allocation beyond the string's own growth -- burstgate-gateway's arrival
// recorder (one file per tenant) formats on its hot path and writes whole chunks from another
// thread. IologV3Writer below is the one-file case on an ostream, formatted by this class.
class IologV3Lines {
public:
    // Throws std::invalid_argument for no files, or a name that is empty or has a blank (a
    // line's fields are blank-separated): "iolog file name 'NAME' must be non-empty without blanks".
    explicit IologV3Lines(std::vector<std::string> files);
    // The version line and every file's add and open at time 0 (so every record keeps its time
    // since the start of the log).
    void header(std::string &out) const;
    // "US FILE read|write OFFSET LENGTH" of files()[file]. Throws std::invalid_argument if `us` is
    // before the previous record's (iolog v3 times never go back; a caller whose clock may,
    // clamps to last_us()).
    void record(std::string &out, std::uint64_t us, std::size_t file, Op op, std::uint64_t offset,
                std::uint32_t length);
    // Every file's close at the last record's time.
    void close(std::string &out) const;
    // The most bytes record() appends for files()[file].
    std::size_t max_record_bytes(std::size_t file) const { return files_[file].size() + 64; }
    std::uint64_t last_us() const { return last_us_; }
    const std::vector<std::string> &files() const { return files_; }

private:
    std::vector<std::string> files_;
    std::uint64_t last_us_ = 0;
};

// fio iolog v3 (fio HOWTO "Trace file format v3"; fio >= 3.31): the version line, then
// "TIMESTAMP FILE add|open", "TIMESTAMP FILE read|write OFFSET LENGTH", "TIMESTAMP FILE close",
// timestamps in microseconds since the start of the run (fio's own writer uses
// utime_since_now, and its reader waits for the difference in microseconds).
class IologV3Writer {
public:
    // `file` is the name written on every line (replay it with fio --replay_redirect=DEV).
    IologV3Writer(std::ostream &out, std::string file);
    // Reads and writes only (kOther is skipped and counted). Times must not go backwards.
    void write(const Record &r);
    // The close action at the last record's time; called by the destructor if not before.
    void close();
    ~IologV3Writer();
    std::uint64_t written() const { return written_; }
    std::uint64_t skipped() const { return skipped_; }

private:
    std::ostream &out_;
    IologV3Lines lines_;
    std::string buf_;  // one line at a time
    std::uint64_t written_ = 0, skipped_ = 0;
    bool closed_ = false;
};

}  // namespace bg::trace
