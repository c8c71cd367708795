// The NBD request checks and encodings of burstgate-gateway (sw/gateway/nbd_proto.hpp), one
// case per rule: each would let a malformed request through, or refuse a valid one.
#include <gtest/gtest.h>

#include "nbd_proto.hpp"

using namespace bg::gw::nbd;

namespace {

Request req(std::uint16_t type, std::uint64_t off, std::uint32_t len, std::uint16_t flags = 0)
{
    Request r;
    r.magic = kRequestMagic;
    r.type = type;
    r.offset = off;
    r.length = len;
    r.flags = flags;
    return r;
}

constexpr std::uint64_t kSize = 1 << 20;
constexpr std::uint32_t kMax = 64 << 10;

Check check(const Request &r) { return check_request(r, kSize, kMax, kMax); }

}  // namespace

TEST(NbdProto, ParsesRequestBigEndian)
{
    const std::uint8_t raw[kRequestBytes] = {0x25, 0x60, 0x95, 0x13, 0x00, 0x01, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 7, 8,
                                             0, 0, 0, 0, 0, 0, 0x10, 0x00, 0x00, 0x00, 0x02, 0x00};
    const Request r = parse_request(raw);
    EXPECT_EQ(r.magic, kRequestMagic);
    EXPECT_EQ(r.flags, kCmdFlagFua);
    EXPECT_EQ(r.type, kCmdWrite);
    EXPECT_EQ(r.cookie, 0x0102030405060708ull);
    EXPECT_EQ(r.offset, 0x1000u);
    EXPECT_EQ(r.length, 0x200u);
}

TEST(NbdProto, ValidRequestsAreServed)
{
    EXPECT_EQ(check(req(kCmdRead, 0, 4096)).verdict, Verdict::kServe);
    EXPECT_EQ(check(req(kCmdWrite, kSize - kMax, kMax, kCmdFlagFua)).verdict, Verdict::kServe);
    EXPECT_EQ(check(req(kCmdFlush, 0, 0)).verdict, Verdict::kServe);
    EXPECT_EQ(check(req(kCmdTrim, 0, kSize)).verdict, Verdict::kServe);  // TRIM moves no data: no block limit
    EXPECT_EQ(check(req(kCmdDisc, 0, 0)).verdict, Verdict::kDisconnect);
}

TEST(NbdProto, BadMagicCloses)
{
    Request r = req(kCmdRead, 0, 4096);
    r.magic = 0x25609514u;
    EXPECT_EQ(check(r).verdict, Verdict::kClose);
}

TEST(NbdProto, UnknownCommandOrFlagIsEinval)
{
    EXPECT_EQ(check(req(9, 0, 4096)).error, kEinval);
    EXPECT_EQ(check(req(kCmdRead, 0, 4096, 0x8000)).verdict, Verdict::kReplyError);
    EXPECT_EQ(check(req(kCmdFlush, 512, 0)).verdict, Verdict::kReplyError);
    EXPECT_EQ(check(req(kCmdRead, 0, 0)).error, kEinval);
}

TEST(NbdProto, BoundsDoNotWrap)
{
    EXPECT_EQ(check(req(kCmdRead, kSize - 4095, 4096)).error, kEinval);
    EXPECT_EQ(check(req(kCmdRead, ~0ull - 100, 4096)).error, kEinval);  // offset + length wraps
    EXPECT_EQ(check(req(kCmdRead, kSize, 1)).error, kEinval);
    EXPECT_EQ(check(req(kCmdWrite, kSize, 512)).error, kEnospc);
    EXPECT_EQ(check(req(kCmdWrite, kSize, 512)).verdict, Verdict::kReplyError);  // payload is skipped
    EXPECT_EQ(check(req(kCmdTrim, kSize - 1, 2)).error, kEinval);
}

TEST(NbdProto, OversizedLength)
{
    EXPECT_EQ(check(req(kCmdRead, 0, kMax + 1)).verdict, Verdict::kReplyError);
    // A WRITE payload too large to skip cannot be resynchronised past: close.
    EXPECT_EQ(check(req(kCmdWrite, 0, kMax + 1)).verdict, Verdict::kClose);
    EXPECT_EQ(check_request(req(kCmdWrite, 0, kMax + 1), kSize, kMax, 2 * kMax).verdict, Verdict::kReplyError);
}

TEST(NbdProto, GoPayload)
{
    std::vector<std::uint8_t> d;
    put32(d, 6);
    for (char c : std::string("victim"))
        d.push_back(static_cast<std::uint8_t>(c));
    put16(d, 1);
    put16(d, kInfoBlockSize);
    std::string name;
    std::vector<std::uint16_t> infos;
    ASSERT_TRUE(parse_go(d, name, infos));
    EXPECT_EQ(name, "victim");
    EXPECT_EQ(infos, std::vector<std::uint16_t>{kInfoBlockSize});
    d.push_back(0);  // one byte too many
    EXPECT_FALSE(parse_go(d, name, infos));
    std::vector<std::uint8_t> lying;
    put32(lying, 0xFFFFFFFFu);  // a name longer than the option
    put16(lying, 0);
    EXPECT_FALSE(parse_go(lying, name, infos));
}

TEST(NbdProto, Replies)
{
    const auto h = simple_reply_header(kEinval, 0x1122334455667788ull);
    ASSERT_EQ(h.size(), kSimpleReplyBytes);
    EXPECT_EQ(get32(h.data()), kSimpleReplyMagic);
    EXPECT_EQ(get32(h.data() + 4), kEinval);
    EXPECT_EQ(get64(h.data() + 8), 0x1122334455667788ull);
    const auto o = option_reply(kOptGo, kRepErrUnknown, {1, 2});
    ASSERT_EQ(o.size(), 22u);
    EXPECT_EQ(get64(o.data()), kOptReplyMagic);
    EXPECT_EQ(get32(o.data() + 12), kRepErrUnknown);
    EXPECT_EQ(get32(o.data() + 16), 2u);
}

TEST(NbdProto, WriteZeroesAndCache)
{
    EXPECT_EQ(check(req(kCmdWriteZeroes, 0, kSize, kCmdFlagNoHole | kCmdFlagFastZero | kCmdFlagFua)).verdict,
              Verdict::kServe);  // a range, not a payload: no block limit when it is fast
    EXPECT_EQ(check(req(kCmdWriteZeroes, 0, kSize)).verdict, Verdict::kServe);  // may punch: no limit
    EXPECT_EQ(check(req(kCmdWriteZeroes, 0, kMax + 1, kCmdFlagNoHole)).error, kEoverflow);  // written: like a WRITE
    EXPECT_EQ(check(req(kCmdWriteZeroes, 0, kMax, kCmdFlagNoHole)).verdict, Verdict::kServe);
    EXPECT_EQ(check(req(kCmdWriteZeroes, kSize - 512, 1024)).error, kEnospc);
    EXPECT_EQ(check(req(kCmdWrite, 0, 4096, kCmdFlagNoHole)).error, kEinval);  // NO_HOLE is WRITE_ZEROES's
    EXPECT_EQ(check(req(kCmdCache, 0, kSize)).verdict, Verdict::kServe);
    EXPECT_EQ(check(req(kCmdCache, kSize, 1)).error, kEinval);
}

TEST(NbdProto, BlockStatusNeedsTheMetaContext)
{
    EXPECT_EQ(check(req(kCmdBlockStatus, 0, 4096)).error, kEinval);
    const Session s{true, true};
    EXPECT_EQ(check_request(req(kCmdBlockStatus, 0, kSize, kCmdFlagReqOne), kSize, kMax, kMax, s).verdict, Verdict::kServe);
    EXPECT_EQ(check_request(req(kCmdBlockStatus, 0, kSize + 1), kSize, kMax, kMax, s).error, kEinval);
}

TEST(NbdProto, OversizedReadIsEoverflowWithStructuredReplies)
{
    const Session s{true, false};
    EXPECT_EQ(check_request(req(kCmdRead, 0, kMax + 1), kSize, kMax, kMax, s).error, kEoverflow);
    EXPECT_EQ(check(req(kCmdRead, 0, kMax + 1)).error, kEinval);
}

TEST(NbdProto, MetaPayload)
{
    std::vector<std::uint8_t> d;
    put32(d, 1);
    d.push_back('v');
    put32(d, 1);
    put32(d, 15);
    for (char c : std::string("base:allocation"))
        d.push_back(static_cast<std::uint8_t>(c));
    std::string name;
    std::vector<std::string> q;
    ASSERT_TRUE(parse_meta(d, name, q));
    EXPECT_EQ(name, "v");
    EXPECT_EQ(q, std::vector<std::string>{"base:allocation"});
    d.pop_back();  // a query shorter than its length
    EXPECT_FALSE(parse_meta(d, name, q));
}

TEST(NbdProto, ErrorChunkCarriesTheReason)
{
    const auto e = error_chunk(42, kEoverflow, "too big");
    ASSERT_EQ(e.size(), 20u + 6 + 7);
    EXPECT_EQ(get32(e.data()), kStructuredReplyMagic);
    EXPECT_EQ(get16(e.data() + 4), kReplyFlagDone);
    EXPECT_EQ(get16(e.data() + 6), kReplyError);
    EXPECT_EQ(get64(e.data() + 8), 42u);
    EXPECT_EQ(get32(e.data() + 16), 13u);
    EXPECT_EQ(get32(e.data() + 20), kEoverflow);
    EXPECT_EQ(get16(e.data() + 24), 7u);
}
