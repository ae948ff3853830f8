// base/file_system.hpp: the file boundary. Everything strata's durability layer does to
// files goes through FileSystem, so tests can substitute an implementation that loses
// unsynced bytes, tears writes or fails calls (tests/support/fault_file_system.hpp).
//
// Errors: every failed operation throws strata::Error(io_error) whose message is
// "<operation> <path>: <reason>", e.g. "fdatasync /db/wal-...log: Input/output error".
// lock() throws Error(database_locked) when the lock is already held.
//
// Thread safety: a FileSystem may be used from several threads at once (the real one keeps
// no state but the lock registry, which is internally synchronised). A WritableFile or
// ReadableFile is used by one thread at a time.
//
// Paths are std::filesystem::path; file names returned by list() are bare names.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::base {

// A file opened for appending. Owned by the caller; the destructor closes the file
// (silently: call close() to see errors).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all of `data` (one write() system call unless the kernel writes less; the rest
  // is retried). On failure (io_error) a prefix of `data` may have reached the file: the
  // caller must treat the file's tail as unknown.
  virtual void append(std::string_view data) = 0;
  // Makes everything appended so far durable (fdatasync). After a failure the durability of
  // unsynced bytes is unknown, even if a later sync succeeds.
  virtual void sync() = 0;
  // Closes the file; later calls other than size() are not allowed. Idempotent.
  virtual void close() = 0;
  // Bytes in the file: its size when opened plus everything appended.
  virtual std::uint64_t size() const = 0;
  // From now on, let the file grow on disk ahead of what is appended, `step` bytes of
  // zeros at a time, so that most syncs find the file's size unchanged (on ext4 a sync
  // after an append that grew the file also commits the journal, which makes it markedly
  // slower). Until close() cuts the file back to size() (durably), it may be longer on
  // disk than size(), by zeros; after a crash, or a destruction without close(), it keeps
  // that zero tail: its reader must take a run of zeros as the end. A file opened in
  // OpenMode::append ignores this. The default implementation does nothing.
  virtual void grow_ahead(std::uint64_t step) { (void)step; }
};

// A file opened for reading at arbitrary offsets.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  // Up to n bytes starting at `offset`: fewer only at end of file (none past it).
  virtual std::string read(std::uint64_t offset, std::size_t n) = 0;
  // The whole file.
  virtual std::string read_all() = 0;
  // The file's size when it was opened.
  virtual std::uint64_t size() const = 0;
  // read() into `out` (up to out.size() bytes), for a reader that keeps one buffer for
  // many files: fresh memory for each would be faulted in (and zeroed) again. Returns the
  // bytes read. The default implementation copies what read() returns.
  virtual std::size_t read_into(std::uint64_t offset, std::span<char> out) {
    const std::string bytes = read(offset, out.size());
    std::copy(bytes.begin(), bytes.end(), out.begin());
    return bytes.size();
  }
};

// An exclusive lock on a file; released when destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

enum class OpenMode {
  truncate,  // create, or empty an existing file
  append,    // create, or keep the contents and append after them
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual std::unique_ptr<WritableFile> open_writable(const std::filesystem::path& path,
                                                      OpenMode mode) = 0;
  // Throws io_error if the file does not exist.
  virtual std::unique_ptr<ReadableFile> open_readable(const std::filesystem::path& path) = 0;
  // Names (not paths) of the entries of `dir`, sorted, without "." and "..".
  virtual std::vector<std::string> list(const std::filesystem::path& dir) = 0;
  // Atomically replaces `to` with `from`. Durable only after sync_dir of the directory.
  virtual void rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Removes a file. Durable only after sync_dir of the directory.
  virtual void remove(const std::filesystem::path& path) = 0;
  // Makes the directory's entries (creations, renames, removals) durable (fsync).
  virtual void sync_dir(const std::filesystem::path& dir) = 0;
  virtual bool exists(const std::filesystem::path& path) = 0;
  virtual std::uint64_t file_size(const std::filesystem::path& path) = 0;
  // Sets the file's size to `size` and makes the new size durable before returning.
  virtual void truncate(const std::filesystem::path& path, std::uint64_t size) = 0;
  // Takes an exclusive lock on `path` (created if missing) for as long as the returned
  // object lives. Throws Error(database_locked) if another process or another lock()
  // in this process holds it.
  virtual std::unique_ptr<FileLock> lock(const std::filesystem::path& path) = 0;
  // Creates the directory and any missing parents, each durable in its parent when this
  // returns; no-op if it already exists.
  virtual void create_dir(const std::filesystem::path& dir) = 0;
};

// The POSIX file system (posix_file_system.cpp). Lives for the whole program.
FileSystem& default_file_system();

// Throws Error(io_error, "<operation> <path>: <strerror(err)>").
[[noreturn]] void throw_io_error(std::string_view operation, const std::filesystem::path& path,
                                 int err);

}  // namespace strata::base
