// The NBD wire protocol as far as burstgate-gateway speaks it (NetworkBlockDevice doc/proto.md):
// fixed newstyle handshake, option haggling (EXPORT_NAME, GO, INFO, LIST, ABORT,
// STRUCTURED_REPLY, LIST/SET_META_CONTEXT with base:allocation), simple and structured replies. Everything on the wire is big-endian. Pure functions, no I/O: the server and the
// unit tests share them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bg::gw::nbd {

inline constexpr std::uint64_t kInitMagic = 0x4e42444d41474943ull;   // "NBDMAGIC"
inline constexpr std::uint64_t kOptMagic = 0x49484156454f5054ull;    // "IHAVEOPT"
inline constexpr std::uint64_t kOptReplyMagic = 0x0003e889045565a9ull;
inline constexpr std::uint32_t kRequestMagic = 0x25609513u;
inline constexpr std::uint32_t kSimpleReplyMagic = 0x67446698u;
inline constexpr std::uint32_t kStructuredReplyMagic = 0x668e33efu;

// Handshake flags (server) and client flags.
inline constexpr std::uint16_t kFlagFixedNewstyle = 1u << 0;
inline constexpr std::uint16_t kFlagNoZeroes = 1u << 1;
inline constexpr std::uint32_t kClientKnownFlags = kFlagFixedNewstyle | kFlagNoZeroes;

// Transmission flags.
inline constexpr std::uint16_t kHasFlags = 1u << 0;
inline constexpr std::uint16_t kSendFlush = 1u << 2;
inline constexpr std::uint16_t kSendFua = 1u << 3;
inline constexpr std::uint16_t kSendTrim = 1u << 5;
inline constexpr std::uint16_t kSendWriteZeroes = 1u << 6;
inline constexpr std::uint16_t kCanMultiConn = 1u << 8;
inline constexpr std::uint16_t kSendCache = 1u << 10;
inline constexpr std::uint16_t kSendFastZero = 1u << 11;

enum Opt : std::uint32_t {
    kOptExportName = 1, kOptAbort = 2, kOptList = 3, kOptStartTls = 5, kOptInfo = 6, kOptGo = 7,
    kOptStructuredReply = 8, kOptListMetaContext = 9, kOptSetMetaContext = 10,
};
enum Rep : std::uint32_t {
    kRepAck = 1, kRepServer = 2, kRepInfo = 3, kRepMetaContext = 4,
    kRepErrUnsup = 0x80000001u, kRepErrPolicy = 0x80000002u, kRepErrInvalid = 0x80000003u,
    kRepErrUnknown = 0x80000006u, kRepErrShutdown = 0x80000007u, kRepErrTooBig = 0x80000009u,
};
enum Info : std::uint16_t { kInfoExport = 0, kInfoBlockSize = 3 };

enum Cmd : std::uint16_t {
    kCmdRead = 0, kCmdWrite = 1, kCmdDisc = 2, kCmdFlush = 3, kCmdTrim = 4, kCmdCache = 5, kCmdWriteZeroes = 6,
    kCmdBlockStatus = 7,
};
inline constexpr std::uint16_t kCmdFlagFua = 1u << 0;
inline constexpr std::uint16_t kCmdFlagNoHole = 1u << 1;
inline constexpr std::uint16_t kCmdFlagDf = 1u << 2;
inline constexpr std::uint16_t kCmdFlagReqOne = 1u << 3;
inline constexpr std::uint16_t kCmdFlagFastZero = 1u << 4;

// Structured reply chunks.
inline constexpr std::uint16_t kReplyFlagDone = 1u << 0;
enum ReplyType : std::uint16_t { kReplyNone = 0, kReplyOffsetData = 1, kReplyBlockStatus = 5, kReplyError = 0x8001 };
// base:allocation's status flags, and its context id here (the only context there is).
inline constexpr std::uint32_t kStateHole = 1u << 0, kStateZero = 1u << 1;
inline constexpr std::uint32_t kBaseAllocationId = 1;
inline constexpr const char *kBaseAllocation = "base:allocation";
// The protocol's "payload up to 2^25 SHOULD NOT be considered a denial of service": what the
// gateway advertises as the maximum payload and skips (reads and drops) when refusing a WRITE.
inline constexpr std::uint32_t kMaxPayload = 1u << 25;

// Error values of a reply (the protocol's, not the host's errno).
enum Err : std::uint32_t {
    kOk = 0, kEperm = 1, kEio = 5, kEnomem = 12, kEinval = 22, kEnospc = 28, kEoverflow = 75, kEnotsup = 95,
    kEshutdown = 108,
};

inline constexpr std::size_t kRequestBytes = 28;
inline constexpr std::size_t kSimpleReplyBytes = 16;
inline constexpr std::uint32_t kMaxOptionBytes = 4096 + 64;  // a name is at most 4096 bytes

struct Request {
    std::uint32_t magic = 0;
    std::uint16_t flags = 0, type = 0;
    std::uint64_t cookie = 0, offset = 0;
    std::uint32_t length = 0;
};

std::uint16_t get16(const std::uint8_t *p);
std::uint32_t get32(const std::uint8_t *p);
std::uint64_t get64(const std::uint8_t *p);
void put16(std::vector<std::uint8_t> &b, std::uint16_t v);
void put32(std::vector<std::uint8_t> &b, std::uint32_t v);
void put64(std::vector<std::uint8_t> &b, std::uint64_t v);

Request parse_request(const std::uint8_t (&raw)[kRequestBytes]);

// What the server does with a request header, decided before any payload is read.
enum class Verdict {
    kServe,        // valid: to be scheduled
    kDisconnect,   // NBD_CMD_DISC: finish in-flight requests, then close
    kReplyError,   // reply with `error`; a WRITE's payload is read and discarded first
    kClose,        // unrecoverable (bad magic, a WRITE payload too large to skip): close now
};
struct Check {
    Verdict verdict = Verdict::kServe;
    std::uint32_t error = kOk;
    const char *why = "";
};
// What the connection negotiated: structured replies; base:allocation selected for its export.
struct Session {
    bool structured = false, block_status = false;
};
// `max_block`: the largest READ/WRITE this export serves (advertised in NBD_INFO_BLOCK_SIZE);
// `max_payload`: the largest WRITE payload the server will read just to discard it.
Check check_request(const Request &r, std::uint64_t export_size, std::uint32_t max_block, std::uint32_t max_payload,
                    const Session &s = {});

// Option replies.
std::vector<std::uint8_t> option_reply(std::uint32_t option, std::uint32_t type, const std::vector<std::uint8_t> &data = {});
std::vector<std::uint8_t> simple_reply_header(std::uint32_t error, std::uint64_t cookie);
// A structured reply chunk's header (`length` bytes of payload follow it).
std::vector<std::uint8_t> chunk_header(std::uint16_t flags, std::uint16_t type, std::uint64_t cookie, std::uint32_t length);
// A final NBD_REPLY_TYPE_ERROR chunk carrying `why` for a person to read.
std::vector<std::uint8_t> error_chunk(std::uint64_t cookie, std::uint32_t error, const std::string &why);
// An option error reply with a reason text (the protocol lets error replies carry one).
std::vector<std::uint8_t> option_error(std::uint32_t option, std::uint32_t type, const std::string &why);

// NBD_OPT_LIST_META_CONTEXT / SET_META_CONTEXT's payload: an export name and queries. False when
// the lengths inside do not add up.
bool parse_meta(const std::vector<std::uint8_t> &data, std::string &name, std::vector<std::string> &queries);

// The payload of NBD_OPT_GO / NBD_OPT_INFO: a name and the information types asked for. False
// when the lengths inside do not add up to the option's length.
bool parse_go(const std::vector<std::uint8_t> &data, std::string &name, std::vector<std::uint16_t> &infos);

}  // namespace bg::gw::nbd
