// BigInt: sign and big-endian magnitude, decimal text in and out. Schoolbook arithmetic on
// 32-bit limbs is plenty for magnitudes of at most 255 bytes (614 decimal digits).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/tuple.hpp"

namespace strata {

namespace {

constexpr std::size_t kMaxMagnitudeBytes = 255;
constexpr std::size_t kMaxDecimalDigits = 615;  // 256^255 has 615 digits

// Little-endian 32-bit limbs <-> big-endian bytes without leading zeros.
std::string limbs_to_bytes(const std::vector<std::uint32_t>& limbs) {
  std::string out;
  for (auto it = limbs.rbegin(); it != limbs.rend(); ++it) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      const auto byte = static_cast<char>((*it >> shift) & 0xff);
      if (out.empty() && byte == 0) continue;
      out.push_back(byte);
    }
  }
  return out;
}

std::vector<std::uint32_t> bytes_to_limbs(const std::string& bytes) {
  std::vector<std::uint32_t> limbs((bytes.size() + 3) / 4, 0);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const std::size_t bit = 8 * (bytes.size() - 1 - i);
    limbs[bit / 32] |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]))
                       << (bit % 32);
  }
  return limbs;
}

[[noreturn]] void bad_text(std::string_view text, std::string_view why) {
  std::string shown(text.substr(0, 40));
  if (text.size() > 40) shown += "...";
  throw Error(ErrorCode::invalid_argument, "BigInt(\"" + shown + "\"): " + std::string(why));
}

}  // namespace

BigInt::BigInt(std::string_view decimal) {
  std::string_view digits = decimal;
  const bool minus = !digits.empty() && digits.front() == '-';
  if (minus) digits.remove_prefix(1);
  if (digits.empty()) bad_text(decimal, "expected an optional '-' then decimal digits");
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    bad_text(decimal, "expected an optional '-' then decimal digits");
  }
  digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size()));
  if (digits.size() > kMaxDecimalDigits) bad_text(decimal, "magnitude above 255 bytes");
  std::vector<std::uint32_t> limbs;
  for (char c : digits) {  // limbs = limbs * 10 + digit
    std::uint64_t carry = static_cast<std::uint64_t>(c - '0');
    for (std::uint32_t& limb : limbs) {
      const std::uint64_t v = std::uint64_t{limb} * 10 + carry;
      limb = static_cast<std::uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) limbs.push_back(static_cast<std::uint32_t>(carry));
  }
  magnitude_ = limbs_to_bytes(limbs);
  if (magnitude_.size() > kMaxMagnitudeBytes) bad_text(decimal, "magnitude above 255 bytes");
  negative_ = minus && !magnitude_.empty();
}

BigInt::BigInt(std::int64_t value) : negative_(value < 0) {
  std::uint64_t mag =
      value < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(value) : std::uint64_t(value);
  for (; mag != 0; mag >>= 8) magnitude_.insert(magnitude_.begin(), static_cast<char>(mag & 0xff));
}

BigInt BigInt::from_magnitude(bool negative, std::string_view magnitude) {
  magnitude.remove_prefix(std::min(magnitude.find_first_not_of('\0'), magnitude.size()));
  if (magnitude.size() > kMaxMagnitudeBytes) {
    throw Error(ErrorCode::invalid_argument, "BigInt magnitude of " +
                                                 std::to_string(magnitude.size()) +
                                                 " bytes (the tuple encoding allows at most 255)");
  }
  BigInt out;
  out.magnitude_ = std::string(magnitude);
  out.negative_ = negative && !out.magnitude_.empty();
  return out;
}

std::string BigInt::to_string() const {
  if (magnitude_.empty()) return "0";
  std::vector<std::uint32_t> limbs = bytes_to_limbs(magnitude_);
  std::string reversed;  // decimal digits, least significant first
  while (!limbs.empty()) {
    std::uint64_t rem = 0;  // limbs /= 10^9, rem = the nine digits dropped
    for (auto it = limbs.rbegin(); it != limbs.rend(); ++it) {
      const std::uint64_t v = (rem << 32) | *it;
      *it = static_cast<std::uint32_t>(v / 1000000000u);
      rem = v % 1000000000u;
    }
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
    for (int i = 0; i < 9 && (rem != 0 || !limbs.empty()); ++i, rem /= 10) {
      reversed.push_back(static_cast<char>('0' + rem % 10));
    }
  }
  if (negative_) reversed.push_back('-');
  return std::string(reversed.rbegin(), reversed.rend());
}

std::strong_ordering operator<=>(const BigInt& a, const BigInt& b) {
  if (a.negative_ != b.negative_) {
    return a.negative_ ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  // Same sign: compare magnitudes (length first: no leading zeros), flipped when negative.
  std::strong_ordering mag = a.magnitude_.size() <=> b.magnitude_.size();
  if (mag == 0) mag = std::string_view(a.magnitude_).compare(b.magnitude_) <=> 0;
  return a.negative_ ? 0 <=> mag : mag;
}

}  // namespace strata
