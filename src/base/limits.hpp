// base/limits.hpp: FoundationDB's size limits and the key checks built on them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "strata/error.hpp"

namespace strata::base {

inline constexpr std::size_t kKeySizeLimit = 10'000;
inline constexpr std::size_t kValueSizeLimit = 100'000;
inline constexpr std::size_t kTransactionSizeLimit = 10'000'000;
// Keys at or above this are FoundationDB's system key space.
inline constexpr std::string_view kSystemKeyStart = "\xff";
// key >= kSystemKeyStart, without a memcmp: the key's first byte is 0xff.
inline bool is_system_key(std::string_view key) {
  return !key.empty() && static_cast<unsigned char>(key.front()) == 0xff;
}

// FoundationDB's metadata version key, the one system key every transaction may read,
// watch and add as a read conflict, and write only with a SET_VERSIONSTAMPED_VALUE of
// kMetadataVersionOperand (its value: the 10-byte versionstamp of the commit that wrote
// it). A layer caches what it derives from its data and re-reads when this changes.
inline constexpr std::string_view kMetadataVersionKey = "\xff/metadataVersion";
// A versionstamp at offset 0: ten placeholder bytes and a 4-byte little-endian offset.
inline constexpr std::string_view kMetadataVersionOperand{"\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 14};

// The first key after `key` in byte order: key + '\0'.
inline std::string key_after(std::string_view key) {
  std::string k;
  k.reserve(key.size() + 1);
  k.append(key);
  k.push_back('\0');
  return k;
}

// "key of 12 bytes 'abc...'" for error messages: printable bytes as is, others as \xNN,
// at most 40 bytes shown.
std::string describe_key(std::string_view key);
// The same without the size: "'abc\x00'".
std::string quote_key(std::string_view key);

// Throws key_outside_legal_range (2004) for a key at or above "\xff", but for
// kMetadataVersionKey when `metadata_version_ok` (reads, watches, read conflicts). Inline:
// every get and clear starts with it, and only a system key needs the call.
void check_system_key_readable(std::string_view key, bool metadata_version_ok);
inline void check_readable_key(std::string_view key, bool metadata_version_ok = false) {
  if (is_system_key(key)) [[unlikely]]
    check_system_key_readable(key, metadata_version_ok);
}
// The throws of the checks below, out of line and cold: every write makes the checks, and
// inline they cost a compare each.
[[noreturn, gnu::cold]] void throw_key_too_large(std::string_view key);
[[noreturn, gnu::cold]] void throw_value_too_large(std::size_t size);
// A system key's part of check_writable_key.
void check_system_key_writable(std::string_view key);
// Throws key_too_large (2102) over 10,000 bytes.
inline void check_key_size(std::string_view key) {
  if (key.size() > kKeySizeLimit) [[unlikely]]
    throw_key_too_large(key);
}
// Throws client_invalid_operation (2000): a write to kMetadataVersionKey other than a
// set_versionstamped_value of kMetadataVersionOperand.
[[noreturn]] void refuse_metadata_version_write();
// Also throws key_too_large (2102) over 10,000 bytes (checked first), and
// client_invalid_operation (2000) for kMetadataVersionKey (written only through
// set_versionstamped_value).
inline void check_writable_key(std::string_view key) {
  check_key_size(key);
  if (is_system_key(key)) [[unlikely]]
    check_system_key_writable(key);
}
// Throws value_too_large (2103) over 100,000 bytes.
inline void check_value(std::string_view value) {
  if (value.size() > kValueSizeLimit) [[unlikely]]
    throw_value_too_large(value.size());
}
// Range endpoints may be exactly "\xff" but not beyond (2004); begin > end throws
// inverted_range (2005) when `check_order`. Inline: every range read starts with it, and
// only an order to check or a system key needs the call.
void check_range_fully(std::string_view begin, std::string_view end, bool check_order);
inline void check_range(std::string_view begin, std::string_view end, bool check_order) {
  if (check_order || is_system_key(begin) || is_system_key(end)) {
    check_range_fully(begin, end, check_order);
  }
}
// Whether [begin, end) is exactly one key: end is begin + '\0' (key_after(begin)).
inline bool is_single_key_range(std::string_view begin, std::string_view end) {
  return end.size() == begin.size() + 1 && end.back() == '\0' && end.starts_with(begin);
}
// The longest key a read or a clear looks for: FoundationDB 7.4's getMaxReadKeySize, the
// 10,000-byte limit plus the 8 bytes of a tenant prefix, allowed to every read. A longer
// key cannot exist: get() finds nothing and adds no conflict.
inline constexpr std::size_t kReadKeySizeLimit = kKeySizeLimit + 8;
// The same in the system keyspace: FoundationDB's SYSTEM_KEY_SIZE_LIMIT.
inline constexpr std::size_t kSystemKeySizeLimit = 30'000;
// The end of the system keyspace, where FoundationDB's special keys begin.
inline constexpr std::string_view kSystemKeyEnd = "\xff\xff";
// FoundationDB 7.4's getMaxKeySize: kSystemKeySizeLimit for a key in the system keyspace,
// kReadKeySizeLimit for any other.
inline std::size_t max_key_size(std::string_view key) {
  return is_system_key(key) ? kSystemKeySizeLimit : kReadKeySizeLimit;
}
// A range end longer than max_key_size cut to one byte more, as FoundationDB cuts the ends
// of conflict ranges and cleared ranges (NativeAPI's addReadConflictRange,
// addWriteConflictRange and clear; ReadYourWrites' the same): the cut range holds the same
// keys, and one left empty is dropped. Inline: nearly every end is short, and only one
// longer than kReadKeySizeLimit asks which limit is its own.
inline std::string_view cut_range_end(std::string_view key) {
  if (key.size() <= kReadKeySizeLimit) [[likely]]
    return key;
  const std::size_t limit = max_key_size(key);
  return key.size() > limit ? key.substr(0, limit + 1) : key;
}
// Whether a clear of [begin, end) clears nothing, and so is dropped, as FoundationDB's
// client drops it (NativeAPI's and ReadYourWrites' clear): the range is empty once its ends
// are cut (cut_range_end), begin >= end included.
inline bool clears_nothing(std::string_view begin, std::string_view end) {
  return cut_range_end(begin) >= cut_range_end(end);
}
// The same for a clear of one key: one longer than max_key_size.
inline bool clears_nothing(std::string_view key) { return key.size() > max_key_size(key); }
// The check of an explicit conflict range that may reach into the system keyspace (the C
// API's, under FoundationDB's system-keys options): key_outside_legal_range (2004) for an
// end beyond kSystemKeyEnd, then inverted_range (2005) for begin > end.
void check_system_conflict_range(std::string_view begin, std::string_view end);
// Whether [begin, end) is exactly the metadata version key.
bool is_metadata_version_range(std::string_view begin, std::string_view end);

}  // namespace strata::base
