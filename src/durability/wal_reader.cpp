// durability/wal_reader.cpp: verifies log segments and tells a torn tail from corruption.
//
// The rule (docs/format/wal.md, "Torn tails"): damage at offset p of the newest segment is
// a torn tail if no valid record (magic, length within the file, checksum) marked
// kAfterSync starts anywhere after p; then the segment is cut at p. Such a record was
// written after the bytes at p were durable, so damage before it, like damage in an older
// segment, cannot be the result of a crash during an append and is corruption. (Format 1
// records are not marked: there any valid record after p makes it corruption.)
#include "durability/wal_reader.hpp"

#include <algorithm>
#include <optional>

#include "strata/error.hpp"

#include "base/coding.hpp"
#include "base/crc32c.hpp"
#include "base/crc32c_prefixes.hpp"
#include "durability/file_names.hpp"
#include "durability/wal_format.hpp"

namespace strata::durability {
namespace fs = std::filesystem;

namespace {

struct Damage {
  std::uint64_t offset;
  std::string what;
};

[[noreturn]] void throw_corrupt(const std::string& name, std::uint64_t offset,
                                const std::string& what) {
  throw Error(ErrorCode::corrupt_data, name + " at offset " + std::to_string(offset) + ": " + what);
}

// The payload length in a record's length field: format 1 has no after_sync mark.
std::uint32_t payload_length(std::uint32_t field, bool marks) {
  return marks ? field & ~wal::kAfterSync : field;
}

// The length field of a record header at `pos` whose magic is right and whose payload
// fits the limit and the file, or nothing; its checksum is not checked. `marks`: the
// segment's format has after_sync marks.
std::optional<std::uint32_t> plausible_header(std::string_view data, std::size_t pos, bool marks) {
  if (data.size() - pos < wal::kRecordHeaderSize) return std::nullopt;
  const char* h = data.data() + pos;
  if (base::decode_fixed32(h) != wal::kRecordMagic) return std::nullopt;
  const std::uint32_t field = base::decode_fixed32(h + wal::kRecordLengthOffset);
  const std::uint32_t length = payload_length(field, marks);
  if (length > wal::kMaxPayloadBytes) return std::nullopt;
  if (data.size() - pos - wal::kRecordHeaderSize < length) return std::nullopt;
  return field;
}

// The length field of a whole, checksum-valid record at `pos`, or nothing.
std::optional<std::uint32_t> valid_record_length(std::string_view data, std::size_t pos,
                                                 bool marks) {
  const auto field = plausible_header(data, pos, marks);
  if (!field) return std::nullopt;
  const char* h = data.data() + pos;
  const std::string_view payload =
      data.substr(pos + wal::kRecordHeaderSize, payload_length(*field, marks));
  if (base::decode_fixed32(h + wal::kRecordCrcOffset) != wal::record_checksum(h, payload)) {
    return std::nullopt;
  }
  return field;
}

// The first valid record from `from` on; with `marks`, the first marked after_sync. Damage
// can hold a plausible header every few bytes, each claiming a payload up to the end of
// the file: their checksums come from one table of the tail's prefix CRCs, built at the
// first of them, so the search takes time linear in the tail's length, not quadratic.
std::optional<std::uint64_t> find_valid_record(std::string_view data, std::uint64_t from,
                                               bool marks) {
  if (from >= data.size()) return std::nullopt;
  const std::string_view tail = data.substr(from);
  std::optional<base::crc32c::PrefixChecksums> crcs;
  for (std::size_t q = 0; q + wal::kRecordHeaderSize <= tail.size(); ++q) {
    const auto field = plausible_header(tail, q, marks);
    if (!field || (marks && (*field & wal::kAfterSync) == 0)) continue;
    if (!crcs) crcs.emplace(tail);
    // The checksum covers the magic, then the header from the length field on and the
    // payload: one range of the tail.
    const char* h = tail.data() + q;
    const std::size_t begin = q + wal::kRecordLengthOffset;
    const std::size_t end = q + wal::kRecordHeaderSize + payload_length(*field, marks);
    const std::uint32_t crc =
        crcs->extend(base::crc32c::value(h, wal::kRecordCrcOffset), begin, end);
    if (base::crc32c::mask(crc) == base::decode_fixed32(h + wal::kRecordCrcOffset)) {
      return from + q;
    }
  }
  return std::nullopt;
}

// The format a segment's header names, read even when the header is damaged (a flipped
// magic byte leaves it), or the current one when those bytes name none: a header lost
// whole is a new segment's, written with its first records.
std::uint32_t format_named(std::string_view data) {
  if (data.size() < 12) return wal::kFormatVersion;
  const std::uint32_t format = base::decode_fixed32(data.data() + 8);
  return format >= wal::kOldestFormatVersion && format <= wal::kFormatVersion ? format
                                                                              : wal::kFormatVersion;
}

// Checks the file header; returns the damage (a torn tail candidate) or nothing, and sets
// `format` from a valid header (a damaged one leaves it as format_named read it). Throws for a
// checksum-valid header that is wrong (version, name).
std::optional<Damage> check_file_header(std::string_view data, const std::string& name,
                                        Version name_version, std::uint32_t& format) {
  if (data.size() < wal::kFileHeaderSize) {
    return Damage{0, "truncated file header (" + std::to_string(data.size()) + " bytes)"};
  }
  if (data.substr(0, wal::kFileMagic.size()) != wal::kFileMagic) {
    return Damage{0, "bad file magic"};
  }
  const std::size_t crc_at = wal::kFileHeaderSize - 4;
  const std::uint32_t crc = base::crc32c::value(data.data(), crc_at);
  if (base::crc32c::unmask(base::decode_fixed32(data.data() + crc_at)) != crc) {
    return Damage{0, "file header checksum mismatch"};
  }
  const std::uint32_t version = base::decode_fixed32(data.data() + 8);
  if (version < wal::kOldestFormatVersion || version > wal::kFormatVersion) {
    throw_corrupt(name, 8, "unsupported WAL format version " + std::to_string(version));
  }
  format = version;
  const auto first = static_cast<Version>(base::decode_fixed64(data.data() + 12));
  if (first != name_version) {
    throw_corrupt(
        name, 12,
        "header first_version " + std::to_string(first) + " disagrees with the file name");
  }
  return std::nullopt;
}

// The damage at `pos` (a record that is not whole and valid), described.
Damage describe_damage(std::string_view data, std::uint64_t pos, bool marks) {
  const std::uint64_t left = data.size() - pos;
  if (left < wal::kRecordHeaderSize) {
    return {pos, "truncated record header (" + std::to_string(left) + " bytes left)"};
  }
  const char* h = data.data() + pos;
  if (base::decode_fixed32(h) != wal::kRecordMagic) return {pos, "bad record magic"};
  const std::uint32_t length =
      payload_length(base::decode_fixed32(h + wal::kRecordLengthOffset), marks);
  if (length > wal::kMaxPayloadBytes) {
    return {pos, "record length " + std::to_string(length) + " exceeds the limit"};
  }
  if (left - wal::kRecordHeaderSize < length) {
    return {pos, "record of " + std::to_string(length) + " bytes runs past the end of file"};
  }
  return {pos, "record checksum mismatch"};
}

}  // namespace

SegmentScan scan_wal_segment(std::string_view data, const std::string& name, Version name_version,
                             bool is_last, std::optional<Version> expected_prev,
                             const WalRecordFn& on_record) {
  SegmentScan scan;
  std::uint32_t format = format_named(data);
  std::optional<Damage> damage = check_file_header(data, name, name_version, format);
  const bool marks = format > 1;
  std::uint64_t pos = wal::kFileHeaderSize;
  while (!damage && pos < data.size()) {
    const auto field = valid_record_length(data, pos, marks);
    if (!field) {
      damage = describe_damage(data, pos, marks);
      break;
    }
    const std::uint32_t length = payload_length(*field, marks);
    const char* h = data.data() + pos;
    WalRecord record;
    record.after_sync = marks && (*field & wal::kAfterSync) != 0;
    record.version = static_cast<Version>(base::decode_fixed64(h + wal::kRecordVersionOffset));
    record.prev_version = static_cast<Version>(base::decode_fixed64(h + wal::kRecordPrevOffset));
    record.payload = data.substr(pos + wal::kRecordHeaderSize, length);
    record.offset = pos;
    if (record.prev_version >= record.version) {
      throw_corrupt(name, pos,
                    "version " + std::to_string(record.version) +
                        " does not increase over prev_version " +
                        std::to_string(record.prev_version));
    }
    if (expected_prev && record.prev_version != *expected_prev) {
      throw_corrupt(name, pos,
                    "version gap: record " + std::to_string(record.version) + " follows version " +
                        std::to_string(record.prev_version) +
                        " but the previous record is version " + std::to_string(*expected_prev));
    }
    if (scan.records == 0 && record.version != name_version) {
      throw_corrupt(name, pos,
                    "first record version " + std::to_string(record.version) +
                        " disagrees with the file name");
    }
    on_record(record);
    expected_prev = record.version;
    scan.last_version = record.version;
    ++scan.records;
    pos += wal::kRecordHeaderSize + length;
  }
  if (!damage) {
    scan.valid_bytes = pos;
    return scan;
  }
  if (!is_last)
    throw_corrupt(name, damage->offset, damage->what + " in a segment that is not the newest");
  // Records written after the damage was durable make it corruption; those written while
  // it was not are that unsynced write's, cut with it.
  if (const auto next = find_valid_record(data, damage->offset + 1, marks)) {
    throw_corrupt(name, damage->offset,
                  damage->what + ", followed by a valid record at offset " + std::to_string(*next) +
                      (marks ? " written after it was synced" : ""));
  }
  scan.end = WalEnd::torn_tail;
  scan.valid_bytes = damage->offset;
  return scan;
}

std::vector<WalSegmentFile> list_wal_segments(base::FileSystem& fs, const fs::path& dir) {
  std::vector<WalSegmentFile> segments;
  for (const std::string& name : fs.list(dir)) {
    const ParsedFileName parsed = parse_file_name(name);
    if (parsed.kind == FileKind::wal_segment) segments.push_back({parsed.version, dir / name});
  }
  std::sort(segments.begin(), segments.end(),
            [](const auto& a, const auto& b) { return a.first_version < b.first_version; });
  return segments;
}

WalReader::WalReader(base::FileSystem& fs, fs::path dir) : fs_(fs), dir_(std::move(dir)) {}

WalReadResult WalReader::read(Version after, const WalRecordFn& on_record) {
  WalReadResult result;
  const std::vector<WalSegmentFile> segments = list_wal_segments(fs_, dir_);
  std::optional<Version> previous;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& [name_version, path] = segments[i];
    const std::string name = path.string();
    const std::unique_ptr<base::ReadableFile> file = fs_.open_readable(path);
    const auto size = static_cast<std::size_t>(file->size());
    if (size > buffer_size_) {
      buffer_.reset();  // (not both at once)
      buffer_ = std::make_unique_for_overwrite<char[]>(size);
      buffer_size_ = size;
    }
    const std::string_view data(buffer_.get(), file->read_into(0, {buffer_.get(), size}));
    const auto deliver = [&](const WalRecord& record) {
      if (record.version <= after) return;
      if (result.records_delivered == 0 && record.prev_version > after) {
        throw_corrupt(name, record.offset,
                      "version gap: the log continues from version " +
                          std::to_string(record.prev_version) + " but recovery starts at " +
                          std::to_string(after) + "; records in between are missing");
      }
      ++result.records_delivered;
      on_record(record);
    };
    const bool is_last = i + 1 == segments.size();
    // Records at or below `after` are the checkpoint's. A log whose last record so far is
    // among them may go on from any version up to `after` (an opening after a checkpoint at
    // a version that has no record of its own continues from that version): only a step
    // back is checked here, and deliver checks the first record after the checkpoint.
    const bool covered = previous && *previous <= after;
    const auto check_start = [&](const WalRecord& record) {
      if (record.offset == wal::kFileHeaderSize && record.prev_version < *previous) {
        throw_corrupt(name, record.offset,
                      "record " + std::to_string(record.version) + " follows version " +
                          std::to_string(record.prev_version) +
                          " but the previous record is version " + std::to_string(*previous));
      }
      deliver(record);
    };
    const SegmentScan scan =
        covered ? scan_wal_segment(data, name, name_version, is_last, std::nullopt, check_start)
                : scan_wal_segment(data, name, name_version, is_last, previous, deliver);
    result.segments.push_back(path);
    result.bytes_read += data.size();
    if (scan.last_version) previous = scan.last_version;
    if (is_last) {
      result.end = scan.end;
      result.newest_segment = path;
      result.newest_segment_records = scan.records;
      result.newest_valid_bytes = scan.valid_bytes;
    }
  }
  result.last_version = previous;
  return result;
}

}  // namespace strata::durability
