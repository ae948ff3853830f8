// base/coding.hpp: fixed-width little-endian integers and varints, the building blocks of
// strata's file formats (docs/format/*.md).
//
// Fixed-width values are little-endian regardless of the host. Varints are LEB128: seven
// bits per byte, least significant group first, high bit set on every byte but the last
// (at most 5 bytes for 32 bits, 10 for 64 bits).
//
// Decoding is bounds-checked: get_* functions return false (and consume nothing) when the
// input is too short or a varint is overlong; the *_or_throw forms throw
// Error(corrupt_data) with the caller's description of where the bytes came from.
//
// Thread safety: pure functions on caller-owned buffers.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "strata/error.hpp"

namespace strata::base {

namespace coding_detail {
template <typename T>
inline T to_little_endian(T v) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    return v;
  } else {
    T r = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      r = static_cast<T>((r << 8) | (v & 0xFF));
      v = static_cast<T>(v >> 8);
    }
    return r;
  }
}
}  // namespace coding_detail

// Writes the value at dst[0, sizeof(T)). REQUIRES: dst has room for sizeof(T) bytes.
template <typename T>
inline void encode_fixed(char* dst, T value) noexcept {
  const T le = coding_detail::to_little_endian(value);
  std::memcpy(dst, &le, sizeof le);
}
// Reads a value from src[0, sizeof(T)). REQUIRES: src has sizeof(T) readable bytes.
template <typename T>
inline T decode_fixed(const char* src) noexcept {
  T le;
  std::memcpy(&le, src, sizeof le);
  return coding_detail::to_little_endian(le);
}

inline void encode_fixed16(char* dst, std::uint16_t v) noexcept { encode_fixed(dst, v); }
inline void encode_fixed32(char* dst, std::uint32_t v) noexcept { encode_fixed(dst, v); }
inline void encode_fixed64(char* dst, std::uint64_t v) noexcept { encode_fixed(dst, v); }
inline std::uint16_t decode_fixed16(const char* src) noexcept {
  return decode_fixed<std::uint16_t>(src);
}
inline std::uint32_t decode_fixed32(const char* src) noexcept {
  return decode_fixed<std::uint32_t>(src);
}
inline std::uint64_t decode_fixed64(const char* src) noexcept {
  return decode_fixed<std::uint64_t>(src);
}

// Appends the fixed-width encoding to dst.
inline void put_fixed16(std::string& dst, std::uint16_t v) {
  char buf[2];
  encode_fixed16(buf, v);
  dst.append(buf, sizeof buf);
}
inline void put_fixed32(std::string& dst, std::uint32_t v) {
  char buf[4];
  encode_fixed32(buf, v);
  dst.append(buf, sizeof buf);
}
inline void put_fixed64(std::string& dst, std::uint64_t v) {
  char buf[8];
  encode_fixed64(buf, v);
  dst.append(buf, sizeof buf);
}

// Reads a fixed-width value from the front of `input` and advances it. Returns false,
// leaving `input` unchanged, when fewer than sizeof(T) bytes remain.
template <typename T>
[[nodiscard]] inline bool get_fixed(std::string_view& input, T& value) noexcept {
  if (input.size() < sizeof(T)) return false;
  value = decode_fixed<T>(input.data());
  input.remove_prefix(sizeof(T));
  return true;
}
[[nodiscard]] inline bool get_fixed16(std::string_view& in, std::uint16_t& v) noexcept {
  return get_fixed(in, v);
}
[[nodiscard]] inline bool get_fixed32(std::string_view& in, std::uint32_t& v) noexcept {
  return get_fixed(in, v);
}
[[nodiscard]] inline bool get_fixed64(std::string_view& in, std::uint64_t& v) noexcept {
  return get_fixed(in, v);
}

inline constexpr std::size_t kMaxVarint32Bytes = 5;
inline constexpr std::size_t kMaxVarint64Bytes = 10;

// Writes the varint encoding of v at dst and returns the number of bytes written.
// REQUIRES: dst has room for kMaxVarint64Bytes.
inline std::size_t encode_varint64(char* dst, std::uint64_t v) noexcept {
  std::size_t n = 0;
  while (v >= 0x80) {
    dst[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  dst[n++] = static_cast<char>(v);
  return n;
}
inline void put_varint64(std::string& dst, std::uint64_t v) {
  char buf[kMaxVarint64Bytes];
  dst.append(buf, encode_varint64(buf, v));
}
inline void put_varint32(std::string& dst, std::uint32_t v) { put_varint64(dst, v); }
// The encoded size of v.
inline std::size_t varint_length(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Decodes a varint of at most `max_bytes` bytes whose value fits in `bits` bits from the
// front of `input` and advances it. Returns false, leaving `input` unchanged, on
// truncation, an overlong encoding or a value that does not fit.
[[nodiscard]] inline bool get_varint(std::string_view& input, std::uint64_t& value,
                                     unsigned bits) noexcept {
  std::uint64_t result = 0;
  const std::size_t limit = (bits + 6) / 7;
  for (std::size_t i = 0; i < input.size() && i < limit; ++i) {
    const auto byte = static_cast<std::uint8_t>(input[i]);
    const auto shift = static_cast<unsigned>(7 * i);
    const std::uint64_t group = byte & 0x7Fu;
    if (shift + 7 > bits && (group >> (bits - shift)) != 0) return false;  // Too wide.
    result |= group << shift;
    if ((byte & 0x80u) == 0) {
      value = result;
      input.remove_prefix(i + 1);
      return true;
    }
  }
  return false;  // Truncated, or more than `limit` bytes.
}
[[nodiscard]] inline bool get_varint32(std::string_view& input, std::uint32_t& value) noexcept {
  std::uint64_t v = 0;
  if (!get_varint(input, v, 32)) return false;
  value = static_cast<std::uint32_t>(v);
  return true;
}
[[nodiscard]] inline bool get_varint64(std::string_view& input, std::uint64_t& value) noexcept {
  return get_varint(input, value, 64);
}

// Throwing forms: `where` describes the position for the message, e.g.
// "checkpoint-...ckpt at offset 4096". Throw Error(corrupt_data).
inline std::uint32_t get_varint32_or_throw(std::string_view& input, std::string_view where) {
  std::uint32_t v = 0;
  if (!get_varint32(input, v)) {
    throw Error(ErrorCode::corrupt_data, std::string(where) + ": truncated or invalid varint32");
  }
  return v;
}
inline std::uint64_t get_varint64_or_throw(std::string_view& input, std::string_view where) {
  std::uint64_t v = 0;
  if (!get_varint64(input, v)) {
    throw Error(ErrorCode::corrupt_data, std::string(where) + ": truncated or invalid varint64");
  }
  return v;
}

}  // namespace strata::base
