// durability/file_names.hpp: the names of the files in a database directory.
//
//   wal-<20-digit first version>.log            a write-ahead log segment
//   checkpoint-<20-digit version>.ckpt          a published checkpoint
//   checkpoint-<20-digit version>.ckpt.tmp      a checkpoint being written (never valid)
//   LOCK                                        the lock file
//
// Versions are zero-padded decimal, so name order equals version order. Any other name is
// FileKind::other and is left alone.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "strata/types.hpp"

namespace strata::durability {

enum class FileKind { wal_segment, checkpoint, checkpoint_temp, lock, other };

struct ParsedFileName {
  FileKind kind = FileKind::other;
  Version version = 0;  // For wal_segment, checkpoint and checkpoint_temp.
};

inline constexpr std::string_view kLockFileName = "LOCK";

// REQUIRES: version >= 0.
std::string wal_file_name(Version first_version);
std::string checkpoint_file_name(Version version);
std::string checkpoint_temp_file_name(Version version);

// Classifies a bare file name. Names that almost match (wrong digit count, a version above
// INT64_MAX, another suffix) are FileKind::other.
[[nodiscard]] ParsedFileName parse_file_name(std::string_view name);

}  // namespace strata::durability
