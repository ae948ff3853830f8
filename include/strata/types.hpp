// strata/types.hpp: small value types shared by the public headers and the layers below
// them (kv and durability include this header and no other public one but error.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace strata {

// A commit version. Versions increase with every commit batch and are never reused.
using Version = std::int64_t;

struct KeyValue {
  std::string key, value;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

// A half-open key range [begin, end).
struct KeyRange {
  std::string begin, end;
  friend bool operator==(const KeyRange&, const KeyRange&) = default;
};

// Atomic operations (FoundationDB's semantics, docs/transactions.md). Integers are
// little-endian; an operand of n bytes works on the stored value fitted to n bytes.
enum class MutationType {
  add,      // sum, carrying, overflow dropped
  bit_and,  // a missing key takes the operand
  bit_or,
  bit_xor,
  max,       // unsigned comparison
  min,       // unsigned comparison; a missing key takes the operand
  byte_min,  // lexicographic
  byte_max,
  append_if_fits,            // no-op when the result would exceed 100,000 bytes
  compare_and_clear,         // clears the key when its value equals the operand
  set_versionstamped_key,    // key's last 4 bytes: little-endian offset of 10 stamp bytes
  set_versionstamped_value,  // the same, in the value
};

}  // namespace strata
