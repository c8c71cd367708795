// The NBD side of burstgate-gateway: one reader thread per client connection runs the fixed
// newstyle handshake, binds the connection to the one export (tenant) it named, then reads
// requests, checks them (nbd_proto.hpp) and hands the valid ones to the Engine; the engine's
// backend threads queue each result on the connection's own reply queue, which the
// connection's writer thread sends. No engine thread ever waits for a client.
//
// What one tenant can take from the others is bounded (docs/gateway.md, *Hostile clients*):
// bytes held for it (budget.hpp), its connections (a per-tenant limit), the handshake phase (a
// bounded pool of handshaking connections, the oldest of the peer with the most evicted first,
// and a deadline), and a reader that does not keep up with its replies is cut.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base_priority.hpp"
#include "budget.hpp"
#include "buffer_pool.hpp"
#include "engine.hpp"

namespace bg::gw {

struct ServerOptions {
    std::vector<std::string> exports;     // tenant names, in scenario order
    std::vector<unsigned> tenant_conns;   // per tenant: connections in transmission at once
    unsigned handshake_slots = 16;        // connections in the handshake at once (all tenants)
    unsigned handshake_timeout_ms = 5000; // from accept to GO, whatever the client sends meanwhile
    std::uint64_t tenant_buffer = 64ull << 20;  // bytes held for one tenant's requests and replies
    std::uint64_t global_buffer = 0;             // for all of them (0: tenants x tenant_buffer)
    // A reply must be taken by the client within grace + its bytes / min rate of reaching the
    // head of its connection's queue, or the connection is cut (a trickle does not reset it).
    std::uint64_t min_reply_bytes_per_s = 1ull << 20;
    unsigned reply_grace_ms = 1000;
    bool verbose = false;  // one stderr line per refused request or closed connection
    // A reader's SCHED_FIFO priority while its tenant stays within its base is the engine's
    // (EngineOptions::base_priority; base_priority.hpp), the bases its scenario's.
};

class Conn;

class Server {
public:
    Server(Engine &engine, ServerOptions opt);
    ~Server();
    // Takes a connected socket into the handshake pool (evicting a handshake if it is full).
    void accept(int fd);
    void tick();  // cuts handshakes past their deadline; joins the threads of closed connections
    // No more requests are read; returns once no reader can hand the engine a request any more.
    void stop_reading(std::chrono::milliseconds wait);
    // Waits for the replies still queued to go out (up to `wait`), then cuts every connection
    // and joins every thread.
    void close_all(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
    std::uint64_t protocol_errors() const { return errors_.load(); }
    // Bytes held for clients now and at most so far (all tenants).
    std::uint64_t buffered() { return global_.used(); }
    std::uint64_t buffered_peak() { return global_.peak(); }
    std::uint64_t buffer_limit() const { return global_.limit(); }
    std::uint32_t max_payload(std::size_t t) const;

private:
    struct Client {
        std::shared_ptr<Conn> conn;
        std::thread th;
        std::string peer;
        Clock::time_point since;
        bool handshaking = true, evicted = false;
        std::atomic<bool> done{false};
    };
    void run(Client &c);
    int handshake(Client &cl, Conn &c);  // the tenant, or -1 (connection to close)
    void transmission(const std::shared_ptr<Conn> &c, std::size_t tenant);
    void note(const Conn &c, const std::string &what);
    void evict_locked(Client &c, const char *why);
    void reap();
    // n bytes from the tenant's and the global budget, waiting while they are not free; idle
    // pooled buffers are freed first (buffer_pool.hpp). False once `give_up()` says so.
    bool take_budget(std::size_t tenant, std::uint64_t n, const std::function<bool()> &give_up);

    Engine &eng_;
    ServerOptions opt_;
    std::mutex mu_;
    std::list<Client> clients_;
    std::vector<unsigned> established_;    // per tenant: connections in transmission
    std::vector<std::uint32_t> conn_seq_;  // per tenant: connections so far (ingress queue choice)
    std::vector<std::unique_ptr<Budget>> tenant_budget_;
    Budget global_;
    std::vector<std::unique_ptr<BufferPool>> pools_;  // per tenant: idle payload buffers
    std::unique_ptr<std::atomic<int>[]> tenant_pressed_;  // per tenant: readers waiting for its budget
    std::atomic<int> global_pressed_{0};                  // readers waiting for the global budget
    std::unique_ptr<BasePriority> base_prio_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> readers_{0};
    std::atomic<std::uint64_t> errors_{0};
    std::atomic<std::uint64_t> next_id_{0};
};

}  // namespace bg::gw
