// durability/checkpoint_writer.hpp: writes and publishes checkpoints
// (docs/format/checkpoint.md).
//
// Publication: the file is written as checkpoint-<version>.ckpt.tmp, synced, closed,
// renamed to checkpoint-<version>.ckpt, and the directory is synced. Only when
// write_checkpoint() returns is the checkpoint durable; only then may log segments at or
// below its version be removed (WalWriter::remove_segments_before).
//
// Thread safety: write_checkpoint may run on a background thread while a WalWriter uses
// the same FileSystem; `next` is called on the calling thread only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "strata/types.hpp"

#include "base/file_system.hpp"
#include "durability/checkpoint_format.hpp"

namespace strata::durability {

// Produces the next entry into key and value and returns true, or returns false at the
// end. Entries must come in strictly increasing key order. key and value are overwritten
// by each call (reuse their capacity).
using CheckpointSource = std::function<bool(std::string& key, std::string& value)>;

struct CheckpointOptions {
  std::size_t block_bytes = checkpoint::kDefaultBlockBytes;  // Raw target per block.
};

struct CheckpointStats {
  std::filesystem::path path;  // The published file.
  std::uint64_t entries = 0;
  std::uint64_t blocks = 0;
  std::uint64_t raw_bytes = 0;  // Sum of raw block contents.
  std::uint64_t file_bytes = 0;
};

// Streams one checkpoint into an open file (no publication). Used by write_checkpoint and
// by tests and tools that need checkpoint bytes.
// Thread safety: one thread at a time.
class CheckpointBuilder {
 public:
  // `file` must outlive the builder. Writes the file header immediately (buffered).
  CheckpointBuilder(base::WritableFile& file, Version version,
                    CheckpointOptions options = CheckpointOptions{});

  // Adds one entry. Throws invalid_argument if the key is not greater than the previous
  // one or a key or value exceeds the format limits; io_error from the file.
  void add(std::string_view key, std::string_view value);

  // Writes the last block and the footer. Does not sync. Returns the statistics
  // (path left empty).
  CheckpointStats finish();

 private:
  void flush_block();
  void emit(std::string_view bytes);
  void write_out();

  base::WritableFile& file_;
  const Version version_;
  const CheckpointOptions options_;
  std::string raw_;         // Entries of the block being built.
  std::string compressed_;  // Scratch for LZ4 output.
  std::string out_;         // Bytes waiting to be written.
  std::string last_key_;
  bool have_key_ = false;
  std::uint32_t body_crc_ = 0;
  CheckpointStats stats_;
};

// Writes the full contents produced by `next` as the checkpoint at `version` in `dir` and
// publishes it (temp file, fsync, rename, directory fsync). If anything fails the temp
// file is removed (best effort) and the error rethrown: io_error from the file system,
// invalid_argument for out-of-order or oversize entries, or whatever `next` throws.
CheckpointStats write_checkpoint(base::FileSystem& fs, const std::filesystem::path& dir,
                                 Version version, const CheckpointSource& next,
                                 const CheckpointOptions& options = CheckpointOptions{});

// Removes published checkpoints with versions below `keep_version`, then syncs the
// directory. Call after a newer checkpoint is durable. Throws io_error.
void remove_checkpoints_before(base::FileSystem& fs, const std::filesystem::path& dir,
                               Version keep_version);

}  // namespace strata::durability
