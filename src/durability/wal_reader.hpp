// durability/wal_reader.hpp: reads the write-ahead log back (docs/format/wal.md).
//
// Outcomes (expected outcomes are values, damage is an error):
//   - clean end: every byte of every segment belongs to a valid record;
//   - torn tail: the NEWEST segment ends in damage after which no valid record follows
//     that was written once the damage was durable (a write cut short by a crash, or
//     unsynced bytes that never reached the disk, or reached it out of order: a power loss
//     may keep a later page of an unsynced write and lose an earlier one). The result
//     names the segment and the offset at which to cut it;
//   - corruption: throws Error(corrupt_data, "<file> at offset <n>: <what>") for damage in
//     any other segment, damage followed by a valid record written after a sync (format 1
//     segments do not say: any valid record), a bad file header that is not
//     a torn tail, a version that does not increase, a record whose prev_version is not the
//     version of the record before it (a gap: a lost segment or lost records), or a segment
//     whose name disagrees with its contents. (Below a checkpoint the chain is looser:
//     see WalReader::read.)
//
// Thread safety: a WalReader is used by one thread; nothing may write the log meanwhile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "base/file_system.hpp"

namespace strata::durability {

struct WalRecord {
  Version version = 0;
  Version prev_version = 0;
  std::string_view payload;  // Valid only during the callback.
  std::uint64_t offset = 0;  // Of the record header in its segment.
  bool after_sync = false;   // Written when the segment's bytes before it were durable.
};

using WalRecordFn = std::function<void(const WalRecord&)>;

enum class WalEnd { clean, torn_tail };

// The result of scanning one segment's bytes.
struct SegmentScan {
  WalEnd end = WalEnd::clean;
  std::uint64_t valid_bytes = 0;        // Bytes [0, valid_bytes) are a header and whole records.
  std::uint64_t records = 0;            // Valid records in the segment.
  std::optional<Version> last_version;  // Of the last valid record.
};

// Parses one segment held in memory. `name` is used in error messages, `name_version` is
// the version in the file name. `is_last` says whether this is the newest segment (only it
// may end in a torn tail). `expected_prev` is the version of the record before this
// segment, if any record precedes it. Calls on_record for each valid record in order.
// Throws Error(corrupt_data) as described above; never reads outside `data`.
[[nodiscard]] SegmentScan scan_wal_segment(std::string_view data, const std::string& name,
                                           Version name_version, bool is_last,
                                           std::optional<Version> expected_prev,
                                           const WalRecordFn& on_record);

struct WalReadResult {
  WalEnd end = WalEnd::clean;
  // The newest segment (empty path if there is none) and how many valid records it holds
  // (0: it holds nothing and may be removed).
  std::filesystem::path newest_segment;
  std::uint64_t newest_segment_records = 0;
  // Bytes of the newest segment that hold its header and valid records; when
  // end == torn_tail, the offset at which to truncate it.
  std::uint64_t newest_valid_bytes = 0;
  // The version of the last valid record in the log, if any.
  std::optional<Version> last_version;
  std::uint64_t records_delivered = 0;  // Records passed to on_record.
  std::uint64_t bytes_read = 0;
  std::vector<std::filesystem::path> segments;  // All segments, oldest first.
};

// One log segment file: wal-<first_version>.log.
struct WalSegmentFile {
  Version first_version = 0;
  std::filesystem::path path;
};

// The log segments in `dir`, oldest first (by the version in their names). Throws
// io_error if `dir` cannot be listed.
[[nodiscard]] std::vector<WalSegmentFile> list_wal_segments(base::FileSystem& fs,
                                                            const std::filesystem::path& dir);

class WalReader {
 public:
  // Reads the segments in `dir`. `fs` must outlive the reader.
  WalReader(base::FileSystem& fs, std::filesystem::path dir);

  // Reads every segment in version order, verifying every record, and calls on_record for
  // each record with version > `after` (the checkpoint version; 0 for none). The first
  // such record must continue from `after` or earlier (prev_version <= after), otherwise
  // records are missing and it throws corrupt_data. While every record read so far is at
  // or below `after`, a segment's first record may continue from any version up to
  // `after` (docs/format/wal.md, invariant 3); only a step back is corruption. Throws
  // io_error if a file cannot be read. Does not modify any file: recover() truncates a
  // torn tail.
  [[nodiscard]] WalReadResult read(Version after, const WalRecordFn& on_record);

 private:
  base::FileSystem& fs_;
  std::filesystem::path dir_;
  // The segment being read; kept for the next (as large as the largest so far).
  std::unique_ptr<char[]> buffer_;
  std::size_t buffer_size_ = 0;
};

}  // namespace strata::durability
