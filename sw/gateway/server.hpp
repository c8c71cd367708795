// The NBD side of burstgate-gateway: one thread per client connection runs the fixed newstyle
// handshake, binds the connection to the one export (tenant) it named, then reads requests,
// checks them (nbd_proto.hpp) and hands the valid ones to the Engine, whose SA workers reply.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine.hpp"

namespace bg::gw {

struct ServerOptions {
    std::vector<std::string> exports;  // tenant names, in scenario order
    unsigned max_conns = 64;
    unsigned handshake_timeout_s = 10;
    unsigned send_timeout_s = 10;       // a client not reading its replies this long is cut
    bool verbose = false;               // one stderr line per refused request or closed connection
};

class Conn;

class Server {
public:
    Server(Engine &engine, ServerOptions opt) : eng_(engine), opt_(std::move(opt)) {}
    ~Server();
    // Takes a connected socket; refuses it (closes) above max_conns.
    void accept(int fd);
    void reap();  // joins the threads of closed connections
    // No more requests are read; answers to requests in flight still go out.
    void stop_reading();
    void close_all();  // cuts every connection and joins every thread
    std::uint64_t protocol_errors() const { return errors_.load(); }

private:
    struct Client {
        std::shared_ptr<Conn> conn;
        std::thread th;
        std::atomic<bool> done{false};
    };
    void run(Client &c);
    int handshake(Conn &c);  // the tenant, or -1 (connection to close)
    void transmission(const std::shared_ptr<Conn> &c, std::size_t tenant);
    void note(const Conn &c, const std::string &what);

    Engine &eng_;
    ServerOptions opt_;
    std::mutex mu_;
    std::list<Client> clients_;
    std::vector<std::uint32_t> conn_seq_;  // per tenant: connections so far (ingress queue choice)
    std::atomic<std::uint64_t> errors_{0};
    std::atomic<std::uint64_t> next_id_{0};
};

}  // namespace bg::gw
