// kv/point_index.hpp: a hash index from key to skiplist node, kept beside the list so that
// a point lookup costs a probe and the node itself instead of a seek.
//
// A seek over a million keys steps through about 36 nodes, and the last levels' nodes are
// cache misses one after the other (each address comes out of the node before it). Here a
// lookup reads one or two adjacent cache lines of the table and then the node it wants.
//
// Layout: open addressing with linear probing over 64-bit slots. A slot is empty (0), a
// tombstone (1: an erased entry that probes must step over), or a node pointer with a
// 16-bit fingerprint of the key's hash in its top bits (user-space pointers use 48 bits),
// so probes past other keys rarely touch their nodes. The table keeps at most kMaxLoad of
// its slots used (entries and tombstones) and is rebuilt, with tombstones dropped, at
// kRebuildLoad of the live entries when that limit is reached, or when it is mostly empty.
// Memory: 8 B per slot, 9.4-12.8 B per live key.
//
// Thread safety: one writer (insert, erase) and lock-free readers (find), like the list.
// A reader must hold a reclamation pin: a rebuilt table is handed to the caller's
// `retire` callback, to be freed once no reader can still be probing it.
// Invariants:
//   - A node is in the table exactly while it is linked in the list; the writer inserts
//     after linking and erases when unlinking, both before the commit that needs them is
//     published, so a reader at a published version finds what the list would.
//   - A table always has empty slots, so every probe sequence ends.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string_view>

#include <sys/mman.h>

namespace strata::kv {

template <class Node>
class PointIndex {
 public:
  // A table that is no longer current; free it with PointIndex::destroy once no reader
  // can hold it.
  struct Table;

  PointIndex() : table_(make_table(kMinCapacity)) {}
  ~PointIndex() { destroy(table_.load(std::memory_order_relaxed)); }
  PointIndex(const PointIndex&) = delete;
  PointIndex& operator=(const PointIndex&) = delete;

  // Reader (pinned) or writer: the linked node with `key`, or nullptr.
  Node* find(std::string_view key) const { return find(key, hash(key)); }
  // The same with hash(key) computed by the caller (it may pass it on to insert).
  Node* find(std::string_view key, std::uint64_t h) const {
    const Table* t = table_.load(std::memory_order_acquire);
    const std::uint64_t fp = fingerprint(h);
    for (std::size_t i = t->home(h);; i = t->after(i)) {
      const std::uint64_t s = t->slots[i].load(std::memory_order_acquire);
      if (s == kEmpty) return nullptr;
      if ((s & kFingerprintMask) == fp && s != kTombstone) {
        Node* n = node_of(s);
        if (n->key() == key) return n;
      }
    }
  }

  // Writer. REQUIRES: `node` is linked and no other node with its key is in the index.
  // Returns a table the caller must retire, or nullptr.
  Table* insert(Node* node) { return insert(node, hash(node->key())); }
  // The same with h == hash(node->key()).
  Table* insert(Node* node, std::uint64_t h) {
    check_address(node);
    Table* t = table_.load(std::memory_order_relaxed);
    Table* old = nullptr;
    if (t->used + 1 > t->capacity * kMaxLoadPercent / 100) {
      old = rebuilt(*t, t->live + 1);
      t = table_.load(std::memory_order_relaxed);
    }
    place(*t, node, h, true);
    ++t->live;
    return old;
  }

  // Writer. REQUIRES: `node` is in the index. Returns a table to retire, or nullptr.
  Table* erase(Node* node) {
    Table* t = table_.load(std::memory_order_relaxed);
    const std::uint64_t h = hash(node->key());
    const std::uint64_t want = (fingerprint(h)) | reinterpret_cast<std::uintptr_t>(node);
    std::size_t i = t->home(h);
    while (t->slots[i].load(std::memory_order_relaxed) != want) i = t->after(i);
    // A reader that still finds the node is pinned, and the node stays valid for it.
    t->slots[i].store(kTombstone, std::memory_order_release);
    --t->live;
    if (t->capacity > kMinCapacity && t->live < t->capacity / kShrinkDivisor) {
      return rebuilt(*t, t->live);
    }
    return nullptr;
  }

  static std::uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

  std::size_t size() const { return table_.load(std::memory_order_relaxed)->live; }
  std::size_t capacity() const { return table_.load(std::memory_order_relaxed)->capacity; }

  static void destroy(Table* t) {
    t->~Table();
    std::free(t);
  }

  struct Table {
    __extension__ using Wide = unsigned __int128;
    std::size_t capacity;
    std::size_t live = 0;  // writer only: nodes in the table
    std::size_t used = 0;  // writer only: live + tombstones
    std::atomic<std::uint64_t>* slots;

    // Multiply-shift onto [0, capacity): capacity need not be a power of two, so the
    // table can grow by less than 2x.
    std::size_t home(std::uint64_t h) const {
      return static_cast<std::size_t>((static_cast<Wide>(h) * capacity) >> 64U);
    }
    std::size_t after(std::size_t i) const { return i + 1 == capacity ? 0 : i + 1; }
  };

 private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kTombstone = 1;  // no node is at address 1
  static constexpr int kPointerBits = 48;
  static constexpr std::uint64_t kFingerprintMask = ~std::uint64_t{0} << kPointerBits;
  static constexpr std::size_t kMinCapacity = 64;
  static constexpr std::size_t kMaxLoadPercent = 90;
  static constexpr std::size_t kRebuildLoadPercent = 72;
  static constexpr std::size_t kShrinkDivisor = 8;
  static constexpr std::size_t kLine = 64;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kPrefetchDistance = 16;

  // The hash's low bits: home() uses its high bits.
  static std::uint64_t fingerprint(std::uint64_t h) { return h << kPointerBits; }
  static Node* node_of(std::uint64_t s) {
    return reinterpret_cast<Node*>(static_cast<std::uintptr_t>(s & ~kFingerprintMask));
  }

  // Linux hands out user addresses above 2^47 only to a program that asks for them.
  static void check_address(const Node* node) {
    if ((reinterpret_cast<std::uintptr_t>(node) & kFingerprintMask) != 0) {
      std::fprintf(stderr, "strata: node address %p does not fit in 48 bits\n",
                   static_cast<const void*>(node));
      std::abort();
    }
  }

  // Tables of 2 MiB and more are aligned to it and advised for transparent huge pages (up
  // to their last whole huge page, so that no huge page is mostly unused): with 4 KiB
  // pages, a probe into a table of 1 M keys paid a TLB miss as well as the cache miss.
  static Table* make_table(std::size_t capacity) {
    const std::size_t bytes = sizeof(Table) + capacity * sizeof(std::uint64_t);
    const std::size_t align = bytes >= kHugePage ? kHugePage : kLine;
    void* mem = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (mem == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) ::madvise(mem, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
    auto* t = new (mem) Table{capacity, 0, 0, nullptr};
    t->slots = reinterpret_cast<std::atomic<std::uint64_t>*>(t + 1);
    for (std::size_t i = 0; i < capacity; ++i) {
      new (&t->slots[i]) std::atomic<std::uint64_t>(kEmpty);
    }
    return t;
  }

  // Puts `node` in the first free slot of its probe sequence (a tombstone may be reused:
  // the node is known to be absent further on).
  static void place(Table& t, Node* node, std::uint64_t h, bool reuse_tombstones) {
    auto address = reinterpret_cast<std::uintptr_t>(node);
    std::size_t i = t.home(h);
    for (;;) {
      std::uint64_t s = t.slots[i].load(std::memory_order_relaxed);
      if (s == kEmpty || (reuse_tombstones && s == kTombstone)) {
        if (s == kEmpty) ++t.used;
        // Release: a reader that loads the slot sees the node built.
        t.slots[i].store(fingerprint(h) | address, std::memory_order_release);
        return;
      }
      i = t.after(i);
    }
  }

  // A new current table holding the live entries of `old`, sized for `live` of them.
  // Returns `old`, for the caller to retire.
  Table* rebuilt(Table& old, std::size_t live) {
    std::size_t capacity = live * 100 / kRebuildLoadPercent + 1;
    if (capacity < kMinCapacity) capacity = kMinCapacity;
    Table* t = make_table(capacity);
    for (std::size_t i = 0; i < old.capacity; ++i) {
      // Every entry's key is hashed again: fetch nodes a few slots ahead, so that the
      // misses overlap instead of following one another.
      if (i + kPrefetchDistance < old.capacity) {
        std::uint64_t ahead = old.slots[i + kPrefetchDistance].load(std::memory_order_relaxed);
        if (ahead > kTombstone) __builtin_prefetch(node_of(ahead));
      }
      std::uint64_t s = old.slots[i].load(std::memory_order_relaxed);
      if (s != kEmpty && s != kTombstone) {
        Node* n = node_of(s);
        place(*t, n, hash(n->key()), false);
      }
    }
    t->live = old.live;
    // Release: a reader that loads the new table sees its slots filled.
    table_.store(t, std::memory_order_release);
    return &old;
  }

  std::atomic<Table*> table_;
};

}  // namespace strata::kv
