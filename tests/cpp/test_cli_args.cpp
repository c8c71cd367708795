// The tools' shared command-line reader (sw/tools/args.hpp): both spellings of an option, and
// an error that names the option for every way of getting one wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "args.hpp"

namespace {

using bg::cli::ArgReader;
using bg::cli::UsageError;

// argv as the tools see it; argv[0] is the program.
struct Argv {
    explicit Argv(std::vector<std::string> a) : words(std::move(a))
    {
        words.insert(words.begin(), "tool");
        for (auto &w : words)
            ptrs.push_back(w.data());
    }
    int argc() const { return static_cast<int>(ptrs.size()); }
    char **argv() { return ptrs.data(); }
    std::vector<std::string> words;
    std::vector<char *> ptrs;
};

std::string message_of(std::vector<std::string> words, std::uint64_t max = 100)
{
    Argv a(std::move(words));
    ArgReader args(a.argc(), a.argv());
    try {
        while (args.next())
            if (args.flag() == "--n")
                args.integer(1, max);
            else if (args.flag() == "--x")
                args.number(0.5, 2);
            else if (args.flag() == "--name")
                args.value();
        return "";
    } catch (const UsageError &e) {
        return e.what();
    }
}

TEST(CliArgs, BothSpellingsAndBareArguments)
{
    Argv a({"--out", "r.json", "--seed=7", "scenario.yaml", "--q", "a=b.yaml", "-"});
    ArgReader args(a.argc(), a.argv());
    std::vector<std::string> seen;
    while (args.next()) {
        if (args.flag() == "--out" || args.flag() == "--seed")
            seen.push_back(args.flag() + ":" + args.value());
        else
            seen.push_back((args.is_option() ? "opt " : "arg ") + args.flag());
    }
    // A bare argument keeps its '=' (a file name may contain one); "-" is not an option.
    EXPECT_EQ(seen, (std::vector<std::string>{"--out:r.json", "--seed:7", "arg scenario.yaml", "opt --q",
                                              "arg a=b.yaml", "arg -"}));
}

TEST(CliArgs, StartsWhereTheToolSays)
{
    Argv a({"replay", "--trace", "t.csv"});
    ArgReader args(a.argc(), a.argv(), 2);
    ASSERT_TRUE(args.next());
    EXPECT_EQ(args.flag(), "--trace");
    EXPECT_EQ(args.value(), "t.csv");
    EXPECT_FALSE(args.next());
}

TEST(CliArgs, IntegersInRange)
{
    EXPECT_EQ(message_of({"--n", "5", "--n=100"}), "");
    EXPECT_EQ(message_of({"--n"}), "--n: needs a value");
    EXPECT_EQ(message_of({"--n", "0"}), "--n: expected an integer in 1..100, got '0'");
    EXPECT_EQ(message_of({"--n=101"}), "--n: expected an integer in 1..100, got '101'");
    // strtoull would take each of these: a sign (negated modulo 2^64), blanks, a trailing unit.
    EXPECT_EQ(message_of({"--n", "-1"}), "--n: expected an integer in 1..100, got '-1'");
    EXPECT_EQ(message_of({"--n", "+5"}), "--n: expected an integer in 1..100, got '+5'");
    EXPECT_EQ(message_of({"--n", " 5"}), "--n: expected an integer in 1..100, got ' 5'");
    EXPECT_EQ(message_of({"--n", "5k"}), "--n: expected an integer in 1..100, got '5k'");
    EXPECT_EQ(message_of({"--n="}), "--n: expected an integer in 1..100, got ''");
    EXPECT_EQ(message_of({"--n", "18446744073709551616"}, UINT64_MAX),
              "--n: expected an integer in 1..18446744073709551615, got '18446744073709551616'");
}

TEST(CliArgs, NumbersInRange)
{
    EXPECT_EQ(message_of({"--x", "0.5", "--x=2", "--x", "1e0"}), "");
    for (const char *bad : {"0.49", "2.01", "nan", "inf", "", " 1", "1x", "0x"})
        EXPECT_EQ(message_of({"--x", bad}), std::string("--x: expected a number in [0.5, 2], got '") + bad + "'");
}

TEST(CliArgs, ASwitchGivenAValueIsAnError)
{
    // "--quiet=yes" must not silently mean --quiet; nor may a value be dropped at the end.
    EXPECT_EQ(message_of({"--quiet=yes", "x"}), "--quiet: takes no value, got '--quiet=yes'");
    EXPECT_EQ(message_of({"--quiet=yes"}), "--quiet: takes no value, got '--quiet=yes'");
    EXPECT_EQ(message_of({"--name=a", "--name", "b"}), "");
}

}  // namespace
