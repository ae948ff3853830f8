// cluster/options.hpp: FoundationDB's option encodings and ranges, for what strata sets.
#pragma once

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::cluster {

// FoundationDB's MAX_WATCHES ceiling (fdbclient/vexillographer/fdb.options).
inline constexpr std::size_t kMaxWatchesCeiling = 1'000'000;

// An integer option's value: 8 bytes, little-endian.
inline std::string int_option(std::int64_t value) {
  std::string bytes(8, '\0');
  auto u = static_cast<std::uint64_t>(value);
  for (char& b : bytes) {
    b = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return bytes;
}

// A duration as FoundationDB's timeout and delay options take it: milliseconds up to
// INT_MAX (about 24.8 days), which FoundationDB's client checks (extractIntOption). A
// longer one is as good as none for a transaction that lives at most a few seconds.
inline std::int64_t clamp_ms(std::chrono::milliseconds d) {
  return d.count() > INT_MAX ? INT_MAX : d.count();
}

}  // namespace strata::cluster
