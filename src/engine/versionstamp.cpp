#include "engine/versionstamp.hpp"

#include "strata/error.hpp"

namespace strata::engine {

std::string make_versionstamp(Version version, std::uint16_t batch_index) {
  std::string s(kVersionstampSize, '\0');
  auto v = static_cast<std::uint64_t>(version);
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (56 - 8 * i)) & 0xff);
  s[8] = static_cast<char>(batch_index >> 8);
  s[9] = static_cast<char>(batch_index & 0xff);
  return s;
}

std::pair<std::string_view, std::uint32_t> split_stamp_operand(std::string_view operand,
                                                               std::string_view what) {
  if (operand.size() < 4) {
    throw Error(ErrorCode::client_invalid_operation, "versionstamped " + std::string(what) +
                                                         " of " + std::to_string(operand.size()) +
                                                         " bytes has no 4-byte offset");
  }
  std::string_view tmpl = operand.substr(0, operand.size() - 4);
  std::uint32_t offset = 0;
  for (int i = 3; i >= 0; --i) {
    offset = (offset << 8) | static_cast<unsigned char>(operand[tmpl.size() + i]);
  }
  if (static_cast<std::uint64_t>(offset) + kVersionstampSize > tmpl.size()) {
    throw Error(ErrorCode::client_invalid_operation,
                "versionstamp offset " + std::to_string(offset) +
                    " leaves no room for 10 bytes in a " + std::string(what) + " of " +
                    std::to_string(tmpl.size()) + " bytes");
  }
  return {tmpl, offset};
}

std::string apply_stamp(std::string_view tmpl, std::uint32_t offset, std::string_view stamp) {
  std::string out;
  apply_stamp_into(out, tmpl, offset, stamp);
  return out;
}

void apply_stamp_into(std::string& out, std::string_view tmpl, std::uint32_t offset,
                      std::string_view stamp) {
  out.assign(tmpl);
  out.replace(offset, kVersionstampSize, stamp);
}

}  // namespace strata::engine
