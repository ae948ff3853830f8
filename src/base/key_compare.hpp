// base/key_compare.hpp: the byte-order comparison every ordered structure uses, and the
// equality test of a point lookup.
//
// The same order as std::string_view's operator< (unsigned bytes, then length), but
// inline, 8 bytes at a time: skiplist seeks and resolver walks call it at every node they
// visit, and a call to memcmp costs more than the comparison of a short key. key_equal is
// std::string_view's operator== the same way: a point lookup (kv/point_index.hpp) tests
// the key of the node it finds.
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

namespace detail {
// Whether the sizeof(Word) bytes at a and at b are equal, as one load from each.
template <class Word>
bool same_word(const char* a, const char* b) {
  Word x, y;
  std::memcpy(&x, a, sizeof x);
  std::memcpy(&y, b, sizeof y);
  return x == y;
}
}  // namespace detail

// a == b, 8 bytes at a time: the last 8 overlap the bytes before when the size is not a
// multiple of 8 (4 and 4 below 8 bytes). Always inlined: every commit's point lookups call
// it, and out of line its call costs about what the comparison does.
[[gnu::always_inline]] inline bool key_equal(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      if (!detail::same_word<std::uint64_t>(p + i, q + i)) return false;
    }
    return detail::same_word<std::uint64_t>(p + n - 8, q + n - 8);
  }
  if (n >= 4) {
    return detail::same_word<std::uint32_t>(p, q) &&
           detail::same_word<std::uint32_t>(p + n - 4, q + n - 4);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != q[i]) return false;
  }
  return true;
}

// a < b in unsigned byte order.
inline bool key_less(std::string_view a, std::string_view b) { return key_compare(a, b) < 0; }

}  // namespace strata::base
