#include "kv/atomic_op.hpp"

#include <algorithm>

#include "base/limits.hpp"

namespace strata::kv {
namespace {

// `value` truncated or zero-padded to n bytes.
std::string fit(std::string_view value, std::size_t n) {
  std::string out(value.substr(0, std::min(value.size(), n)));
  out.resize(n, '\0');
  return out;
}

std::string add(std::string_view existing, std::string_view param) {
  std::string out = fit(existing, param.size());
  unsigned carry = 0;
  for (std::size_t i = 0; i < param.size(); ++i) {
    unsigned sum =
        static_cast<unsigned char>(out[i]) + static_cast<unsigned char>(param[i]) + carry;
    out[i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
  return out;
}

template <class Op>
std::string bitwise(std::string_view existing, std::string_view param, Op op) {
  std::string out = fit(existing, param.size());
  for (std::size_t i = 0; i < param.size(); ++i) {
    out[i] = static_cast<char>(
        op(static_cast<unsigned char>(out[i]), static_cast<unsigned char>(param[i])));
  }
  return out;
}

// Unsigned little-endian comparison of two equal-length strings.
int compare_le(std::string_view a, std::string_view b) {
  for (std::size_t i = a.size(); i-- > 0;) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace

std::optional<std::string> apply_atomic(MutationType type, std::optional<std::string_view> existing,
                                        std::string_view param) {
  if (type == MutationType::compare_and_clear) {
    if (existing && *existing == param) return std::nullopt;
    if (existing) return std::string(*existing);
    return std::nullopt;
  }
  if (!existing) return std::string(param);  // every other op stores the operand
  std::string_view e = *existing;
  switch (type) {
    case MutationType::add:
      if (e.empty()) return std::string(param);
      return add(e, param);
    case MutationType::bit_and:
      return bitwise(e, param, [](unsigned a, unsigned b) { return a & b; });
    case MutationType::bit_or:
      if (e.empty()) return std::string(param);
      return bitwise(e, param, [](unsigned a, unsigned b) { return a | b; });
    case MutationType::bit_xor:
      if (e.empty()) return std::string(param);
      return bitwise(e, param, [](unsigned a, unsigned b) { return a ^ b; });
    case MutationType::append_if_fits:
      if (e.size() + param.size() > base::kValueSizeLimit) return std::string(e);
      return std::string(e) + std::string(param);
    case MutationType::max: {
      if (e.empty()) return std::string(param);
      std::string fitted = fit(e, param.size());
      return compare_le(fitted, param) >= 0 ? fitted : std::string(param);
    }
    case MutationType::min: {
      std::string fitted = fit(e, param.size());
      return compare_le(fitted, param) <= 0 ? fitted : std::string(param);
    }
    case MutationType::byte_min:
      return std::string(std::min(e, param));
    case MutationType::byte_max:
      return std::string(std::max(e, param));
    case MutationType::compare_and_clear:
    case MutationType::set_versionstamped_key:
    case MutationType::set_versionstamped_value:
      break;
  }
  throw Error(ErrorCode::internal_error, "apply_atomic called with a versionstamp operation");
}

}  // namespace strata::kv
