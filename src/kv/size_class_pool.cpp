#include "kv/size_class_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "base/asan.hpp"
#include "base/invariant.hpp"
#include "kv/slab_source.hpp"
#include <sys/mman.h>

namespace strata::kv {

SizeClassPool::~SizeClassPool() {
  release_large();
  slabs_.insert(slabs_.end(), spares_.begin(), spares_.end());  // room reserved by reserve()
  for (const Slab& slab : slabs_) {
    // Unpoisoned: the system allocator may hand these bytes out again.
    STRATA_UNPOISON(slab.memory, slab.size);
    std::free(slab.memory);
  }
}

void* SizeClassPool::allocate(std::size_t size) {
  if (size > kMaxPooled) {
    void* p = allocate_large(size);
    ++large_blocks_;
    return p;
  }
  std::size_t cls = class_of(size);
  std::size_t bytes = cls * kGranule;
  if (FreeBlock* b = free_[cls]) {
    STRATA_UNPOISON(b, bytes);
    free_[cls] = b->next;
    return b;
  }
  return carve(bytes);
}

void* SizeClassPool::allocate_after(const void* block, std::size_t block_size, std::size_t size) {
  if (block_size > kMaxPooled || size > kMaxPooled) return nullptr;
  const std::size_t bytes = class_of(size) * kGranule;
  const auto* block_end = static_cast<const std::byte*>(block) + class_of(block_size) * kGranule;
  if (block_end != cursor_ || static_cast<std::size_t>(end_ - cursor_) < bytes) return nullptr;
  return carve(bytes);
}

void SizeClassPool::deallocate(void* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  if (size > kMaxPooled) {
    ::operator delete(p);
    --large_blocks_;
    return;
  }
  push_free(p, class_of(size));
}

void SizeClassPool::reserve_slabs(std::size_t bytes) {
  // Each change of slab may leave up to a block's size unused at the old slab's end.
  std::size_t room = static_cast<std::size_t>(end_ - cursor_) + spare_room_;
  while (room < bytes) {
    spares_.reserve(spares_.size() + 1);  // so that push_back below cannot throw and leak
    const Slab s = take_slab(next_slab_size());
    spares_.push_back(s);
    spare_room_ += s.size - kMaxPooled;
    room += s.size - kMaxPooled;
  }
  slabs_.reserve(slabs_.size() + spares_.size());
}

void SizeClassPool::reserve_large(std::size_t size) {
  // Room first, so that push_back below cannot throw and leak.
  if (large_.size() == large_.capacity()) large_.reserve(2 * large_.size() + 4);
  large_.push_back({::operator new(size), size});
}

void* SizeClassPool::allocate_large(std::size_t size) {
  if (large_.empty()) {
    STRATA_INVARIANT(!reserved_only_);
    return ::operator new(size);
  }
  return take_large(size);
}

void* SizeClassPool::take_large(std::size_t size) {
  auto best = large_.end();
  for (auto it = large_.begin(); it != large_.end(); ++it) {
    if (it->size >= size && (best == large_.end() || it->size < best->size)) best = it;
  }
  if (best == large_.end()) {
    STRATA_INVARIANT(!reserved_only_);
    return ::operator new(size);
  }
  void* p = best->memory;
  *best = large_.back();
  large_.pop_back();
  return p;
}

void SizeClassPool::release_large_blocks() noexcept {
  for (const Slab& block : large_) ::operator delete(block.memory);
  large_.clear();
}

void* SizeClassPool::carve(std::size_t bytes) {
  if (static_cast<std::size_t>(end_ - cursor_) < bytes) {
    // The old slab's tail becomes a free block of its own size rather than a hole.
    auto rest = static_cast<std::size_t>(end_ - cursor_);
    if (rest >= kGranule) push_free(cursor_, rest / kGranule);
    add_slab();
  }
  void* p = cursor_;
  cursor_ += bytes;
  STRATA_UNPOISON(p, bytes);
  return p;
}

std::size_t SizeClassPool::next_slab_size() const {
  const std::vector<Slab>& newest = spares_.empty() ? slabs_ : spares_;
  return newest.empty() ? kFirstSlab : std::min(2 * newest.back().size, kHugeSlab);
}

SizeClassPool::Slab SizeClassPool::take_slab(std::size_t size) {
  void* memory = size == kHugeSlab && source_ != nullptr ? source_->take() : nullptr;
  if (memory == nullptr) {
    memory = size == kHugeSlab ? std::aligned_alloc(kHugeSlab, size) : std::malloc(size);
    if (memory == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    // Advice only: without huge pages the slab works the same, with more TLB misses.
    if (size == kHugeSlab) ::madvise(memory, size, MADV_HUGEPAGE);
#endif
  }
  slab_bytes_ += size;
  STRATA_POISON(memory, size);
  return {memory, size};
}

void SizeClassPool::add_slab() {
  slabs_.reserve(slabs_.size() + 1);  // so that push_back below cannot throw and leak
  Slab slab{};
  if (!spares_.empty()) {  // reserved: nothing to allocate
    slab = spares_.front();
    spares_.erase(spares_.begin());
    spare_room_ -= slab.size - kMaxPooled;
  } else {
    STRATA_INVARIANT(!reserved_only_);
    slab = take_slab(next_slab_size());
  }
  slabs_.push_back(slab);
  cursor_ = static_cast<std::byte*>(slab.memory);
  end_ = cursor_ + slab.size;
}

void SizeClassPool::push_free(void* p, std::size_t cls) noexcept {
  STRATA_UNPOISON(p, sizeof(FreeBlock));
  auto* b = static_cast<FreeBlock*>(p);
  b->next = free_[cls];
  free_[cls] = b;
  STRATA_POISON(p, cls * kGranule);
}

}  // namespace strata::kv
