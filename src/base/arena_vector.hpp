// base/arena_vector.hpp: a growable array of trivially copyable values in a base::Arena.
//
// For a transaction's short lists (its read conflict ranges, the keys it read): a push is a
// store, and a full array moves to twice the room, bump-allocated, leaving the old room in
// the arena until its release. A std::pmr::vector does the same through the polymorphic
// allocator's virtual calls and its general growth path.
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
  // Empties the array and lets go of its room (which the arena's owner may then release).
  void forget() {
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
  }

 private:
  static constexpr std::size_t kFirstCapacity = 2;

  void grow() {
    const std::size_t capacity = capacity_ == 0 ? kFirstCapacity : 2 * capacity_;
    T* grown = static_cast<T*>(arena_->bump(capacity * sizeof(T), alignof(T)));
    std::copy(data_, data_ + size_, grown);
    data_ = grown;
    capacity_ = capacity;
  }

  Arena* arena_;
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace strata::base
