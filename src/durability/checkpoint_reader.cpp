// durability/checkpoint_reader.cpp: the checkpoint decoder. Every read is bounded by the
// file size and the format limits (checkpoint_format.hpp) before any allocation.
#include "durability/checkpoint_reader.hpp"

#include "strata/error.hpp"

#include "base/coding.hpp"
#include "base/crc32c.hpp"
#include "durability/checkpoint_format.hpp"
#include "durability/file_names.hpp"
#include <lz4.h>

namespace strata::durability {
namespace {

struct Footer {
  std::uint64_t entries;
  std::uint64_t blocks;
  Version version;
  std::uint32_t body_crc;
};

class CheckpointParser {
 public:
  CheckpointParser(base::ReadableFile& file, const std::string& name,
                   const CheckpointEntryFn& on_entry, const CheckpointCountFn& on_count)
      : file_(file), name_(name), on_entry_(on_entry), on_count_(on_count), size_(file.size()) {}

  CheckpointInfo parse(std::optional<Version> expected_version) {
    const std::uint64_t minimum = checkpoint::kFileHeaderSize + checkpoint::kFooterSize;
    if (size_ < minimum) {
      fail(size_, "file of " + std::to_string(size_) + " bytes is shorter than the minimum " +
                      std::to_string(minimum));
    }
    info_.file_bytes = size_;
    info_.version = parse_header(expected_version);
    const Footer footer = parse_footer();
    if (on_count_) on_count_(footer.entries);
    std::uint64_t offset = checkpoint::kFileHeaderSize;
    const std::uint64_t body_end = size_ - checkpoint::kFooterSize;
    while (offset < body_end) {
      if (info_.blocks == footer.blocks) fail(offset, "more blocks than the footer's count");
      offset = parse_block(offset, body_end, footer);
    }
    if (info_.blocks != footer.blocks) {
      fail(body_end, "footer counts " + std::to_string(footer.blocks) + " blocks, found " +
                         std::to_string(info_.blocks));
    }
    if (info_.entries != footer.entries) {
      fail(body_end, "footer counts " + std::to_string(footer.entries) + " entries, found " +
                         std::to_string(info_.entries));
    }
    if (body_crc_ != footer.body_crc) fail(body_end, "whole-file checksum mismatch");
    return info_;
  }

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
    throw Error(ErrorCode::corrupt_data,
                name_ + " at offset " + std::to_string(offset) + ": " + what);
  }

  std::string read_exact(std::uint64_t offset, std::size_t n) {
    std::string bytes = file_.read(offset, n);
    if (bytes.size() != n) fail(offset, "file shorter than expected while reading");
    return bytes;
  }

  Version parse_header(std::optional<Version> expected_version) {
    const std::string header = read_exact(0, checkpoint::kFileHeaderSize);
    body_crc_ = base::crc32c::value(header);
    if (std::string_view(header).substr(0, 8) != checkpoint::kFileMagic) {
      fail(0, "bad file magic (not a strata checkpoint)");
    }
    const std::uint32_t crc = base::crc32c::value(header.data(), 20);
    if (base::crc32c::unmask(base::decode_fixed32(header.data() + 20)) != crc) {
      fail(0, "file header checksum mismatch");
    }
    const std::uint32_t format = base::decode_fixed32(header.data() + 8);
    if (format != checkpoint::kFormatVersion) {
      fail(8, "unsupported checkpoint format version " + std::to_string(format));
    }
    const auto version = static_cast<Version>(base::decode_fixed64(header.data() + 12));
    if (expected_version && version != *expected_version) {
      fail(12, "header version " + std::to_string(version) + " disagrees with the file name");
    }
    return version;
  }

  Footer parse_footer() {
    const std::uint64_t at = size_ - checkpoint::kFooterSize;
    const std::string f = read_exact(at, checkpoint::kFooterSize);
    if (std::string_view(f).substr(0, 8) != checkpoint::kFooterMagic) {
      fail(at, "bad footer magic (truncated or damaged file)");
    }
    const std::uint32_t crc = base::crc32c::value(f.data(), 36);
    if (base::crc32c::unmask(base::decode_fixed32(f.data() + 36)) != crc) {
      fail(at, "footer checksum mismatch");
    }
    Footer footer;
    footer.entries = base::decode_fixed64(f.data() + 8);
    footer.blocks = base::decode_fixed64(f.data() + 16);
    footer.version = static_cast<Version>(base::decode_fixed64(f.data() + 24));
    footer.body_crc = base::crc32c::unmask(base::decode_fixed32(f.data() + 32));
    if (footer.version != info_.version) {
      fail(at + 24, "footer version " + std::to_string(footer.version) +
                        " disagrees with the header version " + std::to_string(info_.version));
    }
    return footer;
  }

  // Verifies and delivers the block at `offset`; returns the offset after it.
  std::uint64_t parse_block(std::uint64_t offset, std::uint64_t body_end, const Footer& footer) {
    if (body_end - offset < checkpoint::kBlockHeaderSize) fail(offset, "truncated block header");
    const std::string header = read_exact(offset, checkpoint::kBlockHeaderSize);
    const auto compression = static_cast<std::uint8_t>(header[0]);
    const std::uint32_t stored_length = base::decode_fixed32(header.data() + 1);
    const std::uint32_t raw_length = base::decode_fixed32(header.data() + 5);
    check_block_lengths(offset, compression, stored_length, raw_length);
    const std::uint64_t data_at = offset + checkpoint::kBlockHeaderSize;
    if (body_end - data_at < stored_length) fail(offset, "block runs past the footer");
    const std::string stored = read_exact(data_at, stored_length);
    std::uint32_t crc = base::crc32c::value(header.data(), 9);
    crc = base::crc32c::extend(crc, stored);
    if (base::crc32c::unmask(base::decode_fixed32(header.data() + 9)) != crc) {
      fail(offset, "block checksum mismatch");
    }
    body_crc_ = base::crc32c::extend(body_crc_, header);
    body_crc_ = base::crc32c::extend(body_crc_, stored);
    const std::string_view raw = decompress(offset, compression, stored, raw_length);
    parse_entries(offset, raw, footer);
    info_.raw_bytes += raw_length;
    ++info_.blocks;
    return data_at + stored_length;
  }

  void check_block_lengths(std::uint64_t offset, std::uint8_t compression,
                           std::uint32_t stored_length, std::uint32_t raw_length) const {
    if (compression != checkpoint::kCompressionNone && compression != checkpoint::kCompressionLz4) {
      fail(offset, "unknown block compression " + std::to_string(compression));
    }
    if (raw_length == 0 || raw_length > checkpoint::kMaxRawBlockBytes) {
      fail(offset, "block raw length " + std::to_string(raw_length) + " outside 1.." +
                       std::to_string(checkpoint::kMaxRawBlockBytes));
    }
    const auto bound = static_cast<std::uint32_t>(LZ4_compressBound(static_cast<int>(raw_length)));
    if (compression == checkpoint::kCompressionNone ? stored_length != raw_length
                                                    : stored_length == 0 || stored_length > bound) {
      fail(offset, "block stored length " + std::to_string(stored_length) +
                       " is impossible for raw length " + std::to_string(raw_length));
    }
  }

  std::string_view decompress(std::uint64_t offset, std::uint8_t compression,
                              const std::string& stored, std::uint32_t raw_length) {
    if (compression == checkpoint::kCompressionNone) return stored;
    raw_.resize(raw_length);
    const int n = LZ4_decompress_safe(stored.data(), raw_.data(), static_cast<int>(stored.size()),
                                      static_cast<int>(raw_length));
    if (n < 0 || static_cast<std::uint32_t>(n) != raw_length) {
      fail(offset, "LZ4 data does not decompress to " + std::to_string(raw_length) + " bytes");
    }
    return raw_;
  }

  void parse_entries(std::uint64_t offset, std::string_view raw, const Footer& footer) {
    while (!raw.empty()) {
      const std::string_view key = take_bytes(offset, raw, checkpoint::kMaxKeyBytes, "key");
      const std::string_view value = take_bytes(offset, raw, checkpoint::kMaxValueBytes, "value");
      if (info_.entries > 0 && key <= std::string_view(last_key_)) {
        fail(offset, "keys out of order at entry " + std::to_string(info_.entries));
      }
      if (info_.entries == footer.entries) fail(offset, "more entries than the footer's count");
      last_key_.assign(key);
      ++info_.entries;
      on_entry_(key, value);
    }
  }

  std::string_view take_bytes(std::uint64_t offset, std::string_view& raw, std::size_t limit,
                              const char* what) const {
    std::uint32_t length = 0;
    if (!base::get_varint32(raw, length)) {
      fail(offset, std::string("truncated ") + what + " length in block");
    }
    if (length > limit) {
      fail(offset, std::string(what) + " of " + std::to_string(length) + " bytes exceeds " +
                       std::to_string(limit));
    }
    if (length > raw.size()) fail(offset, std::string(what) + " runs past the end of its block");
    const std::string_view bytes = raw.substr(0, length);
    raw.remove_prefix(length);
    return bytes;
  }

  base::ReadableFile& file_;
  const std::string& name_;
  const CheckpointEntryFn& on_entry_;
  const CheckpointCountFn& on_count_;
  const std::uint64_t size_;
  CheckpointInfo info_;
  std::uint32_t body_crc_ = 0;
  std::string raw_;
  std::string last_key_;
};

}  // namespace

CheckpointInfo read_checkpoint(base::ReadableFile& file, const std::string& name,
                               std::optional<Version> expected_version,
                               const CheckpointEntryFn& on_entry,
                               const CheckpointCountFn& on_count) {
  return CheckpointParser(file, name, on_entry, on_count).parse(expected_version);
}

CheckpointInfo read_checkpoint(base::FileSystem& fs, const std::filesystem::path& path,
                               const CheckpointEntryFn& on_entry,
                               const CheckpointCountFn& on_count) {
  const ParsedFileName parsed = parse_file_name(path.filename().string());
  if (parsed.kind != FileKind::checkpoint) {
    throw Error(ErrorCode::invalid_argument, path.string() + " is not a checkpoint file name");
  }
  const auto file = fs.open_readable(path);
  return read_checkpoint(*file, path.string(), parsed.version, on_entry, on_count);
}

}  // namespace strata::durability
