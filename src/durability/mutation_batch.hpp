// durability/mutation_batch.hpp: the payload of one WAL record: the net effect of one
// commit batch, as resolved by the commit pipeline (docs/format/wal.md, "Payload").
//
//   batch := op*
//   op    := 0x01 varint32(key length) key varint32(value length) value     set
//          | 0x02 varint32(key length) key                                  clear
//          | 0x03 varint32(begin length) begin varint32(end length) end     clear range
//          | 0x04 varint32(key length) key u8(type) varint32(param length) param
//                                                                   atomic operation
//
// Versionstamps are logged by their results, and so are atomic operations whose result is
// no larger than the operations themselves (a counter's add: a set, replayed with no
// arithmetic). A key's atomic operations whose result is larger (an append onto a long
// value, a compare_and_clear that keeps one) are logged as the operations, so a record is
// never larger than what its transactions wrote; replay applies them to the value before.
// The type byte is FoundationDB's code for the operation (atomic_op_code).
//
// Thread safety: none; a value type.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "strata/types.hpp"

namespace strata::durability {

// The bytes each encoder call adds at most beyond its keys, values and operands.
inline constexpr std::size_t kSetOverhead = 11;     // op, two varint32s
inline constexpr std::size_t kAtomicOverhead = 12;  // op, two varint32s, type

// FoundationDB's code for an atomic operation (its C API's FDBMutationType) and back;
// nullopt for a code that is no atomic operation strata logs (versionstamps are not).
std::uint8_t atomic_op_code(MutationType type);
std::optional<MutationType> atomic_op_from_code(std::uint8_t code);

class MutationBatchEncoder {
 public:
  void set(std::string_view key, std::string_view value);
  void clear(std::string_view key);
  void clear_range(std::string_view begin, std::string_view end);
  void atomic(std::string_view key, MutationType type, std::string_view param);
  const std::string& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }
  void reset() { bytes_.clear(); }
  // Room for `bytes` more encoded bytes: that much encoding allocates nothing.
  void reserve(std::size_t bytes) { bytes_.reserve(bytes_.size() + bytes); }

 private:
  std::string bytes_;
};

struct MutationSink {
  std::function<void(std::string_view key, std::string_view value)> set;
  std::function<void(std::string_view key)> clear;
  std::function<void(std::string_view begin, std::string_view end)> clear_range;
  std::function<void(std::string_view key, MutationType type, std::string_view param)> atomic;
};

// Calls `sink` for each operation in order. Throws corrupt_data naming `where` and the
// offset for an unknown operation or atomic operation type, or a truncated field.
void decode_mutation_batch(std::string_view payload, std::string_view where,
                           const MutationSink& sink);

}  // namespace strata::durability
