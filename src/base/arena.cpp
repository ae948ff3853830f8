#include "base/arena.hpp"

#include <algorithm>

namespace strata::base {

void* Arena::allocate_from_new_block(std::size_t bytes, std::size_t alignment) {
  const std::size_t header = std::max(sizeof(Block), alignof(std::max_align_t));
  if (bytes > SIZE_MAX / 2 - header - alignment) throw std::bad_alloc();
  const std::size_t size = std::max(next_block_size_, header + bytes + alignment);
  next_block_size_ = std::min(next_block_size_ * 2, kMaxBlockBytes);
  auto* block = static_cast<Block*>(::operator new(size));
  block->previous = blocks_;
  blocks_ = block;
  next_ = reinterpret_cast<std::byte*>(block) + header;
  end_ = reinterpret_cast<std::byte*>(block) + size;
  return do_allocate(bytes, alignment);
}

void Arena::release_blocks() noexcept {
  while (blocks_ != nullptr) {
    Block* b = blocks_;
    blocks_ = b->previous;
    ::operator delete(static_cast<void*>(b));
  }
  end_ = initial_ + initial_size_;
  next_block_size_ = kFirstBlockBytes;
}

}  // namespace strata::base
