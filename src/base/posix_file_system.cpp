// base/posix_file_system.cpp: FileSystem on POSIX system calls.
//
// Files are opened with O_CLOEXEC; sync() is fdatasync; sync_dir() fsyncs the directory;
// a file grown ahead (grow_ahead) is written with pwrite at its logical end.
// lock() combines flock() on the lock file (against other processes) with a registry of
// the canonical paths this process holds, so a second lock() in the same process fails
// with a message that says so, also on file systems where flock is not enforced.
#include <algorithm>
#include <array>
#include <cerrno>
#include <set>
#include <system_error>
#include <vector>

#include "strata/error.hpp"

#include "base/file_system.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace strata::base {
namespace fs = std::filesystem;

void throw_io_error(std::string_view operation, const fs::path& path, int err) {
  std::string message(operation);
  message += ' ';
  message += path.string();
  message += ": ";
  message += std::system_category().message(err);
  throw Error(ErrorCode::io_error, std::move(message));
}

namespace {

// Closes a descriptor, retrying nothing: on Linux the descriptor is gone even on EINTR.
int close_fd(int fd) { return ::close(fd) == 0 ? 0 : errno; }

// An open descriptor, closed unless release() hands it on: a file object takes it only once
// made, and making one (its memory, its copy of the path) may throw std::bad_alloc.
class FdOwner {
 public:
  explicit FdOwner(int fd) : fd_(fd) {}
  ~FdOwner() {
    if (fd_ >= 0) close_fd(fd_);
  }
  FdOwner(const FdOwner&) = delete;
  FdOwner& operator=(const FdOwner&) = delete;
  int get() const { return fd_; }
  void release() { fd_ = -1; }

 private:
  int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, fs::path path, std::uint64_t size, bool appending)
      : fd_(fd), path_(std::move(path)), size_(size), disk_size_(size), appending_(appending) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) close_fd(fd_);
  }

  void append(std::string_view data) override {
    if (step_ != 0 && size_ + data.size() > disk_size_) grow(size_ + data.size());
    while (!data.empty()) {
      // pwrite at size_ (the file may be longer on disk); write() for O_APPEND files.
      const ssize_t n = step_ != 0
                            ? ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(size_))
                            : ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_io_error("write", path_, errno);
      }
      data.remove_prefix(static_cast<std::size_t>(n));
      size_ += static_cast<std::uint64_t>(n);
    }
    disk_size_ = std::max(disk_size_, size_);
  }

  void sync() override {
    while (::fdatasync(fd_) != 0) {
      if (errno != EINTR) throw_io_error("fdatasync", path_, errno);
    }
  }

  void close() override {
    if (fd_ < 0) return;
    // Cut the zeros grown ahead, durably: only the newest log segment may end in them.
    int err = 0;
    const char* what = "close";
    if (disk_size_ > size_) {
      if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
        err = errno;
        what = "ftruncate";
      } else if (::fdatasync(fd_) != 0) {
        err = errno;
        what = "fdatasync";
      } else {
        disk_size_ = size_;
      }
    }
    const int close_err = close_fd(fd_);
    fd_ = -1;
    if (err == 0) err = close_err;
    if (err != 0) throw_io_error(what, path_, err);
  }

  std::uint64_t size() const override { return size_; }

  void grow_ahead(std::uint64_t step) override {
    if (!appending_) step_ = step;
  }

 private:
  // Writes zeros from disk_size_ up to a multiple of step_ that holds `needed` bytes.
  void grow(std::uint64_t needed) {
    const std::uint64_t target = (needed / step_ + 1) * step_;
    static constexpr std::size_t kChunk = std::size_t{64} << 10;
    static constexpr std::array<char, kChunk> kZeros{};  // no allocation on an append
    while (disk_size_ < target) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, target - disk_size_));
      const ssize_t w = ::pwrite(fd_, kZeros.data(), n, static_cast<off_t>(disk_size_));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw_io_error("write", path_, errno);
      }
      disk_size_ += static_cast<std::uint64_t>(w);
    }
  }

  int fd_;
  fs::path path_;
  std::uint64_t size_;       // what was appended (and was there when opened)
  std::uint64_t disk_size_;  // the file's size on disk: size_ plus zeros grown ahead
  bool appending_;           // opened with O_APPEND: pwrite would append anyway
  std::uint64_t step_ = 0;   // grow_ahead's step; 0: plain appends
};

class PosixReadableFile final : public ReadableFile {
 public:
  PosixReadableFile(int fd, fs::path path, std::uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixReadableFile() override { close_fd(fd_); }

  std::string read(std::uint64_t offset, std::size_t n) override {
    if (offset >= size_) return {};
    std::string out(static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - offset)), '\0');
    out.resize(read_into(offset, out));
    return out;
  }

  std::size_t read_into(std::uint64_t offset, std::span<char> out) override {
    if (offset >= size_) return 0;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - offset));
    std::size_t done = 0;
    while (done < n) {
      const ssize_t r =
          ::pread(fd_, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw_io_error("read", path_, errno);
      }
      if (r == 0) break;  // The file shrank since it was opened.
      done += static_cast<std::size_t>(r);
    }
    return done;
  }

  std::string read_all() override { return read(0, static_cast<std::size_t>(size_)); }
  std::uint64_t size() const override { return size_; }

 private:
  int fd_;
  fs::path path_;
  std::uint64_t size_;
};

// Canonical paths of the lock files this process holds.
class LockRegistry {
 public:
  bool insert(const std::string& path) {
    MutexLock guard(mutex_);
    return held_.insert(path).second;
  }
  void erase(const std::string& path) {
    MutexLock guard(mutex_);
    held_.erase(path);
  }

 private:
  Mutex mutex_;
  std::set<std::string> held_ GUARDED_BY(mutex_);
};

LockRegistry& lock_registry() {
  static LockRegistry* registry = new LockRegistry();  // Never destroyed: used by destructors.
  return *registry;
}

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(int fd, std::string key) : fd_(fd), key_(std::move(key)) {}
  ~PosixFileLock() override {
    ::flock(fd_, LOCK_UN);
    close_fd(fd_);
    lock_registry().erase(key_);
  }

 private:
  int fd_;
  std::string key_;
};

struct stat stat_or_throw(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw_io_error("stat", path, errno);
  return st;
}

class PosixFileSystem final : public FileSystem {
 public:
  std::unique_ptr<WritableFile> open_writable(const fs::path& path, OpenMode mode) override {
    const int flags =
        O_WRONLY | O_CREAT | O_CLOEXEC | (mode == OpenMode::truncate ? O_TRUNC : O_APPEND);
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) throw_io_error("open", path, errno);
    FdOwner owner(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw_io_error("fstat", path, errno);
    auto file = std::make_unique<PosixWritableFile>(
        fd, path, static_cast<std::uint64_t>(st.st_size), mode == OpenMode::append);
    owner.release();
    return file;
  }

  std::unique_ptr<ReadableFile> open_readable(const fs::path& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_io_error("open", path, errno);
    FdOwner owner(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw_io_error("fstat", path, errno);
    auto file =
        std::make_unique<PosixReadableFile>(fd, path, static_cast<std::uint64_t>(st.st_size));
    owner.release();
    return file;
  }

  std::vector<std::string> list(const fs::path& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) throw_io_error("opendir", dir, errno);
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* entry = ::readdir(d)) {
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
      errno = 0;
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) throw_io_error("readdir", dir, err);
    std::sort(names.begin(), names.end());
    return names;
  }

  void rename(const fs::path& from, const fs::path& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      throw_io_error("rename to " + to.string() + " from", from, errno);
    }
  }

  void remove(const fs::path& path) override {
    if (::unlink(path.c_str()) != 0) throw_io_error("unlink", path, errno);
  }

  void sync_dir(const fs::path& dir) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw_io_error("open directory", dir, errno);
    int err = 0;
    while (::fsync(fd) != 0) {
      if (errno != EINTR) {
        err = errno;
        break;
      }
    }
    close_fd(fd);
    if (err != 0) throw_io_error("fsync directory", dir, err);
  }

  bool exists(const fs::path& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    throw_io_error("stat", path, errno);
  }

  std::uint64_t file_size(const fs::path& path) override {
    return static_cast<std::uint64_t>(stat_or_throw(path).st_size);
  }

  void truncate(const fs::path& path, std::uint64_t size) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw_io_error("open", path, errno);
    int err = 0;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || ::fsync(fd) != 0) err = errno;
    close_fd(fd);
    if (err != 0) throw_io_error("truncate", path, err);
  }

  std::unique_ptr<FileLock> lock(const fs::path& path) override {
    FdOwner fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw_io_error("open lock file", path, errno);
    std::error_code ec;
    const std::string key = fs::canonical(path, ec).string();
    if (ec) throw_io_error("resolve lock file", path, ec.value());
    if (!lock_registry().insert(key)) {
      throw Error(ErrorCode::database_locked,
                  "lock " + path.string() + ": already held by this process");
    }
    try {
      if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        if (err == EWOULDBLOCK) {
          throw Error(ErrorCode::database_locked,
                      "lock " + path.string() + ": held by another process");
        }
        throw_io_error("flock", path, err);
      }
      auto lock = std::make_unique<PosixFileLock>(fd.get(), key);
      fd.release();
      return lock;
    } catch (...) {  // out of memory too: left held, every later open here would be refused
      lock_registry().erase(key);
      throw;
    }
  }

  void create_dir(const fs::path& dir) override {
    // The directories to make, outermost first: each one's entry in its parent is durable
    // only once the parent is synced, and a database's files are reachable only through
    // them (an acknowledged commit in a directory whose entry a power loss dropped would
    // be lost with it).
    // (The std::filesystem calls take an error_code: what they throw is no strata::Error.)
    std::error_code ec;
    std::vector<fs::path> missing;
    fs::path target = fs::absolute(dir, ec).lexically_normal();
    if (ec) throw_io_error("resolve directory", dir, ec.value());
    if (!target.has_filename()) target = target.parent_path();  // a trailing separator
    for (fs::path p = target; !p.empty(); p = p.parent_path()) {
      const bool exists = fs::exists(p, ec);
      if (ec) throw_io_error("stat", p, ec.value());
      if (exists) break;
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    fs::create_directories(dir, ec);
    if (ec) throw_io_error("create directory", dir, ec.value());
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) sync_dir(it->parent_path());
  }
};

}  // namespace

FileSystem& default_file_system() {
  static PosixFileSystem* file_system = new PosixFileSystem();  // Never destroyed.
  return *file_system;
}

}  // namespace strata::base
