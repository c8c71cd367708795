// burstgate-gateway: tenants' virtual disks over NBD, every I/O costed, admitted and dispatched
// by a burstgate engine with the firmware's window loop on the real clock. docs/gateway.md.
#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "args.hpp"
#include "burstgate/sim/scenario.hpp"
#include "burstgate/sim/profile.hpp"
#include "engine.hpp"
#include "server.hpp"
#include "write_all.hpp"

namespace {

const char *const kUsage =
    "usage: burstgate-gateway --config SCENARIO.yaml (--unix PATH | --tcp ADDR:PORT)\n"
    "         [--engine model|verilator|xrt] [--scheduler bios|wild|base|dualbucket|ddrr] [--seed N]\n"
    "         [--data-dir DIR] [--export-size SIZE] [--control PATH] [--out REPORT.json]\n"
    "         [--live] [--no-pace] [--realtime] [--base-priority N] [--allow-remote] [--max-conns N] [--verbose]\n"
    "         [--handshake-slots N] [--handshake-timeout MS] [--tenant-buffer SIZE] [--buffer SIZE]\n"
    "         [--min-reply-rate SIZE] [--reply-grace MS] [--tenant-depth N] [--profile HOST.yaml]\n"
    "         [--arrivals FILE] [--arrivals-max N] [--arrivals-clock wall|window]\n"
    "One NBD export per tenant of the scenario, named after it; see docs/gateway.md.\n"
    "  --data-dir DIR      back each export by DIR/<tenant>.img (sparse); default: memory\n"
    "  --export-size SIZE  bytes of every export, with k/m/g/t suffixes (default 1g)\n"
    "  --control PATH      a Unix socket answering every connection with the live JSON\n"
    "  --out FILE          the final report (docs/design.md contract 4) on SIGINT/SIGTERM; default stdout\n"
    "  --live              the per-second table on stderr even when it is not a terminal\n"
    "  --no-pace           SA workers do not take the scenario's CPU time and software limit\n"
    "  --realtime          window loop and pacer at SCHED_FIFO 10 (needs CAP_SYS_NICE)\n"
    "  --base-priority N   with --realtime: a connection's reader at SCHED_FIFO N while its tenant's\n"
    "                      requests stay within its base rate (default 5; 0: never)\n"
    "  --profile HOST.yaml this host's measured SA threads, CPU costs and bandwidth (make calibrate)\n"
    "  --allow-remote      --tcp on an address other than loopback\n"
    "  --max-conns N       connections per tenant unless its scenario entry sets max_conns (16)\n"
    "  --handshake-slots N connections in the handshake at once, all clients (16)\n"
    "  --handshake-timeout MS  from accept to GO (5000)\n"
    "  --tenant-buffer SIZE    bytes held for one tenant's payloads and replies (64m)\n"
    "  --buffer SIZE       bytes held for all tenants (default: tenants x --tenant-buffer)\n"
    "  --min-reply-rate SIZE   per second a client must read its replies at (1m) ...\n"
    "  --reply-grace MS    ... after this much time per reply (1000), or it is cut\n"
    "  --tenant-depth N    requests one tenant may have admitted or deferred at once (1024)\n"
    "  --arrivals FILE     record every READ/WRITE's first offer (time, tenant, op, offset, length)\n"
    "                      as fio iolog v3, for burstgate-sim --arrivals to replay\n"
    "  --arrivals-max N    at most N records in it (4000000); later arrivals are counted only\n"
    "  --arrivals-clock C  wall: time since start; window: the firmware's window index x window_us\n"
    "                      + time since that window's COMMIT (default wall; docs/gateway.md)\n"
    "SIGUSR1 writes the live JSON to stderr.\n";

using bg::cli::UsageError;

std::uint64_t parse_bytes(const std::string &s, const char *opt)
{
    std::size_t pos = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(s, &pos);
    } catch (const std::exception &) {
        throw UsageError(std::string(opt) + ": not a size: '" + s + "'");
    }
    std::uint64_t mul = 1;
    if (pos < s.size()) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[pos])));
        mul = c == 'k' ? 1ull << 10 : c == 'm' ? 1ull << 20 : c == 'g' ? 1ull << 30 : c == 't' ? 1ull << 40 : 0;
        if (!mul || pos + 1 != s.size())
            throw UsageError(std::string(opt) + ": not a size: '" + s + "' (bytes, or a k/m/g/t suffix)");
    }
    if (v == 0 || v > (1ull << 50) / mul || (v * mul) % 4096 != 0)
        throw UsageError(std::string(opt) + ": '" + s + "' must be a positive multiple of 4096 bytes up to 1 PiB");
    return v * mul;
}

// Another process owns something this gateway would take: one line naming it, exit 2.
struct OwnedElsewhere : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The data directory is this process's while it lives: an advisory lock on DIR/.burstgate.lock
// (released by the kernel when the process dies, however it dies), holding the owner's pid.
int lock_data_dir(const std::string &dir)
{
    const std::string path = dir + "/.burstgate.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)  // a folder that is missing, not a folder, or not writable: the option is wrong
        throw UsageError("--data-dir: " + path + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char buf[32] = {};
        const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
        ::close(fd);
        std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "unknown";
        while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
            pid.pop_back();
        throw OwnedElsewhere("--data-dir " + dir + " is locked by another gateway (pid " + pid + ")");
    }
    const std::string me = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size()))
        throw std::runtime_error("--data-dir: " + path + ": " + std::strerror(errno));
    return fd;  // kept open (and locked) until exit
}

sockaddr_un unix_address(const std::string &path)
{
    sockaddr_un a{};
    if (path.size() >= sizeof a.sun_path)
        throw UsageError("--unix: path longer than " + std::to_string(sizeof a.sun_path - 1) + " bytes: " + path);
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    return a;
}

// True when `path` is a socket file nobody answers on (stale: to be replaced); throws when a
// live process serves it -- it is not ours to take.
bool stale_socket(const std::string &path)
{
    sockaddr_un a = unix_address(path);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
        return false;
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(probe, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0) {
        ucred cr{};
        socklen_t n = sizeof cr;
        const bool known = ::getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0;
        ::close(probe);
        throw OwnedElsewhere("--unix " + path + " is served by a live process (pid " +
                             (known ? std::to_string(cr.pid) : std::string("unknown")) + ")");
    }
    ::close(probe);
    return true;
}

int listen_unix(const std::string &path, const char *option = "--unix")
{
    sockaddr_un a = unix_address(path);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (stale_socket(path))
        ::unlink(path.c_str());  // never any other kind of file
    const mode_t old = ::umask(0077);  // only this user connects
    const int rc = ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    ::umask(old);
    if (fd < 0 || rc != 0 || ::listen(fd, 64) != 0)  // a missing folder, a file in the way: the option is wrong
        throw UsageError(std::string(option) + ": " + path + ": " + std::strerror(errno));
    return fd;
}

int listen_tcp(const std::string &spec, bool allow_remote)
{
    const auto colon = spec.rfind(':');
    if (colon == std::string::npos)
        throw UsageError("--tcp: expected ADDR:PORT, not '" + spec + "'");
    std::string host = spec.substr(0, colon);
    const std::string port_s = spec.substr(colon + 1);
    char *end = nullptr;
    const unsigned long port = std::strtoul(port_s.c_str(), &end, 10);
    if (port_s.empty() || *end || port > 65535)
        throw UsageError("--tcp: bad port '" + port_s + "'");
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    sockaddr_storage ss{};
    socklen_t len = 0;
    bool loopback = false;
    auto *a4 = reinterpret_cast<sockaddr_in *>(&ss);
    auto *a6 = reinterpret_cast<sockaddr_in6 *>(&ss);
    if (::inet_pton(AF_INET, host.c_str(), &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(static_cast<std::uint16_t>(port));
        len = sizeof *a4;
        loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else if (::inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(static_cast<std::uint16_t>(port));
        len = sizeof *a6;
        loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
    } else {
        throw UsageError("--tcp: '" + host + "' is not a numeric IPv4 or IPv6 address");
    }
    if (!loopback && !allow_remote)
        throw UsageError("--tcp: " + host + " is not a loopback address; the exports have no authentication "
                         "(pass --allow-remote to serve it anyway)");
    const int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&ss), len) != 0 || ::listen(fd, 64) != 0)
        throw std::runtime_error("--tcp " + spec + ": " + std::strerror(errno));
    return fd;
}

}  // namespace

int main(int argc, char **argv)
{
    std::string config, unix_path, tcp, engine = "model", scheduler, data_dir, control, out;
    std::string profile;  // --profile: this host's measured SA (make calibrate)
    std::string arrivals;  // --arrivals: the recorder's file
    bool window_clock = false;  // --arrivals-clock window
    std::uint64_t arrivals_max = bg::gw::ArrivalRecorder::kDefaultMaxRecords;
    std::uint64_t export_size = 1ull << 30, seed = 0;
    bool have_seed = false, live = ::isatty(2) != 0, pace = true, allow_remote = false, verbose = false, realtime = false;
    unsigned max_conns = 16;
    int base_priority = 5;
    std::uint32_t tenant_depth = bg::gw::EngineOptions{}.tenant_depth;
    bg::gw::ServerOptions so;
    try {
        bg::cli::ArgReader args(argc, argv);
        while (args.next()) {
            const std::string &a = args.flag();
            if (a == "--config") config = args.value();
            else if (a == "--unix") unix_path = args.value();
            else if (a == "--tcp") tcp = args.value();
            else if (a == "--engine") engine = args.value();
            else if (a == "--scheduler") scheduler = args.value();
            else if (a == "--seed") {
                seed = args.integer(0, UINT64_MAX);
                have_seed = true;
            } else if (a == "--data-dir") data_dir = args.value();
            else if (a == "--export-size") export_size = parse_bytes(args.value(), "--export-size");
            else if (a == "--control") control = args.value();
            else if (a == "--out") out = args.value();
            else if (a == "--live") live = true;
            else if (a == "--no-pace") pace = false;
            else if (a == "--realtime") realtime = true;
            else if (a == "--base-priority") base_priority = static_cast<int>(args.integer(0, 9));
            else if (a == "--allow-remote") allow_remote = true;
            else if (a == "--verbose") verbose = true;
            else if (a == "--profile") profile = args.value();
            else if (a == "--arrivals") arrivals = args.value();
            else if (a == "--arrivals-max") arrivals_max = args.integer(1, UINT32_MAX);
            else if (a == "--arrivals-clock") {
                const std::string c = args.value();
                if (c != "wall" && c != "window")
                    throw UsageError("--arrivals-clock: expected wall or window, got '" + c + "'");
                window_clock = c == "window";
            }
            else if (a == "--max-conns") max_conns = static_cast<unsigned>(args.integer(1, 4096));
            else if (a == "--handshake-slots") so.handshake_slots = static_cast<unsigned>(args.integer(1, 4096));
            else if (a == "--handshake-timeout") so.handshake_timeout_ms = static_cast<unsigned>(args.integer(10, 600000));
            else if (a == "--tenant-buffer") so.tenant_buffer = parse_bytes(args.value(), "--tenant-buffer");
            else if (a == "--buffer") so.global_buffer = parse_bytes(args.value(), "--buffer");
            else if (a == "--min-reply-rate") so.min_reply_bytes_per_s = parse_bytes(args.value(), "--min-reply-rate");
            else if (a == "--reply-grace") so.reply_grace_ms = static_cast<unsigned>(args.integer(10, 600000));
            else if (a == "--tenant-depth") tenant_depth = static_cast<std::uint32_t>(args.integer(1, 65536));
            else if (a == "-h" || a == "--help") {
                std::fputs(kUsage, stdout);
                return 0;
            } else
                throw UsageError("unknown argument '" + a + "'");
        }
        if (config.empty())
            throw UsageError("--config SCENARIO.yaml is required");
        if (unix_path.empty() == tcp.empty())
            throw UsageError("exactly one of --unix PATH and --tcp ADDR:PORT");
        if (so.tenant_buffer < (1u << 20) || (so.global_buffer && so.global_buffer < so.tenant_buffer))
            throw UsageError("--tenant-buffer must be at least 1m, and --buffer at least --tenant-buffer");
    } catch (const UsageError &e) {
        std::fprintf(stderr, "burstgate-gateway: %s\n%s", e.what(), kUsage);
        return 2;
    }

    try {
        // One owner, checked before anything else is said or opened: the data directory's lock
        // (held from here to exit), then the socket path (checked again when it is bound).
        const int dir_lock = data_dir.empty() ? -1 : lock_data_dir(data_dir);
        (void)dir_lock;
        if (!unix_path.empty())
            stale_socket(unix_path);
        bg::sim::Scenario sc = bg::sim::load_scenario(config);
        if (!profile.empty())
            bg::sim::apply_profile(sc, profile);
        // The report's file is opened now: a bad --out must not be found only when the gateway stops.
        std::ofstream out_file;
        if (!out.empty()) {
            out_file.open(out);
            if (!out_file)
                throw UsageError("--out: cannot write '" + out + "': " + std::strerror(errno));
        }
        bg::gw::EngineOptions eo;
        eo.engine = engine;
        eo.scheduler = scheduler.empty() ? sc.scheduler : bg::sim::parse_scheduler(scheduler);
        eo.seed = have_seed ? seed : sc.seed;
        eo.pace = pace;
        eo.realtime = realtime;
        eo.base_priority = realtime ? base_priority : 0;
        eo.tenant_depth = tenant_depth;
        std::unique_ptr<bg::gw::ArrivalRecorder> recorder;
        if (!arrivals.empty()) {
            std::vector<std::string> names;
            for (const bg::sim::Tenant &t : sc.tenants)
                names.push_back(t.name);
            recorder = std::make_unique<bg::gw::ArrivalRecorder>(arrivals, names, arrivals_max,
                                                                 window_clock ? sc.window_ns : 0);
            eo.arrivals = recorder.get();
        }
        std::vector<std::unique_ptr<bg::gw::Store>> stores;
        so.verbose = verbose;
        // Payload buffers of 64 KiB and more are mmapped and go back to the kernel when freed, so
        // what the budgets bound is what the process holds (no arena keeps freed payloads).
        ::mallopt(M_MMAP_THRESHOLD, 64 << 10);
        for (const bg::sim::Tenant &t : sc.tenants) {
            if (!data_dir.empty() && (t.name.empty() || t.name.find('/') != std::string::npos || t.name[0] == '.'))
                throw bg::sim::ScenarioError(sc.file + ":" + std::to_string(t.line) + ": tenants: name '" + t.name +
                                             "' cannot name a file in --data-dir");
            stores.push_back(data_dir.empty() ? bg::gw::open_memory_store(export_size)
                                              : bg::gw::open_file_store(data_dir + "/" + t.name + ".img", export_size));
            so.exports.push_back(t.name);
            so.tenant_conns.push_back(t.max_conns ? t.max_conns : max_conns);
        }
        // Every thread started from here on inherits the mask: the signals arrive on the signalfd.
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &mask, nullptr);
        ::signal(SIGPIPE, SIG_IGN);
        const int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC);

        bg::gw::Engine eng(sc, eo, std::move(stores));
        for (const std::string &w : eng.warnings())
            std::fprintf(stderr, "burstgate-gateway: warning: %s\n", w.c_str());
        const int lfd = unix_path.empty() ? listen_tcp(tcp, allow_remote) : listen_unix(unix_path);
        for (std::size_t t = 0; t < sc.tenants.size(); t++)
            if (eng.max_block(t) + 4096 > so.tenant_buffer)
                throw UsageError("--tenant-buffer " + std::to_string(so.tenant_buffer) + " is below tenant " +
                                 sc.tenants[t].name + "'s schedulable block (" + std::to_string(eng.max_block(t)) + " bytes)");
        const int cfd = control.empty() ? -1 : listen_unix(control, "--control");
        bg::gw::Server srv(eng, so);
        eng.start();
        std::fprintf(stderr, "burstgate-gateway: %zu exports on %s (engine %s, scheduler %s, window %.0f us)\n",
                     sc.tenants.size(), unix_path.empty() ? tcp.c_str() : unix_path.c_str(), eng.engine_name().c_str(),
                     bg::sim::scheduler_name(eo.scheduler), static_cast<double>(sc.window_ns) / 1e3);
        auto next_live = bg::gw::Clock::now() + std::chrono::seconds(1);
        bool rt_warned = false;
        for (bool running = true; running;) {
            pollfd p[3] = {{sfd, POLLIN, 0}, {lfd, POLLIN, 0}, {cfd, POLLIN, 0}};
            // At least every 100 ms: the handshake deadlines are enforced here.
            const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_live - bg::gw::Clock::now());
            const int n = ::poll(p, cfd >= 0 ? 3 : 2, static_cast<int>(std::clamp<long long>(wait.count(), 0, 100)));
            srv.tick();
            if (n < 0 && errno != EINTR)
                throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
            if (eng.realtime_failed() && !rt_warned) {
                std::fprintf(stderr, "burstgate-gateway: warning: --realtime: SCHED_FIFO refused (no CAP_SYS_NICE); running unprivileged\n");
                rt_warned = true;
            }
            if (bg::gw::Clock::now() >= next_live) {
                next_live += std::chrono::seconds(1);
                if (live)
                    (void)bg::gw::write_all(2, eng.live_table());
            }
            if (n <= 0)
                continue;
            if (p[0].revents & POLLIN) {
                signalfd_siginfo si{};
                if (::read(sfd, &si, sizeof si) == sizeof si) {
                    if (si.ssi_signo == SIGUSR1)
                        (void)bg::gw::write_all(2, eng.live_json());
                    else
                        running = false;
                }
            }
            if (p[1].revents & POLLIN) {
                const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
                if (fd >= 0)
                    srv.accept(fd);
            }
            if (cfd >= 0 && (p[2].revents & POLLIN)) {
                const int fd = ::accept4(cfd, nullptr, nullptr, SOCK_CLOEXEC);
                if (fd >= 0) {
                    (void)bg::gw::write_all(fd, eng.live_json());
                    ::close(fd);
                }
            }
        }
        // Stop: no new connections or requests; what is in flight is answered, then the report.
        ::close(lfd);
        if (!unix_path.empty())
            ::unlink(unix_path.c_str());
        if (cfd >= 0) {
            ::close(cfd);
            ::unlink(control.c_str());
        }
        // Readers stop first, so no request reaches the engine after it stops: every request
        // read is answered (in_flight in the report is what clients were never answered).
        srv.stop_reading(std::chrono::milliseconds(2000));
        eng.stop(std::chrono::milliseconds(2000));
        srv.close_all(std::chrono::milliseconds(2000));
        const std::string report = eng.report_json();
        if (out.empty()) {
            std::fputs(report.c_str(), stdout);
        } else {
            if (!(out_file << report) || !out_file.flush())
                throw std::runtime_error("--out: cannot write '" + out + "': " + std::strerror(errno));
        }
        if (recorder)
            std::fprintf(stderr, "burstgate-gateway: %s\n", recorder->finish().c_str());
        std::fprintf(stderr, "burstgate-gateway: stopped; %llu protocol errors refused\n",
                     static_cast<unsigned long long>(srv.protocol_errors()));
        return 0;
    } catch (const OwnedElsewhere &e) {
        std::fprintf(stderr, "burstgate-gateway: %s\n", e.what());
        return 2;
    } catch (const bg::sim::ScenarioError &e) {
        std::fprintf(stderr, "burstgate-gateway: %s\n", e.what());
        return 2;
    } catch (const UsageError &e) {  // --tcp / --unix values found bad when opened
        std::fprintf(stderr, "burstgate-gateway: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument &e) {  // unknown engine or scheduler
        std::fprintf(stderr, "burstgate-gateway: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "burstgate-gateway: %s\n", e.what());
        return 1;
    }
}
