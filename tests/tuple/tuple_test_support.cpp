#include "tuple_test_support.hpp"

#include <bit>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace strata {

namespace {

std::string hex_bits(std::uint64_t bits, int digits) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(bits));
  return buf;
}

}  // namespace

std::string describe(const Element& e) {
  using tuple_test::to_hex;
  if (e.is<std::nullptr_t>()) return "null";
  if (e.is<bool>()) return e.get<bool>() ? "true" : "false";
  if (e.is<std::int64_t>()) return "int64:" + std::to_string(e.get<std::int64_t>());
  if (e.is<std::uint64_t>()) return "uint64:" + std::to_string(e.get<std::uint64_t>());
  if (e.is<BigInt>()) return "bigint:" + e.get<BigInt>().to_string();
  if (e.is<Bytes>()) return "bytes:" + to_hex(e.get<Bytes>().data);
  if (e.is<std::string>()) return "str:" + to_hex(e.get<std::string>());
  if (e.is<float>()) return "f32:" + hex_bits(std::bit_cast<std::uint32_t>(e.get<float>()), 8);
  if (e.is<double>()) return "f64:" + hex_bits(std::bit_cast<std::uint64_t>(e.get<double>()), 16);
  if (e.is<Uuid>()) {
    const auto& b = e.get<Uuid>().bytes;
    return "uuid:" + to_hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  }
  if (e.is<Versionstamp>()) {
    const Versionstamp& v = e.get<Versionstamp>();
    if (!v.complete()) return "vs:incomplete/" + std::to_string(v.user);
    return "vs:" + to_hex(std::string_view(reinterpret_cast<const char*>(v.tr.data()), 10)) +
           hex_bits(v.user, 4);
  }
  return describe(e.get<Tuple>());
}

std::string describe(const Tuple& t) {
  std::string out = "(";
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i != 0) out += ", ";
    out += describe(t[i]);
  }
  return out + ")";
}

}  // namespace strata

namespace strata::tuple_test {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw std::invalid_argument("bad hex digit");
}

template <std::size_t N>
std::array<std::uint8_t, N> fixed_hex(std::string_view hex) {
  const std::string bytes = from_hex(hex);
  if (bytes.size() != N) throw std::invalid_argument("wrong hex length: " + std::string(hex));
  std::array<std::uint8_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<std::uint8_t>(bytes[i]);
  return out;
}

std::uint64_t hex_number(std::string_view hex) {
  std::uint64_t n = 0;
  for (char c : hex) n = (n << 4) | static_cast<std::uint64_t>(hex_digit(c));
  return n;
}

// Recursive descent over the grammar at the top of vectors.txt.
class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  Tuple whole() {
    Tuple t = tuple();
    if (pos_ != text_.size()) throw std::invalid_argument("trailing text");
    return t;
  }

 private:
  Tuple tuple() {
    expect('(');
    Tuple t;
    if (peek() == ')') {
      ++pos_;
      return t;
    }
    while (true) {
      t.append(element());
      if (peek() == ')') {
        ++pos_;
        return t;
      }
      expect(',');
      expect(' ');
    }
  }

  Element element() {
    if (peek() == '(') return Element(tuple());
    const std::size_t end = text_.find_first_of(",)", pos_);
    if (end == std::string_view::npos) throw std::invalid_argument("unterminated element");
    const std::string_view token = text_.substr(pos_, end - pos_);
    pos_ = end;
    return token_element(token);
  }

  static Element token_element(std::string_view token) {
    if (token == "null") return Element(nullptr);
    if (token == "true") return Element(true);
    if (token == "false") return Element(false);
    const std::size_t colon = token.find(':');
    if (colon == std::string_view::npos) throw std::invalid_argument("bad token");
    const std::string_view kind = token.substr(0, colon);
    const std::string_view value = token.substr(colon + 1);
    if (kind == "int") return canonical_int(BigInt(value));
    if (kind == "bytes") return Element(Bytes{from_hex(value)});
    if (kind == "str") return Element(from_hex(value));
    if (kind == "f32") return Element(std::bit_cast<float>(std::uint32_t(hex_number(value))));
    if (kind == "f64") return Element(std::bit_cast<double>(hex_number(value)));
    if (kind == "uuid") return Element(Uuid{fixed_hex<16>(value)});
    if (kind == "vs") {
      const auto all = fixed_hex<12>(value);
      Versionstamp v;
      std::copy(all.begin(), all.begin() + 10, v.tr.begin());
      v.user = static_cast<std::uint16_t>((all[10] << 8) | all[11]);
      return Element(v);
    }
    throw std::invalid_argument("unknown element kind " + std::string(kind));
  }

  char peek() const {
    if (pos_ >= text_.size()) throw std::invalid_argument("unexpected end");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) throw std::invalid_argument(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::vector<std::string> read_lines(const std::string& name) {
  const std::string path = std::string(STRATA_TUPLE_DATA_DIR) + "/" + name;
  std::ifstream in(path);
  std::vector<std::string> lines;
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return lines;
  }
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(std::string_view s) {
  const std::size_t b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(' ') - b + 1));
}

}  // namespace

std::string from_hex(std::string_view hex) {
  std::string out;
  int pending = -1;
  for (char c : hex) {
    if (c == ' ') continue;
    const int d = hex_digit(c);
    if (pending < 0) {
      pending = d;
    } else {
      out.push_back(static_cast<char>(pending * 16 + d));
      pending = -1;
    }
  }
  if (pending >= 0) throw std::invalid_argument("odd hex length");
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

Element canonical_int(const BigInt& value) {
  const std::string& mag = value.magnitude();
  if (mag.size() > 8) return Element(value);
  std::uint64_t n = 0;
  for (char c : mag) n = (n << 8) | static_cast<unsigned char>(c);
  constexpr std::uint64_t limit = std::uint64_t{1} << 63;
  if (!value.negative()) return n < limit ? Element(std::int64_t(n)) : Element(n);
  return n <= limit ? Element(static_cast<std::int64_t>(0 - n)) : Element(value);
}

Tuple parse_tuple_literal(std::string_view text) { return LiteralParser(text).whole(); }

std::vector<Vector> load_vectors() {
  std::vector<Vector> out;
  const std::vector<std::string> lines = read_lines("vectors.txt");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    const std::size_t arrow = line.find(" =>");
    if (arrow == std::string::npos) {
      ADD_FAILURE() << "vectors.txt:" << i + 1 << ": no '=>'";
      continue;
    }
    const int number = static_cast<int>(i + 1);
    const std::string literal = line.substr(0, arrow);
    try {
      out.push_back(
          {number, literal, parse_tuple_literal(literal), from_hex(trim(line.substr(arrow + 3)))});
    } catch (const std::exception& e) {
      ADD_FAILURE() << "vectors.txt:" << number << ": " << e.what();
    }
  }
  return out;
}

std::vector<InvalidEntry> load_invalid() {
  std::vector<InvalidEntry> out;
  const std::vector<std::string> lines = read_lines("invalid.txt");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    const std::size_t bar1 = line.find('|');
    const std::size_t bar2 = line.find('|', bar1 + 1);
    if (bar1 == std::string::npos || bar2 == std::string::npos) {
      ADD_FAILURE() << "invalid.txt:" << i + 1 << ": expected 'hex | category | reason'";
      continue;
    }
    out.push_back({static_cast<int>(i + 1), from_hex(trim(line.substr(0, bar1))),
                   trim(line.substr(bar1 + 1, bar2 - bar1 - 1))});
  }
  return out;
}

::testing::AssertionResult identical(const Tuple& expected, const Tuple& actual) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << describe(expected) << " vs " << describe(actual);
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Element& a = expected[i];
    const Element& b = actual[i];
    if (a.type_name() != b.type_name()) {
      return ::testing::AssertionFailure()
             << "element " << i << " types differ: " << describe(expected) << " vs "
             << describe(actual);
    }
    if (a.is<Tuple>()) {
      if (auto r = identical(a.get<Tuple>(), b.get<Tuple>()); !r) return r;
    } else if (a != b) {
      return ::testing::AssertionFailure()
             << "element " << i << " values differ: " << describe(expected) << " vs "
             << describe(actual);
    }
  }
  return ::testing::AssertionSuccess();
}

Element RandomTuples::integer() {
  static const char* const boundaries[] = {
      "0",
      "1",
      "-1",
      "255",
      "-255",
      "256",
      "-256",
      "65535",
      "-65536",
      "9223372036854775807",
      "-9223372036854775807",
      "-9223372036854775808",
      "9223372036854775808",
      "-9223372036854775809",
      "18446744073709551614",
      "18446744073709551615",
      "-18446744073709551615",
      "18446744073709551616",
      "-18446744073709551616",
      "4722366482869645213696",
      "-4722366482869645213696",
  };
  switch (below(3)) {
    case 0:
      return canonical_int(BigInt(boundaries[below(std::size(boundaries))]));
    case 1: {  // a random magnitude of 0..8 bytes
      std::uint64_t n = rng_() >> (8 * below(8));
      char be[8];
      for (int i = 7; i >= 0; --i, n >>= 8) be[i] = static_cast<char>(n & 0xff);
      return canonical_int(BigInt::from_magnitude(below(2) == 0, std::string_view(be, 8)));
    }
    default:
      break;
  }
  std::string mag(9 + below(16), '\0');
  for (char& c : mag) c = static_cast<char>(rng_());
  return canonical_int(BigInt::from_magnitude(below(2) == 0, mag));
}

std::string RandomTuples::byte_string(bool utf8) {
  static const char* const byte_pieces[] = {"\x00", "\xff", "a", "b", "\x01"};
  static const char* const utf8_pieces[] = {
      "a", "b", "\x00", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x94\xa5", "\x7f"};
  std::string out;
  const std::size_t n = below(5);
  for (std::size_t i = 0; i < n; ++i) {
    if (utf8) {
      const char* piece = utf8_pieces[below(std::size(utf8_pieces))];
      out.append(piece, piece[0] == '\0' ? 1 : std::char_traits<char>::length(piece));
    } else {
      const char* piece = byte_pieces[below(std::size(byte_pieces))];
      out.push_back(piece[0]);
    }
  }
  return out;
}

Element RandomTuples::element(int max_depth) {
  static const std::uint32_t float_bits[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000,
                                             0x7f800000, 0xff800000, 0x7fc00000, 0x7fc00001,
                                             0xffc00000, 0xffc00001, 0x00000001, 0x80000001};
  static const std::uint64_t double_bits[] = {
      0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
      0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff8000000000001,
      0xfff8000000000000, 0xfff8000000000001, 0x0000000000000001, 0x8000000000000001};
  switch (below(max_depth > 0 ? 12 : 11)) {
    case 0:
      return Element(nullptr);
    case 1:
      return Element(Bytes{byte_string(false)});
    case 2:
      return Element(byte_string(true));
    case 3:
    case 4:
      return integer();
    case 5:
      return Element(std::bit_cast<float>(below(2) ? float_bits[below(std::size(float_bits))]
                                                   : static_cast<std::uint32_t>(rng_())));
    case 6:
      return Element(
          std::bit_cast<double>(below(2) ? double_bits[below(std::size(double_bits))] : rng_()));
    case 7:
      return Element(below(2) == 0);
    case 8: {
      Uuid u;
      for (auto& b : u.bytes) b = below(3) == 0 ? 0 : static_cast<std::uint8_t>(rng_());
      return Element(u);
    }
    case 9:
    case 10: {
      Versionstamp v;
      for (auto& b : v.tr) b = below(2) == 0 ? 0xff : static_cast<std::uint8_t>(below(3));
      if (!v.complete()) v.tr[9] = 0xfe;
      v.user = static_cast<std::uint16_t>(below(2) == 0 ? below(3) : rng_());
      return Element(v);
    }
    default:
      return Element(tuple(max_depth - 1));
  }
}

Tuple RandomTuples::tuple(int max_depth, std::size_t max_size) {
  Tuple t;
  const std::size_t n = below(max_size + 1);
  for (std::size_t i = 0; i < n; ++i) t.append(element(max_depth));
  return t;
}

}  // namespace strata::tuple_test
