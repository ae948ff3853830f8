// base/arena.hpp: a transaction's bump allocator, as a std::pmr::memory_resource.
//
// What std::pmr::monotonic_buffer_resource does (an inline first buffer, then blocks from
// the heap, nothing freed until release()), with the common case inline: the class is
// final and its allocate path is in this header, so a call through a pmr container that
// the compiler sees is an Arena (or guesses: speculative devirtualization) is a pointer
// bump. libstdc++'s do_allocate is out of line, and a queue operation allocates about
// nine times.
//
// Thread safety: none (one transaction's). Memory: blocks double from the inline size up
// to 64 KiB; release() frees them all and rewinds to the inline buffer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>
#include <string_view>

#include "base/copy_bytes.hpp"

namespace strata::base {

class Arena final : public std::pmr::memory_resource {
 public:
  // `buffer` (of `size` bytes) is used first and must outlive the arena.
  Arena(void* buffer, std::size_t size) noexcept
      : initial_(static_cast<std::byte*>(buffer)),
        initial_size_(size),
        next_(initial_),
        end_(initial_ + size) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() override { release(); }

  // allocate() without the virtual call, for callers that hold an Arena. Always inlined:
  // GCC otherwise keeps it out of line at some calls, and the call then costs more than the
  // bump (the slow path stays out of line).
  [[gnu::always_inline]] void* bump(std::size_t bytes, std::size_t alignment) {
    // pmr alignments are powers of two: the padding up to the next multiple of one.
    const std::size_t padding =
        (0 - reinterpret_cast<std::uintptr_t>(next_)) & (std::uintptr_t{alignment} - 1);
    const auto room = static_cast<std::size_t>(end_ - next_);
    if (padding <= room && bytes <= room - padding) {  // (no sum that could wrap around)
      std::byte* p = next_ + padding;
      next_ = p + bytes;
      return p;
    }
    return allocate_from_new_block(bytes, alignment);
  }

  // `bytes` copied into the arena, viewed (valid until release()). Its callers copy keys
  // (a write map's, a read conflict's): copy_key_bytes copies those without a call, and
  // inlined (as bump()), the copy makes no call either.
  [[gnu::always_inline]] std::string_view copy(std::string_view bytes) {
    auto* to = static_cast<char*>(bump(bytes.size(), 1));
    copy_key_bytes(to, bytes);
    return {to, bytes.size()};
  }

  // Frees every heap block and rewinds to the inline buffer. Everything allocated before
  // is gone. Every transaction's reset calls it, and most used the inline buffer only:
  // then only the bump pointer moves (end_ and next_block_size_ change only with a block).
  void release() noexcept {
    if (blocks_ != nullptr) release_blocks();
    next_ = initial_;
  }

 private:
  struct Block {
    Block* previous;
  };
  static constexpr std::size_t kFirstBlockBytes = 1024;
  static constexpr std::size_t kMaxBlockBytes = std::size_t{64} << 10;

  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    return bump(bytes, alignment);
  }
  void do_deallocate(void*, std::size_t, std::size_t) override {}  // freed by release()
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  // Slow path, out of line (inlined, it would make every allocate save and restore
  // registers): a new heap block big enough for `bytes` at `alignment`. Throws
  // std::bad_alloc when no block can be that big (as operator new would).
  void* allocate_from_new_block(std::size_t bytes, std::size_t alignment);
  // release()'s part for an arena that has heap blocks: frees them, and end_ and
  // next_block_size_ return to the inline buffer's.
  void release_blocks() noexcept;

  std::byte* const initial_;
  const std::size_t initial_size_;
  std::byte* next_;
  std::byte* end_;
  Block* blocks_ = nullptr;
  std::size_t next_block_size_ = kFirstBlockBytes;
};

}  // namespace strata::base
