// strata/subspace.hpp: a key prefix for tuple-encoded keys, as FoundationDB's Subspace.
//
// A Subspace holds a raw prefix: raw_prefix + pack(prefix tuple). Keys inside it are
// prefix + pack(t). range(t) covers every strict extension of t under the prefix, and
// contains() is the plain prefix test (so contains(key()) is true though key() lies
// outside range()).
//
// Thread safety: a Subspace is an immutable value; concurrent use is safe.
#pragma once

#include <string>
#include <string_view>

#include "strata/tuple.hpp"
#include "strata/types.hpp"

namespace strata {

class Subspace {
 public:
  // The empty prefix: every key is inside.
  Subspace();
  // Prefix raw_prefix + prefix.pack(). Throws as Tuple::pack().
  explicit Subspace(const Tuple& prefix, std::string_view raw_prefix = {});

  // The child subspace: key() + pack((e,)).
  [[nodiscard]] Subspace operator[](const Element& e) const;
  // The child subspace: key() + pack(t).
  [[nodiscard]] Subspace subspace(const Tuple& t) const;
  // The raw prefix.
  const std::string& key() const { return prefix_; }

  // key() + t.pack(). Throws as Tuple::pack().
  [[nodiscard]] std::string pack(const Tuple& t = {}) const;
  // key() + t.pack() + the 4-byte little-endian offset of the incomplete versionstamp,
  // counted from the start of the key (prefix included). Throws as
  // Tuple::pack_with_versionstamp().
  [[nodiscard]] std::string pack_with_versionstamp(const Tuple& t) const;
  // The tuple after the prefix. Throws Error(key_not_in_subspace) if !contains(key), and
  // Error(invalid_tuple) if the rest is malformed (offsets count from the start of `key`).
  [[nodiscard]] Tuple unpack(std::string_view key) const;
  // [key() + t.pack() + 0x00, key() + t.pack() + 0xFF): every strict extension of t.
  [[nodiscard]] KeyRange range(const Tuple& t = {}) const;
  // Whether `key` starts with key().
  [[nodiscard]] bool contains(std::string_view key) const;

  friend bool operator==(const Subspace&, const Subspace&) = default;

 private:
  std::string prefix_;
};

// The first key after every key that starts with `key`: drop trailing 0xFF bytes, then
// add one to the last byte. Throws Error(invalid_argument) if `key` is empty or all 0xFF.
std::string strinc(std::string_view key);

}  // namespace strata
