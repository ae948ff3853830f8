#include "kv/atomic_op.hpp"

#include <algorithm>

#include "base/limits.hpp"

namespace strata::kv {
namespace {

// `value` truncated or zero-padded to n bytes.
void fit(std::string& value, std::size_t n) { value.resize(n, '\0'); }

void add(std::string& value, std::string_view param) {
  fit(value, param.size());
  unsigned carry = 0;
  for (std::size_t i = 0; i < param.size(); ++i) {
    unsigned sum =
        static_cast<unsigned char>(value[i]) + static_cast<unsigned char>(param[i]) + carry;
    value[i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
}

template <class Op>
void bitwise(std::string& value, std::string_view param, Op op) {
  fit(value, param.size());
  for (std::size_t i = 0; i < param.size(); ++i) {
    value[i] = static_cast<char>(
        op(static_cast<unsigned char>(value[i]), static_cast<unsigned char>(param[i])));
  }
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

bool apply_atomic_in_place(MutationType type, bool present, std::string& value,
                           std::string_view param) {
  if (type == MutationType::compare_and_clear) return present && value != param;
  if (!present) {  // every other op stores the operand
    value.assign(param);
    return true;
  }
  switch (type) {
    case MutationType::add:
      if (value.empty()) {
        value.assign(param);
      } else {
        add(value, param);
      }
      return true;
    case MutationType::bit_and:
      bitwise(value, param, [](unsigned a, unsigned b) { return a & b; });
      return true;
    case MutationType::bit_or:
      if (value.empty()) {
        value.assign(param);
      } else {
        bitwise(value, param, [](unsigned a, unsigned b) { return a | b; });
      }
      return true;
    case MutationType::bit_xor:
      if (value.empty()) {
        value.assign(param);
      } else {
        bitwise(value, param, [](unsigned a, unsigned b) { return a ^ b; });
      }
      return true;
    case MutationType::append_if_fits:
      if (value.size() + param.size() <= base::kValueSizeLimit) value.append(param);
      return true;
    case MutationType::max:
      if (value.empty()) {
        value.assign(param);
        return true;
      }
      fit(value, param.size());
      if (compare_le(value, param) < 0) value.assign(param);
      return true;
    case MutationType::min:
      fit(value, param.size());
      if (compare_le(value, param) > 0) value.assign(param);
      return true;
    case MutationType::byte_min:
      if (param < std::string_view(value)) value.assign(param);
      return true;
    case MutationType::byte_max:
      if (std::string_view(value) < param) value.assign(param);
      return true;
    case MutationType::compare_and_clear:
    case MutationType::set_versionstamped_key:
    case MutationType::set_versionstamped_value:
      break;
  }
  throw Error(ErrorCode::internal_error, "apply_atomic called with a versionstamp operation");
}

std::optional<std::string> apply_atomic(MutationType type, std::optional<std::string_view> existing,
                                        std::string_view param) {
  std::string value(existing.value_or(std::string_view()));
  if (!apply_atomic_in_place(type, existing.has_value(), value, param)) return std::nullopt;
  return value;
}

}  // namespace strata::kv
