// The command-line conventions every burstgate tool shares: GNU-style long options written
// "--flag value" or "--flag=value", bare arguments, and one message per mistake that names the
// option ("--seed: expected an integer in 0..4294967295, got '-1'"). Tools print it after their
// own name and exit 2.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bg::cli {

// A bad command line; what() names the option.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Walks argv[first..argc). For each argument, `flag()` is the argument itself, or for
// "--flag=value" only the "--flag" part; `value()` then consumes the option's value.
//
//     bg::cli::ArgReader args(argc, argv);
//     while (args.next())
//         if (args.flag() == "--out") out = args.value();
//         else if (args.is_option()) throw bg::cli::UsageError(args.flag() + ": unknown option");
//         else file = args.flag();
class ArgReader {
public:
    ArgReader(int argc, char **argv, int first = 1);

    // Moves to the next argument; false when none is left. Throws UsageError when the previous
    // one was written "--flag=value" and its value was not consumed (a switch given a value).
    bool next();

    const std::string &flag() const { return flag_; }
    bool is_option() const { return flag_.size() > 1 && flag_[0] == '-'; }

    // The current option's value: what follows '=', else the next argument.
    // Throws UsageError "FLAG: needs a value" when there is none.
    std::string value();

    // value() as a decimal integer in [min, max]; throws UsageError
    // "FLAG: expected an integer in MIN..MAX, got 'TEXT'" otherwise (signs included).
    std::uint64_t integer(std::uint64_t min, std::uint64_t max);

    // value() as a finite decimal number in [min, max]; throws UsageError
    // "FLAG: expected a number in [MIN, MAX], got 'TEXT'" otherwise.
    double number(double min, double max);

private:
    int argc_;
    char **argv_;
    int next_;
    std::string flag_, inline_value_;
    bool has_inline_ = false;
};

// `text` as a decimal integer in [min, max], for values that come from elsewhere than
// ArgReader::value() (e.g. split from a list). `what` starts the message as above.
std::uint64_t parse_integer(const std::string &what, const std::string &text, std::uint64_t min,
                            std::uint64_t max);

// The same for a number (`strtod` syntax, finite).
double parse_number(const std::string &what, const std::string &text, double min, double max);

}  // namespace bg::cli
