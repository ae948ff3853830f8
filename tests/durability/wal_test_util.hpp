// tests/durability/wal_test_util.hpp: helpers shared by the log tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "strata/types.hpp"

#include "base/file_system.hpp"
#include "durability/file_names.hpp"
#include "durability/recovery.hpp"
#include "durability/wal_reader.hpp"

namespace strata::testing {

using Record = std::pair<Version, std::string>;

// A payload that names its version, so every observation can be checked.
inline std::string payload_for(Version v, std::size_t extra = 0) {
  return "batch-" + std::to_string(v) + std::string(extra, static_cast<char>('a' + v % 26));
}

inline std::vector<Record> read_log(base::FileSystem& fs, const std::filesystem::path& dir,
                                    Version after = 0,
                                    durability::WalReadResult* result = nullptr) {
  std::vector<Record> records;
  durability::WalReader reader(fs, dir);
  const auto r = reader.read(after, [&](const durability::WalRecord& rec) {
    records.emplace_back(rec.version, std::string(rec.payload));
  });
  if (result != nullptr) *result = r;
  return records;
}

// Runs recover() and returns the WAL records it replayed (checkpoint entries ignored).
inline std::vector<Record> recover_log(base::FileSystem& fs, const std::filesystem::path& dir,
                                       Version* last = nullptr) {
  std::vector<Record> records;
  const Version v = durability::recover(
      fs, dir, [](const std::string&, const std::string&) {},
      [&](Version version, std::string_view payload) {
        records.emplace_back(version, std::string(payload));
      });
  if (last != nullptr) *last = v;
  return records;
}

inline std::vector<std::string> wal_segments(base::FileSystem& fs,
                                             const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& name : fs.list(dir)) {
    if (durability::parse_file_name(name).kind == durability::FileKind::wal_segment) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace strata::testing
