// A thread's name and scheduling policy. The name is for `top -H`, `perf` and
// /proc/PID/task/TID/comm, so that a user can tell where the gateway's CPU and its run-queue
// waits go: "bg-window", "bg-pacer", "bg-store", "bg-arrivals", "bg-hello" (a connection in its
// handshake), and per connection "bg-rd:TENANT" (reads requests, does inline work) and
// "bg-wr:TENANT" (sends the replies the socket did not take at once). The kernel keeps 15
// bytes: a long tenant name is cut there.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <string>
#include <string_view>

namespace bg::gw {

inline void name_thread(std::string_view role, std::string_view tenant = {})
{
    std::string n(role);
    if (!tenant.empty())
        n.append(":").append(tenant);
    n.resize(std::min<std::size_t>(n.size(), 15));
    pthread_setname_np(pthread_self(), n.c_str());  // fails only on a name above 15 bytes
}

inline thread_local bool t_on_fifo = false;  // set_thread_fifo's last success: prio > 0

// The calling thread at SCHED_FIFO `prio`, or at the normal policy for 0; false when refused
// (raising needs CAP_SYS_NICE or an RLIMIT_RTPRIO; lowering never fails). Every gateway thread
// sets its policy here, so on_fifo_thread() is always its policy.
inline bool set_thread_fifo(int prio)
{
    sched_param sp{};
    sp.sched_priority = prio;
    const bool ok = pthread_setschedparam(pthread_self(), prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp) == 0;
    if (ok)
        t_on_fifo = prio > 0;
    return ok;
}

// True while the calling thread runs at SCHED_FIFO at any priority: the engine's window loop
// and pacer (10), a store thread doing within-base work or a favoured reader (--base-priority).
// A reply such a thread produces for a request not within its tenant's base is left to its
// connection's writer while another tenant's reader is favoured (server.cpp,
// base_priority_in_use()), so that no tenant's bytes are copied at a real-time priority beyond
// what its base buys.
inline bool on_fifo_thread() { return t_on_fifo; }

}  // namespace bg::gw
