// The public counter helpers of strata/transaction.hpp: FoundationDB's 8-byte
// little-endian integers.
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/error.hpp"
#include "strata/transaction.hpp"

#include "base/coding.hpp"

namespace strata {

std::string int64_operand(std::int64_t value) {
  std::string operand(sizeof(std::uint64_t), '\0');
  base::encode_fixed(operand.data(), static_cast<std::uint64_t>(value));
  return operand;
}

std::int64_t int64_value(std::string_view bytes) {
  if (bytes.size() > sizeof(std::uint64_t)) {
    throw Error(ErrorCode::invalid_argument,
                "a 64-bit counter has at most 8 bytes, not " + std::to_string(bytes.size()));
  }
  char padded[sizeof(std::uint64_t)] = {};
  bytes.copy(padded, bytes.size());
  return static_cast<std::int64_t>(base::decode_fixed<std::uint64_t>(padded));
}

}  // namespace strata
