// A tenant's virtual disk: a sparse file in --data-dir, or sparse anonymous memory. Thread
// safe for concurrent requests (pread/pwrite; the NBD client orders overlapping ones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bg::gw {

class Store {
public:
    virtual ~Store() = default;
    virtual std::uint64_t size() const = 0;
    // 0 or the errno of the failure.
    virtual int read(std::uint8_t *buf, std::uint32_t len, std::uint64_t off) = 0;
    virtual int write(const std::uint8_t *buf, std::uint32_t len, std::uint64_t off) = 0;
    virtual int flush() = 0;  // makes every acknowledged write durable
    virtual int trim(std::uint64_t off, std::uint64_t len) = 0;  // reads back as zeroes
    // Zeroes a range: a hole when `may_hole` (else allocated); with `fast`, ENOTSUP rather than
    // anything slower than a write of the same range would be.
    virtual int zero(std::uint64_t off, std::uint64_t len, bool may_hole, bool fast) = 0;
    virtual int cache(std::uint64_t off, std::uint64_t len) = 0;  // a read-ahead hint
    // base:allocation of [off, off + len): consecutive (length, NBD_STATE_* flags) runs, at most
    // `max` of them, covering a prefix of the range (at least one run).
    using Extents = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
    virtual int extents(std::uint64_t off, std::uint64_t len, std::size_t max, Extents &out) = 0;
};

// `path` is created sparse when missing; an existing file must already have `size` bytes
// (a virtual disk never changes size under its tenant's data). Throws std::runtime_error.
std::unique_ptr<Store> open_file_store(const std::string &path, std::uint64_t size);
std::unique_ptr<Store> open_memory_store(std::uint64_t size);

}  // namespace bg::gw
