// strata/tuple.hpp: FoundationDB's tuple encoding, byte for byte (docs/tuple.md).
//
// A Tuple is an ordered list of Elements. pack() turns it into bytes whose unsigned
// lexicographic order (memcmp, shorter first on a tie) equals the tuple order
// (operator<=>); unpack() turns such bytes back into the Tuple.
//
// Element types and their type codes: null 0x00, Bytes 0x01, std::string (UTF-8) 0x02,
// nested Tuple 0x05, integers 0x0b..0x1d, float 0x20, double 0x21, false 0x26, true 0x27,
// Uuid 0x30, Versionstamp 0x33.
//
// Errors: unpack() throws Error(invalid_tuple) naming the byte offset and type code of the
// malformed element; misuse (bad BigInt text, pack() with an incomplete versionstamp,
// get<T>() of the wrong type) throws Error(invalid_argument).
//
// Thread safety: all types here are values. Concurrent const access is safe; a nested
// Tuple inside an Element is shared immutably between copies.
#pragma once

#include <array>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "strata/error.hpp"

namespace strata {

// A byte string (type code 0x01), as Python's `bytes`.
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes&, const Bytes&) = default;
  friend auto operator<=>(const Bytes&, const Bytes&) = default;
};

// An RFC 4122 UUID (type code 0x30); the bytes are in network order.
struct Uuid {
  std::array<std::uint8_t, 16> bytes{};
  friend bool operator==(const Uuid&, const Uuid&) = default;
  friend auto operator<=>(const Uuid&, const Uuid&) = default;
};

// A 96-bit versionstamp (type code 0x33): the 10-byte transaction version (8-byte
// big-endian commit version, 2-byte big-endian batch number) and a user version.
// The default value is incomplete: ten 0xFF bytes, to be filled in at commit through
// pack_with_versionstamp() and a versionstamped-key mutation.
struct Versionstamp {
  std::array<std::uint8_t, 10> tr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::uint16_t user = 0;

  // False when all ten transaction-version bytes are 0xFF.
  bool complete() const;
  static Versionstamp incomplete(std::uint16_t user = 0);
  friend bool operator==(const Versionstamp&, const Versionstamp&) = default;
  friend auto operator<=>(const Versionstamp&, const Versionstamp&) = default;
};

// A signed integer of any size whose magnitude fits the tuple encoding's limit of 255
// bytes (codes 0x0b and 0x1d beyond 64 bits). unpack() produces a BigInt only for values
// outside both int64_t and uint64_t; a BigInt holding a small value still packs to the
// minimal integer form and equals the int64_t/uint64_t element of the same value.
class BigInt {
 public:
  // Zero.
  BigInt() = default;
  // Optional '-' then one or more decimal digits, e.g. "-18446744073709551617".
  // Throws Error(invalid_argument) on any other text or a magnitude above 255 bytes.
  explicit BigInt(std::string_view decimal);
  explicit BigInt(std::int64_t value);
  // `magnitude` is big-endian, leading zero bytes allowed. Throws Error(invalid_argument)
  // if it holds more than 255 significant bytes. A zero magnitude is never negative.
  static BigInt from_magnitude(bool negative, std::string_view magnitude);

  // Decimal text, "-" for negative values, no leading zeros ("0" for zero).
  std::string to_string() const;
  bool negative() const { return negative_; }
  // Big-endian, without leading zero bytes; empty for zero.
  const std::string& magnitude() const { return magnitude_; }

  friend bool operator==(const BigInt&, const BigInt&) = default;
  // Numeric order.
  friend std::strong_ordering operator<=>(const BigInt& a, const BigInt& b);

 private:
  bool negative_ = false;
  std::string magnitude_;
};

class Tuple;

// One tuple element; a value type. The stored C++ type is the one it was built from
// (is<T>() and get<T>() use it), but equality and order follow the packed bytes: two
// elements are equal iff they pack to the same bytes. So integer elements compare by
// numeric value whatever their C++ type (int64_t 5 == uint64_t 5 == BigInt("5")), while
// floats compare by exact bits (-0.0 != +0.0; a NaN equals a NaN with the same bits).
class Element {
 private:
  template <class T>
  static constexpr bool kIsElementType =
      std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, Bytes> ||
      std::is_same_v<T, std::string> || std::is_same_v<T, std::int64_t> ||
      std::is_same_v<T, std::uint64_t> || std::is_same_v<T, BigInt> || std::is_same_v<T, float> ||
      std::is_same_v<T, double> || std::is_same_v<T, bool> || std::is_same_v<T, Uuid> ||
      std::is_same_v<T, Tuple> || std::is_same_v<T, Versionstamp>;
  // One clear message, not the variant's, for a type an Element never holds.
  template <class T>
  static constexpr void check_element_type() {
    static_assert(kIsElementType<T>,
                  "an Element holds std::nullptr_t, Bytes, std::string, std::int64_t, "
                  "std::uint64_t, BigInt, float, double, bool, Uuid, Tuple or Versionstamp; "
                  "integers are std::int64_t (or std::uint64_t): ask for get<std::int64_t>(), "
                  "not get<int>()");
  }

 public:
  // Null.
  Element() = default;
  Element(std::nullptr_t) {}
  Element(Bytes b) : value_(std::move(b)) {}
  // Unicode strings (code 0x02). REQUIRES: valid UTF-8, else pack() throws invalid_argument.
  // A null `s` throws Error(invalid_argument).
  Element(const char* s);
  Element(std::string s) : value_(std::move(s)) {}
  Element(std::string_view s) : value_(std::string(s)) {}
  // Signed and narrower unsigned integers become int64_t; 64-bit unsigned become uint64_t.
  template <std::integral T>
  requires(!std::same_as<T, bool> && sizeof(T) <= 8) Element(T v) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
      value_ = static_cast<std::uint64_t>(v);
    } else {
      value_ = static_cast<std::int64_t>(v);
    }
  }
  Element(BigInt v) : value_(std::move(v)) {}
  Element(float v) : value_(v) {}
  Element(double v) : value_(v) {}
  Element(bool v) : value_(v) {}
  Element(Uuid v) : value_(v) {}
  // A nested tuple (code 0x05). Copies of this Element share it.
  Element(Tuple t);
  Element(Versionstamp v) : value_(v) {}

  // T is one of: std::nullptr_t, Bytes, std::string, std::int64_t, std::uint64_t, BigInt,
  // float, double, bool, Uuid, Tuple, Versionstamp (any other type does not compile).
  template <class T>
  [[nodiscard]] bool is() const {
    check_element_type<T>();
    if constexpr (!kIsElementType<T>) {
      return false;
    } else if constexpr (std::is_same_v<T, Tuple>) {
      return std::holds_alternative<NestedPtr>(value_);
    } else {
      return std::holds_alternative<T>(value_);
    }
  }
  // Throws Error(invalid_argument) naming both types unless is<T>(). The reference lives as
  // long as this Element (for a Tuple: as long as any copy of it).
  template <class T>
  [[nodiscard]] const T& get() const {
    check_element_type<T>();
    if constexpr (!kIsElementType<T>) {
      throw_wrong_type("?");  // not compiled: the assertion above fails first
    } else {
      if (!is<T>()) throw_wrong_type(name_of<T>());
      if constexpr (std::is_same_v<T, Tuple>) {
        return *std::get<NestedPtr>(value_);
      } else {
        return std::get<T>(value_);
      }
    }
  }

  // The C++ type held, as a short name ("int64", "bytes", "tuple", ...).
  std::string_view type_name() const;

  friend bool operator==(const Element& a, const Element& b);
  // The order of the packed bytes.
  friend std::strong_ordering operator<=>(const Element& a, const Element& b);

  using NestedPtr = std::shared_ptr<const Tuple>;
  using Value = std::variant<std::nullptr_t, Bytes, std::string, std::int64_t, std::uint64_t,
                             BigInt, float, double, bool, Uuid, NestedPtr, Versionstamp>;
  // The raw storage, for the codec.
  const Value& value() const { return value_; }

 private:
  template <class T>
  static constexpr std::string_view name_of() {
    if constexpr (std::is_same_v<T, std::nullptr_t>)
      return "null";
    else if constexpr (std::is_same_v<T, Bytes>)
      return "bytes";
    else if constexpr (std::is_same_v<T, std::string>)
      return "string";
    else if constexpr (std::is_same_v<T, std::int64_t>)
      return "int64";
    else if constexpr (std::is_same_v<T, std::uint64_t>)
      return "uint64";
    else if constexpr (std::is_same_v<T, BigInt>)
      return "bigint";
    else if constexpr (std::is_same_v<T, float>)
      return "float";
    else if constexpr (std::is_same_v<T, double>)
      return "double";
    else if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_same_v<T, Uuid>)
      return "uuid";
    else if constexpr (std::is_same_v<T, Tuple>)
      return "tuple";
    else
      return "versionstamp";
  }
  [[noreturn]] void throw_wrong_type(std::string_view wanted) const;

  Value value_;
};

class Tuple {
 public:
  Tuple() = default;
  // Tuple{"P", 7, Bytes{...}}.
  Tuple(std::initializer_list<Element> elements) : elements_(elements) {}
  // A braced list of Tuples only. Exactly one copies it (Tuple{t} is a copy of t, as for
  // any value type); two or more become nested elements. To nest a single tuple write
  // Tuple{Element(inner)} or append(inner).
  template <std::same_as<Tuple> T>
  Tuple(std::initializer_list<T> tuples) {
    if (tuples.size() == 1) {
      elements_ = tuples.begin()->elements_;
      return;
    }
    for (const Tuple& t : tuples) elements_.emplace_back(t);
  }
  explicit Tuple(std::vector<Element> elements) : elements_(std::move(elements)) {}

  Tuple& append(Element e);
  std::size_t size() const { return elements_.size(); }
  bool empty() const { return elements_.empty(); }
  // REQUIRES: i < size().
  const Element& operator[](std::size_t i) const { return elements_[i]; }
  std::vector<Element>::const_iterator begin() const { return elements_.begin(); }
  std::vector<Element>::const_iterator end() const { return elements_.end(); }

  // The packed bytes. Throws Error(invalid_argument) if the tuple holds an incomplete
  // Versionstamp (use pack_with_versionstamp), a string that is not UTF-8, or a nesting
  // deeper than 256.
  [[nodiscard]] std::string pack() const;
  // pack() plus the 4-byte little-endian offset of the incomplete stamp's first byte.
  // Throws Error(invalid_argument) unless exactly one incomplete Versionstamp is present
  // (nested tuples included).
  [[nodiscard]] std::string pack_with_versionstamp() const;
  // Throws Error(invalid_tuple) on malformed bytes, naming the offset and type code.
  // Integers come back as int64_t when they fit, else uint64_t when they fit, else BigInt.
  [[nodiscard]] static Tuple unpack(std::string_view bytes);

  friend bool operator==(const Tuple& a, const Tuple& b);
  // Equals the order of pack(a) and pack(b) as unsigned byte strings.
  friend std::strong_ordering operator<=>(const Tuple& a, const Tuple& b);

 private:
  std::vector<Element> elements_;
};

// Tuple pieces for a layer that builds keys of one fixed shape in a buffer it keeps (the
// queue recipes' item keys): each writes the bytes one element packs to inside a tuple, so
// a prefix followed by elements e1, e2 so written is prefix + Tuple{e1, e2}.pack(). No
// Tuple is built, and nothing is allocated once the buffer has the room.
// append_packed appends `e` to `out`, and throws as Tuple::pack().
void append_packed(std::string& out, const Element& e);
// pack_int_at and pack_bytes_at write an integer (as Element(v)) or a byte string (as
// Element(Bytes)) at `out`, in place, and return the end of what they wrote. REQUIRES:
// room for kMaxPackedIntSize bytes, or max_packed_bytes_size(bytes.size()), at `out`.
inline constexpr std::size_t kMaxPackedIntSize = 9;  // a code and up to 8 bytes
constexpr std::size_t max_packed_bytes_size(std::size_t n) { return 2 + 2 * n; }  // all 00s
char* pack_int_at(char* out, std::int64_t v);
char* pack_bytes_at(char* out, std::string_view bytes);
// The first element of packed tuple bytes, decoded without the elements after it (an
// integer allocates nothing): Tuple::unpack(bytes)[0] when the whole is well formed. Throws
// Error(invalid_tuple) as Tuple::unpack for a malformed or missing first element; the
// offsets it names count from `base_offset` (the size of a prefix the caller took off).
[[nodiscard]] Element unpack_first(std::string_view bytes, std::size_t base_offset = 0);

}  // namespace strata
