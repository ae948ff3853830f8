// tuple_codec.hpp: FoundationDB tuple bytes <-> Tuple (spec: docs/tuple.md).
//
// Grammar (all multi-byte numbers big-endian):
//   tuple    := element*                       (no header, no terminator)
//   element  := 00                             null (top level)
//             | 01 escaped 00                  byte string; escaped = bytes, each 00 as 00 FF
//             | 02 escaped 00                  unicode string, UTF-8
//             | 05 child* 00                   nested tuple; child = element | 00 FF (null)
//             | 0B (L xor FF) ~mag[L]          negative integer, 9 <= L <= 255
//             | (14-L) ~mag[L]                 negative integer, 1 <= L <= 8
//             | 14                             zero
//             | (14+L) mag[L]                  positive integer, 1 <= L <= 8
//             | 1D L mag[L]                    positive integer, 9 <= L <= 255
//             | 20 f32[4] | 21 f64[8]          IEEE bits; negative: all bits flipped,
//                                              else only the sign bit
//             | 26 | 27                        false, true
//             | 30 uuid[16] | 33 tr[10] user[2]
// The encoder emits the minimal form (so +-(2^64-1) use 1C/0C); the decoder also accepts
// non-minimal integer forms (1D/0B with any length, leading zero bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/tuple.hpp"

namespace strata::tuple_detail {

inline constexpr std::uint8_t kCodeNull = 0x00;
inline constexpr std::uint8_t kCodeBytes = 0x01;
inline constexpr std::uint8_t kCodeString = 0x02;
inline constexpr std::uint8_t kCodeNested = 0x05;
inline constexpr std::uint8_t kCodeNegBig = 0x0b;
inline constexpr std::uint8_t kCodeIntZero = 0x14;
inline constexpr std::uint8_t kCodePosBig = 0x1d;
inline constexpr std::uint8_t kCodeFloat = 0x20;
inline constexpr std::uint8_t kCodeDouble = 0x21;
inline constexpr std::uint8_t kCodeFalse = 0x26;
inline constexpr std::uint8_t kCodeTrue = 0x27;
inline constexpr std::uint8_t kCodeUuid = 0x30;
inline constexpr std::uint8_t kCodeVersionstamp = 0x33;
inline constexpr std::uint8_t kEscapeByte = 0xff;

// Nested tuples deeper than this are refused by both pack and unpack (keeps the recursion
// bounded on hostile input).
inline constexpr int kMaxNesting = 256;

// How pack_into treats incomplete versionstamps.
enum class StampMode {
  reject,         // none allowed (Tuple::pack)
  append_offset,  // exactly one; append its 4-byte little-endian offset in `out`
};

// Appends t packed to `out`. The versionstamp offset counts from the start of `out`, so
// a prefix already in `out` is included. Throws Error(invalid_argument) on an incomplete
// stamp count that `mode` forbids, a string that is not UTF-8, or a nesting deeper than
// kMaxNesting. On a throw, `out` holds a partial encoding.
void pack_into(std::string& out, const Tuple& t, StampMode mode);

// Single elements written at `out` byte for byte as pack_into writes them, for a layer that
// builds keys of one fixed shape in place, without a Tuple or a string to append to. Each
// returns the end of what it wrote. REQUIRES: room for kMaxIntSize bytes (an integer) or
// max_bytes_size(bytes.size()) (a byte string).
inline constexpr std::size_t kMaxIntSize = kMaxPackedIntSize;
constexpr std::size_t max_bytes_size(std::size_t n) { return max_packed_bytes_size(n); }
char* write_int(char* out, std::int64_t v);
char* write_bytes(char* out, std::string_view bytes);
// Any element, as pack_into(out, Tuple{e}, StampMode::reject) would append it (and throws
// what it would).
void append_element(std::string& out, const Element& e);

// An upper bound of t's packed size in most cases (strings with many zero bytes need
// more); used to reserve once.
std::size_t estimate_packed_size(const Tuple& t);

// Decodes a whole packed tuple. Throws Error(invalid_tuple) naming the offset (plus
// base_offset, for callers that stripped a prefix) and the type code of the bad element.
Tuple unpack_from(std::string_view bytes, std::size_t base_offset);

// unpack_from(bytes, base_offset)[0], decoding nothing after the first element (a layer
// that needs one field of a key of known shape: no Tuple, no copies of the other fields).
// Throws as unpack_from does for a bad first element, or Error(invalid_tuple) when `bytes`
// is empty; bytes after the first element are not checked.
Element unpack_first(std::string_view bytes, std::size_t base_offset);

// The order key of a float or double: the encoded bits as an unsigned number.
inline std::uint32_t float_order_bits(std::uint32_t bits) {
  return (bits & 0x80000000u) ? ~bits : (bits ^ 0x80000000u);
}
inline std::uint64_t double_order_bits(std::uint64_t bits) {
  return (bits & 0x8000000000000000u) ? ~bits : (bits ^ 0x8000000000000000u);
}

}  // namespace strata::tuple_detail
