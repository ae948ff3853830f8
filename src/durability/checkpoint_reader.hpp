// durability/checkpoint_reader.hpp: verifies a checkpoint and delivers its entries
// (docs/format/checkpoint.md).
//
// Every length is checked against the file size and the format limits before use, LZ4 data
// is decompressed with LZ4_decompress_safe into a buffer of the declared size, and every
// checksum, count and version is verified, so hostile bytes produce Error(corrupt_data,
// "<file> at offset <n>: <what>") and never an out-of-bounds access.
//
// Entries are delivered while the file is read, before the footer's whole-file checksum
// and counts have been compared: if read_checkpoint throws, the caller must discard
// everything it was given.
//
// Thread safety: no shared state; one call per file at a time.
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

// Called once per entry in key order; key and value are valid only during the call.
using CheckpointEntryFn = std::function<void(std::string_view key, std::string_view value)>;

// Called once before the first entry with the entry count the footer states. The body is
// not verified yet: a hint (to size things up front), not a fact.
using CheckpointCountFn = std::function<void(std::uint64_t entries)>;

struct CheckpointInfo {
  Version version = 0;
  std::uint64_t entries = 0;
  std::uint64_t blocks = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t file_bytes = 0;
};

// Reads an open checkpoint. `name` appears in error messages. If `expected_version` is
// given (the version in the file name), header and footer must agree with it.
// Throws corrupt_data for any damage, io_error if reading fails.
CheckpointInfo read_checkpoint(base::ReadableFile& file, const std::string& name,
                               std::optional<Version> expected_version,
                               const CheckpointEntryFn& on_entry,
                               const CheckpointCountFn& on_count = {});

// Opens and reads the checkpoint at `path`; its name must be checkpoint-<version>.ckpt and
// its contents must be at that version. Throws like the above.
CheckpointInfo read_checkpoint(base::FileSystem& fs, const std::filesystem::path& path,
                               const CheckpointEntryFn& on_entry,
                               const CheckpointCountFn& on_count = {});

}  // namespace strata::durability
