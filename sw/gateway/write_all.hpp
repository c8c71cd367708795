// Writing a whole buffer to a file descriptor, through short writes and EINTR: the gateway's
// stderr/live-report writes (main.cpp) and the arrival recorder's chunks (arrivals.cpp).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace bg::gw {

// 0 once every byte is written; else the errno of the write that failed (EIO for one that
// wrote nothing), the bytes before it written.
inline int write_all(int fd, std::string_view s)
{
    for (std::size_t off = 0; off < s.size();) {
        const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        off += static_cast<std::size_t>(n);
    }
    return 0;
}

}  // namespace bg::gw
