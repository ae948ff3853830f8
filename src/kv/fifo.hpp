// kv/fifo.hpp: a first-in, first-out queue of small trivially copyable items in a ring.
//
// The store's collection queues take several pushes and pops per commit. std::deque
// allocates and frees a 512-byte block every few dozen items; this ring allocates only to
// double when full, so a queue whose length stays flat allocates nothing. A queue that
// empties keeps a small ring and gives a large one back.
//
// Thread safety: none; the owner serializes access.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace strata::kv {

template <class T>
class Fifo {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>);

 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return ring_[head_]; }
  const T& front() const { return ring_[head_]; }
  // The i-th item from the front.
  const T& operator[](std::size_t i) const { return ring_[(head_ + i) & mask_]; }

  [[gnu::always_inline]] void push_back(const T& item) {
    if (size_ == capacity()) grow();
    ring_[(head_ + size_) & mask_] = item;
    ++size_;
  }
  // Room for `n` more items: the next n push_backs allocate nothing (it doubles, as a
  // push_back does). Throws std::bad_alloc.
  void reserve_more(std::size_t n) {
    if (capacity() - size_ < n) [[unlikely]]
      grow_for(n);
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    if (--size_ == 0 && capacity() > kKeptCapacity) give_back();
  }
  // Has `*room` set to 0 whenever the queue gives its ring back (room the owner counted on
  // is gone then). `room` must outlive the queue.
  void zero_on_give_back(std::size_t* room) { zero_on_give_back_ = room; }

 private:
  static constexpr std::size_t kKeptCapacity = 4096;  // items kept when the queue empties

  // Without a ring mask_ is all ones: the capacity is then 0 without a look at ring_.
  std::size_t capacity() const { return mask_ + 1; }
  void give_back() {
    ring_.reset();
    mask_ = kNoRing;
    if (zero_on_give_back_ != nullptr) *zero_on_give_back_ = 0;
  }
  [[gnu::noinline]] void grow_for(std::size_t n) {
    while (capacity() - size_ < n) grow();
  }
  // Out of line: push_back, inline, asks only whether the ring is full.
  [[gnu::noinline]] void grow() {
    const std::size_t next = capacity() == 0 ? 16 : 2 * capacity();
    std::unique_ptr<T[]> ring(new T[next]);
    for (std::size_t i = 0; i < size_; ++i) ring[i] = (*this)[i];
    ring_ = std::move(ring);
    mask_ = next - 1;
    head_ = 0;
  }

  std::unique_ptr<T[]> ring_;
  static constexpr std::size_t kNoRing = ~std::size_t{0};
  std::size_t mask_ = kNoRing;  // capacity - 1 (a power of two), kNoRing without a ring
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t* zero_on_give_back_ = nullptr;
};

}  // namespace strata::kv
