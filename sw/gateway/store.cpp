// File and memory backing of the exports; see store.hpp.
#include "store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace bg::gw {

namespace {

constexpr std::uint32_t kHole = 3;  // NBD_STATE_HOLE | NBD_STATE_ZERO
constexpr std::uint64_t kRunMax = 0xffffffffull & ~0xfffull;  // a run's length is 32 bits

// Appends a run, merged with the previous one of the same state.
void add_run(Store::Extents &out, std::uint64_t len, std::uint32_t flags)
{
    while (len > 0) {
        if (!out.empty() && out.back().second == flags && out.back().first < kRunMax) {
            const std::uint64_t k = std::min<std::uint64_t>(len, kRunMax - out.back().first);
            out.back().first += static_cast<std::uint32_t>(k);
            len -= k;
            continue;
        }
        const std::uint64_t k = std::min(len, kRunMax);
        out.emplace_back(static_cast<std::uint32_t>(k), flags);
        len -= k;
    }
}

class FileStore final : public Store {
public:
    FileStore(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
    ~FileStore() override { ::close(fd_); }
    std::uint64_t size() const override { return size_; }
    int read(std::uint8_t *buf, std::uint32_t len, std::uint64_t off) override
    {
        while (len > 0) {
            const ssize_t n = ::pread(fd_, buf, len, static_cast<off_t>(off));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return errno;
            if (n == 0) {  // inside the size set at open: cannot happen unless someone truncated the file
                std::memset(buf, 0, len);
                return 0;
            }
            buf += n, off += static_cast<std::uint64_t>(n), len -= static_cast<std::uint32_t>(n);
        }
        return 0;
    }
    int write(const std::uint8_t *buf, std::uint32_t len, std::uint64_t off) override
    {
        while (len > 0) {
            const ssize_t n = ::pwrite(fd_, buf, len, static_cast<off_t>(off));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return n < 0 ? errno : EIO;
            buf += n, off += static_cast<std::uint64_t>(n), len -= static_cast<std::uint32_t>(n);
        }
        return 0;
    }
    int flush() override { return ::fdatasync(fd_) == 0 ? 0 : errno; }
    int trim(std::uint64_t off, std::uint64_t len) override
    {
        if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off), static_cast<off_t>(len)) == 0)
            return 0;
        return errno;
    }
    int zero(std::uint64_t off, std::uint64_t len, bool may_hole, bool fast) override
    {
        const int mode = may_hole ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
        if (::fallocate(fd_, mode, static_cast<off_t>(off), static_cast<off_t>(len)) == 0)
            return 0;
        if (fast)  // the file system cannot: writing zeroes would be no faster than a WRITE
            return ENOTSUP;
        static const std::uint8_t zeroes[65536] = {};
        while (len > 0) {
            const std::uint32_t k = static_cast<std::uint32_t>(std::min<std::uint64_t>(len, sizeof zeroes));
            if (const int e = write(zeroes, k, off))
                return e;
            off += k, len -= k;
        }
        return 0;
    }
    int cache(std::uint64_t off, std::uint64_t len) override
    {
        return ::posix_fadvise(fd_, static_cast<off_t>(off), static_cast<off_t>(len), POSIX_FADV_WILLNEED);
    }
    // The file system's own map of the sparse file: SEEK_DATA / SEEK_HOLE.
    int extents(std::uint64_t off, std::uint64_t len, std::size_t max, Extents &out) override
    {
        out.clear();
        const std::uint64_t end = off + len;
        std::uint64_t pos = off;
        while (pos < end && out.size() < max) {
            const off_t d = ::lseek(fd_, static_cast<off_t>(pos), SEEK_DATA);
            if (d < 0 && errno == ENXIO) {  // no data from here to the end of the file
                add_run(out, end - pos, kHole);
                break;
            }
            if (d < 0)
                return errno;
            if (static_cast<std::uint64_t>(d) > pos) {
                const std::uint64_t h = std::min<std::uint64_t>(static_cast<std::uint64_t>(d), end);
                add_run(out, h - pos, kHole);
                pos = h;
                continue;
            }
            const off_t h = ::lseek(fd_, static_cast<off_t>(pos), SEEK_HOLE);
            if (h < 0)
                return errno;
            const std::uint64_t e = std::min<std::uint64_t>(static_cast<std::uint64_t>(h), end);
            add_run(out, e - pos, 0);
            pos = e;
        }
        return 0;
    }

private:
    int fd_;
    std::uint64_t size_;
};

class MemoryStore final : public Store {
public:
    explicit MemoryStore(std::uint64_t size) : size_(size)
    {
        // MAP_NORESERVE: pages exist only once written, like the sparse file.
        void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            throw std::runtime_error("memory store: mmap of " + std::to_string(size) + " bytes: " + std::strerror(errno));
        mem_ = static_cast<std::uint8_t *>(p);
        written_ = std::make_unique<std::atomic<std::uint64_t>[]>((size_ / kPage + 63) / 64);
    }
    ~MemoryStore() override { ::munmap(mem_, size_); }
    std::uint64_t size() const override { return size_; }
    int read(std::uint8_t *buf, std::uint32_t len, std::uint64_t off) override
    {
        std::memcpy(buf, mem_ + off, len);
        return 0;
    }
    int write(const std::uint8_t *buf, std::uint32_t len, std::uint64_t off) override
    {
        std::memcpy(mem_ + off, buf, len);
        mark(off, len, true);
        return 0;
    }
    int flush() override { return 0; }
    int zero(std::uint64_t off, std::uint64_t len, bool may_hole, bool fast) override
    {
        if (may_hole)
            return trim(off, len);
        if (fast)  // zeroes to be stored take as long as a WRITE: not fast, refused at once
            return ENOTSUP;
        std::memset(mem_ + off, 0, len);
        mark(off, len, true);
        return 0;
    }
    int cache(std::uint64_t, std::uint64_t) override { return 0; }
    // Pages never written (or trimmed whole) are holes: one bit per 4 KiB page, size / 32768 bytes.
    // At most 256 MiB (65536 bits) are looked at per query, so a cheap query stays cheap; the
    // client asks again from where the answer ends.
    int extents(std::uint64_t off, std::uint64_t len, std::size_t max, Extents &out) override
    {
        out.clear();
        const std::uint64_t end = off + std::min<std::uint64_t>(len, 256ull << 20);
        std::uint64_t pos = off;
        while (pos < end && out.size() < max) {
            const bool data = bit(pos / kPage);
            std::uint64_t next = std::min(end, (pos / kPage + 1) * kPage);
            while (next < end && bit(next / kPage) == data && next - pos < kRunMax)
                next = std::min(end, next + kPage);
            add_run(out, next - pos, data ? 0 : kHole);
            pos = next;
        }
        return 0;
    }
    int trim(std::uint64_t off, std::uint64_t len) override
    {
        // Whole pages go back to the kernel (they read as zeroes); the partial edges are zeroed.
        const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        const std::uint64_t a = (off + page - 1) / page * page, b = (off + len) / page * page;
        if (a < b) {
            std::memset(mem_ + off, 0, a - off);
            ::madvise(mem_ + a, b - a, MADV_DONTNEED);
            std::memset(mem_ + b, 0, off + len - b);
            mark(a, b - a, false);
        } else {
            std::memset(mem_ + off, 0, len);
        }
        return 0;
    }

private:
    static constexpr std::uint64_t kPage = 4096;
    bool bit(std::uint64_t page) const { return (written_[page / 64].load(std::memory_order_relaxed) >> (page % 64)) & 1; }
    // Whole pages only when clearing (a, len page aligned); any touched page when setting.
    void mark(std::uint64_t off, std::uint64_t len, bool set)
    {
        for (std::uint64_t p = off / kPage; p < (off + len + kPage - 1) / kPage; p++) {
            const std::uint64_t m = 1ull << (p % 64);
            if (set)
                written_[p / 64].fetch_or(m, std::memory_order_relaxed);
            else
                written_[p / 64].fetch_and(~m, std::memory_order_relaxed);
        }
    }
    std::uint8_t *mem_ = nullptr;
    std::uint64_t size_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> written_;
};

}  // namespace

std::unique_ptr<Store> open_file_store(const std::string &path, std::uint64_t size)
{
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        throw std::runtime_error(path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error(path + ": " + std::strerror(e));
    }
    if (st.st_size == 0) {
        if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
            const int e = errno;
            ::close(fd);
            throw std::runtime_error(path + ": cannot size to " + std::to_string(size) + " bytes: " + std::strerror(e));
        }
    } else if (static_cast<std::uint64_t>(st.st_size) != size) {
        ::close(fd);
        throw std::runtime_error(path + ": holds " + std::to_string(st.st_size) + " bytes, the export is " +
                                 std::to_string(size) + " (--export-size must match an existing disk)");
    }
    return std::make_unique<FileStore>(fd, size);
}

std::unique_ptr<Store> open_memory_store(std::uint64_t size) { return std::make_unique<MemoryStore>(size); }

}  // namespace bg::gw
