// durability/wal_format.hpp: constants and encoders of the write-ahead log format.
// The specification is docs/format/wal.md; this is its grammar (all integers little-endian):
//
//   segment      := file_header record*
//   file_header  := kFileMagic[8] = "STRATAWL"
//                   kFormatVersion : u32 = 2   (1 is read too: its payloads hold no
//                                               atomic operations)
//                   first_version  : i64        version of the segment's first record
//                   header_crc     : u32        mask(crc32c(bytes 0..19 of the header))
//   record       := kRecordMagic   : u32 = 0xE1A75743   (bytes 43 57 A7 E1)
//                   record_crc     : u32        mask(crc32c(magic, length, version,
//                                                          prev_version, payload))
//                   length         : u32        bits 0-30: payload bytes, <= kMaxPayloadBytes;
//                                               bit 31 (kAfterSync): every byte of the
//                                               segment before the record was durable
//                                               when it was written
//                   version        : i64        the batch's commit version
//                   prev_version   : i64        version of the previous record in the log
//                   payload[length]             opaque to this layer
//
// Invariants a valid log satisfies: prev_version < version; each record's prev_version is
// the version of the record before it (across segments); a segment's name, its
// first_version and its first record's version agree.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/types.hpp"

namespace strata::durability::wal {

inline constexpr std::string_view kFileMagic{"STRATAWL", 8};
inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr std::uint32_t kOldestFormatVersion = 1;  // the oldest a reader accepts
inline constexpr std::size_t kFileHeaderSize = 24;
inline constexpr std::uint32_t kRecordMagic = 0xE1A75743u;
inline constexpr std::size_t kRecordHeaderSize = 28;
inline constexpr std::uint32_t kMaxPayloadBytes = 1u << 30;  // 1 GiB
inline constexpr std::uint32_t kAfterSync = 1u << 31;        // in the length field

// Offsets of the record header fields.
inline constexpr std::size_t kRecordCrcOffset = 4;
inline constexpr std::size_t kRecordLengthOffset = 8;
inline constexpr std::size_t kRecordVersionOffset = 12;
inline constexpr std::size_t kRecordPrevOffset = 20;

// Appends a file header for a segment whose first record has `first_version`.
void append_file_header(std::string& dst, Version first_version);

// Appends one framed record, marked kAfterSync when `after_sync`.
// REQUIRES: payload.size() <= kMaxPayloadBytes.
void append_record(std::string& dst, Version version, Version prev_version,
                   std::string_view payload, bool after_sync);

// The masked checksum stored in a record header, computed from the header bytes
// (kRecordHeaderSize of them, the crc field is skipped) and the payload.
std::uint32_t record_checksum(const char* header, std::string_view payload);

}  // namespace strata::durability::wal
