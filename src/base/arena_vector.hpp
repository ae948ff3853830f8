// base/arena_vector.hpp: a growable array of trivially copyable values in a base::Arena.
//
// For a transaction's short lists (its read conflict ranges, the keys it read): a push is a
// store, and a full array moves to twice the room, bump-allocated, leaving the old room in
// the arena until its release. A std::pmr::vector does the same through the polymorphic
// allocator's virtual calls and its general growth path. The first kFirstCapacity elements
// have room in the array itself, so a transaction that reads a range or a key or two grows
// nothing (each transaction starts its lists anew: forget()).
//
// Thread safety: none. The arena must outlive the array, and forget() must be called before
// the arena is released if the array is to be used again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/arena.hpp"

namespace strata::base {

template <class T>
class ArenaVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "elements are copied as bytes and never destroyed");

 public:
  explicit ArenaVector(Arena* arena) : arena_(arena) {}
  // Not copied: a copy would view the original's inline room.
  ArenaVector(const ArenaVector&) = delete;
  ArenaVector& operator=(const ArenaVector&) = delete;

  Arena* arena() const { return arena_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == capacity_) grow();
    data_[size_++] = value;
  }
  // Removes [first, last), moving the elements after it down.
  void erase(T* first, T* last) {
    T* tail = std::copy(last, end(), first);
    size_ = static_cast<std::size_t>(tail - data_);
  }
  // Empties the array and lets go of its room in the arena (which the arena's owner may
  // then release): it is back to its inline room.
  void forget() {
    data_ = inline_data();
    size_ = 0;
    capacity_ = kFirstCapacity;
  }

 private:
  static constexpr std::size_t kFirstCapacity = 2;

  // Out of line: a push that grows is rare, and inlined it would give every push a frame.
  [[gnu::noinline]] void grow() {
    const std::size_t capacity = 2 * capacity_;
    T* grown = static_cast<T*>(arena_->bump(capacity * sizeof(T), alignof(T)));
    std::copy(data_, data_ + size_, grown);
    data_ = grown;
    capacity_ = capacity;
  }
  T* inline_data() { return reinterpret_cast<T*>(inline_room_); }

  Arena* arena_;
  alignas(T) std::byte inline_room_[kFirstCapacity * sizeof(T)];
  T* data_ = inline_data();
  std::size_t size_ = 0;
  std::size_t capacity_ = kFirstCapacity;
};

}  // namespace strata::base
