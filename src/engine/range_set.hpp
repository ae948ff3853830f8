// engine/range_set.hpp: a set of half-open key ranges, kept disjoint and coalesced.
//
// Used for a transaction's cleared ranges and for conflict ranges.
// Thread safety: none (owned by one transaction).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

namespace strata::engine {

class RangeSet {
 public:
  // Adds [begin, end); empty ranges are ignored. Overlapping or touching ranges merge.
  void insert(std::string_view begin, std::string_view end);
  bool contains(std::string_view key) const;
  // The range containing `key`, or nullptr.
  const std::pair<const std::string, std::string>* find(std::string_view key) const;
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
  void clear() { ranges_.clear(); }
  std::vector<KeyRange> to_vector() const;

 private:
  std::map<std::string, std::string, std::less<>> ranges_;  // begin -> end
};

// Sorts and merges overlapping or touching ranges in place.
void coalesce(std::vector<KeyRange>& ranges);

}  // namespace strata::engine
