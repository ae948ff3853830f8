#include "durability/mutation_batch.hpp"

#include "strata/error.hpp"

#include "base/coding.hpp"

namespace strata::durability {
namespace {

// The op byte of each mutation in a batch.
constexpr char kSet = 0x01;
constexpr char kClear = 0x02;
constexpr char kClearRange = 0x03;
constexpr char kAtomic = 0x04;

void put_bytes(std::string& out, std::string_view s) {
  base::put_varint32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

// Where a field starts, for errors: built only when the field is bad (a replay decodes
// millions of fields).
std::string at(std::string_view where, std::size_t offset) {
  return std::string(where) + " at payload offset " + std::to_string(offset);
}

// A length-prefixed field; a bad one's error names where its operation starts.
std::string_view get_bytes(std::string_view& in, std::string_view where, std::size_t offset) {
  std::uint32_t n = 0;
  if (!base::get_varint32(in, n)) {
    throw Error(ErrorCode::corrupt_data, at(where, offset) + ": truncated or invalid varint32");
  }
  if (n > in.size()) {
    throw Error(ErrorCode::corrupt_data, at(where, offset) + ": field of " + std::to_string(n) +
                                             " bytes runs past the end of the payload");
  }
  std::string_view s = in.substr(0, n);
  in.remove_prefix(n);
  return s;
}

}  // namespace

std::uint8_t atomic_op_code(MutationType type) {
  switch (type) {
    case MutationType::add:
      return 2;
    case MutationType::bit_and:
      return 6;
    case MutationType::bit_or:
      return 7;
    case MutationType::bit_xor:
      return 8;
    case MutationType::append_if_fits:
      return 9;
    case MutationType::max:
      return 12;
    case MutationType::min:
      return 13;
    case MutationType::set_versionstamped_key:
      return 14;
    case MutationType::set_versionstamped_value:
      return 15;
    case MutationType::byte_min:
      return 16;
    case MutationType::byte_max:
      return 17;
    case MutationType::compare_and_clear:
      return 20;
  }
  return 0;
}

std::optional<MutationType> atomic_op_from_code(std::uint8_t code) {
  for (MutationType type :
       {MutationType::add, MutationType::bit_and, MutationType::bit_or, MutationType::bit_xor,
        MutationType::append_if_fits, MutationType::max, MutationType::min, MutationType::byte_min,
        MutationType::byte_max, MutationType::compare_and_clear}) {
    if (atomic_op_code(type) == code) return type;
  }
  return std::nullopt;
}

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

void MutationBatchEncoder::atomic(std::string_view key, MutationType type, std::string_view param) {
  bytes_.push_back(kAtomic);
  put_bytes(bytes_, key);
  bytes_.push_back(static_cast<char>(atomic_op_code(type)));
  put_bytes(bytes_, param);
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
      case kAtomic: {
        std::string_view key = get_bytes(in, where, offset);
        const std::uint8_t code = in.empty() ? 0 : static_cast<std::uint8_t>(in.front());
        const std::optional<MutationType> type = atomic_op_from_code(code);
        if (!type) {
          throw Error(ErrorCode::corrupt_data,
                      at(where, offset) +
                          (in.empty() ? ": truncated atomic operation"
                                      : ": unknown atomic operation type " + std::to_string(code)));
        }
        in.remove_prefix(1);
        sink.atomic(key, *type, get_bytes(in, where, offset));
        break;
      }
      default:
        throw Error(ErrorCode::corrupt_data, at(where, offset) + ": unknown operation " +
                                                 std::to_string(static_cast<unsigned char>(op)));
    }
  }
}

}  // namespace strata::durability
