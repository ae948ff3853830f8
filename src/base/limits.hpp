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

// Throws key_outside_legal_range (2004) for a key at or above "\xff".
void check_readable_key(std::string_view key);
// Also throws key_too_large (2102) over 10,000 bytes.
void check_writable_key(std::string_view key);
// Throws value_too_large (2103) over 100,000 bytes.
void check_value(std::string_view value);
// Range endpoints may be exactly "\xff" but not beyond (2004); begin > end throws
// inverted_range (2005) when `check_order`.
void check_range(std::string_view begin, std::string_view end, bool check_order);

}  // namespace strata::base
