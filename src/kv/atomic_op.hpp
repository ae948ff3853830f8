// kv/atomic_op.hpp: the value arithmetic of every atomic operation, as pure functions.
//
// FoundationDB's rules (docs/transactions.md; fdbclient/Atomic.h): integers are unsigned
// little-endian; "fit" truncates the existing value to the operand's length or pads it
// with zero bytes; an absent key is distinct from an empty value.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "strata/types.hpp"

namespace strata::kv {

// The value after applying `type` with operand `param` to `existing` (nullopt: absent).
// Returns nullopt when the result is "absent" (compare_and_clear on a match, or an op
// that leaves an absent key absent).
// REQUIRES: type is not a versionstamp operation.
std::optional<std::string> apply_atomic(MutationType type, std::optional<std::string_view> existing,
                                        std::string_view param);
// The same in place: `value` holds the existing value when `present`, and gets the result;
// returns whether the result is present. The result is never longer than
// max(value.size(), param.size(), base::kValueSizeLimit), nor is any step of it: with that
// much capacity in `value`, nothing allocates.
bool apply_atomic_in_place(MutationType type, bool present, std::string& value,
                           std::string_view param);

}  // namespace strata::kv
