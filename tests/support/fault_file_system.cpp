// tests/support/fault_file_system.cpp: the in-memory, fault-injecting file system.
#include "support/fault_file_system.hpp"

#include <algorithm>
#include <cerrno>
#include <random>

#include "strata/error.hpp"

namespace strata::testing {
namespace fs = std::filesystem;

namespace {
[[noreturn]] void injected(std::string_view op, const fs::path& path) {
  base::throw_io_error(std::string(op) + " (injected fault)", path, EIO);
}
}  // namespace

class FaultFileSystem::File final : public base::WritableFile {
 public:
  File(FaultFileSystem& owner, std::shared_ptr<Inode> inode, fs::path path,
       std::uint64_t generation)
      : owner_(owner), inode_(std::move(inode)), path_(std::move(path)), generation_(generation) {}
  void append(std::string_view data) override {
    check_open();
    owner_.file_append(inode_, generation_, path_, data);
  }
  void sync() override {
    check_open();
    owner_.file_sync(inode_, generation_, path_);
  }
  void close() override { closed_ = true; }
  std::uint64_t size() const override { return owner_.file_size_of(inode_); }
  void grow_ahead(std::uint64_t step) override {
    (void)step;
    check_open();
    owner_.file_grow_ahead(path_);
  }

 private:
  void check_open() const {
    if (closed_) base::throw_io_error("use after close", path_, EBADF);
  }
  FaultFileSystem& owner_;
  std::shared_ptr<Inode> inode_;
  fs::path path_;
  std::uint64_t generation_;
  bool closed_ = false;
};

class FaultFileSystem::Reader final : public base::ReadableFile {
 public:
  explicit Reader(std::string data) : data_(std::move(data)) {}
  std::string read(std::uint64_t offset, std::size_t n) override {
    if (offset >= data_.size()) return {};
    return data_.substr(static_cast<std::size_t>(offset), n);
  }
  std::string read_all() override { return data_; }
  std::uint64_t size() const override { return data_.size(); }

 private:
  std::string data_;  // A snapshot taken at open.
};

class FaultFileSystem::Lock final : public base::FileLock {
 public:
  Lock(FaultFileSystem& owner, std::string key) : owner_(owner), key_(std::move(key)) {}
  ~Lock() override { owner_.release_lock(key_); }

 private:
  FaultFileSystem& owner_;
  std::string key_;
};

FaultFileSystem::FaultFileSystem() { dirs_.insert("/"); }
FaultFileSystem::~FaultFileSystem() = default;

std::string FaultFileSystem::key(const fs::path& path) {
  std::string k = path.lexically_normal().string();
  while (k.size() > 1 && k.back() == '/') k.pop_back();
  return k;
}

std::string FaultFileSystem::parent(const std::string& key) {
  return fs::path(key).parent_path().string();
}

void FaultFileSystem::count_and_maybe_fail(Op op, const fs::path& path) {
  const auto i = static_cast<std::size_t>(op);
  ++counts_[i];
  if (fail_at_[i] != 0 && counts_[i] == fail_at_[i]) {
    fail_at_[i] = 0;
    static constexpr const char* names[] = {"open",   "write",    "sync",     "rename",
                                            "remove", "sync_dir", "truncate", "grow_ahead"};
    injected(names[i], path);
  }
}

std::uint64_t FaultFileSystem::used_bytes() const {
  std::set<const Inode*> seen;
  std::uint64_t used = 0;
  for (const auto& [name, inode] : live_) {
    if (seen.insert(inode.get()).second) used += inode->data.size();
  }
  return used;
}

std::shared_ptr<FaultFileSystem::Inode> FaultFileSystem::find(const fs::path& path,
                                                              std::string_view op) const {
  const auto it = live_.find(key(path));
  if (it == live_.end()) base::throw_io_error(op, path, ENOENT);
  return it->second;
}

std::unique_ptr<base::WritableFile> FaultFileSystem::open_writable(const fs::path& path,
                                                                   base::OpenMode mode) {
  std::lock_guard<std::mutex> guard(mutex_);
  count_and_maybe_fail(Op::open, path);
  const std::string k = key(path);
  if (dirs_.count(parent(k)) == 0) base::throw_io_error("open", path, ENOENT);
  auto& slot = live_[k];
  if (slot == nullptr) slot = std::make_shared<Inode>();
  if (mode == base::OpenMode::truncate) slot->data.clear();
  return std::make_unique<File>(*this, slot, path, generation_);
}

std::unique_ptr<base::ReadableFile> FaultFileSystem::open_readable(const fs::path& path) {
  std::lock_guard<std::mutex> guard(mutex_);
  return std::make_unique<Reader>(find(path, "open")->data);
}

std::vector<std::string> FaultFileSystem::list(const fs::path& dir) {
  std::lock_guard<std::mutex> guard(mutex_);
  const std::string d = key(dir);
  if (dirs_.count(d) == 0) base::throw_io_error("opendir", dir, ENOENT);
  std::vector<std::string> names;
  for (const auto& [k, inode] : live_) {
    if (parent(k) == d) names.push_back(fs::path(k).filename().string());
  }
  for (const std::string& sub : dirs_) {
    if (sub != d && parent(sub) == d) names.push_back(fs::path(sub).filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void FaultFileSystem::rename(const fs::path& from, const fs::path& to) {
  std::lock_guard<std::mutex> guard(mutex_);
  count_and_maybe_fail(Op::rename, from);
  auto inode = find(from, "rename");
  live_.erase(key(from));
  live_[key(to)] = std::move(inode);
}

void FaultFileSystem::remove(const fs::path& path) {
  std::lock_guard<std::mutex> guard(mutex_);
  count_and_maybe_fail(Op::remove, path);
  if (live_.erase(key(path)) == 0) base::throw_io_error("unlink", path, ENOENT);
}

void FaultFileSystem::sync_dir(const fs::path& dir) {
  std::lock_guard<std::mutex> guard(mutex_);
  count_and_maybe_fail(Op::sync_dir, dir);
  const std::string d = key(dir);
  if (dirs_.count(d) == 0) base::throw_io_error("open directory", dir, ENOENT);
  std::erase_if(durable_, [&](const auto& entry) { return parent(entry.first) == d; });
  for (const auto& [k, inode] : live_) {
    if (parent(k) == d) durable_[k] = inode;
  }
}

bool FaultFileSystem::exists(const fs::path& path) {
  std::lock_guard<std::mutex> guard(mutex_);
  const std::string k = key(path);
  return live_.count(k) != 0 || dirs_.count(k) != 0;
}

std::uint64_t FaultFileSystem::file_size(const fs::path& path) {
  std::lock_guard<std::mutex> guard(mutex_);
  return find(path, "stat")->data.size();
}

void FaultFileSystem::truncate(const fs::path& path, std::uint64_t size) {
  std::lock_guard<std::mutex> guard(mutex_);
  count_and_maybe_fail(Op::truncate, path);
  const auto inode = find(path, "truncate");
  inode->data.resize(static_cast<std::size_t>(size));
  inode->synced = inode->data;
}

std::unique_ptr<base::FileLock> FaultFileSystem::lock(const fs::path& path) {
  std::lock_guard<std::mutex> guard(mutex_);
  const std::string k = key(path);
  if (!locks_.insert(k).second) {
    throw Error(ErrorCode::database_locked, "lock " + path.string() + ": already held");
  }
  auto& slot = live_[k];
  if (slot == nullptr) slot = std::make_shared<Inode>();
  return std::make_unique<Lock>(*this, k);
}

void FaultFileSystem::release_lock(const std::string& k) {
  std::lock_guard<std::mutex> guard(mutex_);
  locks_.erase(k);
}

void FaultFileSystem::create_dir(const fs::path& dir) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (fs::path p = fs::path(key(dir)); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    dirs_.insert(p.string());
  }
}

void FaultFileSystem::file_append(const std::shared_ptr<Inode>& inode, std::uint64_t generation,
                                  const fs::path& path, std::string_view data) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (generation != generation_) base::throw_io_error("write (after simulated crash)", path, EIO);
  const auto i = static_cast<std::size_t>(Op::write);
  const bool fails = fail_at_[i] != 0 && counts_[i] + 1 == fail_at_[i];
  std::size_t n = fails ? std::min(partial_bytes_, data.size()) : data.size();
  const std::uint64_t used = used_bytes();
  const bool full = used + n > capacity_;
  if (full) n = static_cast<std::size_t>(capacity_ > used ? capacity_ - used : 0);
  last_write_ = LastWrite{inode, inode->data.size(), n};
  inode->data.append(data.substr(0, n));
  count_and_maybe_fail(Op::write, path);
  if (full) base::throw_io_error("write", path, ENOSPC);
}

void FaultFileSystem::file_grow_ahead(const fs::path& path) {
  std::lock_guard<std::mutex> guard(mutex_);
  count_and_maybe_fail(Op::grow_ahead, path);
}

void FaultFileSystem::file_sync(const std::shared_ptr<Inode>& inode, std::uint64_t generation,
                                const fs::path& path) {
  if (sync_hook_) sync_hook_();
  std::lock_guard<std::mutex> guard(mutex_);
  if (generation != generation_)
    base::throw_io_error("fdatasync (after simulated crash)", path, EIO);
  count_and_maybe_fail(Op::sync, path);
  inode->synced = inode->data;
}

std::uint64_t FaultFileSystem::file_size_of(const std::shared_ptr<Inode>& inode) const {
  std::lock_guard<std::mutex> guard(mutex_);
  return inode->data.size();
}

void FaultFileSystem::set_sync_hook(std::function<void()> hook) { sync_hook_ = std::move(hook); }

void FaultFileSystem::fail_nth(Op op, int n, std::size_t partial_bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto i = static_cast<std::size_t>(op);
  fail_at_[i] = counts_[i] + n;
  if (op == Op::write) partial_bytes_ = partial_bytes;
}

void FaultFileSystem::set_capacity(std::uint64_t bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  capacity_ = bytes;
}

void FaultFileSystem::drop_unsynced() {
  std::lock_guard<std::mutex> guard(mutex_);
  live_ = durable_;
  for (auto& [k, inode] : live_) inode->data = inode->synced;
  locks_.clear();
  ++generation_;
  last_write_ = {};
}

void FaultFileSystem::drop_unsynced_pages(std::uint64_t seed, std::size_t page) {
  std::lock_guard<std::mutex> guard(mutex_);
  std::mt19937_64 rng(seed);
  durable_ = live_;
  for (auto& [k, inode] : live_) {
    std::string& data = inode->data;
    const std::string& synced = inode->synced;
    // Only appends since the sync are modelled; anything else falls back to the sync.
    if (data.size() <= synced.size() || data.compare(0, synced.size(), synced) != 0) {
      data = synced;
      continue;
    }
    std::size_t end = synced.size();
    for (std::size_t at = synced.size() / page * page; at < data.size(); at += page) {
      const std::size_t from = std::max(at, synced.size());
      const std::size_t to = std::min(at + page, data.size());
      if ((rng() & 1U) != 0) {
        end = to;
      } else {
        std::fill(data.begin() + static_cast<std::ptrdiff_t>(from),
                  data.begin() + static_cast<std::ptrdiff_t>(to), '\0');
      }
    }
    data.resize(end);
    inode->synced = data;
  }
  locks_.clear();
  ++generation_;
  last_write_ = {};
}

void FaultFileSystem::tear_last_write(std::size_t keep) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto inode = last_write_.inode.lock();
  if (inode == nullptr) return;
  const std::size_t end = last_write_.offset + std::min(keep, last_write_.length);
  if (inode->data.size() > end) inode->data.resize(end);
  if (inode->synced.size() > end) inode->synced.resize(end);
}

int FaultFileSystem::count(Op op) const {
  std::lock_guard<std::mutex> guard(mutex_);
  return counts_[static_cast<std::size_t>(op)];
}

std::string FaultFileSystem::contents(const fs::path& path) const {
  std::lock_guard<std::mutex> guard(mutex_);
  return find(path, "read")->data;
}

void FaultFileSystem::set_contents(const fs::path& path, std::string data) {
  std::lock_guard<std::mutex> guard(mutex_);
  const std::string k = key(path);
  auto& slot = live_[k];
  if (slot == nullptr) slot = std::make_shared<Inode>();
  slot->data = std::move(data);
  slot->synced = slot->data;
  durable_[k] = slot;
}

std::uint64_t FaultFileSystem::unsynced_bytes(const fs::path& path) const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto inode = find(path, "stat");
  return inode->data.size() > inode->synced.size() ? inode->data.size() - inode->synced.size() : 0;
}

}  // namespace strata::testing
