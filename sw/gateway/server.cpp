// NBD connections; see server.hpp and nbd_proto.hpp.
#include "server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>

#include "nbd_proto.hpp"
#include "thread_name.hpp"

namespace bg::gw {

namespace {

// What one request or reply costs beyond its data: the Request, the reply header, the queue.
constexpr std::uint64_t kOverhead = 512;

using Bytes = std::vector<std::uint8_t>;

// The peer a connection comes from: the process (Unix socket) or the address (TCP).
std::string peer_of(int fd)
{
    ucred cr{};
    socklen_t n = sizeof cr;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.pid > 0)
        return "pid " + std::to_string(cr.pid);
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    char buf[INET6_ADDRSTRLEN] = "?";
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) == 0) {
        if (ss.ss_family == AF_INET)
            ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&ss)->sin_addr, buf, sizeof buf);
        else if (ss.ss_family == AF_INET6)
            ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_addr, buf, sizeof buf);
    }
    return buf;
}

const char *error_text(std::uint32_t e)
{
    switch (e) {
    case nbd::kEio: return "I/O error on the export's backing store";
    case nbd::kEnospc: return "no space left on the export's backing store";
    case nbd::kEnomem: return "out of memory";
    case nbd::kEnotsup: return "not supported here quickly (FAST_ZERO)";
    case nbd::kEshutdown: return "the gateway is shutting down";
    case nbd::kEinval: return "invalid argument";
    default: return "error";
    }
}

}  // namespace

// One reply on its way to the client: bytes to send, and the budget they hold until sent.
struct Out {
    Out() = default;
    Out(Out &&) = default;
    Out &operator=(Out &&) = default;
    // A READ's data buffers go back to the tenant's pool (their charge with them), once sent or dropped.
    ~Out()
    {
        if (pool)
            for (Bytes &b : body)
                pool->put(std::move(b), charge);
    }
    Bytes head;
    std::vector<Bytes> body;
    Charge charge;
    BufferPool *pool = nullptr;
    // An engine thread at SCHED_FIFO may send it: its request was within its tenant's base, no
    // other tenant is favoured, or --base-priority is off (on_engine_fifo_thread(), engine.hpp).
    bool favoured = false;
    // Sent at once by enqueue (its head and body hold the rest), and when: the reply reached the
    // head of the queue then, so its clock runs from there, for all of its bytes.
    std::uint64_t sent = 0;
    Clock::time_point at_head{};
    std::uint64_t size() const
    {
        std::uint64_t n = head.size();
        for (const Bytes &b : body)
            n += b.size();
        return n;
    }
};

namespace {

// When a transfer of `bytes` that may start at `start` must be done: --reply-grace plus its size
// at --min-reply-rate. A reply leaving and a WRITE payload arriving follow the same rule.
Clock::time_point transfer_deadline(Clock::time_point start, std::uint64_t bytes, std::uint64_t rate,
                                    std::chrono::milliseconds grace)
{
    return start + grace + std::chrono::nanoseconds(bytes * 1'000'000'000ull / std::max<std::uint64_t>(1, rate));
}

}  // namespace

// A client socket. Closed when the last thread holding it lets go, so nothing ever writes to a
// descriptor number the kernel has handed to someone else.
class Conn {
public:
    Conn(int fd, std::uint64_t id) : fd_(fd), id_(id) {}
    ~Conn() { ::close(fd_); }
    int fd() const { return fd_; }
    std::uint64_t id() const { return id_; }
    std::string export_name;
    nbd::Session session;

    // Exactly n bytes, or false (EOF, error, or the connection was cut).
    bool read_all(void *buf, std::size_t n)
    {
        auto *p = static_cast<std::uint8_t *>(buf);
        while (n > 0) {
            const ssize_t r = ::recv(fd_, p, n, 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return false;
            p += r, n -= static_cast<std::size_t>(r);
        }
        return true;
    }
    // Exactly n bytes by `deadline`, or false (EOF, error, cut, or the deadline passed: then
    // `late` is set). A WRITE's payload: its budget is held while it arrives, so a client that
    // sends a header and stops must not hold it for longer than a slow client would take.
    // `waiting` runs before the first wait for bytes not yet there (the reader gives up its
    // within-base priority then: a payload trickled in costs a wake-up per segment).
    bool read_by(void *buf, std::size_t n, Clock::time_point deadline, bool &late, const std::function<void()> &waiting)
    {
        bool waited = false;
        auto *p = static_cast<std::uint8_t *>(buf);
        while (n > 0) {
            const ssize_t r = ::recv(fd_, p, n, MSG_DONTWAIT);
            if (r > 0) {
                p += r, n -= static_cast<std::size_t>(r);
                continue;
            }
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                return false;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                late = true;
                return false;
            }
            if (!waited) {
                waiting();
                waited = true;
            }
            pollfd pf{fd_, POLLIN, 0};
            ::poll(&pf, 1, static_cast<int>(std::min<long long>(left, 100)));
            if (is_cut())
                return false;
        }
        return true;
    }
    bool skip(std::size_t n)
    {
        std::uint8_t buf[4096];
        while (n > 0) {
            const std::size_t k = std::min(n, sizeof buf);
            if (!read_all(buf, k))
                return false;
            n -= k;
        }
        return true;
    }
    // Handshake only (the connection's own thread; SO_SNDTIMEO and the handshake deadline bound it).
    bool send(const Bytes &v)
    {
        const std::uint8_t *p = v.data();
        std::size_t n = v.size();
        while (n > 0) {
            const ssize_t r = ::send(fd_, p, n, MSG_NOSIGNAL);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return false;
            p += r, n -= static_cast<std::size_t>(r);
        }
        return true;
    }

    // Requests of this connection not yet answered. The reader stops reading at the cap, so one
    // client can neither take every tag of the engine nor queue replies without end.
    static constexpr unsigned kMaxInflight = 512;
    bool begin_request()
    {
        std::unique_lock<std::mutex> g(mu_);
        room_cv_.wait(g, [&] { return inflight_ < kMaxInflight || cut_ || stop_; });
        if (cut_ || stop_)
            return false;
        inflight_++;
        return true;
    }
    // A reply is ready: queued for the writer (or dropped, the request done, if cut).
    void enqueue(Out o)
    {
        std::unique_lock<std::mutex> g(mu_);
        if (cut_) {
            answered_locked(g);
            return;  // `o` gives its bytes back here
        }
        const bool writer_idle = queue_.empty() && !writing_;
        if (writer_idle && (o.favoured || !on_engine_fifo_thread())) {
            // Nothing ahead of it and the writer idle: one non-blocking send from here saves the
            // writer's wake-up per reply (at iodepth 1 a host's scheduling delay is most of the
            // round trip). It never waits: what the socket does not take now goes to the writer,
            // whose clock for this reply starts when it takes it, as for any other.
            const std::uint64_t sent = send_now(o);
            if (sent == o.size()) {
                answered_locked(g);
                return;  // `o` gives its bytes back here
            }
            drop_front(o, sent);
            o.sent = sent;
            o.at_head = Clock::now();
        }
        queue_.push_back(std::move(o));
        g.unlock();
        // Only an idle writer sleeps on an empty queue; a busy one takes this reply next.
        if (writer_idle)
            out_cv_.notify_one();
    }
    void reader_done()
    {
        {
            std::lock_guard<std::mutex> g(mu_);
            reader_done_ = true;
        }
        wake_all();
    }
    // Stops the connection both ways; queued replies are dropped; waiters wake.
    void cut()
    {
        ::shutdown(fd_, SHUT_RDWR);
        std::deque<Out> drop;
        {
            std::lock_guard<std::mutex> g(mu_);
            cut_ = true;
            inflight_ -= static_cast<unsigned>(queue_.size());
            drop.swap(queue_);
        }
        wake_all();
    }
    bool is_cut()
    {
        std::lock_guard<std::mutex> g(mu_);
        return cut_;
    }
    // The reader stops at its next request boundary (the gateway is stopping).
    void stop()
    {
        {
            std::lock_guard<std::mutex> g(mu_);
            stop_ = true;
        }
        ::shutdown(fd_, SHUT_RD);
        wake_all();
    }
    bool stopping()
    {
        std::lock_guard<std::mutex> g(mu_);
        return stop_ || cut_;
    }
    // True once every request read has been answered (or dropped) and the reader is done.
    bool drained()
    {
        std::lock_guard<std::mutex> g(mu_);
        return cut_ || (reader_done_ && inflight_ == 0);
    }

    // The writer thread: sends queued replies in order; a reply the client does not take within
    // grace + size / rate of reaching the head of the queue cuts the connection. Returns the
    // reason it stopped (empty when the connection simply finished).
    std::string write_loop(std::uint64_t rate, std::chrono::milliseconds grace)
    {
        for (;;) {
            Out o;
            {
                std::unique_lock<std::mutex> g(mu_);
                out_cv_.wait(g, [&] { return cut_ || !queue_.empty() || (reader_done_ && inflight_ == 0); });
                if (cut_ || queue_.empty())
                    return "";
                o = std::move(queue_.front());
                queue_.pop_front();
                writing_ = true;
            }
            const std::uint64_t bytes = o.sent + o.size();
            const auto head = o.at_head != Clock::time_point{} ? o.at_head : Clock::now();
            const auto deadline = transfer_deadline(head, bytes, rate, grace);
            const bool ok = send_by(o.head, deadline) && [&] {
                for (const Bytes &b : o.body)
                    if (!send_by(b, deadline))
                        return false;
                return true;
            }();
            {
                std::unique_lock<std::mutex> g(mu_);
                writing_ = false;
                answered_locked(g);
            }
            if (!ok) {
                const bool late = send_errno_ == EAGAIN || send_errno_ == EWOULDBLOCK;  // the deadline passed
                cut();
                const double waited = std::chrono::duration<double>(Clock::now() - head).count();
                char ms[32];
                std::snprintf(ms, sizeof ms, "%.0f", waited * 1e3);
                return late ? "client took less than the minimum reply rate: a reply of " + std::to_string(bytes) +
                                  " bytes not read " + ms + " ms after reaching the head of the queue; cut"
                            : std::string("reply not sent: ") + std::strerror(send_errno_) + "; closed";
            }
        }
    }

private:
    // One request answered (or dropped): its in-flight slot is free. Wakes only who waits for
    // that — the reader at the in-flight cap, the writer once the last reply of a finished reader
    // is out — since a wake-up per reply (a futex call and a context switch) was a fifth of the
    // gateway's time at iodepth 32. Unlocks `g`.
    void answered_locked(std::unique_lock<std::mutex> &g)
    {
        const bool was_full = inflight_-- == kMaxInflight;
        const bool drained = reader_done_ && inflight_ == 0;
        g.unlock();
        if (was_full)
            room_cv_.notify_one();
        if (drained)
            out_cv_.notify_one();
    }
    void wake_all()
    {
        room_cv_.notify_all();
        out_cv_.notify_all();
    }

    // As much of `o` as the socket takes without waiting (0 on any error: the writer then meets
    // it and reports it).
    std::uint64_t send_now(const Out &o)
    {
        iovec iov[8];
        int n = 0;
        if (!o.head.empty())
            iov[n++] = {const_cast<std::uint8_t *>(o.head.data()), o.head.size()};
        for (const Bytes &b : o.body) {
            if (n == 8)
                break;
            if (!b.empty())
                iov[n++] = {const_cast<std::uint8_t *>(b.data()), b.size()};
        }
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = static_cast<std::size_t>(n);
        ssize_t r;
        do
            r = ::sendmsg(fd_, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (r < 0 && errno == EINTR);
        return r > 0 ? static_cast<std::uint64_t>(r) : 0;
    }
    static void drop_front(Out &o, std::uint64_t n)
    {
        auto eat = [&n](Bytes &b) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, b.size()));
            b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(k));
            n -= k;
        };
        eat(o.head);
        for (Bytes &b : o.body)
            eat(b);
    }

    bool send_by(const Bytes &v, Clock::time_point deadline)
    {
        const std::uint8_t *p = v.data();
        std::size_t n = v.size();
        while (n > 0) {
            const ssize_t r = ::send(fd_, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (r > 0) {
                p += r, n -= static_cast<std::size_t>(r);
                continue;
            }
            if (r < 0 && errno == EINTR)
                continue;
            send_errno_ = r < 0 ? errno : EPIPE;
            if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
                if (left <= 0)
                    return false;
                pollfd pf{fd_, POLLOUT, 0};
                ::poll(&pf, 1, static_cast<int>(std::min<long long>(left, 100)));
                if (is_cut())
                    return false;
                continue;
            }
            return false;
        }
        return true;
    }

    int fd_;
    std::uint64_t id_;
    std::mutex mu_;
    std::condition_variable room_cv_;  // the reader, at kMaxInflight
    std::condition_variable out_cv_;   // the writer, on an empty queue
    std::deque<Out> queue_;
    unsigned inflight_ = 0;
    bool cut_ = false, stop_ = false, reader_done_ = false;
    bool writing_ = false;  // the writer is sending a reply it took from the queue
    int send_errno_ = 0;
};

Server::Server(Engine &engine, ServerOptions opt) : eng_(engine), opt_(std::move(opt))
{
    const std::size_t n = opt_.exports.size();
    opt_.tenant_conns.resize(n, 16);
    established_.assign(n, 0);
    conn_seq_.assign(n, 0);
    for (std::size_t t = 0; t < n; t++)
        tenant_budget_.push_back(std::make_unique<Budget>(opt_.tenant_buffer));
    global_.set_limit(opt_.global_buffer ? opt_.global_buffer : opt_.tenant_buffer * n);
    tenant_pressed_ = std::make_unique<std::atomic<int>[]>(n);
    for (std::size_t t = 0; t < n; t++)
        pools_.push_back(std::make_unique<BufferPool>(tenant_budget_[t].get(), &global_, &tenant_pressed_[t], &global_pressed_));
    std::vector<double> base_iops(n), base_bytes_per_s(n);
    std::vector<std::uint32_t> max_block(n);
    for (std::size_t t = 0; t < n; t++) {
        base_iops[t] = eng_.scenario().tenants[t].base.iops;
        base_bytes_per_s[t] = eng_.scenario().tenants[t].base.mbps * 1e6;
        max_block[t] = eng_.max_block(t);
    }
    base_prio_ = std::make_unique<BasePriority>(eng_.options().base_priority, base_iops, base_bytes_per_s, max_block);
}

namespace {
// A reader waiting for a budget: while it waits, buffers coming back are freed, not pooled.
struct Pressing {
    explicit Pressing(std::atomic<int> &a) : a_(a) { a_++; }
    ~Pressing() { a_--; }
    Pressing(const Pressing &) = delete;
    Pressing &operator=(const Pressing &) = delete;
    std::atomic<int> &a_;
};
}  // namespace

bool Server::take_budget(std::size_t tenant, std::uint64_t n, const std::function<bool()> &give_up)
{
    // Short of budget: first the idle buffers that hold it go (the flag keeps returning buffers
    // from being pooled meanwhile; buffer_pool.hpp), then wait as before.
    Budget &tb = *tenant_budget_[tenant];
    if (!tb.try_take(n)) {
        Pressing p(tenant_pressed_[tenant]);
        pools_[tenant]->trim();
        if (!tb.take(n, give_up))
            return false;
    }
    if (!global_.try_take(n)) {
        Pressing p(global_pressed_);
        for (auto &q : pools_)
            q->trim();
        if (!global_.take(n, give_up)) {
            tb.give(n);
            return false;
        }
    }
    return true;
}

Server::~Server() { close_all(); }

// The largest READ/WRITE payload served (split into schedulable blocks): the protocol's 32 MiB,
// or half the tenant's budget when that is less, so one such request always fits in it.
std::uint32_t Server::max_payload(std::size_t) const
{
    std::uint64_t m = nbd::kMaxPayload;
    while (m > 4096 && m > opt_.tenant_buffer / 2)
        m /= 2;
    return static_cast<std::uint32_t>(m);
}

void Server::note(const Conn &c, const std::string &what)
{
    if (opt_.verbose)
        std::fprintf(stderr, "burstgate-gateway: connection %llu%s%s: %s\n", static_cast<unsigned long long>(c.id()),
                     c.export_name.empty() ? "" : " export ", c.export_name.c_str(), what.c_str());
}

void Server::evict_locked(Client &c, const char *why)
{
    c.evicted = true;
    if (c.conn) {
        note(*c.conn, std::string(why) + " (" + c.peer + "): cut");
        c.conn->cut();
    }
    errors_++;
}

void Server::accept(int fd)
{
    reap();
    const std::string peer = peer_of(fd);
    std::lock_guard<std::mutex> g(mu_);
    if (stopping_) {
        ::close(fd);
        return;
    }
    // The handshake pool is full: the peer holding the most handshakes loses its oldest, so a
    // flood from one source makes room for everyone else instead of refusing them.
    std::map<std::string, std::pair<unsigned, Client *>> by_peer;
    unsigned shaking = 0;
    for (Client &c : clients_)
        if (c.handshaking && !c.evicted) {
            shaking++;
            auto &[count, oldest] = by_peer[c.peer];
            count++;
            if (!oldest || c.since < oldest->since)
                oldest = &c;
        }
    if (shaking >= opt_.handshake_slots) {
        Client *victim = nullptr;
        unsigned most = 0;
        for (auto &[p, v] : by_peer)
            if (v.first > most || (v.first == most && v.second->since < victim->since))
                most = v.first, victim = v.second;
        if (victim)
            evict_locked(*victim, "handshake pool full, oldest handshake of the peer holding the most");
    }
    // A backstop no fair use reaches: the pool, every tenant's limit, and the evicted on their way out.
    std::size_t cap = 2 * opt_.handshake_slots;
    for (unsigned k : opt_.tenant_conns)
        cap += k;
    if (clients_.size() >= cap) {
        ::close(fd);
        errors_++;
        return;
    }
    Client &c = clients_.emplace_back();
    c.conn = std::make_shared<Conn>(fd, next_id_++);
    c.peer = peer;
    c.since = Clock::now();
    c.th = std::thread([this, &c] { run(c); });
}

void Server::tick()
{
    {
        std::lock_guard<std::mutex> g(mu_);
        const auto now = Clock::now();
        for (Client &c : clients_)
            if (c.handshaking && !c.evicted && now - c.since > std::chrono::milliseconds(opt_.handshake_timeout_ms))
                evict_locked(c, "handshake not finished within its deadline");
    }
    reap();
}

void Server::reap()
{
    std::list<Client> dead;
    {
        std::lock_guard<std::mutex> g(mu_);
        for (auto it = clients_.begin(); it != clients_.end();) {
            auto next = std::next(it);
            if (it->done.load())
                dead.splice(dead.end(), clients_, it);
            it = next;
        }
    }
    for (Client &c : dead)
        c.th.join();
}

void Server::stop_reading(std::chrono::milliseconds wait)
{
    {
        std::lock_guard<std::mutex> g(mu_);
        stopping_ = true;
        for (Client &c : clients_)
            if (c.conn) {
                if (c.handshaking)
                    c.conn->cut();
                else
                    c.conn->stop();
            }
    }
    for (auto &b : tenant_budget_)
        b->wake();
    global_.wake();
    const auto until = Clock::now() + wait;
    while (readers_.load() > 0 && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void Server::close_all(std::chrono::milliseconds wait)
{
    const auto until = Clock::now() + wait;
    for (;;) {
        bool all = true;
        {
            std::lock_guard<std::mutex> g(mu_);
            for (Client &c : clients_)
                if (c.conn && !c.done.load() && !c.conn->drained())
                    all = false;
        }
        if (all || Clock::now() >= until)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::list<Client> all;
    {
        std::lock_guard<std::mutex> g(mu_);
        stopping_ = true;
        for (Client &c : clients_)
            if (c.conn)
                c.conn->cut();
        all.splice(all.end(), clients_);
    }
    for (Client &c : all)
        c.th.join();
}

void Server::run(Client &c)
{
    name_thread("bg-hello");
    std::shared_ptr<Conn> conn = c.conn;
    const int tenant = handshake(c, *conn);
    if (tenant >= 0) {
        name_thread("bg-rd", conn->export_name);
        timeval none{};  // no receive timeout once the client is in transmission
        ::setsockopt(conn->fd(), SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
        const auto t = static_cast<std::size_t>(tenant);
        transmission(conn, t);
        std::lock_guard<std::mutex> g(mu_);
        established_[t]--;
    }
    conn.reset();
    std::lock_guard<std::mutex> g(mu_);
    c.conn.reset();  // the socket closes once the last reply has gone out
    c.done = true;
}

int Server::handshake(Client &cl, Conn &c)
{
    using namespace nbd;
    // A stalled client is cut by tick() at its deadline; these bound each call meanwhile.
    timeval tv{};
    tv.tv_sec = opt_.handshake_timeout_ms / 1000 + 1;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(c.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    Bytes hello;
    put64(hello, kInitMagic);
    put64(hello, kOptMagic);
    put16(hello, kFlagFixedNewstyle | kFlagNoZeroes);
    if (!c.send(hello))
        return -1;
    std::uint8_t cf[4];
    if (!c.read_all(cf, 4))
        return -1;
    const std::uint32_t client_flags = get32(cf);
    if ((client_flags & ~kClientKnownFlags) != 0 || !(client_flags & kFlagFixedNewstyle)) {
        errors_++;
        note(c, "client flags " + std::to_string(client_flags) + " (fixed newstyle only): closed");
        return -1;
    }
    const bool no_zeroes = client_flags & kFlagNoZeroes;
    const std::uint16_t tflags = kHasFlags | kSendFlush | kSendFua | kSendTrim | kSendWriteZeroes | kCanMultiConn |
                                 kSendCache | kSendFastZero;
    auto find = [&](const std::string &name) -> int {
        for (std::size_t i = 0; i < opt_.exports.size(); i++)
            if (opt_.exports[i] == name)
                return static_cast<int>(i);
        return -1;
    };
    // Takes a connection slot of tenant t and leaves the handshake pool; or the reason it cannot.
    auto admit = [&](int t) -> std::string {
        std::lock_guard<std::mutex> g(mu_);
        if (stopping_)
            return "the gateway is shutting down";
        if (cl.evicted)
            return "handshake evicted";
        const auto k = static_cast<std::size_t>(t);
        if (established_[k] >= opt_.tenant_conns[k])
            return "export '" + opt_.exports[k] + "' has " + std::to_string(established_[k]) +
                   " connections, its tenant's limit (tenants[].max_conns / --max-conns); close one first";
        established_[k]++;
        cl.handshaking = false;
        return "";
    };
    std::string meta_export;  // the export base:allocation was selected for, if any
    for (;;) {
        std::uint8_t oh[16];
        if (!c.read_all(oh, sizeof oh))
            return -1;
        const std::uint64_t magic = get64(oh);
        const std::uint32_t opt = get32(oh + 8), len = get32(oh + 12);
        if (magic != kOptMagic || len > kMaxOptionBytes) {
            errors_++;
            note(c, magic != kOptMagic ? "bad option magic: closed" : "option of " + std::to_string(len) + " bytes: closed");
            return -1;
        }
        Bytes data(len);
        if (len && !c.read_all(data.data(), len))
            return -1;
        switch (opt) {
        case kOptExportName: {
            const int t = find(std::string(data.begin(), data.end()));
            if (t < 0) {  // the protocol has no error reply here: closing is the answer
                errors_++;
                note(c, "EXPORT_NAME of an unknown export: closed");
                return -1;
            }
            if (const std::string why = admit(t); !why.empty()) {
                errors_++;
                note(c, "EXPORT_NAME refused: " + why + ": closed");
                return -1;
            }
            Bytes r;
            put64(r, eng_.store(static_cast<std::size_t>(t)).size());
            put16(r, tflags);
            if (!no_zeroes)
                r.resize(r.size() + 124, 0);
            c.export_name = opt_.exports[static_cast<std::size_t>(t)];
            c.session.block_status = false;  // no SET_META_CONTEXT can name this export first
            if (!c.send(r)) {
                std::lock_guard<std::mutex> g(mu_);
                established_[static_cast<std::size_t>(t)]--;
                return -1;
            }
            return t;
        }
        case kOptGo:
        case kOptInfo: {
            std::string name;
            std::vector<std::uint16_t> infos;
            if (!parse_go(data, name, infos)) {
                errors_++;
                if (!c.send(option_error(opt, kRepErrInvalid, "malformed GO/INFO payload")))
                    return -1;
                continue;
            }
            const int t = find(name);
            if (t < 0) {
                if (!c.send(option_error(opt, kRepErrUnknown, "no export named '" + name + "'")))
                    return -1;
                continue;
            }
            const auto k = static_cast<std::size_t>(t);
            Bytes ex;
            put16(ex, kInfoExport);
            put64(ex, eng_.store(k).size());
            put16(ex, tflags);
            // Always sent: clients size their requests by the maximum.
            Bytes bs;
            put16(bs, kInfoBlockSize);
            put32(bs, 1);
            put32(bs, 4096);
            put32(bs, max_payload(k));
            if (!c.send(option_reply(opt, kRepInfo, ex)) || !c.send(option_reply(opt, kRepInfo, bs)))
                return -1;
            if (opt == kOptInfo) {
                if (!c.send(option_reply(opt, kRepAck)))
                    return -1;
                continue;
            }
            if (const std::string why = admit(t); !why.empty()) {
                errors_++;
                note(c, "GO refused: " + why);
                if (!c.send(option_error(opt, kRepErrPolicy, why)))
                    return -1;
                continue;
            }
            if (!c.send(option_reply(opt, kRepAck))) {
                std::lock_guard<std::mutex> g(mu_);
                established_[k]--;
                return -1;
            }
            c.export_name = name;
            c.session.block_status = c.session.structured && meta_export == name;
            return t;
        }
        case kOptList: {
            if (len != 0) {
                errors_++;
                if (!c.send(option_error(opt, kRepErrInvalid, "LIST carries no data")))
                    return -1;
                continue;
            }
            for (const std::string &name : opt_.exports) {
                Bytes d;
                put32(d, static_cast<std::uint32_t>(name.size()));
                d.insert(d.end(), name.begin(), name.end());
                if (!c.send(option_reply(opt, kRepServer, d)))
                    return -1;
            }
            if (!c.send(option_reply(opt, kRepAck)))
                return -1;
            continue;
        }
        case kOptStructuredReply: {
            if (len != 0) {
                errors_++;
                if (!c.send(option_error(opt, kRepErrInvalid, "STRUCTURED_REPLY carries no data")))
                    return -1;
                continue;
            }
            c.session.structured = true;
            if (!c.send(option_reply(opt, kRepAck)))
                return -1;
            continue;
        }
        case kOptListMetaContext:
        case kOptSetMetaContext: {
            std::string name;
            std::vector<std::string> queries;
            if (opt == kOptSetMetaContext)
                meta_export.clear();  // a SET replaces the selection, failed or not
            if (!parse_meta(data, name, queries)) {
                errors_++;
                if (!c.send(option_error(opt, kRepErrInvalid, "malformed meta context payload")))
                    return -1;
                continue;
            }
            if (opt == kOptSetMetaContext && !c.session.structured) {
                errors_++;
                if (!c.send(option_error(opt, kRepErrInvalid, "SET_META_CONTEXT before STRUCTURED_REPLY")))
                    return -1;
                continue;
            }
            if (find(name) < 0) {
                if (!c.send(option_error(opt, kRepErrUnknown, "no export named '" + name + "'")))
                    return -1;
                continue;
            }
            // base:allocation is the one context: LIST with no query or "base:" names it too.
            bool match = false;
            for (const std::string &q : queries)
                match |= q == kBaseAllocation || (opt == kOptListMetaContext && q == "base:");
            if (opt == kOptListMetaContext && queries.empty())
                match = true;
            if (match) {
                Bytes d;
                put32(d, kBaseAllocationId);
                d.insert(d.end(), kBaseAllocation, kBaseAllocation + std::strlen(kBaseAllocation));
                if (!c.send(option_reply(opt, kRepMetaContext, d)))
                    return -1;
                if (opt == kOptSetMetaContext)
                    meta_export = name;
            }
            if (!c.send(option_reply(opt, kRepAck)))
                return -1;
            continue;
        }
        case kOptAbort:
            c.send(option_reply(opt, kRepAck));
            return -1;
        default:  // STARTTLS, extended headers, anything newer: not supported
            if (!c.send(option_error(opt, kRepErrUnsup, "option " + std::to_string(opt) + " not supported")))
                return -1;
            continue;
        }
    }
}

void Server::transmission(const std::shared_ptr<Conn> &c, std::size_t tenant)
{
    using namespace nbd;
    std::uint32_t seq;
    {
        std::lock_guard<std::mutex> g(mu_);
        seq = conn_seq_[tenant]++;
    }
    readers_++;
    const std::uint8_t queue = eng_.ingress_queue(tenant, seq);
    const std::uint16_t vq = eng_.vcpu_queue(tenant, seq);
    const std::uint64_t size = eng_.store(tenant).size();
    const std::uint32_t chunk = eng_.max_block(tenant);  // what one window's grant can admit
    const std::uint32_t max_payload = this->max_payload(tenant);
    const bool structured = c->session.structured;
    Budget &tb = *tenant_budget_[tenant];
    BufferPool &pool = *pools_[tenant];
    auto give_up = [&] { return c->stopping(); };
    const auto grace = std::chrono::milliseconds(opt_.reply_grace_ms);
    BasePriority::Thread prio(*base_prio_);  // normal policy again when the reader ends
    // Created before the reader first raises its policy, so it starts at the normal one (a thread
    // inherits its creator's policy): replies the socket does not take at once are sent there.
    std::thread writer([this, c, grace] {
        name_thread("bg-wr", c->export_name);
        const std::string why = c->write_loop(opt_.min_reply_bytes_per_s, grace);
        if (!why.empty()) {
            errors_++;
            note(*c, why);
        }
    });
    // An error answer: a structured error chunk (with the reason) when negotiated, else simple.
    auto error_out = [&](std::uint64_t cookie, std::uint32_t err, const std::string &why, Charge ch) {
        Out o;
        o.head = structured ? error_chunk(cookie, err, why) : simple_reply_header(err, cookie);
        o.charge = std::move(ch);
        return o;
    };
    for (;;) {
        std::uint8_t raw[kRequestBytes];
        if (!c->begin_request())  // a slot for the next request; released when it is answered
            break;
        auto drop_slot = [&] { c->enqueue(Out{}); };  // no reply: gives the slot back (empty Out is not sent)
        if (!c->read_all(raw, sizeof raw)) {
            drop_slot();
            note(*c, c->stopping() ? "stopped reading (the gateway is stopping)" : "closed by the client");
            break;
        }
        const nbd::Request hdr = parse_request(raw);
        const Check chk = check_request(hdr, size, max_payload, kMaxPayload, c->session);
        // This request and the wait for the next at real-time priority only when it is served
        // and within the base (a refused one takes no tokens and is never favoured), and never
        // while the engine's threads run without their SCHED_FIFO 10 (refused: an RLIMIT_RTPRIO
        // between 5 and 10 would let the readers preempt the window loop).
        const bool sized = hdr.type == kCmdRead || hdr.type == kCmdWrite || hdr.type == kCmdWriteZeroes;
        const bool within = chk.verdict == Verdict::kServe && !eng_.realtime_failed() &&
                            base_prio_->within(tenant, sized ? hdr.length : 0);
        prio.favour(within);
        if (chk.verdict == Verdict::kClose) {
            errors_++;
            note(*c, std::string(chk.why) + ": closed");
            if (hdr.magic == kRequestMagic)  // framed enough to answer: the reason, then the close
                c->enqueue(error_out(hdr.cookie, chk.error, chk.why, Charge()));
            else
                drop_slot();
            break;
        }
        if (chk.verdict == Verdict::kDisconnect) {
            note(*c, "NBD_CMD_DISC");
            drop_slot();
            break;  // requests in flight are still answered by the writer
        }
        // The bytes this request holds until its reply has left: its payload either way.
        const bool data_cmd = chk.verdict == Verdict::kServe && (hdr.type == kCmdRead || hdr.type == kCmdWrite);
        // Zeroes to be written (at most the maximum payload: checked) are split like a WRITE,
        // each block costing what writing it costs. They hold no buffer but are charged their
        // bytes as a WRITE is, so that a tenant's blocks in the engine are bounded alike: at
        // 512 bytes a block, one connection's 32 MiB WRITE_ZEROES held every tag of the engine
        // and stalled every other tenant's submit (a neighbour's 4 KiB read P99 20-50 ms).
        const bool zero_cmd = chk.verdict == Verdict::kServe && hdr.type == kCmdWriteZeroes &&
                              (hdr.flags & kCmdFlagNoHole) && !(hdr.flags & kCmdFlagFastZero);
        const bool split = data_cmd || zero_cmd;
        const std::uint32_t nchunks = split ? (hdr.length + chunk - 1) / chunk : 1;
        const std::uint64_t need = (split ? hdr.length : 0) + kOverhead * nchunks +
                                   (hdr.type == kCmdBlockStatus ? 8192 : 0);
        // Pooled buffers first (READ/WRITE of at least BufferPool::kMinPooled): their bytes are
        // charged already, so the budgets give only the rest.
        Charge charge(&tb, &global_, 0);
        std::vector<Bytes> bufs(data_cmd ? nchunks : 0);
        std::uint64_t pooled = 0;
        for (std::uint32_t k = 0; k < bufs.size(); k++) {
            const std::uint32_t len = std::min(chunk, hdr.length - k * chunk);
            if (pool.take(len, bufs[k], charge))
                pooled += len;
        }
        if (!take_budget(tenant, need - pooled, give_up)) {
            drop_slot();
            break;
        }
        charge.attach(need - pooled);
        if (chk.verdict == Verdict::kReplyError) {
            errors_++;
            note(*c, std::string(chk.why) + ": error " + std::to_string(chk.error));
            if (hdr.type == kCmdWrite && !c->skip(hdr.length)) {
                drop_slot();
                break;
            }
            c->enqueue(error_out(hdr.cookie, chk.error, chk.why, std::move(charge)));
            continue;
        }
        // One scheduled descriptor per chunk of at most `chunk` bytes (READ/WRITE), else one.
        struct Agg {
            std::mutex mu;
            std::uint32_t left = 0, error = kOk;
            std::vector<Bytes> parts;
            Charge charge;
        };
        auto agg = std::make_shared<Agg>();
        agg->left = nchunks;
        agg->parts.resize(hdr.type == kCmdRead || hdr.type == kCmdBlockStatus ? nchunks : 0);
        agg->charge = std::move(charge);
        std::vector<std::unique_ptr<bg::gw::Request>> parts;
        bool torn = false, late = false;
        // The payload arrives as a reply must leave: within --reply-grace + its size /
        // --min-reply-rate of the header (docs/gateway.md, *Hostile clients*), or the connection
        // is cut and its budget given back.
        const auto payload_by = transfer_deadline(Clock::now(), hdr.length, opt_.min_reply_bytes_per_s, grace);
        for (std::uint32_t k = 0; k < nchunks; k++) {
            auto r = std::make_unique<bg::gw::Request>();
            r->type = hdr.type;
            r->flags = hdr.flags;
            r->cookie = hdr.cookie;
            r->offset = split ? hdr.offset + std::uint64_t{k} * chunk : hdr.offset;
            r->length = split ? std::min(chunk, hdr.length - k * chunk) : hdr.length;
            r->tenant = static_cast<std::uint16_t>(tenant);
            r->within = within;
            r->queue = queue;
            r->vq = vq;
            if (k < bufs.size())
                r->data = std::move(bufs[k]);  // sized already when pooled (no zero-fill)
            if (hdr.type == kCmdWrite) {
                r->data.resize(r->length);
                if (!c->read_by(r->data.data(), r->length, payload_by, late, [&] { prio.favour(false); })) {
                    torn = true;
                    break;
                }
            }
            // Sent by an engine thread at SCHED_FIFO only when favoured, or when no other
            // tenant's reader is (nobody to protect; never with --base-priority 0): see
            // on_engine_fifo_thread().
            r->reply = [c, agg, k, structured, hdr, pp = &pool, within, tenant](bg::gw::Request &q, std::uint32_t error) {
                std::unique_lock<std::mutex> g(agg->mu);
                if (error && !agg->error)
                    agg->error = error;
                if (!agg->parts.empty())
                    agg->parts[k] = std::move(q.data);
                else if (hdr.type == kCmdWrite)  // the payload is in the store: its buffer serves the next request
                    pp->put(std::move(q.data), agg->charge);
                if (--agg->left > 0)
                    return;
                Out o;
                o.charge = std::move(agg->charge);
                o.favoured = within || !base_priority_in_use(tenant);
                if (agg->error) {
                    o.head = structured ? error_chunk(hdr.cookie, agg->error, error_text(agg->error))
                                        : simple_reply_header(agg->error, hdr.cookie);
                } else if (hdr.type == kCmdRead) {
                    if (structured) {
                        o.head = chunk_header(kReplyFlagDone, kReplyOffsetData, hdr.cookie, 8 + hdr.length);
                        put64(o.head, hdr.offset);
                    } else {
                        o.head = simple_reply_header(kOk, hdr.cookie);
                    }
                    o.body = std::move(agg->parts);
                    o.pool = pp;
                } else if (hdr.type == kCmdBlockStatus) {
                    const Bytes &ex = agg->parts[0];
                    o.head = chunk_header(kReplyFlagDone, kReplyBlockStatus, hdr.cookie,
                                          static_cast<std::uint32_t>(4 + ex.size()));
                    put32(o.head, kBaseAllocationId);
                    o.body = std::move(agg->parts);
                } else {
                    o.head = simple_reply_header(kOk, hdr.cookie);
                }
                g.unlock();
                c->enqueue(std::move(o));
            };
            parts.push_back(std::move(r));
        }
        if (torn) {  // a partial write is never applied
            if (late) {
                errors_++;
                c->cut();
                note(*c, "WRITE payload of " + std::to_string(hdr.length) +
                             " bytes not received within its deadline (--reply-grace + size / --min-reply-rate): cut");
            } else {
                note(*c, "closed in the middle of a WRITE payload");
            }
            drop_slot();
            break;
        }
        prio.favour(within);  // again, if the payload's wait gave it up: the inline work and the next wait
        const auto now = Clock::now();
        for (auto &r : parts) {
            r->arrival = now;
            eng_.submit(std::move(r));
        }
    }
    readers_--;
    c->reader_done();
    writer.join();
}

}  // namespace bg::gw
