// recipes/random_id.hpp: the 20 random bytes that make recipe keys unique.
//
// Uniqueness, not secrecy: each thread owns a wyrand generator seeded once from
// std::random_device (64 bits), so an id costs no system call. Threads' generator states are
// stretches of one 2^64-long cycle starting at random points: two overlap within a run
// of 10^12 draws each with odds near 10^-7.
// Thread safety: safe from any thread (the generator is thread_local).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

namespace strata::recipes_detail {

inline constexpr std::size_t kRandomIdSize = 20;

// kRandomIdSize random bytes.
Bytes random_id();

// subspace.pack((position, random_id())): a queue or priority-queue item key, built in
// one string (no Tuple, no id string in between). `prefix` is the subspace's key(). The string is
// the calling thread's and the next call on the thread reuses it: the view is valid until then.
std::string_view numbered_item_key(std::string_view prefix, std::int64_t position);
inline std::string_view numbered_item_key(const Subspace& subspace, std::int64_t position) {
  return numbered_item_key(std::string_view(subspace.key()), position);
}
// The same key built in `buffer`, whose first `prefix_size` bytes already hold the prefix
// (a caller that built the prefix there is spared its copy); the rest is overwritten, and
// the buffer grows when it must. The view is valid until the buffer next changes.
std::string_view numbered_item_key_after(std::string& buffer, std::size_t prefix_size,
                                         std::int64_t position);

// subspace.unpack(key)[0] as an integer: the position of an item key, decoded without
// unpacking the id after it (no Tuple, no copy of the id). Throws what unpack() and
// get<std::int64_t>() would for a key outside the subspace or a first element that is bad
// or not an integer.
std::int64_t item_position(std::string_view prefix, std::string_view key);
inline std::int64_t item_position(const Subspace& subspace, std::string_view key) {
  return item_position(std::string_view(subspace.key()), key);
}

}  // namespace strata::recipes_detail
