// durability/wal_writer.hpp: appends commit batches to the write-ahead log
// (docs/format/wal.md).
//
// Group commit: append() only buffers; flush() hands everything buffered to the file in
// ONE write and, when asked, makes it durable with ONE fdatasync. A commit pipeline appends
// every batch it has gathered and then flushes once. The first record of a group appended
// when everything flushed before it is synced is marked after_sync, so that a reader can
// tell damage in an unsynced write (a torn tail) from damage to durable bytes.
//
// Segments: records go to files wal-<first version>.log. A segment is created when the
// first record after open or after a roll is flushed (so every open of a database starts a
// fresh segment and nothing is ever appended after a tail written by an earlier process).
// When the active segment has reached Options::segment_bytes, the next group of records
// goes to a new segment. Before a new segment is started the previous one is synced and
// its directory entry made durable, so only the newest segment can ever have a torn tail.
// With Options::grow_ahead_bytes the active segment is longer on disk than its records,
// by zeros, until it is closed (docs/format/wal.md): a crash can leave them behind, and
// recovery cuts them off as a torn tail.
//
// Failure: if a write, sync, open or close fails, the failing call rethrows the io_error
// and the writer becomes failed: every later append/flush/roll/close throws
// Error(database_failed) naming the original failure. It never appends after a tail whose
// contents are unknown. Records appended but not yet flushed are discarded by destruction.
//
// Thread safety: all methods may be called from any thread; they serialise on one internal
// mutex (flush holds it during its write and sync, so a concurrent
// remove_segments_before() waits for the sync to finish), but for sync_written(), which
// lets it go while the disk works, so that appends and flushes go on meanwhile.
//
// Invariants: versions of appended records strictly increase; each record carries the
// version of the one before it (prev_version), starting from the version given to the
// constructor; all segments but the active one are complete and durable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "base/file_system.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace strata::durability {

class WalWriter {
 public:
  struct Options {
    // A new segment is started once the active one holds at least this many bytes.
    std::uint64_t segment_bytes = std::uint64_t{64} << 20;
    // When not 0, the active segment grows on disk this many bytes of zeros at a time
    // ahead of its records (base::WritableFile::grow_ahead), so that a sync after a flush
    // rarely changes the file's size. For a log synced at every commit.
    std::uint64_t grow_ahead_bytes = 0;
  };

  // Writes segments into `dir`, which must exist. `last_version` is the version recover()
  // returned (0 for a new database): the first record appended carries it as its
  // prev_version. Existing segments in `dir` are adopted (for bytes_since and segment
  // removal) but never appended to.
  // Throws io_error if `dir` cannot be listed, invalid_argument if a segment in `dir`
  // starts after `last_version` (recover() was not run).
  // `fs` must outlive the writer.
  WalWriter(base::FileSystem& fs, std::filesystem::path dir, Version last_version, Options options);
  WalWriter(base::FileSystem& fs, std::filesystem::path dir, Version last_version)
      : WalWriter(fs, std::move(dir), last_version, Options{}) {}
  ~WalWriter();

  WalWriter(const WalWriter&) = delete;
  WalWriter& operator=(const WalWriter&) = delete;

  // Buffers one record. Nothing reaches the file until flush().
  // REQUIRES: version > every version appended before (and > last_version).
  // Throws invalid_argument for a non-increasing version or a payload over
  // wal::kMaxPayloadBytes (the writer stays usable), database_failed if failed, and
  // io_error (then the writer is failed) if closing a full segment fails.
  void append(Version version, std::string_view payload);
  // Makes the next append(), of `version` with `payload_bytes`, and the flush() after it
  // allocate nothing: room in the buffer (a new segment's header included) and in the
  // writer's lists, and when that append starts the first segment since none was open, the
  // segment's file, opened now (an open that fails here is left to that flush, which fails
  // as it would have). A segment that follows a full one is opened by that flush, after the
  // append has closed the full one: only the newest file may end unsynced.
  // For a caller that must not fail between its append and what it did before. A segment
  // opened this way and never used is removed by close(). Throws std::bad_alloc.
  void reserve(Version version, std::size_t payload_bytes);

  // Writes everything buffered in one write() to the active segment (creating it if
  // needed) and, if `sync`, makes it durable with one fdatasync (plus a directory fsync
  // the first time a new segment is synced). With nothing buffered and `sync`, still
  // syncs bytes written by earlier flush(false) calls.
  // Throws io_error (the writer is then failed; the records' fate is unknown: report
  // commit_unknown_result) or database_failed.
  void flush(bool sync);

  // Makes every byte flush() has written so far durable, like flush(true) with nothing
  // buffered, but without holding the writer's lock during the fdatasync: other threads
  // append and flush(false) meanwhile (what they write then is not covered). One call at a
  // time; a segment is not closed while it runs. Throws like flush().
  void sync_written();

  // Flushes buffered records, syncs and closes the active segment; the next record starts
  // a new segment. No-op if there is no active segment and nothing buffered.
  void roll();

  // flush(true), then closes the active segment. The writer may not be used afterwards
  // except for the const accessors. Throws like flush().
  void close();

  // Bytes of log written for records with versions > v. Exact to within 64 KiB (the
  // writer remembers a position every 64 KiB); never an underestimate.
  std::uint64_t bytes_since(Version v) const;

  // The segments, oldest first, whose every record has a version <= v (so a durable
  // checkpoint at v makes them unnecessary). Never includes the active segment.
  std::vector<std::filesystem::path> segments_before(Version v) const;

  // Removes segments_before(checkpoint_version), oldest first, with a directory fsync
  // after each so the remaining segments always form a suffix of the log.
  // REQUIRES: a checkpoint at checkpoint_version is durable (renamed and directory
  // synced). Throws io_error; a failure here does not fail the writer.
  void remove_segments_before(Version checkpoint_version);

  // The version of the last record appended (or the constructor's last_version).
  Version last_version() const;
  bool failed() const;

 private:
  struct Segment {
    std::filesystem::path path;
    Version first_version;
    std::uint64_t bytes;
  };
  // All bytes of the log up to `bytes` (counted since the writer was created, including
  // adopted segments) belong to records with versions <= `version`.
  struct Mark {
    Version version;
    std::uint64_t bytes;
  };

  void adopt_existing_segments() REQUIRES(mutex_);
  void throw_if_failed() const REQUIRES(mutex_);
  void flush_locked(bool sync) REQUIRES(mutex_);
  void close_active_locked() REQUIRES(mutex_);
  void add_mark_locked(bool force) REQUIRES(mutex_);
  // Marks the writer failed and rethrows the current exception.
  [[noreturn]] void fail_locked() REQUIRES(mutex_);
  // Closes and removes next_file_, if any (errors ignored: recovery drops an empty newest
  // segment).
  void drop_next_file_locked() noexcept REQUIRES(mutex_);
  std::vector<std::filesystem::path> segments_before_locked(Version v) const REQUIRES(mutex_);

  base::FileSystem& fs_;
  const std::filesystem::path dir_;
  const Options options_;

  mutable base::Mutex mutex_;
  bool failed_ GUARDED_BY(mutex_) = false;
  bool closed_ GUARDED_BY(mutex_) = false;
  std::string failure_ GUARDED_BY(mutex_);
  Version last_version_ GUARDED_BY(mutex_);
  std::string buffer_ GUARDED_BY(mutex_);  // Bytes not yet written (may start with a file header).
  bool segment_pending_ GUARDED_BY(mutex_) =
      false;  // buffer_ begins a new segment not yet created.
  Version pending_first_version_ GUARDED_BY(mutex_) = 0;
  std::unique_ptr<base::WritableFile> active_
      GUARDED_BY(mutex_);                     // Open segment, if any (segments_.back()).
  bool unsynced_ GUARDED_BY(mutex_) = false;  // active_ has bytes written but not synced.
  bool syncing_ GUARDED_BY(mutex_) = false;   // sync_written() syncs active_ unlocked.
  base::CondVar sync_done_;                   // syncing_ went false (waited on mutex_).
  bool dir_sync_pending_ GUARDED_BY(mutex_) =
      false;  // active_'s directory entry is not yet durable.
  // Oldest first. Vectors, not deques: reserve() makes room in them ahead.
  std::vector<Segment> segments_ GUARDED_BY(mutex_);
  std::vector<Mark> marks_ GUARDED_BY(mutex_);
  // The next segment's file, opened by reserve() for the record of next_version_.
  std::unique_ptr<base::WritableFile> next_file_ GUARDED_BY(mutex_);
  std::filesystem::path next_path_ GUARDED_BY(mutex_);
  Version next_version_ GUARDED_BY(mutex_) = 0;
  std::uint64_t total_bytes_ GUARDED_BY(mutex_) = 0;  // Written bytes of all segments ever known.
  std::uint64_t marked_at_ GUARDED_BY(mutex_) =
      0;  // total_bytes_ when the last after_sync group began.
  std::uint64_t removed_bytes_ GUARDED_BY(mutex_) = 0;  // Bytes of removed segments.
};

}  // namespace strata::durability
