// NBD wire encoding and the request checks; see nbd_proto.hpp.
#include "nbd_proto.hpp"

namespace bg::gw::nbd {

std::uint16_t get16(const std::uint8_t *p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }
std::uint32_t get32(const std::uint8_t *p)
{
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
std::uint64_t get64(const std::uint8_t *p) { return std::uint64_t{get32(p)} << 32 | get32(p + 4); }
void put16(std::vector<std::uint8_t> &b, std::uint16_t v)
{
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}
void put32(std::vector<std::uint8_t> &b, std::uint32_t v)
{
    put16(b, static_cast<std::uint16_t>(v >> 16));
    put16(b, static_cast<std::uint16_t>(v));
}
void put64(std::vector<std::uint8_t> &b, std::uint64_t v)
{
    put32(b, static_cast<std::uint32_t>(v >> 32));
    put32(b, static_cast<std::uint32_t>(v));
}

Request parse_request(const std::uint8_t (&raw)[kRequestBytes])
{
    Request r;
    r.magic = get32(raw);
    r.flags = get16(raw + 4);
    r.type = get16(raw + 6);
    r.cookie = get64(raw + 8);
    r.offset = get64(raw + 16);
    r.length = get32(raw + 24);
    return r;
}

Check check_request(const Request &r, std::uint64_t export_size, std::uint32_t max_block, std::uint32_t max_payload,
                    const Session &s)
{
    if (r.magic != kRequestMagic)
        return {Verdict::kClose, kEinval, "bad request magic"};
    // Past this point a bad WRITE still carries `length` bytes the stream must be resynced past.
    const bool write = r.type == kCmdWrite;
    auto fail = [&](std::uint32_t err, const char *why) {
        if (write && r.length > max_payload)
            return Check{Verdict::kClose, err, why};
        return Check{Verdict::kReplyError, err, why};
    };
    // The flags each command may carry (DF is not advertised: every READ is one chunk anyway).
    std::uint16_t allowed = 0;
    switch (r.type) {
    case kCmdDisc:
        return {Verdict::kDisconnect, kOk, ""};
    case kCmdRead: allowed = kCmdFlagFua; break;  // FUA on a read: harmless, libnbd may pass it
    case kCmdWrite:
    case kCmdTrim: allowed = kCmdFlagFua; break;
    case kCmdFlush:
    case kCmdCache: allowed = 0; break;
    case kCmdWriteZeroes: allowed = kCmdFlagFua | kCmdFlagNoHole | kCmdFlagFastZero; break;
    case kCmdBlockStatus:
        if (!s.block_status)
            return {Verdict::kReplyError, kEinval, "BLOCK_STATUS without a base:allocation meta context"};
        allowed = kCmdFlagReqOne;
        break;
    default:
        return {Verdict::kReplyError, kEinval, "unknown command"};
    }
    if ((r.flags & ~allowed) != 0)
        return fail(kEinval, "command flag not valid for this command");
    if (r.type == kCmdFlush) {
        if (r.offset != 0 || r.length != 0)
            return fail(kEinval, "FLUSH with an offset or a length");
        return {};
    }
    if (r.length == 0)
        return fail(kEinval, "zero length");
    // READ/WRITE move their length as payload; TRIM, WRITE_ZEROES, CACHE and BLOCK_STATUS only
    // name a range (the protocol lets those exceed the maximum payload).
    if ((r.type == kCmdRead || write) && r.length > max_block)
        return fail(s.structured && r.type == kCmdRead ? kEoverflow : kEinval,
                    "length above the export's maximum payload (NBD_INFO_BLOCK_SIZE)");
    // Zeroes that must be written (NO_HOLE, not FAST_ZERO) cost what a WRITE of the range costs:
    // above the maximum payload that is more than the protocol asks a server to take at once.
    if (r.type == kCmdWriteZeroes && (r.flags & kCmdFlagNoHole) && !(r.flags & kCmdFlagFastZero) && r.length > max_block)
        return {Verdict::kReplyError, kEoverflow, "WRITE_ZEROES with NO_HOLE above the maximum payload: split it"};
    if (r.offset > export_size || r.length > export_size - r.offset)
        return fail(write || r.type == kCmdWriteZeroes ? kEnospc : kEinval, "past the end of the export");
    return {};
}

std::vector<std::uint8_t> option_reply(std::uint32_t option, std::uint32_t type, const std::vector<std::uint8_t> &data)
{
    std::vector<std::uint8_t> b;
    b.reserve(20 + data.size());
    put64(b, kOptReplyMagic);
    put32(b, option);
    put32(b, type);
    put32(b, static_cast<std::uint32_t>(data.size()));
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

std::vector<std::uint8_t> simple_reply_header(std::uint32_t error, std::uint64_t cookie)
{
    std::vector<std::uint8_t> b;
    b.reserve(kSimpleReplyBytes);
    put32(b, kSimpleReplyMagic);
    put32(b, error);
    put64(b, cookie);
    return b;
}

std::vector<std::uint8_t> chunk_header(std::uint16_t flags, std::uint16_t type, std::uint64_t cookie, std::uint32_t length)
{
    std::vector<std::uint8_t> b;
    b.reserve(20);
    put32(b, kStructuredReplyMagic);
    put16(b, flags);
    put16(b, type);
    put64(b, cookie);
    put32(b, length);
    return b;
}

std::vector<std::uint8_t> error_chunk(std::uint64_t cookie, std::uint32_t error, const std::string &why)
{
    const std::string msg = why.substr(0, 1024);
    std::vector<std::uint8_t> b = chunk_header(kReplyFlagDone, kReplyError, cookie, static_cast<std::uint32_t>(6 + msg.size()));
    put32(b, error);
    put16(b, static_cast<std::uint16_t>(msg.size()));
    b.insert(b.end(), msg.begin(), msg.end());
    return b;
}

std::vector<std::uint8_t> option_error(std::uint32_t option, std::uint32_t type, const std::string &why)
{
    return option_reply(option, type, std::vector<std::uint8_t>(why.begin(), why.end()));
}

bool parse_meta(const std::vector<std::uint8_t> &data, std::string &name, std::vector<std::string> &queries)
{
    std::size_t p = 0;
    auto u32 = [&](std::uint32_t &v) {
        if (data.size() - p < 4)
            return false;
        v = get32(data.data() + p);
        p += 4;
        return true;
    };
    auto str = [&](std::string &out) {
        std::uint32_t n = 0;
        if (!u32(n) || n > data.size() - p)
            return false;
        out.assign(reinterpret_cast<const char *>(data.data()) + p, n);
        p += n;
        return true;
    };
    std::uint32_t k = 0;
    if (!str(name) || !u32(k))
        return false;
    queries.clear();
    for (std::uint32_t i = 0; i < k; i++) {
        std::string q;
        if (!str(q))
            return false;
        queries.push_back(std::move(q));
    }
    return p == data.size();
}

bool parse_go(const std::vector<std::uint8_t> &data, std::string &name, std::vector<std::uint16_t> &infos)
{
    if (data.size() < 6)
        return false;
    const std::uint32_t n = get32(data.data());
    if (n > data.size() - 6)
        return false;
    name.assign(reinterpret_cast<const char *>(data.data()) + 4, n);
    const std::uint16_t k = get16(data.data() + 4 + n);
    if (data.size() != 6 + std::size_t{n} + 2 * std::size_t{k})
        return false;
    infos.clear();
    for (std::uint16_t i = 0; i < k; i++)
        infos.push_back(get16(data.data() + 6 + n + 2 * i));
    return true;
}

}  // namespace bg::gw::nbd
