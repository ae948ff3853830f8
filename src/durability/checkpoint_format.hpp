// durability/checkpoint_format.hpp: constants of the checkpoint file format. The
// specification is docs/format/checkpoint.md; this is its grammar (integers little-endian,
// checksums masked CRC-32C, see base/crc32c.hpp):
//
//   checkpoint  := file_header block* footer
//   file_header := kFileMagic[8] = "STRATACK"
//                  kFormatVersion : u32 = 1
//                  version        : i64          the database version the contents are at
//                  header_crc     : u32          mask(crc32c(header bytes 0..19))
//   block       := compression    : u8           0 = stored raw, 1 = LZ4 block format
//                  stored_length  : u32          bytes of `stored` that follow
//                  raw_length     : u32          1 ..= kMaxRawBlockBytes
//                  block_crc      : u32          mask(crc32c(compression, stored_length,
//                                                            raw_length, stored))
//                  stored[stored_length]         raw contents, or their LZ4 compression
//   raw contents := entry+
//   entry       := key_length : varint32 (<= kMaxKeyBytes)   key[key_length]
//                  value_length : varint32 (<= kMaxValueBytes) value[value_length]
//   footer      := kFooterMagic[8] = "STRATAND"
//                  entry_count    : u64
//                  block_count    : u64
//                  version        : i64          equal to the header's
//                  body_crc       : u32          mask(crc32c(every byte before the footer))
//                  footer_crc     : u32          mask(crc32c(footer bytes 0..35))
//
// Keys are strictly increasing across the whole file; an entry never spans blocks; a
// block is never empty; a raw block (compression 0) has stored_length == raw_length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::durability::checkpoint {

inline constexpr std::string_view kFileMagic{"STRATACK", 8};
inline constexpr std::string_view kFooterMagic{"STRATAND", 8};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kFileHeaderSize = 24;
inline constexpr std::size_t kBlockHeaderSize = 13;
inline constexpr std::size_t kFooterSize = 40;

inline constexpr std::uint8_t kCompressionNone = 0;
inline constexpr std::uint8_t kCompressionLz4 = 1;

inline constexpr std::size_t kMaxKeyBytes = 10'000;
inline constexpr std::size_t kMaxValueBytes = 100'000;
// A block is closed once its raw contents reach the target size (default 256 KiB), so it
// holds at most target + one maximal entry; the reader accepts up to 1 MiB.
inline constexpr std::size_t kDefaultBlockBytes = 256 << 10;
inline constexpr std::size_t kMaxRawBlockBytes = 1 << 20;

}  // namespace strata::durability::checkpoint
