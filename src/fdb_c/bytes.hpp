// fdb_c/bytes.hpp: C API (pointer, length) arguments as string views.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::fdb_c {

// A negative length reads as empty, as no key or value can be shorter.
inline std::string_view bytes(const uint8_t* data, int length) {
  if (data == nullptr || length <= 0) return {};
  return {reinterpret_cast<const char*>(data), static_cast<std::size_t>(length)};
}

// The first key after `key` in byte order.
inline std::string key_after(std::string_view key) {
  std::string next(key);
  next.push_back('\0');
  return next;
}

}  // namespace strata::fdb_c
