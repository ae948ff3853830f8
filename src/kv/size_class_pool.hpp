// kv/size_class_pool.hpp: exact-size memory for the store's skiplist nodes and version
// records.
//
// malloc pays a chunk header and rounds every block up to 16 bytes: a 40-byte node takes
// 48 bytes, a 120-byte version record 128. The store allocates two such blocks per key,
// so that rounding alone cost about 17 bytes per live key. This pool carves blocks of
// the exact size (rounded to 8 bytes) out of large slabs and keeps one free list per
// size, so freed blocks are reused by the next block of the same size and memory stays
// flat under churn. Blocks above kMaxPooled go to operator new.
//
// Slabs start at 64 KiB and double up to 2 MiB; slabs of 2 MiB are aligned to it and
// offered to the kernel for transparent huge pages, so a seek across a large store takes
// few TLB misses. Memory is returned to the system only when the pool is destroyed; a pool
// that once held many blocks of one size keeps them for later blocks of that size.
//
// Thread safety: none. The store allocates and frees only as the single writer (under
// the commit pipeline's lock); readers never touch the pool. Under AddressSanitizer free
// blocks are poisoned, so a use after free is still reported.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

namespace strata::kv {

class SizeClassPool {
 public:
  static constexpr std::size_t kGranule = 8;
  static constexpr std::size_t kMaxPooled = 1024;
  static constexpr std::size_t kFirstSlab = std::size_t{64} << 10;
  static constexpr std::size_t kHugeSlab = std::size_t{2} << 20;

  SizeClassPool() = default;
  ~SizeClassPool();
  SizeClassPool(const SizeClassPool&) = delete;
  SizeClassPool& operator=(const SizeClassPool&) = delete;

  // A block of at least `size` bytes, aligned to 8. Above kMaxPooled, a block reserve_large
  // took when one is big enough, else one from operator new. Throws std::bad_alloc.
  void* allocate(std::size_t size);
  // A block of at least `size` bytes that starts where `block` (allocate(block_size), the
  // newest block carved from a slab) ends, or nullptr when no such block is free. Either
  // pool of one owner may take it back: see MvccStore, which puts a new key's first
  // record right behind its node this way.
  void* allocate_after(const void* block, std::size_t block_size, std::size_t size);
  // REQUIRES: `p` came from allocate(size) or allocate_after(..., size) of this pool or of
  // another that outlives the block, and is not freed yet.
  void deallocate(void* p, std::size_t size) noexcept;
  // Makes `bytes` of blocks carvable without a new slab: blocks of up to kMaxPooled bytes
  // adding up to `bytes` then allocate nothing (from the free lists or the slabs). For a
  // writer that must not fail part-way: it reserves first, then allocates. When the pool
  // has the room already this is one comparison. Throws std::bad_alloc.
  void reserve(std::size_t bytes) {
    if (bytes > static_cast<std::size_t>(end_ - cursor_) + spare_room_) [[unlikely]] {
      reserve_slabs(bytes);
    }
  }
  // Whether a block of `size` (at most kMaxPooled) bytes allocates without a new slab.
  bool has_room(std::size_t size) const {
    const std::size_t cls = class_of(size);
    return free_[cls] != nullptr || static_cast<std::size_t>(end_ - cursor_) >= cls * kGranule ||
           !spares_.empty();
  }
  // The same for blocks above kMaxPooled, one at a time: takes a block of `size` bytes now,
  // which the next allocate of at most `size` bytes that finds no smaller reserved block
  // takes. (Blocks reserved for sizes s1..sn serve allocations of r1 <= s1, ..., rn <= sn
  // in any order.) Throws std::bad_alloc.
  void reserve_large(std::size_t size);
  // Frees the blocks reserve_large took that no allocate has.
  void release_large() noexcept {
    if (!large_.empty()) release_large_blocks();
  }

  // While on, in builds that check invariants (base/invariant.hpp), taking memory from the
  // system (a new slab, or a block above kMaxPooled that reserve_large did not take) fails
  // an invariant: for a writer that reserved everything it allocates, so that reserving too
  // little shows even where the allocation would have succeeded.
  void expect_reserved(bool on) { reserved_only_ = on; }

  // Bytes taken from the system for slabs (blocks above kMaxPooled not included).
  std::size_t slab_bytes() const { return slab_bytes_; }
  // Blocks above kMaxPooled allocated here less those deallocated here. A block may be
  // given back through another pool of its owner, so an owner adds up its pools' counts:
  // at 0 every block it holds is in a slab, and the slabs free them all.
  std::ptrdiff_t large_blocks() const { return large_blocks_; }

  // Take huge slabs from `source` while it has them ready (nullptr: allocate them here).
  // `source` must outlive its use here; see kv/slab_source.hpp.
  void set_slab_source(class SlabSource* source) { source_ = source; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Slab {
    void* memory;
    std::size_t size;
  };
  // A size's class: its block of class_of(size) * kGranule bytes (0 bytes take one granule).
  static std::size_t class_of(std::size_t size) {
    return (std::max<std::size_t>(size, 1) + kGranule - 1) / kGranule;
  }
  void* carve(std::size_t bytes);
  void reserve_slabs(std::size_t bytes);  // reserve()'s work when the room is short
  [[gnu::noinline]] void* allocate_large(std::size_t size);  // allocate() above kMaxPooled
  void* take_large(std::size_t size);  // the smallest reserved block that holds `size`
  void release_large_blocks() noexcept;
  void add_slab();  // the first spare, else a new slab
  std::size_t next_slab_size() const;
  Slab take_slab(std::size_t size);  // from the system (or source_)
  void push_free(void* p, std::size_t cls) noexcept;

  std::array<FreeBlock*, kMaxPooled / kGranule + 1> free_{};
  std::vector<Slab> slabs_;
  // Reserved, not carved from yet: add_slab takes them in order. slabs_ has the capacity
  // to take them all (so add_slab allocates nothing while there is one).
  std::vector<Slab> spares_;
  std::size_t spare_room_ = 0;  // what the spares hold for reserve(): each size - kMaxPooled
  std::vector<Slab> large_;     // blocks above kMaxPooled taken by reserve_large
  std::size_t slab_bytes_ = 0;
  std::ptrdiff_t large_blocks_ = 0;  // see large_blocks()
  std::byte* cursor_ = nullptr;      // the unused rest of the newest slab
  std::byte* end_ = nullptr;
  class SlabSource* source_ = nullptr;
  bool reserved_only_ = false;  // expect_reserved
};

}  // namespace strata::kv
