// durability/checkpoint_writer.cpp: LZ4-compressed, checksummed checkpoint blocks.
//
//   checkpoint  := file_header block* footer
//   file_header := "STRATACK" kFormatVersion:u32 version:i64 header_crc:u32
//   block       := compression:u8 stored_length:u32 raw_length:u32 block_crc:u32 stored
//   entry       := key_length:varint32 key value_length:varint32 value
//   footer      := "STRATAND" entry_count:u64 block_count:u64 version:i64 body_crc:u32
//                  footer_crc:u32
//
// (Full grammar in checkpoint_format.hpp and docs/format/checkpoint.md.)
#include "durability/checkpoint_writer.hpp"

#include <exception>

#include "strata/error.hpp"

#include "base/coding.hpp"
#include "base/crc32c.hpp"
#include "durability/file_names.hpp"
#include <lz4.h>

namespace strata::durability {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kWriteChunkBytes = 1 << 20;
// The largest encoded entry: two 3-byte varints and maximal key and value.
constexpr std::size_t kMaxEntryBytes = checkpoint::kMaxKeyBytes + checkpoint::kMaxValueBytes + 6;

// Keeps every block within the reader's limit: a block closes once it reaches the target,
// so it holds less than target + one entry.
CheckpointOptions clamp(CheckpointOptions options) {
  const std::size_t largest = checkpoint::kMaxRawBlockBytes - kMaxEntryBytes;
  if (options.block_bytes > largest) options.block_bytes = largest;
  if (options.block_bytes == 0) options.block_bytes = 1;
  return options;
}
}  // namespace

CheckpointBuilder::CheckpointBuilder(base::WritableFile& file, Version version,
                                     CheckpointOptions options)
    : file_(file), version_(version), options_(clamp(options)) {
  std::string header(checkpoint::kFileMagic);
  base::put_fixed32(header, checkpoint::kFormatVersion);
  base::put_fixed64(header, static_cast<std::uint64_t>(version));
  base::put_fixed32(header, base::crc32c::mask(base::crc32c::value(header)));
  emit(header);
}

void CheckpointBuilder::add(std::string_view key, std::string_view value) {
  if (key.size() > checkpoint::kMaxKeyBytes || value.size() > checkpoint::kMaxValueBytes) {
    throw Error(ErrorCode::invalid_argument,
                "checkpoint entry with a key of " + std::to_string(key.size()) +
                    " bytes and a value of " + std::to_string(value.size()) +
                    " bytes exceeds the limits");
  }
  if (have_key_ && key <= std::string_view(last_key_)) {
    throw Error(ErrorCode::invalid_argument, "checkpoint keys out of order");
  }
  last_key_.assign(key);
  have_key_ = true;
  base::put_varint32(raw_, static_cast<std::uint32_t>(key.size()));
  raw_.append(key);
  base::put_varint32(raw_, static_cast<std::uint32_t>(value.size()));
  raw_.append(value);
  ++stats_.entries;
  if (raw_.size() >= options_.block_bytes) flush_block();
}

void CheckpointBuilder::flush_block() {
  if (raw_.empty()) return;
  const int raw_size = static_cast<int>(raw_.size());
  compressed_.resize(static_cast<std::size_t>(LZ4_compressBound(raw_size)));
  const int compressed_size = LZ4_compress_default(raw_.data(), compressed_.data(), raw_size,
                                                   static_cast<int>(compressed_.size()));
  const bool use_lz4 = compressed_size > 0 && compressed_size < raw_size;
  const std::string_view stored =
      use_lz4 ? std::string_view(compressed_.data(), static_cast<std::size_t>(compressed_size))
              : std::string_view(raw_);
  char header[checkpoint::kBlockHeaderSize];
  header[0] =
      static_cast<char>(use_lz4 ? checkpoint::kCompressionLz4 : checkpoint::kCompressionNone);
  base::encode_fixed32(header + 1, static_cast<std::uint32_t>(stored.size()));
  base::encode_fixed32(header + 5, static_cast<std::uint32_t>(raw_.size()));
  std::uint32_t crc = base::crc32c::value(header, 9);
  crc = base::crc32c::extend(crc, stored);
  base::encode_fixed32(header + 9, base::crc32c::mask(crc));
  emit(std::string_view(header, sizeof header));
  emit(stored);
  stats_.raw_bytes += raw_.size();
  ++stats_.blocks;
  raw_.clear();
}

void CheckpointBuilder::emit(std::string_view bytes) {
  body_crc_ = base::crc32c::extend(body_crc_, bytes);
  out_.append(bytes);
  if (out_.size() >= kWriteChunkBytes) write_out();
}

void CheckpointBuilder::write_out() {
  if (out_.empty()) return;
  file_.append(out_);
  stats_.file_bytes += out_.size();
  out_.clear();
}

CheckpointStats CheckpointBuilder::finish() {
  flush_block();
  std::string footer(checkpoint::kFooterMagic);
  base::put_fixed64(footer, stats_.entries);
  base::put_fixed64(footer, stats_.blocks);
  base::put_fixed64(footer, static_cast<std::uint64_t>(version_));
  base::put_fixed32(footer, base::crc32c::mask(body_crc_));
  base::put_fixed32(footer, base::crc32c::mask(base::crc32c::value(footer)));
  out_.append(footer);  // Not part of body_crc_.
  write_out();
  return stats_;
}

CheckpointStats write_checkpoint(base::FileSystem& fs, const fs::path& dir, Version version,
                                 const CheckpointSource& next, const CheckpointOptions& options) {
  const fs::path temp = dir / checkpoint_temp_file_name(version);
  const fs::path final_path = dir / checkpoint_file_name(version);
  try {
    CheckpointStats stats;
    {
      const auto file = fs.open_writable(temp, base::OpenMode::truncate);
      CheckpointBuilder builder(*file, version, options);
      std::string key;
      std::string value;
      while (next(key, value)) builder.add(key, value);
      stats = builder.finish();
      file->sync();
      file->close();
    }
    fs.rename(temp, final_path);
    fs.sync_dir(dir);
    stats.path = final_path;
    return stats;
  } catch (...) {
    try {
      if (fs.exists(temp)) fs.remove(temp);
    } catch (const std::exception&) {
      // Best effort: recovery removes leftover temp files.
    }
    throw;
  }
}

void remove_checkpoints_before(base::FileSystem& fs, const fs::path& dir, Version keep_version) {
  bool removed = false;
  for (const std::string& name : fs.list(dir)) {
    const ParsedFileName parsed = parse_file_name(name);
    if (parsed.kind == FileKind::checkpoint && parsed.version < keep_version) {
      fs.remove(dir / name);
      removed = true;
    }
  }
  if (removed) fs.sync_dir(dir);
}

}  // namespace strata::durability
