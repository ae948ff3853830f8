#include "engine/point_map.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <new>

#include "base/invariant.hpp"

namespace strata::engine {

std::size_t PointMap::array_index(std::string_view key) const {
  const PointEntry* it = std::lower_bound(array_, array_ + size_, key, Less());
  return static_cast<std::size_t>(it - array_);
}

PointWrite& PointMap::find_or_insert_slow(std::string_view key) {
  if (!in_tree_) {
    // Appending (one key, or keys in ascending order) moves nothing; find_or_insert()
    // appends itself unless the array is full.
    if (size_ == 0 || array_[size_ - 1].first < key) {
      if (size_ == capacity_) grow();
      auto* entry = new (array_ + size_) PointEntry{arena_->copy(key), {}};
      ++size_;
      return entry->second;
    }
    const std::size_t at = array_index(key);
    if (array_[at].first == key) return array_[at].second;
    if (size_ - at <= kMaxShift) return insert_in_array(at, key);
    move_to_tree();
  }
  auto it = tree_.lower_bound(key);
  if (it == tree_.end() || it->first != key)
    it = tree_.emplace_hint(it, PointEntry{arena_->copy(key), {}});
  return it->second;
}

void PointMap::grow() {
  // The old array (the inline one, or one in the arena) is abandoned: growth by doubling
  // bounds the waste.
  const std::uint32_t capacity = 2 * capacity_;
  auto* grown =
      static_cast<PointEntry*>(arena_->bump(capacity * sizeof(PointEntry), alignof(PointEntry)));
  std::uninitialized_move(array_, array_ + size_, grown);
  std::destroy(array_, array_ + size_);
  array_ = grown;
  capacity_ = capacity;
}

PointWrite& PointMap::insert_in_array(std::size_t at, std::string_view key) {
  STRATA_INVARIANT(at < size_);
  if (size_ == capacity_) grow();
  const std::string_view copy = arena_->copy(key);
  new (array_ + size_) PointEntry(std::move(array_[size_ - 1]));
  std::move_backward(array_ + at, array_ + size_ - 1, array_ + size_);
  array_[at] = PointEntry{copy, {}};
  ++size_;
  return array_[at].second;
}

void PointMap::assign(PointWrite& w, std::string_view value) {
  if (value.size() > w.capacity) {
    const std::size_t room = std::max<std::size_t>(value.size(), std::size_t{2} * w.capacity);
    w.bytes = static_cast<char*>(arena_->bump(room, 1));
    w.capacity = static_cast<std::uint32_t>(room);
  }
  std::copy(value.begin(), value.end(), w.bytes);
  w.size = static_cast<std::uint32_t>(value.size());
}

void PointMap::erase(std::string_view begin, std::string_view end) {
  if (begin >= end) return;
  if (!in_tree_) {
    const std::size_t first = array_index(begin);
    const std::size_t last = array_index(end);
    if (first == last) return;
    if (size_ - last <= kMaxShift) {
      erase_in_array(first, last);
      return;
    }
    move_to_tree();
  }
  tree_.erase(tree_.lower_bound(begin), tree_.lower_bound(end));
}

void PointMap::erase_in_array(std::size_t first, std::size_t last) {
  PointEntry* tail = std::move(array_ + last, array_ + size_, array_ + first);
  std::destroy(tail, array_ + size_);
  size_ = static_cast<std::uint32_t>(tail - array_);
}

void PointMap::destroy_array() {
  std::destroy(array_, array_ + size_);
  array_ = inline_array();
  size_ = 0;
  capacity_ = kInlineCapacity;
}

void PointMap::clear() {
  if (in_tree_) {  // the tree is empty while the array holds the entries
    tree_.clear();
    in_tree_ = false;
  }
  destroy_array();
}

void PointMap::move_to_tree() {
  for (std::size_t i = 0; i < size_; ++i) tree_.emplace_hint(tree_.end(), std::move(array_[i]));
  destroy_array();
  in_tree_ = true;
}

}  // namespace strata::engine
