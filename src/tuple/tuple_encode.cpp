// The encoding half of tuple_codec.hpp: one put() per element type, appending to a string.
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <variant>

#include "strata/error.hpp"
#include "strata/tuple.hpp"

#include "tuple/tuple_codec.hpp"
#include "tuple/utf8.hpp"

namespace strata::tuple_detail {

namespace {

// Writes the low `len` bytes of n, big-endian, at `out`; returns their end.
// REQUIRES: 0 <= len <= 8.
char* write_be(char* out, std::uint64_t n, int len) {
  for (int i = len - 1; i >= 0; --i) {
    out[i] = static_cast<char>(n & 0xff);
    n >>= 8;
  }
  return out + len;
}

void append_be(std::string& out, std::uint64_t n, int len) {
  char buf[8];
  out.append(buf, static_cast<std::size_t>(write_be(buf, n, len) - buf));
}

int byte_length(std::uint64_t n) { return static_cast<int>((std::bit_width(n) + 7) / 8); }

char* write_positive(char* out, std::uint64_t n) {
  const int len = byte_length(n);
  *out++ = static_cast<char>(kCodeIntZero + len);
  return write_be(out, n, len);
}

// REQUIRES: mag > 0. Writes (2^(8L)-1) - mag, the one's complement of mag in L bytes.
char* write_negative(char* out, std::uint64_t mag) {
  const int len = byte_length(mag);
  *out++ = static_cast<char>(kCodeIntZero - len);
  return write_be(out, ~mag, len);
}

// `code`, s with each 00 written 00 FF, and a 00 terminator.
char* write_escaped(char* out, std::uint8_t code, std::string_view s) {
  *out++ = static_cast<char>(code);
  while (!s.empty()) {
    const void* zero = std::memchr(s.data(), 0, s.size());
    const std::size_t run =
        zero == nullptr ? s.size()
                        : static_cast<std::size_t>(static_cast<const char*>(zero) - s.data());
    std::memcpy(out, s.data(), run);
    out += run;
    s.remove_prefix(run);
    if (zero != nullptr) {
      *out++ = '\0';
      *out++ = '\xff';
      s.remove_prefix(1);
    }
  }
  *out++ = '\0';
  return out;
}

class Encoder {
 public:
  explicit Encoder(std::string& out) : out_(out) {}

  void tuple(const Tuple& t, int depth) {
    for (const Element& e : t) element(e, depth);
  }

  void top_element(const Element& e) { element(e, 0); }

  int incomplete_stamps() const { return incomplete_stamps_; }
  std::size_t stamp_offset() const { return stamp_offset_; }

 private:
  void element(const Element& e, int depth) {
    std::visit([&](const auto& v) { put(v, depth); }, e.value());
  }

  void put(std::nullptr_t, int depth) {
    if (depth == 0) {
      out_.push_back(static_cast<char>(kCodeNull));
    } else {  // inside a nested tuple a null is 00 FF, so a lone 00 can end the tuple
      out_.append("\x00\xff", 2);
    }
  }
  void put(const Bytes& b, int) { put_escaped(kCodeBytes, b.data); }
  void put(const std::string& s, int) {
    if (std::size_t bad = find_invalid_utf8(s); bad != std::string::npos) {
      throw Error(ErrorCode::invalid_argument, "unicode string element is not valid UTF-8 (byte " +
                                                   std::to_string(bad) +
                                                   " of the string); use Bytes for binary data");
    }
    put_escaped(kCodeString, s);
  }
  void put(std::int64_t v, int) {
    char buf[kMaxIntSize];
    out_.append(buf, static_cast<std::size_t>(write_int(buf, v) - buf));
  }
  void put(std::uint64_t v, int) { put_positive(v); }
  void put(const BigInt& v, int) {
    const std::string& mag = v.magnitude();
    if (mag.size() <= 8) {
      std::uint64_t n = 0;
      for (char c : mag) n = (n << 8) | static_cast<unsigned char>(c);
      v.negative() ? put_negative(n) : put_positive(n);
      return;
    }
    if (!v.negative()) {
      out_.push_back(static_cast<char>(kCodePosBig));
      out_.push_back(static_cast<char>(mag.size()));
      out_.append(mag);
      return;
    }
    out_.push_back(static_cast<char>(kCodeNegBig));
    out_.push_back(static_cast<char>(mag.size() ^ 0xff));
    for (char c : mag) out_.push_back(static_cast<char>(~static_cast<unsigned char>(c)));
  }
  void put(float v, int) {
    out_.push_back(static_cast<char>(kCodeFloat));
    append_be(out_, float_order_bits(std::bit_cast<std::uint32_t>(v)), 4);
  }
  void put(double v, int) {
    out_.push_back(static_cast<char>(kCodeDouble));
    append_be(out_, double_order_bits(std::bit_cast<std::uint64_t>(v)), 8);
  }
  void put(bool v, int) { out_.push_back(static_cast<char>(v ? kCodeTrue : kCodeFalse)); }
  void put(const Uuid& u, int) {
    out_.push_back(static_cast<char>(kCodeUuid));
    out_.append(reinterpret_cast<const char*>(u.bytes.data()), u.bytes.size());
  }
  void put(const Element::NestedPtr& t, int depth) {
    if (depth >= kMaxNesting) {
      throw Error(ErrorCode::invalid_argument,
                  "tuple nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    out_.push_back(static_cast<char>(kCodeNested));
    tuple(*t, depth + 1);
    out_.push_back('\0');
  }
  void put(const Versionstamp& v, int) {
    out_.push_back(static_cast<char>(kCodeVersionstamp));
    if (!v.complete()) {
      ++incomplete_stamps_;
      stamp_offset_ = out_.size();
    }
    out_.append(reinterpret_cast<const char*>(v.tr.data()), v.tr.size());
    append_be(out_, v.user, 2);
  }

  void put_positive(std::uint64_t n) {
    char buf[kMaxIntSize];
    out_.append(buf, static_cast<std::size_t>(write_positive(buf, n) - buf));
  }
  void put_negative(std::uint64_t mag) {
    char buf[kMaxIntSize];
    out_.append(buf, static_cast<std::size_t>(write_negative(buf, mag) - buf));
  }
  void put_escaped(std::uint8_t code, std::string_view s) {
    const std::size_t at = out_.size();
    out_.resize(at + max_bytes_size(s.size()));
    char* end = write_escaped(out_.data() + at, code, s);
    out_.resize(static_cast<std::size_t>(end - out_.data()));
  }

  std::string& out_;
  int incomplete_stamps_ = 0;
  std::size_t stamp_offset_ = 0;
};

std::size_t estimate_element(const Element& e) {
  const Element::Value& v = e.value();
  if (const auto* b = std::get_if<Bytes>(&v)) return b->data.size() + 4;
  if (const auto* s = std::get_if<std::string>(&v)) return s->size() + 4;
  if (const auto* n = std::get_if<Element::NestedPtr>(&v)) return estimate_packed_size(**n) + 2;
  if (const auto* big = std::get_if<BigInt>(&v)) return big->magnitude().size() + 2;
  return 17;  // uuid, the largest fixed-size element
}

}  // namespace

char* write_int(char* out, std::int64_t v) {
  // (The unsigned magnitude: no overflow at INT64_MIN.)
  return v >= 0 ? write_positive(out, static_cast<std::uint64_t>(v))
                : write_negative(out, std::uint64_t{0} - static_cast<std::uint64_t>(v));
}

char* write_bytes(char* out, std::string_view bytes) {
  return write_escaped(out, kCodeBytes, bytes);
}

namespace {

void reject_stamps(int stamps) {
  if (stamps != 0) {
    throw Error(ErrorCode::invalid_argument,
                "tuple holds an incomplete versionstamp; use pack_with_versionstamp");
  }
}

}  // namespace

void append_element(std::string& out, const Element& e) {
  Encoder encoder(out);
  encoder.top_element(e);
  reject_stamps(encoder.incomplete_stamps());
}

}  // namespace strata::tuple_detail

namespace strata {

void append_packed(std::string& out, const Element& e) { tuple_detail::append_element(out, e); }
char* pack_int_at(char* out, std::int64_t v) { return tuple_detail::write_int(out, v); }
char* pack_bytes_at(char* out, std::string_view bytes) {
  return tuple_detail::write_bytes(out, bytes);
}

}  // namespace strata

namespace strata::tuple_detail {

void pack_into(std::string& out, const Tuple& t, StampMode mode) {
  Encoder encoder(out);
  encoder.tuple(t, 0);
  const int stamps = encoder.incomplete_stamps();
  if (mode == StampMode::reject) {
    reject_stamps(stamps);
    return;
  }
  if (stamps != 1) {
    throw Error(ErrorCode::invalid_argument,
                "pack_with_versionstamp needs exactly one incomplete versionstamp, found " +
                    std::to_string(stamps));
  }
  const std::size_t offset = encoder.stamp_offset();
  if (offset > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorCode::invalid_argument, "versionstamp offset does not fit 4 bytes");
  }
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((offset >> (8 * i)) & 0xff));
}

std::size_t estimate_packed_size(const Tuple& t) {
  std::size_t total = 4;  // room for a versionstamp offset
  for (const Element& e : t) total += estimate_element(e);
  return total;
}

}  // namespace strata::tuple_detail
