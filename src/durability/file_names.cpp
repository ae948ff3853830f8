// durability/file_names.cpp: formatting and parsing of database file names.
#include "durability/file_names.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace strata::durability {
namespace {

constexpr std::size_t kVersionDigits = 20;
constexpr std::string_view kWalPrefix = "wal-";
constexpr std::string_view kWalSuffix = ".log";
constexpr std::string_view kCheckpointPrefix = "checkpoint-";
constexpr std::string_view kCheckpointSuffix = ".ckpt";
constexpr std::string_view kTempSuffix = ".ckpt.tmp";

std::string padded(Version version) {
  std::string digits = std::to_string(static_cast<std::uint64_t>(version));
  return std::string(kVersionDigits - digits.size(), '0') + digits;
}

// Parses `prefix` + 20 digits + `suffix`; returns false on any mismatch.
bool parse_versioned(std::string_view name, std::string_view prefix, std::string_view suffix,
                     Version& version) {
  if (name.size() != prefix.size() + kVersionDigits + suffix.size()) return false;
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return false;
  const std::string_view digits = name.substr(prefix.size(), kVersionDigits);
  std::uint64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return false;
  if (value > static_cast<std::uint64_t>(std::numeric_limits<Version>::max())) return false;
  version = static_cast<Version>(value);
  return true;
}

}  // namespace

std::string wal_file_name(Version first_version) {
  return std::string(kWalPrefix) + padded(first_version) + std::string(kWalSuffix);
}

std::string checkpoint_file_name(Version version) {
  return std::string(kCheckpointPrefix) + padded(version) + std::string(kCheckpointSuffix);
}

std::string checkpoint_temp_file_name(Version version) {
  return std::string(kCheckpointPrefix) + padded(version) + std::string(kTempSuffix);
}

ParsedFileName parse_file_name(std::string_view name) {
  ParsedFileName parsed;
  if (name == kLockFileName) {
    parsed.kind = FileKind::lock;
  } else if (parse_versioned(name, kWalPrefix, kWalSuffix, parsed.version)) {
    parsed.kind = FileKind::wal_segment;
  } else if (parse_versioned(name, kCheckpointPrefix, kCheckpointSuffix, parsed.version)) {
    parsed.kind = FileKind::checkpoint;
  } else if (parse_versioned(name, kCheckpointPrefix, kTempSuffix, parsed.version)) {
    parsed.kind = FileKind::checkpoint_temp;
  } else {
    parsed = {};
  }
  return parsed;
}

}  // namespace strata::durability
