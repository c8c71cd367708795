// NBD connections; see server.hpp and nbd_proto.hpp.
#include "server.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>

#include "nbd_proto.hpp"

namespace bg::gw {

// A client socket. Closed when the last request holding it has been answered, so a worker
// never writes to a descriptor number the kernel has handed to someone else.
class Conn {
public:
    Conn(int fd, std::uint64_t id) : fd_(fd), id_(id) {}
    ~Conn() { ::close(fd_); }
    int fd() const { return fd_; }
    std::uint64_t id() const { return id_; }
    std::string export_name;

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
    // Writers serialise here: a reply's header and data go out back to back.
    bool send_all(const void *a, std::size_t na, const void *b = nullptr, std::size_t nb = 0)
    {
        std::lock_guard<std::mutex> g(wmu_);
        return send_locked(a, na) && (nb == 0 || send_locked(b, nb));
    }
    bool send(const std::vector<std::uint8_t> &v) { return send_all(v.data(), v.size()); }

    // Requests of this connection not yet answered. The reader stops reading at the cap, so
    // one client can neither take every tag of the engine from the other tenants nor make the
    // gateway buffer an unbounded number of WRITE payloads (TCP/socket flow control does the rest).
    void begin_request()
    {
        std::unique_lock<std::mutex> g(imu_);
        icv_.wait(g, [&] { return inflight_ < kMaxInflight || cut_; });
        inflight_++;
    }
    void end_request()
    {
        {
            std::lock_guard<std::mutex> g(imu_);
            inflight_--;
        }
        icv_.notify_all();
    }
    static constexpr unsigned kMaxInflight = 512;
    // Stops the connection both ways and wakes a reader waiting for a slot.
    void cut()
    {
        ::shutdown(fd_, SHUT_RDWR);
        {
            std::lock_guard<std::mutex> g(imu_);
            cut_ = true;
        }
        icv_.notify_all();
    }

private:
    bool send_locked(const void *buf, std::size_t n)
    {
        if (broken_)
            return false;
        const auto *p = static_cast<const std::uint8_t *>(buf);
        while (n > 0) {
            const ssize_t r = ::send(fd_, p, n, MSG_NOSIGNAL);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                // Gone, or not reading its replies for SO_SNDTIMEO: cut it, so a client that
                // stops reading cannot hold an SA backend thread (and every tenant) hostage.
                broken_ = true;
                ::shutdown(fd_, SHUT_RDWR);
                return false;
            }
            p += r, n -= static_cast<std::size_t>(r);
        }
        return true;
    }
    int fd_;
    std::uint64_t id_;
    std::mutex wmu_;
    bool broken_ = false;
    std::mutex imu_;
    std::condition_variable icv_;
    unsigned inflight_ = 0;
    bool cut_ = false;
};

Server::~Server() { close_all(); }

void Server::note(const Conn &c, const std::string &what)
{
    if (opt_.verbose)
        std::fprintf(stderr, "burstgate-gateway: connection %llu%s%s: %s\n", static_cast<unsigned long long>(c.id()),
                     c.export_name.empty() ? "" : " export ", c.export_name.c_str(), what.c_str());
}

void Server::accept(int fd)
{
    reap();
    std::lock_guard<std::mutex> g(mu_);
    if (clients_.size() >= opt_.max_conns) {
        ::close(fd);
        errors_++;
        return;
    }
    Client &c = clients_.emplace_back();
    c.conn = std::make_shared<Conn>(fd, next_id_++);
    c.th = std::thread([this, &c] { run(c); });
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

void Server::stop_reading()
{
    std::lock_guard<std::mutex> g(mu_);
    for (Client &c : clients_)
        if (c.conn)
            ::shutdown(c.conn->fd(), SHUT_RD);
}

void Server::close_all()
{
    std::list<Client> all;
    {
        std::lock_guard<std::mutex> g(mu_);
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
    std::shared_ptr<Conn> conn = c.conn;
    const int tenant = handshake(*conn);
    if (tenant >= 0) {
        timeval none{};  // no receive timeout once the client is in transmission
        ::setsockopt(conn->fd(), SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
        timeval send{};
        send.tv_sec = opt_.send_timeout_s;
        ::setsockopt(conn->fd(), SOL_SOCKET, SO_SNDTIMEO, &send, sizeof send);
        transmission(conn, static_cast<std::size_t>(tenant));
    }
    conn.reset();
    std::lock_guard<std::mutex> g(mu_);
    c.conn.reset();  // the socket closes once the last reply has gone out
    c.done = true;
}

int Server::handshake(Conn &c)
{
    using namespace nbd;
    // A client that stalls in the handshake is cut: it holds a thread.
    timeval tv{};
    tv.tv_sec = opt_.handshake_timeout_s;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::vector<std::uint8_t> hello;
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
    const std::uint16_t tflags = kHasFlags | kSendFlush | kSendFua | kSendTrim | kCanMultiConn;
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
        std::vector<std::uint8_t> data(len);
        if (len && !c.read_all(data.data(), len))
            return -1;
        auto find = [&](const std::string &name) -> int {
            for (std::size_t i = 0; i < opt_.exports.size(); i++)
                if (opt_.exports[i] == name)
                    return static_cast<int>(i);
            return -1;
        };
        switch (opt) {
        case kOptExportName: {
            const int t = find(std::string(data.begin(), data.end()));
            if (t < 0) {  // the protocol has no error reply here: closing is the answer
                errors_++;
                note(c, "EXPORT_NAME of an unknown export: closed");
                return -1;
            }
            std::vector<std::uint8_t> r;
            put64(r, eng_.store(static_cast<std::size_t>(t)).size());
            put16(r, tflags);
            if (!no_zeroes)
                r.resize(r.size() + 124, 0);
            c.export_name = opt_.exports[static_cast<std::size_t>(t)];
            return c.send(r) ? t : -1;
        }
        case kOptGo:
        case kOptInfo: {
            std::string name;
            std::vector<std::uint16_t> infos;
            if (!parse_go(data, name, infos)) {
                errors_++;
                if (!c.send(option_reply(opt, kRepErrInvalid)))
                    return -1;
                continue;
            }
            const int t = find(name);
            if (t < 0) {
                if (!c.send(option_reply(opt, kRepErrUnknown)))
                    return -1;
                continue;
            }
            std::vector<std::uint8_t> ex;
            put16(ex, kInfoExport);
            put64(ex, eng_.store(static_cast<std::size_t>(t)).size());
            put16(ex, tflags);
            // Always sent: the maximum is what keeps every request admissible in one window.
            std::vector<std::uint8_t> bs;
            put16(bs, kInfoBlockSize);
            put32(bs, 1);
            put32(bs, 4096);
            put32(bs, eng_.max_block(static_cast<std::size_t>(t)));
            if (!c.send(option_reply(opt, kRepInfo, ex)) || !c.send(option_reply(opt, kRepInfo, bs)) ||
                !c.send(option_reply(opt, kRepAck)))
                return -1;
            if (opt == kOptGo) {
                c.export_name = name;
                return t;
            }
            continue;
        }
        case kOptList: {
            if (len != 0) {
                errors_++;
                if (!c.send(option_reply(opt, kRepErrInvalid)))
                    return -1;
                continue;
            }
            for (const std::string &name : opt_.exports) {
                std::vector<std::uint8_t> d;
                put32(d, static_cast<std::uint32_t>(name.size()));
                d.insert(d.end(), name.begin(), name.end());
                if (!c.send(option_reply(opt, kRepServer, d)))
                    return -1;
            }
            if (!c.send(option_reply(opt, kRepAck)))
                return -1;
            continue;
        }
        case kOptAbort:
            c.send(option_reply(opt, kRepAck));
            return -1;
        default:  // STARTTLS, STRUCTURED_REPLY, meta contexts, anything newer: not supported
            if (!c.send(option_reply(opt, kRepErrUnsup)))
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
        if (conn_seq_.size() <= tenant)
            conn_seq_.resize(tenant + 1, 0);
        seq = conn_seq_[tenant]++;
    }
    const std::uint8_t queue = eng_.ingress_queue(tenant, seq);
    const std::uint16_t vq = eng_.vcpu_queue(tenant, seq);
    const std::uint64_t size = eng_.store(tenant).size();
    const std::uint32_t max_block = eng_.max_block(tenant);
    for (;;) {
        std::uint8_t raw[kRequestBytes];
        c->begin_request();  // a slot for the next request; released when it is answered
        if (!c->read_all(raw, sizeof raw)) {
            c->end_request();
            note(*c, "closed by the client");
            return;
        }
        const nbd::Request hdr = parse_request(raw);
        const Check chk = check_request(hdr, size, max_block, max_block);
        switch (chk.verdict) {
        case Verdict::kClose:
            c->end_request();
            errors_++;
            note(*c, std::string(chk.why) + ": closed");
            if (hdr.magic == kRequestMagic)
                c->send(simple_reply_header(chk.error, hdr.cookie));
            return;
        case Verdict::kDisconnect:
            c->end_request();
            note(*c, "NBD_CMD_DISC");
            return;  // requests in flight are still answered: they hold the connection
        case Verdict::kReplyError:
            errors_++;
            note(*c, std::string(chk.why) + ": error " + std::to_string(chk.error));
            c->end_request();
            if (hdr.type == kCmdWrite && !c->skip(hdr.length))
                return;
            if (!c->send(simple_reply_header(chk.error, hdr.cookie)))
                return;
            continue;
        case Verdict::kServe:
            break;
        }
        auto r = std::make_unique<bg::gw::Request>();
        r->type = hdr.type;
        r->flags = hdr.flags;
        r->cookie = hdr.cookie;
        r->offset = hdr.offset;
        r->length = hdr.length;
        r->tenant = static_cast<std::uint16_t>(tenant);
        r->queue = queue;
        r->vq = vq;
        if (hdr.type == kCmdWrite) {
            r->data.resize(hdr.length);
            if (!c->read_all(r->data.data(), hdr.length)) {
                c->end_request();
                note(*c, "closed in the middle of a WRITE payload");
                return;  // a partial write is never applied
            }
        }
        r->arrival = Clock::now();
        r->reply = [c](const bg::gw::Request &q, std::uint32_t error) {
            const auto h = simple_reply_header(error, q.cookie);
            if (q.type == kCmdRead && error == kOk)
                c->send_all(h.data(), h.size(), q.data.data(), q.data.size());
            else
                c->send_all(h.data(), h.size());
            c->end_request();
        };
        eng_.submit(std::move(r));
    }
}

}  // namespace bg::gw
