// durability/wal_format.cpp: encoders of the write-ahead log format.
//
//   segment      := file_header record*
//   file_header  := "STRATAWL" kFormatVersion:u32 first_version:i64 header_crc:u32
//   record       := kRecordMagic:u32 record_crc:u32 length:u32 version:i64 prev_version:i64
//                   payload[length]
//
// (Little-endian; checksums masked CRC-32C; full grammar in wal_format.hpp and
// docs/format/wal.md.)
#include "durability/wal_format.hpp"

#include "base/coding.hpp"
#include "base/crc32c.hpp"

namespace strata::durability::wal {

void append_file_header(std::string& dst, Version first_version) {
  const std::size_t start = dst.size();
  dst.append(kFileMagic);
  base::put_fixed32(dst, kFormatVersion);
  base::put_fixed64(dst, static_cast<std::uint64_t>(first_version));
  const std::uint32_t crc = base::crc32c::value(dst.data() + start, dst.size() - start);
  base::put_fixed32(dst, base::crc32c::mask(crc));
}

std::uint32_t record_checksum(const char* header, std::string_view payload) {
  std::uint32_t crc = base::crc32c::value(header, kRecordCrcOffset);
  crc = base::crc32c::extend(crc, header + kRecordLengthOffset,
                             kRecordHeaderSize - kRecordLengthOffset);
  crc = base::crc32c::extend(crc, payload);
  return base::crc32c::mask(crc);
}

void append_record(std::string& dst, Version version, Version prev_version,
                   std::string_view payload, bool after_sync) {
  char header[kRecordHeaderSize];
  base::encode_fixed32(header, kRecordMagic);
  base::encode_fixed32(header + kRecordCrcOffset, 0);
  base::encode_fixed32(header + kRecordLengthOffset,
                       static_cast<std::uint32_t>(payload.size()) | (after_sync ? kAfterSync : 0));
  base::encode_fixed64(header + kRecordVersionOffset, static_cast<std::uint64_t>(version));
  base::encode_fixed64(header + kRecordPrevOffset, static_cast<std::uint64_t>(prev_version));
  base::encode_fixed32(header + kRecordCrcOffset, record_checksum(header, payload));
  dst.append(header, sizeof header);
  dst.append(payload);
}

}  // namespace strata::durability::wal
