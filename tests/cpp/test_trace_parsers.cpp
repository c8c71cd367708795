// bg_trace: every format's good lines become the right records (units, devices, times relative
// to the first record), every kind of bad line throws FILE:LINE, the iolog v3 writer's output
// reads back as the same records, and the shipped CloudPhysics trace parses whole.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "burstgate/trace/trace.hpp"

using bg::trace::Format;
using bg::trace::Op;
using bg::trace::Record;
using bg::trace::TraceError;
using bg::trace::TraceReader;

namespace {

std::vector<Record> parse(const std::string &text, Format f)
{
    std::istringstream in(text);
    TraceReader rd(in, "t.txt", f);
    std::vector<Record> out;
    Record r;
    while (rd.next(r))
        out.push_back(r);
    return out;
}

// The message of the TraceError that parsing `text` throws ("" when none).
std::string error_of(const std::string &text, Format f)
{
    try {
        parse(text, f);
    } catch (const TraceError &e) {
        return e.what();
    }
    return "";
}

#define EXPECT_TRACE_ERROR(text, fmt, where, words)                         \
    do {                                                                    \
        const std::string msg_ = error_of(text, fmt);                       \
        EXPECT_EQ(msg_.rfind(where, 0), 0u) << "message: " << msg_;        \
        EXPECT_NE(msg_.find(words), std::string::npos) << "message: " << msg_; \
    } while (0)

const std::string kCpHeader = "version,time,op,size,lbn\n";

}  // namespace

TEST(TraceCloudPhysics, GoodLinesHaveSecondsSectorsAndScsiOpcodes)
{
    const auto v = parse(kCpHeader + "1,100,28,4096,8\n1,100.5,2a,512,9\n\n1,102,a8,69632,0\n", Format::kCloudPhysics);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].time_ns, 0u);
    EXPECT_EQ(v[1].time_ns, 500'000'000u);  // fractional seconds, exact
    EXPECT_EQ(v[2].time_ns, 2'000'000'000u);
    EXPECT_EQ(v[0].op, Op::kRead);
    EXPECT_EQ(v[1].op, Op::kWrite);
    EXPECT_EQ(v[2].op, Op::kRead);  // READ(12)
    EXPECT_EQ(v[0].offset, 8u * 512);
    EXPECT_EQ(v[0].length, 4096u);
    EXPECT_EQ(v[2].line, 5u);  // the blank line counts
    EXPECT_EQ(v[0].device, "0");
}

TEST(TraceCloudPhysics, EveryBadLineNamesFileAndLine)
{
    const std::string ok = kCpHeader + "1,100,28,4096,8\n";
    EXPECT_TRACE_ERROR(ok + "1,100,28,4096\n", Format::kCloudPhysics, "t.txt:3: ", "expected 5 fields");
    EXPECT_TRACE_ERROR(ok + "1,100,28,4k,8\n", Format::kCloudPhysics, "t.txt:3: ", "size: expected a non-negative integer");
    EXPECT_TRACE_ERROR(ok + "1,100,28,-512,8\n", Format::kCloudPhysics, "t.txt:3: ", "size: must not be negative");
    EXPECT_TRACE_ERROR(ok + "1,-1,28,512,8\n", Format::kCloudPhysics, "t.txt:3: ", "time: must not be negative");
    EXPECT_TRACE_ERROR(ok + "1,100,35,512,8\n", Format::kCloudPhysics, "t.txt:3: ", "unknown SCSI opcode '35'");
    EXPECT_TRACE_ERROR(ok + "1,99,28,512,8\n", Format::kCloudPhysics, "t.txt:3: ", "time goes backwards");
    EXPECT_TRACE_ERROR(ok + "1,100,28,0,8\n", Format::kCloudPhysics, "t.txt:3: ", "length 0");
    EXPECT_TRACE_ERROR(ok + "1,100,28,16777216,8\n", Format::kCloudPhysics, "t.txt:3: ", "above the descriptor's largest I/O (16777215");
    EXPECT_TRACE_ERROR(ok + "1,100.0000000001,28,512,8\n", Format::kCloudPhysics, "t.txt:3: ", "more than 9 decimals");
    EXPECT_TRACE_ERROR(ok + "1,100,28,512,99999999999999999999\n", Format::kCloudPhysics, "t.txt:3: ", "does not fit in 64 bits");
    // The largest descriptor size is accepted as is, not truncated.
    EXPECT_EQ(parse(kCpHeader + "1,1,28,16777215,0\n", Format::kCloudPhysics).at(0).length, 16777215u);
    // A header anywhere but line 1 is a bad line.
    EXPECT_TRACE_ERROR(ok + kCpHeader, Format::kCloudPhysics, "t.txt:3: ", "version: expected a non-negative integer");
}

TEST(TraceAlibaba, DevicesBytesAndMicroseconds)
{
    const auto v = parse("7,R,4096,8192,1000\n12,W,0,512,1250\r\n", Format::kAlibaba);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].device, "7");
    EXPECT_EQ(v[1].device, "12");
    EXPECT_EQ(v[1].time_ns, 250'000u);
    EXPECT_EQ(v[0].offset, 4096u);
    EXPECT_EQ(v[0].length, 8192u);
    EXPECT_EQ(v[1].op, Op::kWrite);
}

TEST(TraceAlibaba, BadLines)
{
    EXPECT_TRACE_ERROR("7,R,0,512,10\n7,X,0,512,11\n", Format::kAlibaba, "t.txt:2: ", "opcode: unknown 'X'");
    EXPECT_TRACE_ERROR("7,R,0,512,10\n7,R,0,512,9\n", Format::kAlibaba, "t.txt:2: ", "time goes backwards");
    EXPECT_TRACE_ERROR("7,R,0,512,1e3\n", Format::kAlibaba, "t.txt:1: ", "timestamp: expected a non-negative integer");
    EXPECT_TRACE_ERROR("7,R,0,512\n", Format::kAlibaba, "t.txt:1: ", "expected 5 fields");
    EXPECT_TRACE_ERROR("vol,R,0,512,1\n", Format::kAlibaba, "t.txt:1: ", "device_id");
}

TEST(TraceTencent, SectorsAndUnixSeconds)
{
    const auto v = parse("1538323200,16,8,0,1063\n1538323201,0,1,1,1063\n", Format::kTencent);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].offset, 16u * 512);
    EXPECT_EQ(v[0].length, 8u * 512);
    EXPECT_EQ(v[0].op, Op::kRead);
    EXPECT_EQ(v[1].op, Op::kWrite);
    EXPECT_EQ(v[1].time_ns, 1'000'000'000u);
    EXPECT_EQ(v[1].device, "1063");
    EXPECT_TRACE_ERROR("1,0,8,2,1\n", Format::kTencent, "t.txt:1: ", "IOType: unknown '2'");
    EXPECT_TRACE_ERROR("1,0,0,1,1\n", Format::kTencent, "t.txt:1: ", "length 0");
    // 32768 sectors = 16 MiB: one byte more than a descriptor carries.
    EXPECT_TRACE_ERROR("1,0,32768,1,1\n", Format::kTencent, "t.txt:1: ", "above the descriptor's largest I/O");
}

TEST(TraceMsr, FiletimeAndHostDisk)
{
    // Real MSR times are ~1.28e17 (100 ns units since 1601): only differences are kept.
    const auto v = parse("128166372003061629,hm,0,Read,3154131968,8192,2097\n"
                         "128166372013061629,hm,1,Write,0,4096,100\n",
                         Format::kMsr);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].device, "hm_0");
    EXPECT_EQ(v[1].device, "hm_1");
    EXPECT_EQ(v[1].time_ns, 1'000'000'000u);
    EXPECT_EQ(v[0].offset, 3154131968u);
    EXPECT_TRACE_ERROR("1,hm,0,read,0,512,1\n", Format::kMsr, "t.txt:1: ", "Type: unknown 'read'");
    EXPECT_TRACE_ERROR("1,hm,0,Read,0,512\n", Format::kMsr, "t.txt:1: ", "expected 7 fields");
    EXPECT_TRACE_ERROR("1,hm,0,Read,0,512,x\n", Format::kMsr, "t.txt:1: ", "ResponseTime");
}

TEST(TraceIolog, Version2WaitsAddUp)
{
    const auto v = parse("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n"
                         "/dev/sdb wait 1000 0\n/dev/sdb write 8192 512\n/dev/sdb wait 500 0\n"
                         "/dev/sdb sync 0 0\n/dev/sdb close\n",
                         Format::kIologV2);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].device, "/dev/sdb");
    EXPECT_EQ(v[1].time_ns, 1'000'000u);
    EXPECT_EQ(v[1].op, Op::kWrite);
    EXPECT_EQ(v[2].op, Op::kOther);  // sync: no data, length 0 allowed
    EXPECT_EQ(v[2].time_ns, 1'500'000u);
}

TEST(TraceIolog, Version2BadLines)
{
    const std::string h = "fio version 2 iolog\n";
    EXPECT_TRACE_ERROR("fio version 3 iolog\n", Format::kIologV2, "t.txt:1: ", "expected the version line");
    EXPECT_TRACE_ERROR("", Format::kIologV2, "t.txt:0: ", "empty file");
    EXPECT_TRACE_ERROR(h + "f add\nf read 0 512\n", Format::kIologV2, "t.txt:3: ", "not open");
    EXPECT_TRACE_ERROR(h + "f open\n", Format::kIologV2, "t.txt:2: ", "never added");
    EXPECT_TRACE_ERROR(h + "f add\nf open\nf erase 0 512\n", Format::kIologV2, "t.txt:4: ", "unknown action 'erase'");
    EXPECT_TRACE_ERROR(h + "f add\nf open\nf read 0\n", Format::kIologV2, "t.txt:4: ", "got 3 fields");
    EXPECT_TRACE_ERROR(h + "f add\nf open\nf read 0 0\n", Format::kIologV2, "t.txt:4: ", "length 0");
    EXPECT_TRACE_ERROR(h + "f add\nf open\nf read -4096 512\n", Format::kIologV2, "t.txt:4: ", "must not be negative");
}

TEST(TraceIolog, Version3TimestampsInMicroseconds)
{
    const auto v = parse("fio version 3 iolog\n5 f add\n5 f open\n10 f read 0 4096\n2010 f write 4096 4096\n2010 f close\n",
                         Format::kIologV3);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].time_ns, 5'000u);  // relative to the first line's timestamp (the add)
    EXPECT_EQ(v[1].time_ns, 2'005'000u);
    const std::string h = "fio version 3 iolog\n0 f add\n0 f open\n";
    EXPECT_TRACE_ERROR(h + "10 f wait 100 0\n", Format::kIologV3, "t.txt:4: ", "'wait' is not allowed in iolog v3");
    EXPECT_TRACE_ERROR(h + "10 f read 0 512\n9 f read 0 512\n", Format::kIologV3, "t.txt:5: ", "time goes backwards");
    EXPECT_TRACE_ERROR(h + "f read 0 512\n", Format::kIologV3, "t.txt:4: ", "got 4 fields");
}

TEST(TraceIolog, WriterOutputReadsBackAsTheSameRecords)
{
    const std::string src = "7,R,4096,8192,1000\n7,W,0,512,1250\n7,W,1048576,65536,901250\n";
    const auto in = parse(src, Format::kAlibaba);
    std::ostringstream out;
    {
        bg::trace::IologV3Writer w(out, "vol7");
        for (const Record &r : in)
            w.write(r);
        Record sync;
        sync.op = Op::kOther;
        sync.time_ns = 901'250'000;
        w.write(sync);
        EXPECT_EQ(w.written(), 3u);
        EXPECT_EQ(w.skipped(), 1u);
    }  // the destructor writes the close action
    const std::string text = out.str();
    EXPECT_EQ(text.rfind("fio version 3 iolog\n0 vol7 add\n0 vol7 open\n0 vol7 read 4096 8192\n", 0), 0u) << text;
    EXPECT_NE(text.find("\n900250 vol7 close\n"), std::string::npos) << text;
    const auto back = parse(text, Format::kIologV3);
    ASSERT_EQ(back.size(), in.size());
    for (std::size_t i = 0; i < in.size(); i++) {
        EXPECT_EQ(back[i].time_ns, in[i].time_ns);
        EXPECT_EQ(back[i].op, in[i].op);
        EXPECT_EQ(back[i].offset, in[i].offset);
        EXPECT_EQ(back[i].length, in[i].length);
        EXPECT_EQ(back[i].device, "vol7");
    }
}

TEST(TraceIolog, SeveralFilesInOneLogReadBackPerFile)
{
    // The gateway's arrival recorder: one iolog "file" per tenant in one log, each added and
    // opened at 0, so a record keeps its time since the start whichever file it is in.
    bg::trace::IologV3Lines lines({"t20k", "t1k"});
    std::string text;
    lines.header(text);
    lines.record(text, 5, 1, Op::kWrite, 8192, 4096);
    lines.record(text, 7, 0, Op::kRead, 0, 131072);
    lines.record(text, 7, 1, Op::kRead, 4096, 512);
    lines.close(text);
    EXPECT_EQ(text, "fio version 3 iolog\n0 t20k add\n0 t20k open\n0 t1k add\n0 t1k open\n"
                    "5 t1k write 8192 4096\n7 t20k read 0 131072\n7 t1k read 4096 512\n7 t20k close\n7 t1k close\n");
    const auto back = parse(text, Format::kIologV3);
    ASSERT_EQ(back.size(), 3u);
    EXPECT_EQ(back[0].device, "t1k");
    EXPECT_EQ(back[0].time_ns, 5000u);
    EXPECT_EQ(back[1].device, "t20k");
    EXPECT_EQ(back[1].time_ns, 7000u);
    EXPECT_EQ(back[2].length, 512u);
    for (std::size_t f = 0; f < 2; f++)  // what the recorder reserves per line
        EXPECT_GE(lines.max_record_bytes(f), lines.files()[f].size() + 2 * 20 + 10 + 9);
    // Times never go back; only reads and writes are records; names are fields.
    EXPECT_THROW(lines.record(text, 6, 0, Op::kRead, 0, 512), std::invalid_argument);
    EXPECT_THROW(lines.record(text, 9, 0, Op::kOther, 0, 0), std::invalid_argument);
    EXPECT_THROW(bg::trace::IologV3Lines({"t 1"}), std::invalid_argument);
    EXPECT_THROW(bg::trace::IologV3Lines({"ok", ""}), std::invalid_argument);
    EXPECT_THROW(bg::trace::IologV3Lines({}), std::invalid_argument);
}

TEST(TraceFormats, NamesRoundTripAndUnknownIsRejected)
{
    for (Format f : {Format::kCloudPhysics, Format::kAlibaba, Format::kTencent, Format::kMsr, Format::kIologV2, Format::kIologV3})
        EXPECT_EQ(bg::trace::parse_format(bg::trace::format_name(f)), f);
    EXPECT_THROW(bg::trace::parse_format("blktrace"), std::invalid_argument);
    EXPECT_THROW(TraceReader("/nonexistent/trace.csv", Format::kAlibaba), TraceError);
}

// tests/data/README.md: 4,708 I/Os of the real trace (its first 300 s and 1770-1782 s), reads
// and writes, 512 B to 64 KiB.
TEST(TraceCloudPhysics, ShippedExcerptMatchesItsReadme)
{
    TraceReader rd(std::string(BG_SOURCE_DIR) + "/tests/data/cloudphysics-excerpt.csv", Format::kCloudPhysics);
    Record r;
    std::uint64_t n = 0, reads = 0, writes = 0, last = 0;
    std::uint32_t lo = UINT32_MAX, hi = 0;
    while (rd.next(r)) {
        n++;
        (r.op == Op::kRead ? reads : writes)++;
        lo = std::min(lo, r.length);
        hi = std::max(hi, r.length);
        last = r.time_ns;
    }
    EXPECT_EQ(n, 4'708u);
    EXPECT_EQ(reads, 1'687u);
    EXPECT_EQ(writes, 3'021u);
    EXPECT_EQ(lo, 512u);
    EXPECT_EQ(hi, 64u * 1024);
    EXPECT_EQ(last, 1781ull * 1'000'000'000);  // 1781 s after the first record, at one-second resolution
}
