// durability/wal_writer.cpp: buffered, group-committed appends to log segments.
//
// Encoded with wal::append_file_header / wal::append_record (grammar in wal_format.hpp):
//   segment := file_header record*
//   record  := magic crc length version prev_version payload
#include "durability/wal_writer.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <new>

#include "strata/error.hpp"

#include "durability/file_names.hpp"
#include "durability/wal_format.hpp"

namespace strata::durability {
namespace fs = std::filesystem;

namespace {
constexpr std::uint64_t kMarkIntervalBytes = 64 << 10;
constexpr std::size_t kMaxIdleBufferCapacity = 16 << 20;
// The most log bytes sync_written() lets pass without a group marked after_sync.
constexpr std::uint64_t kMaxUnmarkedBytes = std::uint64_t{4} << 20;

// Room for `n` more items: push_backs after it allocate nothing. Grows by doubling.
template <class T>
void reserve_more(std::vector<T>& v, std::size_t n) {
  if (v.capacity() - v.size() < n) v.reserve(std::max(2 * v.capacity(), v.size() + n));
}
}  // namespace

WalWriter::WalWriter(base::FileSystem& fs, fs::path dir, Version last_version, Options options)
    : fs_(fs), dir_(std::move(dir)), options_(options), last_version_(last_version) {
  base::MutexLock lock(mutex_);  // nothing else holds it yet: for the contract's sake
  adopt_existing_segments();
}

WalWriter::~WalWriter() {
  {
    base::MutexLock lock(mutex_);  // nothing else holds it any more: for the contract's sake
    drop_next_file_locked();
  }
  if (active_ == nullptr) return;
  try {
    active_->close();
  } catch (const Error&) {
    // Destructors never throw; unflushed records were never acknowledged.
  }
}

void WalWriter::adopt_existing_segments() {
  for (const std::string& name : fs_.list(dir_)) {
    const ParsedFileName parsed = parse_file_name(name);
    if (parsed.kind != FileKind::wal_segment) continue;
    if (parsed.version > last_version_) {
      throw Error(ErrorCode::invalid_argument,
                  "WAL segment " + (dir_ / name).string() + " starts after version " +
                      std::to_string(last_version_) + "; run recover() before writing");
    }
    const std::uint64_t bytes = fs_.file_size(dir_ / name);
    segments_.push_back(Segment{dir_ / name, parsed.version, bytes});
  }
  // list() is sorted and names are zero-padded, so segments_ is in version order.
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    total_bytes_ += segments_[i].bytes;
    const Version upper =
        i + 1 < segments_.size() ? segments_[i + 1].first_version - 1 : last_version_;
    marks_.push_back(Mark{upper, total_bytes_});
  }
}

void WalWriter::throw_if_failed() const {
  if (failed_) {
    throw Error(ErrorCode::database_failed,
                "the write-ahead log in " + dir_.string() + " failed earlier (" + failure_ + ")");
  }
  if (closed_) {
    throw Error(ErrorCode::client_invalid_operation, "WAL writer used after close()");
  }
}

void WalWriter::fail_locked() {
  failed_ = true;
  try {
    throw;
  } catch (const std::exception& e) {
    failure_ = e.what();
    throw;
  }
}

void WalWriter::append(Version version, std::string_view payload) {
  base::MutexLock guard(mutex_);
  throw_if_failed();
  if (version <= last_version_) {
    throw Error(ErrorCode::invalid_argument, "WAL append of version " + std::to_string(version) +
                                                 " after version " + std::to_string(last_version_));
  }
  if (payload.size() > wal::kMaxPayloadBytes) {
    throw Error(ErrorCode::invalid_argument, "WAL record of " + std::to_string(payload.size()) +
                                                 " bytes (limit " +
                                                 std::to_string(wal::kMaxPayloadBytes) + ")");
  }
  if (buffer_.empty()) {
    // A new group: start a new segment if the active one is full (never split a group).
    if (active_ != nullptr && active_->size() >= options_.segment_bytes) close_active_locked();
    if (active_ == nullptr && !segment_pending_) {
      segment_pending_ = true;
      pending_first_version_ = version;
      wal::append_file_header(buffer_, version);
    }
  }
  // The first record of a group written after a sync says so: the reader then knows that
  // damage before it is not an unsynced write the disk persisted out of order.
  const bool after_sync = buffer_.empty() && active_ != nullptr && !unsynced_;
  if (after_sync) marked_at_ = total_bytes_;
  wal::append_record(buffer_, version, last_version_, payload, after_sync);
  last_version_ = version;
}

void WalWriter::reserve(Version version, std::size_t payload_bytes) {
  base::MutexLock guard(mutex_);
  const std::size_t bytes =
      buffer_.size() + wal::kFileHeaderSize + wal::kRecordHeaderSize + payload_bytes;
  if (buffer_.capacity() < bytes) buffer_.reserve(bytes);
  reserve_more(marks_, 2);  // a closed segment's and the flush's
  reserve_more(segments_, 1);
  // Does the append start a segment (append's test), and is its file not opened yet? A
  // full active segment is left to the append: it closes that one (synced, its padding cut)
  // before the next file may exist, since recovery takes damage only at the newest file's
  // end (docs/format/wal.md).
  if (failed_ || closed_ || !buffer_.empty() || segment_pending_ || active_ != nullptr) return;
  if (next_file_ != nullptr) {
    if (next_version_ == version) return;
    drop_next_file_locked();  // for a version that never came
  }
  fs::path path = dir_ / wal_file_name(version);
  std::unique_ptr<base::WritableFile> file;
  // A file opened but not made ready is removed again: each refusal would leave one behind.
  auto discard = [&]() noexcept {
    if (file == nullptr) return;
    try {
      file.reset();
      fs_.remove(path);
    } catch (...) {  // an empty newest segment: recovery drops it
    }
  };
  try {
    file = fs_.open_writable(path, base::OpenMode::truncate);
    if (options_.grow_ahead_bytes != 0) file->grow_ahead(options_.grow_ahead_bytes);
  } catch (const std::bad_alloc&) {
    discard();
    throw;
  } catch (...) {
    discard();
    return;  // the flush that starts the segment opens it, and reports what fails
  }
  next_file_ = std::move(file);
  next_path_ = std::move(path);
  next_version_ = version;
}

void WalWriter::drop_next_file_locked() noexcept {
  if (next_file_ == nullptr) return;
  try {
    next_file_->close();
    next_file_.reset();
    fs_.remove(next_path_);
  } catch (...) {  // an empty newest segment: recovery drops it
    next_file_.reset();
  }
}

void WalWriter::flush(bool sync) {
  base::MutexLock guard(mutex_);
  throw_if_failed();
  flush_locked(sync);
}

void WalWriter::flush_locked(bool sync) {
  try {
    if (!buffer_.empty()) {
      if (segment_pending_) {
        fs::path path;
        if (next_file_ != nullptr && next_version_ == pending_first_version_) {
          active_ = std::move(next_file_);  // opened by reserve()
          path = std::move(next_path_);
        } else {
          path = dir_ / wal_file_name(pending_first_version_);
          active_ = fs_.open_writable(path, base::OpenMode::truncate);
          if (options_.grow_ahead_bytes != 0) active_->grow_ahead(options_.grow_ahead_bytes);
        }
        segments_.push_back(Segment{std::move(path), pending_first_version_, 0});
        segment_pending_ = false;
        dir_sync_pending_ = true;
      }
      unsynced_ = true;
      active_->append(buffer_);
      segments_.back().bytes += buffer_.size();
      total_bytes_ += buffer_.size();
      buffer_.clear();
      if (buffer_.capacity() > kMaxIdleBufferCapacity) buffer_.shrink_to_fit();
      add_mark_locked(/*force=*/false);
    }
    if (sync && unsynced_) {
      active_->sync();
      unsynced_ = false;
    }
    if (sync && dir_sync_pending_) {
      fs_.sync_dir(dir_);
      dir_sync_pending_ = false;
    }
  } catch (...) {
    fail_locked();
  }
}

void WalWriter::sync_written() {
  base::MutexLock lock(mutex_);
  throw_if_failed();
  if (!unsynced_ && !dir_sync_pending_) return;
  // Under the lock: a new segment's first sync, and one sync per kMaxUnmarkedBytes. Groups
  // written during an unlocked sync are not marked after_sync (what came before them may
  // not be durable yet), and under a steady stream none would be: damage to synced records
  // would then read as a torn tail. A sync under the lock lets the next group be marked.
  if (dir_sync_pending_ || !buffer_.empty() || total_bytes_ - marked_at_ > kMaxUnmarkedBytes) {
    flush_locked(/*sync=*/true);
    return;
  }
  base::WritableFile* const file = active_.get();
  const std::uint64_t written = total_bytes_;
  syncing_ = true;
  lock.unlock();
  std::exception_ptr error;
  try {
    file->sync();  // the file's descriptor only: appends meanwhile touch other fields
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  syncing_ = false;
  sync_done_.notify_all();
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (...) {
      fail_locked();
    }
  }
  // Bytes written during the sync may not be covered; they wait for the next one.
  if (total_bytes_ == written) unsynced_ = false;
}

void WalWriter::close_active_locked() {
  if (active_ == nullptr) return;
  // sync_written() may be syncing the file outside the lock: not under it.
  while (syncing_) sync_done_.wait(mutex_);
  try {
    if (unsynced_) active_->sync();
    unsynced_ = false;
    if (dir_sync_pending_) fs_.sync_dir(dir_);
    dir_sync_pending_ = false;
    active_->close();
    active_.reset();
    add_mark_locked(/*force=*/true);
  } catch (...) {
    fail_locked();
  }
}

void WalWriter::add_mark_locked(bool force) {
  if (!force && !marks_.empty() && total_bytes_ - marks_.back().bytes < kMarkIntervalBytes) {
    return;
  }
  // Everything written so far belongs to records <= last_version_: flush writes all of the
  // buffer, and a segment is closed only with an empty buffer.
  if (!marks_.empty() && marks_.back().bytes == total_bytes_) {
    marks_.back().version = std::max(marks_.back().version, last_version_);
    return;
  }
  marks_.push_back(Mark{last_version_, total_bytes_});
}

void WalWriter::roll() {
  base::MutexLock guard(mutex_);
  throw_if_failed();
  if (!buffer_.empty()) flush_locked(/*sync=*/false);
  close_active_locked();
}

void WalWriter::close() {
  base::MutexLock guard(mutex_);
  drop_next_file_locked();
  throw_if_failed();
  flush_locked(/*sync=*/true);
  close_active_locked();
  closed_ = true;
}

std::uint64_t WalWriter::bytes_since(Version v) const {
  base::MutexLock guard(mutex_);
  std::uint64_t base = removed_bytes_;
  // Marks are in increasing version and byte order: take the last one at or below v.
  auto it = std::upper_bound(marks_.begin(), marks_.end(), v,
                             [](Version value, const Mark& m) { return value < m.version; });
  if (it != marks_.begin()) base = std::max(base, std::prev(it)->bytes);
  return total_bytes_ - base;
}

std::vector<fs::path> WalWriter::segments_before_locked(Version v) const {
  std::vector<fs::path> result;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const bool is_active = active_ != nullptr && i + 1 == segments_.size();
    if (is_active) break;
    // Records of segment i are below the next segment's first version; the newest closed
    // segment holds nothing after last_version_.
    const Version upper =
        i + 1 < segments_.size() ? segments_[i + 1].first_version - 1 : last_version_;
    if (upper > v) break;
    result.push_back(segments_[i].path);
  }
  return result;
}

std::vector<fs::path> WalWriter::segments_before(Version v) const {
  base::MutexLock guard(mutex_);
  return segments_before_locked(v);
}

void WalWriter::remove_segments_before(Version checkpoint_version) {
  base::MutexLock guard(mutex_);
  for (const fs::path& path : segments_before_locked(checkpoint_version)) {
    fs_.remove(path);
    removed_bytes_ += segments_.front().bytes;
    segments_.erase(segments_.begin());
    fs_.sync_dir(dir_);
  }
  const std::uint64_t removed = removed_bytes_;
  auto kept = std::find_if(marks_.begin(), marks_.end(),
                           [removed](const Mark& m) { return m.bytes > removed; });
  marks_.erase(marks_.begin(), kept);
}

Version WalWriter::last_version() const {
  base::MutexLock guard(mutex_);
  return last_version_;
}

bool WalWriter::failed() const {
  base::MutexLock guard(mutex_);
  return failed_;
}

}  // namespace strata::durability
