#include "args.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bg::cli {

ArgReader::ArgReader(int argc, char **argv, int first) : argc_(argc), argv_(argv), next_(first) {}

bool ArgReader::next()
{
    if (has_inline_)
        throw UsageError(flag_ + ": takes no value, got '" + flag_ + "=" + inline_value_ + "'");
    if (next_ >= argc_)
        return false;
    flag_ = argv_[next_++];
    const std::size_t eq = flag_.find('=');
    // Only long options carry "=value": a bare argument (a file name) may contain '='.
    has_inline_ = flag_.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_inline_) {
        inline_value_ = flag_.substr(eq + 1);
        flag_.resize(eq);
    }
    return true;
}

std::string ArgReader::value()
{
    if (has_inline_) {
        has_inline_ = false;
        return inline_value_;
    }
    if (next_ >= argc_)
        throw UsageError(flag_ + ": needs a value");
    return argv_[next_++];
}

std::uint64_t ArgReader::integer(std::uint64_t min, std::uint64_t max)
{
    return parse_integer(flag_, value(), min, max);
}

double ArgReader::number(double min, double max)
{
    return parse_number(flag_, value(), min, max);
}

std::uint64_t parse_integer(const std::string &what, const std::string &text, std::uint64_t min,
                            std::uint64_t max)
{
    char *end = nullptr;
    errno = 0;
    // strtoull accepts leading blanks and a '-' (negating modulo 2^64): refuse both.
    const bool digits = !text.empty() && text[0] >= '0' && text[0] <= '9';
    const unsigned long long v = digits ? std::strtoull(text.c_str(), &end, 10) : 0;
    if (!digits || *end != '\0' || errno == ERANGE || v < min || v > max)
        throw UsageError(what + ": expected an integer in " + std::to_string(min) + ".." + std::to_string(max) +
                         ", got '" + text + "'");
    return v;
}

double parse_number(const std::string &what, const std::string &text, double min, double max)
{
    char *end = nullptr;
    const bool blank = text.empty() || std::isspace(static_cast<unsigned char>(text[0]));
    const double v = blank ? 0 : std::strtod(text.c_str(), &end);
    if (blank || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
        char range[64];
        std::snprintf(range, sizeof range, "[%g, %g]", min, max);
        throw UsageError(what + ": expected a number in " + range + ", got '" + text + "'");
    }
    return v;
}

}  // namespace bg::cli
