// strata/types.hpp: small value types shared by database.hpp and transaction.hpp.
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

}  // namespace strata
