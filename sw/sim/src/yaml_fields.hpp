// The scenario loader's field checks, shared by the agent keys (scenario.cpp) and the `lsm:`
// section (lsm_section.cpp): every message is FILE:LINE: field.path: what is wrong.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "burstgate/sim/scenario.hpp"

namespace bg::sim {

class Fields {
public:
    explicit Fields(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const YAML::Node &at, const std::string &path, const std::string &msg) const
    {
        const int line = at.IsDefined() ? at.Mark().line + 1 : 0;
        fail_line(line > 0 ? line : 1, path, msg);
    }
    [[noreturn]] void fail_line(int line, const std::string &path, const std::string &msg) const
    {
        throw ScenarioError(file_ + ":" + std::to_string(line) + ": " + path + ": " + msg);
    }

    void require_map(const YAML::Node &n, const std::string &path) const
    {
        if (!n.IsMap())
            fail(n, path, "expected a mapping");
    }

    // Every key of n must be in `allowed`.
    void check_keys(const YAML::Node &n, const std::string &path, std::initializer_list<const char *> allowed) const
    {
        require_map(n, path);
        for (auto it = n.begin(); it != n.end(); ++it) {
            const std::string key = it->first.as<std::string>();
            bool ok = false;
            for (const char *a : allowed)
                ok = ok || key == a;
            if (!ok) {
                std::string list;
                for (const char *a : allowed)
                    list += std::string(list.empty() ? "" : ", ") + a;
                fail(it->first, join(path, key), "unknown key (expected one of: " + list + ")");
            }
        }
    }

    // The largest YAML file read (a 1024-tenant scenario is about 100 KB) and the most nodes a
    // document may hold once its aliases are followed (an alias tree can stand for 10^9 nodes in
    // a few lines; walking it would never end).
    static constexpr std::size_t kMaxFileBytes = 16u << 20;
    static constexpr std::size_t kMaxNodes = 1u << 20;

    // The file's bytes, at most kMaxFileBytes of them (a device or a huge file is refused, not
    // read whole). Throws ScenarioError "PATH: ..." when it cannot be read.
    std::string read_file() const
    {
        if (std::filesystem::is_directory(file_))
            throw ScenarioError(file_ + ": is a folder, not a scenario file");
        std::ifstream in(file_, std::ios::binary);
        if (!in)
            throw ScenarioError(file_ + ": cannot open");
        std::string text;
        char buf[1 << 16];
        while (in.read(buf, sizeof buf) || in.gcount() > 0) {
            text.append(buf, static_cast<std::size_t>(in.gcount()));
            if (text.size() > kMaxFileBytes)
                fail_line(1, "(file)", "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB: not a scenario");
        }
        if (in.bad())
            throw ScenarioError(file_ + ": read error");
        return text;
    }

    // The one YAML document of `text`, checked as every reader needs it: UTF-8 without control
    // characters, one document, keys that are plain scalars, none given twice (yaml-cpp would keep
    // the first silently), at most kMaxNodes nodes.
    YAML::Node parse(const std::string &text) const
    {
        check_text(text);
        std::vector<YAML::Node> docs;
        try {
            docs = YAML::LoadAll(text);
        } catch (const YAML::Exception &e) {
            fail_line(e.mark.line + 1, "(syntax)", e.msg);
        }
        if (docs.size() > 1)
            fail(docs[1], "(syntax)", "a second YAML document ('---'): one scenario per file");
        YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
        std::size_t budget = kMaxNodes;
        check_no_duplicate_keys(root, "", budget);
        return root;
    }

    // Text, not binary: valid UTF-8 and no control character but tab, CR and LF.
    void check_text(const std::string &t) const
    {
        int line = 1;
        for (std::size_t i = 0; i < t.size();) {
            const auto c = static_cast<unsigned char>(t[i]);
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", c);
            if (c == '\n')
                line++;
            if (c < 0x20 && c != '\n' && c != '\r' && c != '\t')
                fail_line(line, "(text)", std::string("control character ") + hex + " (a binary file?)");
            std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
            bool ok = len > 0 && i + len <= t.size();
            for (std::size_t k = 1; ok && k < len; k++)
                ok = (static_cast<unsigned char>(t[i + k]) & 0xc0) == 0x80;
            if (!ok)
                fail_line(line, "(text)", std::string("not UTF-8 text (byte ") + hex + ")");
            i += len;
        }
    }

    // YAML allows a key twice in a mapping and yaml-cpp keeps the first: a scenario that sets
    // a key twice would silently run with one of the two values. Refused anywhere in the tree,
    // as are keys that are not plain scalars ("? [a, b]").
    void check_no_duplicate_keys(const YAML::Node &n, const std::string &path, std::size_t &budget) const
    {
        if (budget-- == 0)
            fail(n, path.empty() ? "(top level)" : path,
                 "more than " + std::to_string(kMaxNodes) + " nodes (aliases that repeat a tree?)");
        if (n.IsSequence()) {
            for (std::size_t i = 0; i < n.size(); i++)
                check_no_duplicate_keys(n[i], path + "[" + std::to_string(i) + "]", budget);
        } else if (n.IsMap()) {
            std::set<std::string> seen;
            for (auto it = n.begin(); it != n.end(); ++it) {
                if (!it->first.IsScalar())
                    fail(it->first, path.empty() ? "(top level)" : path, "a key must be a plain name, not a list or mapping");
                const std::string key = it->first.Scalar();
                if (!seen.insert(key).second)
                    fail(it->first, join(path, key), "key given twice in one mapping (first at an earlier line)");
                check_no_duplicate_keys(it->second, join(path, key), budget);
            }
        }
    }

    static std::string join(const std::string &path, const std::string &key)
    {
        return path.empty() ? key : path + "." + key;
    }

    // A number in [lo, hi]; `what` explains the range in messages.
    double number(const YAML::Node &n, const std::string &path, double lo, double hi) const
    {
        if (!n.IsScalar())
            fail(n, path, "expected a number");
        double v;
        if (!YAML::convert<double>::decode(n, v) || !std::isfinite(v))
            fail(n, path, "expected a number, got '" + n.Scalar() + "'");
        if (v < 0 && lo >= 0)
            fail(n, path, "must not be negative (got " + n.Scalar() + ")");
        if (v < lo || v > hi) {
            std::ostringstream os;
            os << "must be in " << lo << ".." << hi << " (got " << n.Scalar() << ")";
            fail(n, path, os.str());
        }
        return v;
    }

    std::uint64_t integer(const YAML::Node &n, const std::string &path, std::uint64_t lo, std::uint64_t hi) const
    {
        const double v = number(n, path, static_cast<double>(lo), static_cast<double>(hi));
        if (v != std::floor(v))
            fail(n, path, "expected an integer, got '" + n.Scalar() + "'");
        return static_cast<std::uint64_t>(v);
    }

    std::uint32_t u32(const YAML::Node &n, const std::string &path, std::uint32_t lo, std::uint32_t hi) const
    {
        return static_cast<std::uint32_t>(integer(n, path, lo, hi));
    }

    std::string string(const YAML::Node &n, const std::string &path) const
    {
        if (!n.IsScalar())
            fail(n, path, "expected a string");
        return n.Scalar();
    }

    bool boolean(const YAML::Node &n, const std::string &path) const
    {
        bool b;
        if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b))
            fail(n, path, "expected true or false");
        return b;
    }

    // Milliseconds (fractions allowed) as ns.
    std::uint64_t ms(const YAML::Node &n, const std::string &path) const
    {
        return static_cast<std::uint64_t>(std::llround(number(n, path, 0, 1e9) * 1e6));
    }


    std::string choice(const YAML::Node &n, const std::string &path, std::initializer_list<const char *> options) const
    {
        const std::string s = string(n, path);
        std::string list;
        for (const char *o : options) {
            if (s == o)
                return s;
            list += std::string(list.empty() ? "" : " | ") + o;
        }
        fail(n, path, "unknown value '" + s + "' (expected " + list + ")");
    }

    // Bytes: an integer with an optional binary suffix k, m, g (4k, 8m, 1g). bg::cli::parse_size
    // is for I/O sizes (below 16 MiB); SSTs, levels and segments are larger.
    std::uint64_t bytes(const YAML::Node &n, const std::string &path) const
    {
        if (!n.IsScalar() || n.Scalar().empty())
            fail(n, path, "expected a size (4k, 8m, 1g)");
        const std::string &t = n.Scalar();
        std::size_t digits = 0;
        while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9')
            digits++;
        const std::string suffix = t.substr(digits);
        int shift = -1;
        if (suffix.empty())
            shift = 0;
        else if (suffix == "k" || suffix == "K")
            shift = 10;
        else if (suffix == "m" || suffix == "M")
            shift = 20;
        else if (suffix == "g" || suffix == "G")
            shift = 30;
        if (digits == 0 || digits > 12 || shift < 0)
            fail(n, path, "expected a size (4k, 8m, 1g), got '" + t + "'");
        const std::uint64_t v = std::stoull(t.substr(0, digits)) << shift;
        if (v == 0 || v > (1ull << 40))
            fail(n, path, "must be in 1..1024g (got '" + t + "')");
        return v;
    }

    const std::string &file() const { return file_; }

private:
    std::string file_;
};

}  // namespace bg::sim
