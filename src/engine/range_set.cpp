#include "engine/range_set.hpp"

namespace strata::engine {

void RangeSet::insert(std::string_view begin, std::string_view end) {
  if (begin >= end) return;
  std::string b(begin), e(end);
  // Merge with a range that starts before `begin` and reaches it.
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (std::string_view(prev->second) >= begin) {
      b = prev->first;
      if (prev->second > e) e = prev->second;
      it = ranges_.erase(prev);
    }
  }
  // Swallow ranges that start inside [b, e].
  while (it != ranges_.end() && std::string_view(it->first) <= std::string_view(e)) {
    if (it->second > e) e = it->second;
    it = ranges_.erase(it);
  }
  ranges_.emplace_hint(it, std::move(b), std::move(e));
}

void RangeSet::erase(std::string_view begin, std::string_view end) {
  if (begin >= end) return;
  for (auto it = lower_bound_end(begin);
       it != ranges_.end() && std::string_view(it->first) < end;) {
    std::string b = it->first, e = it->second;
    it = ranges_.erase(it);
    if (std::string_view(b) < begin) ranges_.emplace(std::move(b), std::string(begin));
    if (std::string_view(e) > end) {
      ranges_.emplace(std::string(end), std::move(e));
      return;
    }
  }
}

const std::pair<const std::string, std::string>* RangeSet::find_in_ranges(
    std::string_view key) const {
  auto it = ranges_.upper_bound(key);
  if (it == ranges_.begin()) return nullptr;
  --it;
  return std::string_view(it->second) > key ? &*it : nullptr;
}

std::vector<KeyRange> RangeSet::to_vector() const {
  std::vector<KeyRange> out;
  out.reserve(ranges_.size());
  for (const auto& [b, e] : ranges_) out.push_back({b, e});
  return out;
}

}  // namespace strata::engine
