// base/copy_bytes.hpp: copies of key-sized byte strings without a call to memmove.
//
// Thread safety: none needed (pure functions).
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace strata::base {

// N bytes from `from` to `to`, as one load and one store.
template <std::size_t N>
void copy_chunk(char* to, const char* from) {
  struct Chunk {
    char bytes[N];
  } chunk;
  std::memcpy(&chunk, from, N);
  std::memcpy(to, &chunk, N);
}

// Copies `from` to `to` (which must not overlap it). A key of 8 to 64 bytes (most are) is
// copied inline, in chunks from its start and from its end that overlap in the middle: a
// copy of unknown size would call memmove, whose call costs more than such a copy. Always
// inlined: out of line, its call would cost as much.
[[gnu::always_inline]] inline void copy_key_bytes(char* to, std::string_view from) {
  const char* p = from.data();
  const std::size_t n = from.size();
  if (n >= 16 && n <= 64) {
    copy_chunk<16>(to, p);
    copy_chunk<16>(to + n - 16, p + n - 16);
    if (n > 32) {
      copy_chunk<16>(to + 16, p + 16);
      copy_chunk<16>(to + n - 32, p + n - 32);
    }
  } else if (n >= 8 && n < 16) {
    copy_chunk<8>(to, p);
    copy_chunk<8>(to + n - 8, p + n - 8);
  } else if (n != 0) {
    std::memcpy(to, p, n);
  }
}

}  // namespace strata::base
