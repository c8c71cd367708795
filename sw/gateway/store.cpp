// File and memory backing of the exports; see store.hpp.
#include "store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace bg::gw {

namespace {

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
        return 0;
    }
    int flush() override { return 0; }
    int trim(std::uint64_t off, std::uint64_t len) override
    {
        // Whole pages go back to the kernel (they read as zeroes); the partial edges are zeroed.
        const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        const std::uint64_t a = (off + page - 1) / page * page, b = (off + len) / page * page;
        if (a < b) {
            std::memset(mem_ + off, 0, a - off);
            ::madvise(mem_ + a, b - a, MADV_DONTNEED);
            std::memset(mem_ + b, 0, off + len - b);
        } else {
            std::memset(mem_ + off, 0, len);
        }
        return 0;
    }

private:
    std::uint8_t *mem_ = nullptr;
    std::uint64_t size_;
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
