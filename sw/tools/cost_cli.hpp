// Input handling of burstgate-cost: I/O mixes (file or default) and their error messages.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bg::cli {

// Bad user input. what() is the located message printed after "burstgate-cost: ", e.g.
// "mix.txt:3: unknown op 'rw' (expected read or write)" or "--random: ...".
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One I/O type of a mix and its share of the I/Os (shares need not sum to 1).
struct MixEntry {
    unsigned product;  // 0 = A, 1 = B, ...
    bool write;
    uint32_t size;     // bytes, < 2^BG_SIZE_BITS
    double share;
};

// "4k"-style name of a size: k and m suffixes when the size is a whole number of them.
std::string format_size(uint32_t size);

// "A write 4k"
std::string describe(const MixEntry &e);

// A size as the mix and scenario files write it: bytes, or a k (KiB) or m (MiB) suffix.
// Throws InputError with message `where: ...` on a malformed, negative or too large size.
uint32_t parse_size(const std::string &text, const std::string &where);

// Lines "PRODUCT OP SIZE SHARE" (e.g. "A write 4k 0.25"); '#' starts a comment. `name` is
// the file name used in messages. Throws InputError naming name:line.
std::vector<MixEntry> parse_mix(std::istream &in, const std::string &name);

// Products A and B, read and write, 4k 16k 64k 128k, equal shares.
std::vector<MixEntry> default_mix();

}  // namespace bg::cli
