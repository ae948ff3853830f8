// The decoding half of tuple_codec.hpp. Every read is bounds-checked; every failure is an
// Error(invalid_tuple) naming the offset and type code of the element that was bad.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "strata/error.hpp"
#include "strata/tuple.hpp"

#include "tuple/tuple_codec.hpp"
#include "tuple/utf8.hpp"

namespace strata::tuple_detail {

namespace {

// n as an Element: int64_t when it fits, else uint64_t (positive) or BigInt (negative).
Element make_integer(bool negative, std::uint64_t magnitude) {
  constexpr std::uint64_t kInt64Limit = std::uint64_t{1} << 63;
  if (!negative) {
    if (magnitude < kInt64Limit) return Element(static_cast<std::int64_t>(magnitude));
    return Element(magnitude);
  }
  if (magnitude <= kInt64Limit) return Element(static_cast<std::int64_t>(0 - magnitude));
  char buf[8];
  for (int i = 7; i >= 0; --i, magnitude >>= 8) buf[i] = static_cast<char>(magnitude & 0xff);
  return Element(BigInt::from_magnitude(true, std::string_view(buf, 8)));
}

class Decoder {
 public:
  Decoder(std::string_view bytes, std::size_t base)
      : data_(reinterpret_cast<const unsigned char*>(bytes.data())),
        size_(bytes.size()),
        base_(base) {}

  std::vector<Element> top_level() {
    std::vector<Element> out;
    out.reserve(std::min<std::size_t>(size_, 4));
    while (pos_ < size_) out.push_back(element(0));
    return out;
  }

  Element first() {
    if (size_ == 0) {
      throw Error(ErrorCode::invalid_tuple,
                  "the empty tuple at offset " + std::to_string(base_) + " has no first element");
    }
    return element(0);
  }

 private:
  // The element starting at pos_, at nesting `depth` (0 = top level).
  Element element(int depth) {
    const std::size_t start = pos_;
    const std::uint8_t code = data_[pos_++];
    if (code >= 0x0c && code <= 0x1c) return fixed_integer(start, code);
    switch (code) {
      case kCodeNull:
        return Element(nullptr);
      case kCodeBytes:
        return Element(Bytes{escaped(start, code)});
      case kCodeString:
        return unicode(start);
      case kCodeNested:
        return nested(start, depth);
      case kCodeNegBig:
      case kCodePosBig:
        return big_integer(start, code);
      case kCodeFloat:
        return Element(std::bit_cast<float>(
            static_cast<std::uint32_t>(float_order_bits_inverse(read_be(start, code, 4)))));
      case kCodeDouble:
        return Element(std::bit_cast<double>(double_order_bits_inverse(read_be(start, code, 8))));
      case kCodeFalse:
        return Element(false);
      case kCodeTrue:
        return Element(true);
      case kCodeUuid: {
        Uuid u;
        std::memcpy(u.bytes.data(), take(start, code, 16, "truncated UUID"), 16);
        return Element(u);
      }
      case kCodeVersionstamp:
        return versionstamp(start);
      case kEscapeByte:
        fail("escape byte 0xff where an element must start", start, code,
             depth == 0 ? "0xff never starts an element; 00 ff is a null only inside a nested "
                          "tuple"
                        : "0xff never starts an element");
      default:
        fail("unknown type code", start, code);
    }
  }

  Element nested(std::size_t start, int depth) {
    if (depth + 1 > kMaxNesting) {
      fail("nested tuple too deep", start, kCodeNested,
           "more than " + std::to_string(kMaxNesting) + " levels");
    }
    std::vector<Element> children;
    children.reserve(4);
    while (pos_ < size_) {
      if (data_[pos_] == 0x00) {
        if (pos_ + 1 < size_ && data_[pos_ + 1] == kEscapeByte) {
          children.emplace_back(nullptr);
          pos_ += 2;
          continue;
        }
        ++pos_;  // the terminator
        return Element(Tuple(std::move(children)));
      }
      children.push_back(element(depth + 1));
    }
    fail("unterminated nested tuple", start, kCodeNested, "no 00 terminator before the end");
  }

  // The payload of a 0x01/0x02 string: up to the first 00 not followed by FF.
  std::string escaped(std::size_t start, std::uint8_t code) {
    const auto* end = static_cast<const unsigned char*>(std::memchr(data_ + pos_, 0, size_ - pos_));
    if (end != nullptr && (end + 1 == data_ + size_ || end[1] != kEscapeByte)) {
      // Common case: no escaped zero inside, copy in one go.
      std::string out(reinterpret_cast<const char*>(data_ + pos_), end - (data_ + pos_));
      pos_ = static_cast<std::size_t>(end - data_) + 1;
      return out;
    }
    std::string out;
    std::size_t p = pos_;
    while (true) {
      const void* zero = std::memchr(data_ + p, 0, size_ - p);
      if (zero == nullptr) {
        fail(code == kCodeBytes ? "unterminated byte string" : "unterminated unicode string", start,
             code, "no 00 terminator before the end");
      }
      const auto at = static_cast<std::size_t>(static_cast<const unsigned char*>(zero) - data_);
      const bool escaped_zero = at + 1 < size_ && data_[at + 1] == kEscapeByte;
      out.append(reinterpret_cast<const char*>(data_ + p), at - p + (escaped_zero ? 1 : 0));
      p = at + (escaped_zero ? 2 : 1);
      if (!escaped_zero) break;
    }
    pos_ = p;
    return out;
  }

  Element unicode(std::size_t start) {
    std::string s = escaped(start, kCodeString);
    if (std::size_t bad = find_invalid_utf8(s); bad != std::string::npos) {
      fail("invalid UTF-8 in unicode string", start, kCodeString,
           "byte " + std::to_string(bad) + " of the string");
    }
    return Element(std::move(s));
  }

  Element fixed_integer(std::size_t start, std::uint8_t code) {
    if (code == kCodeIntZero) return Element(std::int64_t{0});
    const bool negative = code < kCodeIntZero;
    const int len = negative ? kCodeIntZero - code : code - kCodeIntZero;
    std::uint64_t n = read_be(start, code, len, "truncated integer");
    if (negative) n = (len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * len)) - 1) - n;
    return make_integer(negative, n);
  }

  Element big_integer(std::size_t start, std::uint8_t code) {
    const bool negative = code == kCodeNegBig;
    const unsigned char* len_byte = take(start, code, 1, "truncated big integer");
    const std::size_t len = negative ? (*len_byte ^ 0xffu) : *len_byte;
    const unsigned char* p = take(start, code, len, "truncated big integer");
    std::string mag(reinterpret_cast<const char*>(p), len);
    if (negative) {
      for (char& c : mag) c = static_cast<char>(~static_cast<unsigned char>(c));
    }
    const std::size_t first = std::min(mag.find_first_not_of('\0'), mag.size());
    if (mag.size() - first <= 8) {
      std::uint64_t n = 0;
      for (std::size_t i = first; i < mag.size(); ++i) {
        n = (n << 8) | static_cast<unsigned char>(mag[i]);
      }
      return make_integer(negative && n != 0, n);
    }
    return Element(BigInt::from_magnitude(negative, mag));
  }

  Element versionstamp(std::size_t start) {
    const unsigned char* p = take(start, kCodeVersionstamp, 12, "truncated versionstamp");
    Versionstamp v;
    std::memcpy(v.tr.data(), p, 10);
    v.user = static_cast<std::uint16_t>((p[10] << 8) | p[11]);
    return Element(v);
  }

  // Consumes n bytes and returns where they start; fails with `what` if fewer remain.
  const unsigned char* take(std::size_t start, std::uint8_t code, std::size_t n,
                            std::string_view what) {
    if (size_ - pos_ < n) {
      fail(what, start, code,
           "needs " + std::to_string(n) + " bytes, " + std::to_string(size_ - pos_) + " left");
    }
    const unsigned char* p = data_ + pos_;
    pos_ += n;
    return p;
  }

  std::uint64_t read_be(std::size_t start, std::uint8_t code, int len,
                        std::string_view what = "truncated float") {
    const unsigned char* p = take(start, code, static_cast<std::size_t>(len), what);
    std::uint64_t n = 0;
    for (int i = 0; i < len; ++i) n = (n << 8) | p[i];
    return n;
  }

  static std::uint64_t float_order_bits_inverse(std::uint64_t bits) {
    const auto b = static_cast<std::uint32_t>(bits);
    return (b & 0x80000000u) ? (b ^ 0x80000000u) : ~b;
  }
  static std::uint64_t double_order_bits_inverse(std::uint64_t b) {
    return (b & 0x8000000000000000u) ? (b ^ 0x8000000000000000u) : ~b;
  }

  // "truncated integer at offset 3 (type code 0x16): needs 2 bytes, 1 left"
  [[noreturn]] void fail(std::string_view what, std::size_t start, std::uint8_t code,
                         std::string_view detail = {}) const {
    char code_hex[8];
    std::snprintf(code_hex, sizeof code_hex, "0x%02x", code);
    std::string message(what);
    message += " at offset " + std::to_string(base_ + start) + " (type code " + code_hex + ")";
    if (!detail.empty()) {
      message += ": ";
      message += detail;
    }
    throw Error(ErrorCode::invalid_tuple, std::move(message));
  }

  const unsigned char* data_;
  std::size_t size_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

}  // namespace

Tuple unpack_from(std::string_view bytes, std::size_t base_offset) {
  return Tuple(Decoder(bytes, base_offset).top_level());
}

Element unpack_first(std::string_view bytes, std::size_t base_offset) {
  return Decoder(bytes, base_offset).first();
}

}  // namespace strata::tuple_detail

namespace strata {

Element unpack_first(std::string_view bytes, std::size_t base_offset) {
  return tuple_detail::unpack_first(bytes, base_offset);
}

}  // namespace strata

namespace strata::tuple_detail {}  // namespace strata::tuple_detail
