// base/key_compare.hpp: the byte-order comparison every ordered structure uses.
//
// The same order as std::string_view's operator< (unsigned bytes, then length), but
// inline, 8 bytes at a time: skiplist seeks and resolver walks call it at every node they
// visit, and a call to memcmp costs more than the comparison of a short key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace strata::base {

// <0, 0 or >0 as a is before, equal to or after b in unsigned byte order.
inline int key_compare(std::string_view a, std::string_view b) {
  std::size_t n = a.size() < b.size() ? a.size() : b.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  }
  // The last 1-7 bytes of a comparison of 8 or more: the 8 that end at n, overlapping
  // bytes already found equal.
  if (i != n && n >= 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + n - 8, 8);
    std::memcpy(&y, b.data() + n - 8, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    i = n;
  }
  for (; i < n; ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

// a < b in unsigned byte order.
inline bool key_less(std::string_view a, std::string_view b) { return key_compare(a, b) < 0; }

}  // namespace strata::base
