// base/copy_string.hpp: a value copied into a caller's reused string.
//
// Readers that hand values out into the caller's string (Transaction::get's `out`, the
// recipes' pops) are called again and again with the same string, which then already has
// the value's size: one copy in place, without std::string::assign's general path
// (aliasing checks, growth policy), which costs more than copying a value of a hundred
// bytes. Another size takes the general path, out of line so that callers stay small.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

namespace strata::base {

// copy_into's other case: `to` of another size. One too small is replaced by a copy made
// at from's size (made before `to` is touched: a failed allocation leaves `to` as it
// was), rather than grown and then overwritten.
[[gnu::noinline]] inline void copy_resized(std::string& to, std::string_view from) {
  if (to.capacity() < from.size()) {
    to = std::string(from);
  } else {
    to.assign(from);
  }
}

// to = from. REQUIRES: `from` does not point into `to`.
inline void copy_into(std::string& to, std::string_view from) {
  if (to.size() != from.size()) [[unlikely]] {
    copy_resized(to, from);
    return;
  }
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size());
}

}  // namespace strata::base
