// The NBD wire protocol as far as burstgate-gateway speaks it (NetworkBlockDevice doc/proto.md):
// fixed newstyle handshake, option haggling (EXPORT_NAME, GO, INFO, LIST, ABORT), simple
// replies. Everything on the wire is big-endian. Pure functions, no I/O: the server and the
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

// Handshake flags (server) and client flags.
inline constexpr std::uint16_t kFlagFixedNewstyle = 1u << 0;
inline constexpr std::uint16_t kFlagNoZeroes = 1u << 1;
inline constexpr std::uint32_t kClientKnownFlags = kFlagFixedNewstyle | kFlagNoZeroes;

// Transmission flags.
inline constexpr std::uint16_t kHasFlags = 1u << 0;
inline constexpr std::uint16_t kSendFlush = 1u << 2;
inline constexpr std::uint16_t kSendFua = 1u << 3;
inline constexpr std::uint16_t kSendTrim = 1u << 5;
inline constexpr std::uint16_t kCanMultiConn = 1u << 8;

enum Opt : std::uint32_t {
    kOptExportName = 1, kOptAbort = 2, kOptList = 3, kOptStartTls = 5, kOptInfo = 6, kOptGo = 7,
};
enum Rep : std::uint32_t {
    kRepAck = 1, kRepServer = 2, kRepInfo = 3,
    kRepErrUnsup = 0x80000001u, kRepErrPolicy = 0x80000002u, kRepErrInvalid = 0x80000003u,
    kRepErrUnknown = 0x80000006u,
};
enum Info : std::uint16_t { kInfoExport = 0, kInfoBlockSize = 3 };

enum Cmd : std::uint16_t { kCmdRead = 0, kCmdWrite = 1, kCmdDisc = 2, kCmdFlush = 3, kCmdTrim = 4 };
inline constexpr std::uint16_t kCmdFlagFua = 1u << 0;

// Error values of a reply (the protocol's, not the host's errno).
enum Err : std::uint32_t { kOk = 0, kEperm = 1, kEio = 5, kEnomem = 12, kEinval = 22, kEnospc = 28, kEoverflow = 75, kEnotsup = 95 };

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
    kServe,        // valid: READ/WRITE/FLUSH/TRIM to be scheduled
    kDisconnect,   // NBD_CMD_DISC: finish in-flight requests, then close
    kReplyError,   // reply with `error`; a WRITE's payload is read and discarded first
    kClose,        // unrecoverable (bad magic, a WRITE payload too large to skip): close now
};
struct Check {
    Verdict verdict = Verdict::kServe;
    std::uint32_t error = kOk;
    const char *why = "";
};
// `max_block`: the largest READ/WRITE this export serves (advertised in NBD_INFO_BLOCK_SIZE);
// `max_payload`: the largest WRITE payload the server will read just to discard it.
Check check_request(const Request &r, std::uint64_t export_size, std::uint32_t max_block, std::uint32_t max_payload);

// Option replies.
std::vector<std::uint8_t> option_reply(std::uint32_t option, std::uint32_t type, const std::vector<std::uint8_t> &data = {});
std::vector<std::uint8_t> simple_reply_header(std::uint32_t error, std::uint64_t cookie);

// The payload of NBD_OPT_GO / NBD_OPT_INFO: a name and the information types asked for. False
// when the lengths inside do not add up to the option's length.
bool parse_go(const std::vector<std::uint8_t> &data, std::string &name, std::vector<std::uint16_t> &infos);

}  // namespace bg::gw::nbd
