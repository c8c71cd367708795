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

// The calling thread at SCHED_FIFO `prio`, or at the normal policy for 0; false when refused
// (raising needs CAP_SYS_NICE or an RLIMIT_RTPRIO; lowering never fails).
inline bool set_thread_fifo(int prio)
{
    sched_param sp{};
    sp.sched_priority = prio;
    return pthread_setschedparam(pthread_self(), prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp) == 0;
}

}  // namespace bg::gw
