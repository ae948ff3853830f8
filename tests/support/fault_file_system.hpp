// tests/support/fault_file_system.hpp: an in-memory FileSystem that models what survives a
// crash and injects faults at the file boundary.
//
// Crash model: each file has live contents and durable contents (what sync() last saw);
// each directory has live entries and durable entries (what sync_dir() last saw). A
// simulated power loss (drop_unsynced) puts every directory back to its durable entries
// and every file back to its durable contents (drop_unsynced_pages: keeps every entry, and
// any of the pages written since). truncate() is durable at once (as the
// interface promises); directories made by create_dir() are always durable.
//
// Faults: fail the Nth call of an operation with io_error (a failing write may first
// write a prefix), a disk that fills after a byte budget (ENOSPC-style io_error after
// writing what fits), and tearing the most recent append to a prefix.
//
// Thread safety: every method may be called from any thread (one internal mutex). Files
// handed out before drop_unsynced() are stale: using them throws io_error.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.hpp"

namespace strata::testing {

class FaultFileSystem final : public base::FileSystem {
 public:
  enum class Op { open, write, sync, rename, remove, sync_dir, truncate, grow_ahead, count_ };

  FaultFileSystem();
  ~FaultFileSystem() override;

  // base::FileSystem
  std::unique_ptr<base::WritableFile> open_writable(const std::filesystem::path& path,
                                                    base::OpenMode mode) override;
  std::unique_ptr<base::ReadableFile> open_readable(const std::filesystem::path& path) override;
  std::vector<std::string> list(const std::filesystem::path& dir) override;
  void rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  void remove(const std::filesystem::path& path) override;
  void sync_dir(const std::filesystem::path& dir) override;
  bool exists(const std::filesystem::path& path) override;
  std::uint64_t file_size(const std::filesystem::path& path) override;
  void truncate(const std::filesystem::path& path, std::uint64_t size) override;
  std::unique_ptr<base::FileLock> lock(const std::filesystem::path& path) override;
  void create_dir(const std::filesystem::path& dir) override;

  // Faults. The n-th call of `op` from now (1 = the next one) throws io_error; a failing
  // write first appends min(partial_bytes, size) bytes of its data.
  void fail_nth(Op op, int n, std::size_t partial_bytes = 0);
  // Total bytes all files may hold; a write beyond it stores what fits and throws io_error
  // ("No space left on device"). Removing or truncating files frees space.
  void set_capacity(std::uint64_t bytes);
  // Simulated power loss: forget everything not made durable.
  void drop_unsynced();
  // A power loss after the file system committed its directories (every entry stays as it
  // is) and wrote back some of the files' unsynced pages (`page` bytes, at file offsets
  // that are multiples of it), each kept or lost on its own (chosen by `seed`), as a disk
  // may persist a write's pages in any order before its sync returns. A lost page reads as
  // zeros up to the last kept one, where the file ends.
  void drop_unsynced_pages(std::uint64_t seed, std::size_t page = 4096);
  // Keeps only the first `keep` bytes of the most recent append (a write cut short).
  void tear_last_write(std::size_t keep);
  // Every file sync from now on first calls `hook` (outside the file system's lock), on
  // the syncing thread: a test can hold a sync there, as a slow disk would, until it has
  // seen what it wants to happen meanwhile. Set it while no sync runs.
  void set_sync_hook(std::function<void()> hook);

  // Inspection and direct manipulation, for tests.
  int count(Op op) const;
  std::string contents(const std::filesystem::path& path) const;
  // Replaces the file's contents, durably (creating it, durably, if needed).
  void set_contents(const std::filesystem::path& path, std::string data);
  std::uint64_t unsynced_bytes(const std::filesystem::path& path) const;

 private:
  struct Inode {
    std::string data;
    std::string synced;
  };
  struct LastWrite {
    std::weak_ptr<Inode> inode;
    std::size_t offset = 0;
    std::size_t length = 0;
  };
  class File;
  class Reader;
  class Lock;
  friend class File;
  friend class Lock;

  static std::string key(const std::filesystem::path& path);
  static std::string parent(const std::string& key);
  void count_and_maybe_fail(Op op, const std::filesystem::path& path);
  std::uint64_t used_bytes() const;
  std::shared_ptr<Inode> find(const std::filesystem::path& path, std::string_view op) const;
  // For File: append, sync, checks.
  void file_append(const std::shared_ptr<Inode>& inode, std::uint64_t generation,
                   const std::filesystem::path& path, std::string_view data);
  void file_grow_ahead(const std::filesystem::path& path);  // counts it; no other effect
  void file_sync(const std::shared_ptr<Inode>& inode, std::uint64_t generation,
                 const std::filesystem::path& path);
  std::uint64_t file_size_of(const std::shared_ptr<Inode>& inode) const;
  void release_lock(const std::string& key);

  mutable std::mutex mutex_;
  std::function<void()> sync_hook_;
  std::map<std::string, std::shared_ptr<Inode>> live_;
  std::map<std::string, std::shared_ptr<Inode>> durable_;
  std::set<std::string> dirs_;
  std::set<std::string> locks_;
  std::array<int, static_cast<std::size_t>(Op::count_)> counts_{};
  std::array<int, static_cast<std::size_t>(Op::count_)> fail_at_{};
  std::size_t partial_bytes_ = 0;
  std::uint64_t capacity_ = UINT64_MAX;
  std::uint64_t generation_ = 0;
  LastWrite last_write_;
};

}  // namespace strata::testing
