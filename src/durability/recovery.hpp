// durability/recovery.hpp: rebuilds a database's contents from its directory on open.
//
// recover() runs, in order:
//   1. removes leftover checkpoint temp files (checkpoint-*.ckpt.tmp: a checkpoint whose
//      publication never finished; never valid, never used);
//   2. loads the NEWEST published checkpoint. If it is damaged, recovery fails with
//      corrupt_data naming it: it never falls back to an older checkpoint silently
//      (docs/format/checkpoint.md, "Choosing a checkpoint");
//   3. replays the log records with versions above the checkpoint's, in order, checking
//      that they continue it without a gap (WalReader);
//   4. cuts a torn final record off the newest segment, or removes that segment if nothing
//      valid remains in it, and makes the newest segment and the directory durable (records
//      recovered from the page cache after a process crash may never have been synced), so
//      later appends start from a clean, durable log;
//   5. returns the last recovered version: the newest record's, or the checkpoint's, or 0
//      for an empty directory. The WalWriter is then created with this version.
//
// Errors: corrupt_data (damage, a gap, a bad checkpoint) naming file and offset; io_error.
// If recover() throws, everything already passed to the callbacks must be discarded.
//
// Thread safety: the caller holds the directory's lock; nothing else touches the files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "strata/types.hpp"

#include "base/file_system.hpp"

namespace strata::durability {

struct RecoveryPlan {
  std::optional<std::filesystem::path> checkpoint;  // The newest published checkpoint.
  Version checkpoint_version = 0;                   // Its version, or 0 without one.
};

// Chooses the checkpoint to load (by file name only; nothing is read or changed).
[[nodiscard]] RecoveryPlan plan_recovery(base::FileSystem& fs, const std::filesystem::path& dir);

// See above. `dir` must exist. `on_checkpoint_count`, when given, hears the entry count
// the checkpoint's footer states before the first entry (a hint, not yet verified).
Version recover(base::FileSystem& fs, const std::filesystem::path& dir,
                const std::function<void(const std::string& key, const std::string& value)>&
                    on_checkpoint_entry,
                const std::function<void(Version, std::string_view payload)>& on_wal_record,
                const std::function<void(std::uint64_t entries)>& on_checkpoint_count = {});

}  // namespace strata::durability
