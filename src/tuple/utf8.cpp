// Implements utf8.hpp (the well-formed byte sequences of Unicode 15, table 3-7).
#include "tuple/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace strata::tuple_detail {

namespace {

// The length of the sequence starting with `lead` and the allowed range of its second
// byte; length 0 for a byte that cannot start a sequence.
struct Lead {
  std::size_t length;
  unsigned char low, high;
};

Lead classify(unsigned char lead) {
  if (lead >= 0xc2 && lead <= 0xdf) return {2, 0x80, 0xbf};
  if (lead == 0xe0) return {3, 0xa0, 0xbf};  // no overlong forms
  if (lead == 0xed) return {3, 0x80, 0x9f};  // no surrogates
  if (lead >= 0xe1 && lead <= 0xef) return {3, 0x80, 0xbf};
  if (lead == 0xf0) return {4, 0x90, 0xbf};  // no overlong forms
  if (lead == 0xf4) return {4, 0x80, 0x8f};  // nothing above U+10FFFF
  if (lead >= 0xf1 && lead <= 0xf3) return {4, 0x80, 0xbf};
  return {0, 0, 0};
}

}  // namespace

std::size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    if (n - i >= 8) {  // ASCII fast path, eight bytes at a time
      std::uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080u) == 0) {
        i += 8;
        continue;
      }
    }
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const Lead lead = classify(p[i]);
    if (lead.length == 0 || n - i < lead.length) return i;
    if (p[i + 1] < lead.low || p[i + 1] > lead.high) return i;
    for (std::size_t k = 2; k < lead.length; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return i;
    }
    i += lead.length;
  }
  return std::string_view::npos;
}

}  // namespace strata::tuple_detail
