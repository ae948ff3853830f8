#include "base/limits.hpp"

#include <cstdio>

namespace strata::base {

std::string describe_key(std::string_view key) {
  return "key of " + std::to_string(key.size()) + " bytes " + quote_key(key);
}

std::string quote_key(std::string_view key) {
  std::string out = "'";
  std::size_t shown = key.size() < 40 ? key.size() : 40;
  for (std::size_t i = 0; i < shown; ++i) {
    auto c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (shown < key.size()) out += "...";
  out += "'";
  return out;
}

void check_system_key_readable(std::string_view key, bool metadata_version_ok) {
  if (is_system_key(key) && !(metadata_version_ok && key == kMetadataVersionKey)) {
    throw Error(ErrorCode::key_outside_legal_range,
                describe_key(key) + " is in the system key space (at or above \\xff)");
  }
}

void throw_key_too_large(std::string_view key) {
  throw Error(ErrorCode::key_too_large, describe_key(key) + " exceeds the limit of " +
                                            std::to_string(kKeySizeLimit) + " bytes");
}

void check_system_key_writable(std::string_view key) {
  if (key == kMetadataVersionKey) refuse_metadata_version_write();
  check_readable_key(key);
}

void refuse_metadata_version_write() {
  // As FoundationDB: a misuse, not a range error.
  throw Error(ErrorCode::client_invalid_operation,
              "\\xff/metadataVersion is written only by a set_versionstamped_value of 14 zero "
              "bytes");
}

void throw_value_too_large(std::size_t size) {
  throw Error(ErrorCode::value_too_large, "value of " + std::to_string(size) +
                                              " bytes exceeds the limit of " +
                                              std::to_string(kValueSizeLimit) + " bytes");
}

void check_range_fully(std::string_view begin, std::string_view end, bool check_order) {
  for (std::string_view k : {begin, end}) {
    if (k.size() > kSystemKeyStart.size() && is_system_key(k)) {  // k > kSystemKeyStart
      throw Error(ErrorCode::key_outside_legal_range,
                  "range endpoint " + describe_key(k) + " is beyond \\xff");
    }
  }
  if (check_order && begin > end) {
    throw Error(ErrorCode::inverted_range,
                "range begin " + describe_key(begin) + " is after end " + describe_key(end));
  }
}

void check_system_conflict_range(std::string_view begin, std::string_view end) {
  for (std::string_view k : {begin, end}) {
    if (k > kSystemKeyEnd) {
      throw Error(ErrorCode::key_outside_legal_range,
                  "range endpoint " + describe_key(k) + " is beyond \\xff\\xff");
    }
  }
  if (begin > end) {
    throw Error(ErrorCode::inverted_range,
                "range begin " + describe_key(begin) + " is after end " + describe_key(end));
  }
}

bool is_metadata_version_range(std::string_view begin, std::string_view end) {
  return begin == kMetadataVersionKey && is_single_key_range(begin, end);
}

}  // namespace strata::base
