// durability/mutation_batch.hpp: the payload of one WAL record: the net effect of one
// commit batch, as resolved by the commit pipeline (docs/format/wal.md, "Payload").
//
//   batch := op*
//   op    := 0x01 varint32(key length) key varint32(value length) value     set
//          | 0x02 varint32(key length) key                                  clear
//          | 0x03 varint32(begin length) begin varint32(end length) end     clear range
//
// Atomic operations and versionstamps are logged by their results (a set or a clear), so
// replay needs no arithmetic and gives exactly the state the commit published.
//
// Thread safety: none; a value type.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace strata::durability {

class MutationBatchEncoder {
 public:
  void set(std::string_view key, std::string_view value);
  void clear(std::string_view key);
  void clear_range(std::string_view begin, std::string_view end);
  const std::string& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }
  void reset() { bytes_.clear(); }

 private:
  std::string bytes_;
};

struct MutationSink {
  std::function<void(std::string_view key, std::string_view value)> set;
  std::function<void(std::string_view key)> clear;
  std::function<void(std::string_view begin, std::string_view end)> clear_range;
};

// Calls `sink` for each operation in order. Throws corrupt_data naming `where` and the
// offset for an unknown operation or a truncated field.
void decode_mutation_batch(std::string_view payload, std::string_view where,
                           const MutationSink& sink);

}  // namespace strata::durability
