// durability/checkpoint_format.hpp: constants of the checkpoint file format. The
// specification is docs/format/checkpoint.md; this is its grammar (integers little-endian,
// checksums masked CRC-32C, see base/crc32c.hpp):
//
//   checkpoint  := file_header block* footer
//   file_header := file_magic[8] = "STRATACK"
//                  format_version : u32 = 1
//                  version        : i64          the database version the contents are at
//                  header_crc     : u32          mask(crc32c(header bytes 0..19))
//   block       := compression    : u8           0 = stored raw, 1 = LZ4 block format
//                  stored_length  : u32          bytes of `stored` that follow
//                  raw_length     : u32          1 ..= max_raw_block_bytes
//                  block_crc      : u32          mask(crc32c(compression, stored_length,
//                                                            raw_length, stored))
//                  stored[stored_length]         raw contents, or their LZ4 compression
//   raw contents := entry+
//   entry       := key_length : varint32 (<= max_key_bytes)   key[key_length]
//                  value_length : varint32 (<= max_value_bytes) value[value_length]
//   footer      := footer_magic[8] = "STRATAND"
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

inline constexpr std::string_view file_magic{"STRATACK", 8};
inline constexpr std::string_view footer_magic{"STRATAND", 8};
inline constexpr std::uint32_t format_version = 1;
inline constexpr std::size_t file_header_size = 24;
inline constexpr std::size_t block_header_size = 13;
inline constexpr std::size_t footer_size = 40;

inline constexpr std::uint8_t compression_none = 0;
inline constexpr std::uint8_t compression_lz4 = 1;

inline constexpr std::size_t max_key_bytes = 10'000;
inline constexpr std::size_t max_value_bytes = 100'000;
// A block is closed once its raw contents reach the target size (default 256 KiB), so it
// holds at most target + one maximal entry; the reader accepts up to 1 MiB.
inline constexpr std::size_t default_block_bytes = 256 << 10;
inline constexpr std::size_t max_raw_block_bytes = 1 << 20;

}  // namespace strata::durability::checkpoint
