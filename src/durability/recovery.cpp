// durability/recovery.cpp: newest checkpoint, then the log after it, then tail repair.
#include "durability/recovery.hpp"

#include "strata/error.hpp"

#include "durability/checkpoint_reader.hpp"
#include "durability/file_names.hpp"
#include "durability/wal_reader.hpp"

namespace strata::durability {
namespace fs = std::filesystem;

namespace {

void remove_temp_files(base::FileSystem& fs, const fs::path& dir) {
  bool removed = false;
  for (const std::string& name : fs.list(dir)) {
    if (parse_file_name(name).kind == FileKind::checkpoint_temp) {
      fs.remove(dir / name);
      removed = true;
    }
  }
  if (removed) fs.sync_dir(dir);
}

Version load_checkpoint(base::FileSystem& fs, const RecoveryPlan& plan,
                        const std::function<void(const std::string&, const std::string&)>& on_entry,
                        const std::function<void(std::uint64_t)>& on_count) {
  if (!plan.checkpoint) return 0;
  std::string key;
  std::string value;
  const CheckpointInfo info = read_checkpoint(
      fs, *plan.checkpoint,
      [&](std::string_view k, std::string_view v) {
        key.assign(k);
        value.assign(v);
        on_entry(key, value);
      },
      on_count);
  return info.version;
}

// Makes the recovered log end cleanly and durably: drop a newest segment left without
// records, or cut it after its last valid record (truncate syncs the file), then sync the
// directory. The sync matters even without a torn tail: after a process crash the newest
// segment may hold records that were read back from the page cache but never synced, and
// new segments must not become durable while those records could still vanish (that would
// leave a version gap behind the next power loss).
void make_log_durable(base::FileSystem& fs, const fs::path& dir, const WalReadResult& wal) {
  if (wal.newest_segment.empty()) return;
  if (wal.newest_segment_records == 0) {
    fs.remove(wal.newest_segment);
  } else {
    fs.truncate(wal.newest_segment, wal.newest_valid_bytes);
  }
  fs.sync_dir(dir);
}

}  // namespace

RecoveryPlan plan_recovery(base::FileSystem& fs, const fs::path& dir) {
  RecoveryPlan plan;
  for (const std::string& name : fs.list(dir)) {
    const ParsedFileName parsed = parse_file_name(name);
    if (parsed.kind != FileKind::checkpoint) continue;
    if (!plan.checkpoint || parsed.version > plan.checkpoint_version) {
      plan.checkpoint = dir / name;
      plan.checkpoint_version = parsed.version;
    }
  }
  return plan;
}

Version recover(base::FileSystem& fs, const fs::path& dir,
                const std::function<void(const std::string& key, const std::string& value)>&
                    on_checkpoint_entry,
                const std::function<void(Version, std::string_view payload)>& on_wal_record,
                const std::function<void(std::uint64_t entries)>& on_checkpoint_count) {
  remove_temp_files(fs, dir);
  const RecoveryPlan plan = plan_recovery(fs, dir);
  const Version checkpoint_version =
      load_checkpoint(fs, plan, on_checkpoint_entry, on_checkpoint_count);
  Version last = checkpoint_version;
  const WalReadResult wal = WalReader(fs, dir).read(checkpoint_version, [&](const WalRecord& r) {
    on_wal_record(r.version, r.payload);
    last = r.version;
  });
  make_log_durable(fs, dir, wal);
  return last;
}

}  // namespace strata::durability
