#include "cost_cli.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "burstgate/regs.h"

namespace bg::cli {

namespace {

constexpr uint64_t kSizeLimit = uint64_t{1} << BG_SIZE_BITS;

std::string lower(std::string s)
{
    for (char &c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string product_letters()
{
    std::string s;
    for (unsigned p = 0; p < BG_PRODUCTS; p++) {
        if (p)
            s += p + 1 == BG_PRODUCTS ? " or " : ", ";
        s += static_cast<char>('A' + p);
    }
    return s;
}

unsigned parse_product(const std::string &text, const std::string &where)
{
    if (text.size() == 1) {
        const int c = std::toupper(static_cast<unsigned char>(text[0]));
        if (c >= 'A' && c < 'A' + static_cast<int>(BG_PRODUCTS))
            return static_cast<unsigned>(c - 'A');
    }
    throw InputError(where + ": unknown product '" + text + "' (expected " + product_letters() + ")");
}

bool parse_op(const std::string &text, const std::string &where)
{
    const std::string op = lower(text);
    if (op == "read")
        return false;
    if (op == "write")
        return true;
    throw InputError(where + ": unknown op '" + text + "' (expected read or write)");
}

double parse_share(const std::string &text, const std::string &where)
{
    const char *begin = text.c_str();
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v <= 0)
        throw InputError(where + ": bad share '" + text + "' (expected a positive number, e.g. 0.25)");
    return v;
}

}  // namespace

std::string format_size(uint32_t size)
{
    if (size != 0 && size % (1u << 20) == 0)
        return std::to_string(size >> 20) + "m";
    if (size != 0 && size % (1u << 10) == 0)
        return std::to_string(size >> 10) + "k";
    return std::to_string(size);
}

std::string describe(const MixEntry &e)
{
    return std::string(1, static_cast<char>('A' + e.product)) + (e.write ? " write " : " read ") +
           format_size(e.size);
}

uint32_t parse_size(const std::string &text, const std::string &where)
{
    if (!text.empty() && text[0] == '-')
        throw InputError(where + ": size '" + text + "' is negative");
    size_t digits = 0;
    uint64_t value = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
        value = value * 10 + static_cast<uint64_t>(text[digits] - '0');
        if (value >= kSizeLimit)
            value = kSizeLimit;  // already too large; stop growing so nothing overflows
        digits++;
    }
    const std::string suffix = lower(text.substr(digits));
    if (digits == 0 || !(suffix.empty() || suffix == "k" || suffix == "m"))
        throw InputError(where + ": bad size '" + text +
                         "' (expected bytes or a k or m suffix, e.g. 512, 4k, 128k, 1m)");
    value <<= suffix == "k" ? 10 : suffix == "m" ? 20 : 0;
    if (value >= kSizeLimit)
        throw InputError(where + ": size '" + text + "' is too large (largest I/O is " +
                         std::to_string(kSizeLimit - 1) + " bytes, 16 MiB - 1)");
    return static_cast<uint32_t>(value);
}

std::vector<MixEntry> parse_mix(std::istream &in, const std::string &name)
{
    std::vector<MixEntry> mix;
    std::string line;
    unsigned lineno = 0;
    // A mix line is short: read at most kMaxLine bytes of one, so a file without newlines (or
    // /dev/zero) is refused rather than read whole.
    constexpr std::streamsize kMaxLine = 4096;
    char text[kMaxLine + 1];
    for (;;) {
        in.getline(text, sizeof text);
        const std::streamsize got = in.gcount();
        if (in.fail() && !in.eof() && !in.bad())
            throw InputError(name + ":" + std::to_string(lineno + 1) + ": line longer than " + std::to_string(kMaxLine) +
                             " bytes");
        if (got == 0 && (in.eof() || in.bad()))
            break;
        lineno++;
        line.assign(text, static_cast<std::size_t>(got - (in.eof() ? 0 : 1)));
        if (line.find('\0') != std::string::npos)
            throw InputError(name + ":" + std::to_string(lineno) + ": a NUL byte (a binary file?)");
        line = line.substr(0, line.find('#'));
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string word; fields >> word;)
            f.push_back(word);
        if (f.empty())
            continue;
        const std::string where = name + ":" + std::to_string(lineno);
        if (f.size() != 4)
            throw InputError(where + ": expected 4 fields 'PRODUCT OP SIZE SHARE' (e.g. 'A write 4k 0.25'), got " +
                             std::to_string(f.size()));
        const uint32_t size = parse_size(f[2], where);
        if (size == 0)
            throw InputError(where + ": size 0: an I/O moves at least one byte");
        mix.push_back({parse_product(f[0], where), parse_op(f[1], where), size, parse_share(f[3], where)});
    }
    if (mix.empty())
        throw InputError(name + ":" + std::to_string(lineno ? lineno : 1) +
                         ": empty mix (no 'PRODUCT OP SIZE SHARE' lines)");
    // Shares are a distribution: a mix that does not add up is a typo, not something to rescale.
    double total = 0;
    for (const MixEntry &e : mix)
        total += e.share;
    if (std::fabs(total - 1.0) > 1e-6) {
        char buf[160];
        std::snprintf(buf, sizeof buf, ": the shares add up to %.6g, not 1 (a share is a fraction of the I/Os, e.g. 0.25)", total);
        throw InputError(name + buf);
    }
    return mix;
}

std::vector<MixEntry> default_mix()
{
    std::vector<MixEntry> mix;
    for (unsigned product = 0; product < 2; product++)
        for (bool write : {false, true})
            for (uint32_t kib : {4u, 16u, 64u, 128u})
                mix.push_back({product, write, kib << 10, 1.0});
    return mix;
}

}  // namespace bg::cli
