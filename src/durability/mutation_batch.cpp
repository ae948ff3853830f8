#include "durability/mutation_batch.hpp"

#include "strata/error.hpp"

#include "base/coding.hpp"

namespace strata::durability {
namespace {

// The op byte of each mutation in a batch.
constexpr char kSet = 0x01;
constexpr char kClear = 0x02;
constexpr char kClearRange = 0x03;

void put_bytes(std::string& out, std::string_view s) {
  base::put_varint32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

// The message names where the field starts; it is built only when the field is bad (a
// replay decodes millions of fields).
std::string_view get_bytes(std::string_view& in, std::string_view where, std::size_t offset) {
  auto at = [&] { return std::string(where) + " at payload offset " + std::to_string(offset); };
  std::uint32_t n = 0;
  if (!base::get_varint32(in, n)) {
    throw Error(ErrorCode::corrupt_data, at() + ": truncated or invalid varint32");
  }
  if (n > in.size()) {
    throw Error(ErrorCode::corrupt_data, at() + ": field of " + std::to_string(n) +
                                             " bytes runs past the end of the payload");
  }
  std::string_view s = in.substr(0, n);
  in.remove_prefix(n);
  return s;
}

}  // namespace

void MutationBatchEncoder::set(std::string_view key, std::string_view value) {
  bytes_.push_back(kSet);
  put_bytes(bytes_, key);
  put_bytes(bytes_, value);
}

void MutationBatchEncoder::clear(std::string_view key) {
  bytes_.push_back(kClear);
  put_bytes(bytes_, key);
}

void MutationBatchEncoder::clear_range(std::string_view begin, std::string_view end) {
  bytes_.push_back(kClearRange);
  put_bytes(bytes_, begin);
  put_bytes(bytes_, end);
}

void decode_mutation_batch(std::string_view payload, std::string_view where,
                           const MutationSink& sink) {
  std::string_view in = payload;
  while (!in.empty()) {
    std::size_t offset = payload.size() - in.size();
    char op = in.front();
    in.remove_prefix(1);
    switch (op) {
      case kSet: {
        std::string_view key = get_bytes(in, where, offset);
        sink.set(key, get_bytes(in, where, offset));
        break;
      }
      case kClear:
        sink.clear(get_bytes(in, where, offset));
        break;
      case kClearRange: {
        std::string_view begin = get_bytes(in, where, offset);
        sink.clear_range(begin, get_bytes(in, where, offset));
        break;
      }
      default:
        throw Error(ErrorCode::corrupt_data, std::string(where) + " at payload offset " +
                                                 std::to_string(offset) + ": unknown operation " +
                                                 std::to_string(static_cast<unsigned char>(op)));
    }
  }
}

}  // namespace strata::durability
