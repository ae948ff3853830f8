// engine/range_set.hpp: a set of half-open key ranges, kept disjoint and coalesced.
//
// Used for a transaction's cleared ranges and for conflict ranges.
// Thread safety: none (owned by one transaction).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/types.hpp"

#include "base/arena.hpp"
#include "base/arena_vector.hpp"
#include "base/copy_bytes.hpp"

namespace strata::engine {

class RangeSet {
 public:
  // Adds [begin, end); empty ranges are ignored. Overlapping or touching ranges merge.
  void insert(std::string_view begin, std::string_view end);
  // Removes [begin, end): ranges inside it go, ranges across its ends are cut.
  void erase(std::string_view begin, std::string_view end);
  // Both are asked on every get() and range read, nearly always of an empty set: the empty
  // case is inline.
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // The range containing `key`, or nullptr.
  const std::pair<const std::string, std::string>* find(std::string_view key) const {
    return ranges_.empty() ? nullptr : find_in_ranges(key);
  }
  // The first range that ends after `key` (contains it or lies beyond), or end().
  auto lower_bound_end(std::string_view key) const {
    auto it = ranges_.upper_bound(key);
    if (it != ranges_.begin()) {
      auto prev = std::prev(it);
      if (std::string_view(prev->second) > key) return prev;
    }
    return it;
  }
  auto begin() const { return ranges_.begin(); }
  auto end() const { return ranges_.end(); }
  bool empty() const { return ranges_.empty(); }
  std::size_t size() const { return ranges_.size(); }
  // Free when empty (every transaction's reset clears two, nearly always empty): a map's
  // clear() walks and rewires its header even then.
  void clear() {
    if (!ranges_.empty()) ranges_.clear();
  }
  std::vector<KeyRange> to_vector() const;

 private:
  const std::pair<const std::string, std::string>* find_in_ranges(std::string_view key) const;

  std::map<std::string, std::string, std::less<>> ranges_;  // begin -> end
};

// A key range whose bytes live in a transaction's arena: both keys copied into one block,
// viewed. Nothing frees the block but the arena's release, so copies view the same bytes.
// (Two pmr::strings would cost two allocations and two constructions per range read.)
struct ArenaRange {
  // [b, e) copied into `arena`; with `end_after`, [b, e + "\0") (key_after(e): a limited
  // forward read's span ends just after its last row), built here rather than in a string
  // of its own.
  static ArenaRange copy(base::Arena& arena, std::string_view b, std::string_view e,
                         bool end_after = false) {
    const std::size_t end_size = e.size() + (end_after ? 1 : 0);
    auto* bytes = static_cast<char*>(arena.bump(b.size() + end_size, 1));
    base::copy_key_bytes(bytes, b);
    base::copy_key_bytes(bytes + b.size(), e);
    if (end_after) bytes[b.size() + e.size()] = '\0';
    return {std::string_view(bytes, b.size()), std::string_view(bytes + b.size(), end_size)};
  }

  std::string_view begin;
  std::string_view end;
};
using ArenaRanges = base::ArenaVector<ArenaRange>;

// Appends [b, e) (or [b, e + "\0")) to `out`, its bytes in out's arena. Out of line: the
// range reads that call it stay small enough to keep their fast paths tight.
[[gnu::noinline]] inline void append_range(ArenaRanges& out, std::string_view b, std::string_view e,
                                           bool end_after = false) {
  out.push_back(ArenaRange::copy(*out.arena(), b, e, end_after));
}

// Sorts and merges overlapping or touching ranges in place (a std::vector of KeyRange or
// ArenaRanges). The size check stays inline at every call (most commits have at most one
// range); the merge is out of line.
template <class Ranges>
[[gnu::noinline]] void merge_ranges(Ranges& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const auto& a, const auto& b) { return a.begin < b.begin; });
  std::size_t out = 0;
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin <= ranges[out].end) {
      if (ranges[i].end > ranges[out].end) ranges[out].end = std::move(ranges[i].end);
    } else {
      ++out;
      if (out != i) ranges[out] = std::move(ranges[i]);
    }
  }
  ranges.erase(ranges.begin() + static_cast<std::ptrdiff_t>(out + 1), ranges.end());
}

template <class Ranges>
void coalesce(Ranges& ranges) {
  if (ranges.size() > 1) merge_ranges(ranges);
}

}  // namespace strata::engine
