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
// its slots used (entries and tombstones); then a new table sized for the live entries at
// kRebuildLoad replaces it (tombstones dropped), or when it is mostly empty. The old
// entries are copied over incrementally, a few old slots per insert, erase or advance()
// (the store calls it once per commit), while lookups probe both tables. Memory: 8 B per
// slot, 8.9-11.1 B per live key, more while a migration holds both tables.
// Growth is prepared ahead: from kPrepareLoad on, the next table (when it is big enough
// for huge pages) is mapped, and advance() faults in one huge page of it per commit, as
// far as the current table's fill from kPrepareLoad to kMaxLoad asks for.
// Without that, the first commit after a growth would take every page fault at once and
// last several times as long as with 4 KiB pages.
//
// Thread safety: one writer (insert, erase) and lock-free readers (find), like the list.
// A reader must hold a reclamation pin: a replaced table, once copied out, is returned by
// insert or erase for the caller to free once no reader can still be probing it.
// Invariants:
//   - A node is in the table exactly while it is linked in the list; the writer inserts
//     after linking and erases when unlinking, both before the commit that needs them is
//     published, so a reader at a published version finds what the list would.
//   - A table always has empty slots, so every probe sequence ends.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string_view>
#include <utility>

#include "base/key_compare.hpp"
#include <sys/mman.h>

#define XXH_INLINE_ALL  // header only: nothing to link
#include <xxhash.h>

namespace strata::kv {

template <class Node>
class PointIndex {
 public:
  // A table that is no longer current; free it with PointIndex::destroy once no reader
  // can hold it.
  struct Table;

  PointIndex() : table_(make_table(kMinCapacity)) {}
  ~PointIndex() {
    destroy(table_.load(std::memory_order_relaxed));
    if (Table* old = old_.load(std::memory_order_relaxed)) destroy(old);
    if (next_ != nullptr) destroy(next_);
  }
  PointIndex(const PointIndex&) = delete;
  PointIndex& operator=(const PointIndex&) = delete;

  // Reader (pinned) or writer: the linked node with `key`, or nullptr.
  Node* find(std::string_view key) const { return find(key, hash(key)); }
  // The same with hash(key) computed by the caller (it may pass it on to insert).
  // While a migration runs, an entry not yet copied is only in the old table, so a lookup
  // probes the current table, then the old one. Both pointers are loaded before either
  // probe, current first: a reader that sees a new table also sees the old_ stored before
  // it, or the null stored once every entry was copied. (Loading old_ only after missing
  // in the current table could see the next migration's old_, which is that very table,
  // and skip entries copied into it meanwhile.) Copies leave the original in place, so an
  // entry is in one of the two tables from the moment it is inserted until it is erased.
  [[gnu::always_inline]] Node* find(std::string_view key, std::uint64_t h) const {
    const Table* t = table_.load(std::memory_order_acquire);
    const Table* old = old_.load(std::memory_order_acquire);
    if (Node* n = probe(*t, key, h)) return n;
    return old == nullptr || old == t ? nullptr : probe(*old, key, h);
  }

  // Writer: starts fetching the slot a lookup of a key with hash `h` probes first (in
  // each table a lookup would probe), for a caller that will look it up soon.
  void prefetch(std::uint64_t h) const {
    const Table* t = table_.load(std::memory_order_relaxed);
    __builtin_prefetch(t->slots + t->home(h));
    if (const Table* old = old_.load(std::memory_order_relaxed)) {
      __builtin_prefetch(old->slots + old->home(h));
    }
  }

  // Writer. REQUIRES: `node` is linked and no other node with its key is in the index.
  // Returns a table the caller must retire, or nullptr.
  Table* insert(Node* node) { return insert(node, hash(node->key())); }
  // The same with h == hash(node->key()).
  Table* insert(Node* node, std::uint64_t h) {
    check_address(node);
    Table* t = table_.load(std::memory_order_relaxed);
    Table* retire = nullptr;
    if (t->used + 1 > t->max_used) {
      retire = finish_migration();
      start_migration(live_ + 1);
      t = table_.load(std::memory_order_relaxed);
    } else if (next_ == nullptr && t->used + 1 > t->prepare_used &&
               old_.load(std::memory_order_relaxed) == nullptr) {
      prepare_growth(*t);
    }
    place(*t, node, h, true);
    ++live_;
    return retire != nullptr ? retire : migrate(step_);
  }

  // Writer. REQUIRES: `node` is in the index. Returns a table to retire, or nullptr.
  Table* erase(Node* node) { return erase(node, hash(node->key())); }
  // The same with h == hash(node->key()).
  Table* erase(Node* node, std::uint64_t h) {
    // A reader that still finds the node is pinned, and the node stays valid for it. Both
    // tables lose it before the writer goes on, so a node inserted later for the same key
    // is the only one a reader of the later version can find.
    if (Table* old = old_.load(std::memory_order_relaxed)) bury(*old, node, h);
    Table* t = table_.load(std::memory_order_relaxed);
    bury(*t, node, h);
    --live_;
    if (t->capacity > kMinCapacity && live_ < t->capacity / kShrinkDivisor) {
      Table* retire = finish_migration();
      if (next_ != nullptr) destroy(std::exchange(next_, nullptr));  // sized for growth
      start_migration(live_);
      return retire;
    }
    return migrate(step_);
  }

  // Writer: makes room for `entries` entries in all, for a writer about to insert many
  // (a recovery that can estimate its key count): the index then grows no more until it
  // holds that many, instead of copying every entry at each growth on the way. A no-op
  // when the table already has room. Returns a table the caller must retire, or nullptr.
  Table* reserve(std::size_t entries) {
    const Table* t = table_.load(std::memory_order_relaxed);
    if (entries <= t->max_used) return nullptr;
    Table* retire = finish_migration();
    if (next_ != nullptr) destroy(std::exchange(next_, nullptr));  // sized for less
    start_migration(entries);
    return retire;
  }

  // Writer: whether the next `n` inserts allocate nothing as things stand (prepare_inserts
  // would do nothing).
  bool ready_for(std::size_t n) const {
    const Table* t = table_.load(std::memory_order_relaxed);
    if (t->used + n > t->max_used) return false;
    return next_ != nullptr || t->used + n <= t->prepare_used ||
           old_.load(std::memory_order_relaxed) != nullptr;
  }
  // Writer: makes the next `n` inserts allocate nothing, by starting now the migration or
  // preparing now the next table they would. Returns a table the caller must retire, or
  // nullptr. Throws std::bad_alloc, having changed nothing readers see.
  Table* prepare_inserts(std::size_t n) {
    const Table* t = table_.load(std::memory_order_relaxed);
    if (t->used + n > t->max_used) {
      // The table start_migration will take, made first: a failure changes nothing.
      const std::size_t want = std::max((live_ + n) * 100 / kRebuildLoadPercent + 1, kMinCapacity);
      if (next_ == nullptr || next_->capacity < want || next_->capacity > 2 * want) {
        Table* fresh = make_table(want);
        if (next_ != nullptr) destroy(next_);
        next_ = fresh;
      }
      Table* retire = finish_migration();
      start_migration(live_ + n);
      return retire;
    }
    if (next_ == nullptr && t->used + n > t->prepare_used &&
        old_.load(std::memory_order_relaxed) == nullptr) {
      prepare_growth(*t);
    }
    return nullptr;
  }

  // Writer: one more step of a running migration, for a writer that neither inserts nor
  // erases for a while (otherwise lookups would keep probing two tables). Returns a table
  // to retire, or nullptr.
  // Also faults in one more huge page of a prepared next table, if the current one has
  // filled enough to want it (see fault_target).
  // Inline where it is called: every commit calls it, and most calls do nothing.
  [[gnu::always_inline]] Table* advance() {
    if (next_ != nullptr && faulted_ < next_->mapped && faulted_ < fault_target()) {
      // The page is zero already; the write makes the kernel provide it now.
      static_cast<volatile unsigned char*>(static_cast<void*>(next_))[faulted_] = 0;
      faulted_ += kHugePage;
    }
    return migrate(step_);
  }

  // Writer: whether advance() has anything to do (a table prepared or being copied out).
  bool advancing() const {
    return next_ != nullptr || old_.load(std::memory_order_relaxed) != nullptr;
  }
  // Whether entries are still being copied out of a replaced table (for tests).
  bool migrating() const { return old_.load(std::memory_order_relaxed) != nullptr; }
  // Bytes of the prepared next table faulted in so far, 0 when none (for tests).
  std::size_t prepared_bytes() const { return next_ != nullptr ? faulted_ : 0; }

  // XXH3 (Debian's libxxhash-dev, inlined): a queue operation hashes four or five keys,
  // and XXH3 is cheaper per key than std::hash (murmur).
  static std::uint64_t hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

  std::size_t size() const { return live_; }
  std::size_t capacity() const { return table_.load(std::memory_order_relaxed)->capacity; }

  static void destroy(Table* t) {
    const std::size_t mapped = t->mapped;
    t->~Table();
    if (mapped != 0) {
      ::munmap(t, mapped);
    } else {
      std::free(t);
    }
  }

  struct Table {
    __extension__ using Wide = unsigned __int128;
    std::size_t capacity;
    std::size_t used = 0;    // writer only: slots ever filled (entries and tombstones)
    std::size_t mapped = 0;  // bytes mapped with mmap, or 0 when from calloc
    std::uint64_t* slots;    // accessed through slot(i) only
    // The most slots used before a rebuild (kMaxLoadPercent of capacity), and before the
    // next table is prepared (kPrepareLoadPercent): set by make_table, asked on each insert.
    std::size_t max_used = 0;
    std::size_t prepare_used = 0;

    // The slots start as zero bytes (kEmpty) straight from the allocator, so they are
    // plain integers accessed atomically rather than std::atomic objects to construct.
    std::atomic_ref<std::uint64_t> slot(std::size_t i) const {
      return std::atomic_ref<std::uint64_t>(slots[i]);
    }

    // Multiply-shift onto [0, capacity): capacity need not be a power of two, so the
    // table can grow by less than 2x.
    std::size_t home(std::uint64_t h) const {
      return static_cast<std::size_t>((static_cast<Wide>(h) * capacity) >> 64U);
    }
    std::size_t after(std::size_t i) const { return i + 1 == capacity ? 0 : i + 1; }
    std::size_t before(std::size_t i) const { return i == 0 ? capacity - 1 : i - 1; }
  };

 private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kTombstone = 1;  // no node is at address 1
  static constexpr int kPointerBits = 48;
  static constexpr std::uint64_t kFingerprintMask = ~std::uint64_t{0} << kPointerBits;
  static constexpr std::size_t kMinCapacity = 64;
  static constexpr std::size_t kMaxLoadPercent = 90;
  static constexpr std::size_t kRebuildLoadPercent = 72;
  static constexpr std::size_t kPrepareLoadPercent = 85;
  static constexpr std::size_t kShrinkDivisor = 8;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kPrefetchDistance = 16;
  // The fewest old slots copied per insert or erase while a migration runs (more when the
  // old table is much larger than the new one, see start_migration).
  static constexpr std::size_t kMigrateSlots = 32;

  // The hash's low bits: home() uses its high bits.
  static std::uint64_t fingerprint(std::uint64_t h) { return h << kPointerBits; }
  static Node* node_of(std::uint64_t s) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): a slot is a pointer with a tag on top
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
  // pages, a probe into a table of 1 M keys pays a TLB miss as well as the cache miss.
  static Table* make_table(std::size_t capacity) {
    const std::size_t bytes = sizeof(Table) + capacity * sizeof(std::uint64_t);
    std::size_t mapped = 0;
    void* mem = nullptr;
    if (bytes >= kHugePage) {
      mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      mem = map_aligned(mapped);
#ifdef MADV_HUGEPAGE
      ::madvise(mem, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
    } else {
      mem = std::calloc(1, bytes);
      if (mem == nullptr) throw std::bad_alloc();
    }
    auto* t = new (mem) Table{capacity, 0, mapped, nullptr};
    t->max_used = capacity * kMaxLoadPercent / 100;
    t->prepare_used = capacity * kPrepareLoadPercent / 100;
    t->slots = reinterpret_cast<std::uint64_t*>(t + 1);
    return t;
  }

  // `bytes` (a multiple of kHugePage) of zeroed memory aligned to kHugePage. Fresh pages
  // from the kernel: nothing is written up front, and the pages fault in as the table
  // fills (zeroing a large table at once would hold the commit pipeline for a long pause).
  static void* map_aligned(std::size_t bytes) {
    const std::size_t span = bytes + kHugePage;
    void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::size_t lead = (kHugePage - start % kHugePage) % kHugePage;
    char* mem = static_cast<char*>(p) + lead;
    if (lead > 0) ::munmap(p, lead);
    if (span > lead + bytes) ::munmap(mem + bytes, span - lead - bytes);
    return mem;
  }

  // Puts `node` in the first free slot of its probe sequence (a tombstone may be reused:
  // the node is known to be absent further on).
  static void place(Table& t, Node* node, std::uint64_t h, bool reuse_tombstones) {
    auto address = reinterpret_cast<std::uintptr_t>(node);
    std::size_t i = t.home(h);
    for (;;) {
      std::uint64_t s = t.slot(i).load(std::memory_order_relaxed);
      if (s == kEmpty || (reuse_tombstones && s == kTombstone)) {
        if (s == kEmpty) ++t.used;
        // Release: a reader that loads the slot sees the node built.
        t.slot(i).store(fingerprint(h) | address, std::memory_order_release);
        return;
      }
      i = t.after(i);
    }
  }

  // Inlined with find() at every lookup: a point read pays no calls but the hash's, and
  // the writer's lookups, mostly of new keys, stay in the loops that make them.
  [[gnu::always_inline]] static Node* probe(const Table& t, std::string_view key, std::uint64_t h) {
    const std::uint64_t fp = fingerprint(h);
    for (std::size_t i = t.home(h);; i = t.after(i)) {
      const std::uint64_t s = t.slot(i).load(std::memory_order_acquire);
      if (s == kEmpty) return nullptr;
      if ((s & kFingerprintMask) == fp && s != kTombstone) {
        Node* n = node_of(s);
        prefetch_following(n);
        if (base::key_equal(n->key(), key)) return n;  // inline: no call to memcmp
      }
    }
  }

  // Starts fetching the three cache lines after the one `n` starts in. A one-level node
  // carved fresh from a slab has its key's first record right behind it
  // (MvccStore::set, SizeClassPool::allocate_after), and that record is what a lookup
  // reads next until the key is overwritten: with the lines fetched together, the record
  // and its value arrive with the node rather than one miss after it. Three lines cover a
  // short key's node and a first record of a 100-byte value from any offset; for other
  // nodes the fetch is wasted. Addresses only, never dereferenced: a prefetch does not
  // fault, even past the end of a mapping.
  [[gnu::always_inline]] static void prefetch_following(const Node* n) {
    const auto at = reinterpret_cast<std::uintptr_t>(n);
    constexpr std::uintptr_t kLine = 64;
    for (std::uintptr_t line = 1; line <= 3; ++line) {
      // NOLINTNEXTLINE(performance-no-int-to-ptr): an address to fetch, never to read
      __builtin_prefetch(reinterpret_cast<const void*>(at + line * kLine));
    }
  }

  // Takes `node`'s slot in `t` out, if `t` holds it: a tombstone, unless the next slot is
  // empty. A probe that passes a slot goes on to the next one, so no probe for a key in
  // the table passes a slot followed by an empty one: that slot, and every tombstone just
  // before it, can be empty again (a reader sees either value and finds the same keys).
  // Without that, a queue's few live keys would fill a small table with tombstones and
  // force a rebuild every few dozen keys.
  static void bury(Table& t, Node* node, std::uint64_t h) {
    const std::uint64_t want = fingerprint(h) | reinterpret_cast<std::uintptr_t>(node);
    for (std::size_t i = t.home(h);; i = t.after(i)) {
      const std::uint64_t s = t.slot(i).load(std::memory_order_relaxed);
      if (s == kEmpty) return;
      if (s != want) continue;
      if (t.slot(t.after(i)).load(std::memory_order_relaxed) != kEmpty) {
        t.slot(i).store(kTombstone, std::memory_order_release);
        return;
      }
      t.slot(i).store(kEmpty, std::memory_order_release);
      --t.used;
      // Back over the tombstones before it (the empty slot after i ends the walk at the latest).
      for (std::size_t j = t.before(i); t.slot(j).load(std::memory_order_relaxed) == kTombstone;
           j = t.before(j)) {
        t.slot(j).store(kEmpty, std::memory_order_release);
        --t.used;
      }
      return;
    }
  }

  // Replaces the current table with an empty one sized for `live` entries; migrate()
  // then copies the old entries over, a few slots per writer call, so that no single
  // insert pays for the whole table (a stop-the-world rebuild of millions of keys would
  // hold the commit pipeline for a long pause). REQUIRES: no migration running.
  void start_migration(std::size_t live) {
    std::size_t capacity = live * 100 / kRebuildLoadPercent + 1;
    if (capacity < kMinCapacity) capacity = kMinCapacity;
    Table* t = std::exchange(next_, nullptr);
    if (t != nullptr && (t->capacity < capacity || t->capacity > 2 * capacity)) {
      // Prepared for fewer keys than there are (a large commit overtook it), or for far
      // more (the table was full of tombstones): size it afresh.
      destroy(t);
      t = nullptr;
    }
    if (t == nullptr) t = make_table(capacity);
    capacity = t->capacity;
    Table* old = table_.load(std::memory_order_relaxed);
    // Copy fast enough to finish within half the inserts the new table has room for, so
    // it never has to be replaced (and finish_migration never runs) while it still fills.
    const std::size_t limit = capacity * kMaxLoadPercent / 100;
    const std::size_t room = limit > live ? (limit - live) / 2 : 0;
    step_ = std::max(kMigrateSlots, old->capacity / std::max<std::size_t>(room, 1) + 1);
    // old_ before table_: a reader that sees the new table also sees where the rest is.
    old_.store(old, std::memory_order_release);
    table_.store(t, std::memory_order_release);
    copied_ = 0;
  }

  // Maps the table that will replace `t` when it is full (sized for the entries it will
  // hold then), for advance() to fault in ahead of use. Small tables come from calloc,
  // already zeroed and faulted: they are not prepared.
  void prepare_growth(const Table& t) {
    const std::size_t at_growth = t.max_used + 1;
    const std::size_t capacity = at_growth * 100 / kRebuildLoadPercent + 1;
    if (sizeof(Table) + capacity * sizeof(std::uint64_t) < kHugePage) return;
    next_ = make_table(capacity);
    faulted_ = kHugePage;  // the first page holds the header make_table wrote
  }

  // The bytes of the prepared table wanted by now: in step with the current table's fill
  // from kPrepareLoad to kMaxLoad, so that the memory comes as the keys do (advance()
  // faults while below it: the whole table is in before the fill reaches kMaxLoad).
  // Faulting it all at once at kPrepareLoad held a whole extra table through that band,
  // 11 B per live key (docs/benchmarks.md, "Memory per live key").
  std::size_t fault_target() const {
    const Table& t = *table_.load(std::memory_order_relaxed);
    const std::size_t from = t.prepare_used;
    const std::size_t band = std::max<std::size_t>(t.max_used - from, 1);
    const std::size_t filled = std::min(t.used > from ? t.used - from : 0, band);
    return static_cast<std::size_t>(static_cast<typename Table::Wide>(next_->mapped) * filled /
                                    band);
  }

  // Copies the entries of up to `slots` old slots into the current table (the entries
  // stay in the old one too, so no reader can miss them in between). Returns the old
  // table, to retire, once it is fully copied.
  // The check is inline, the copy not: every insert, erase and commit asks, and nearly
  // always there is nothing to do.
  Table* migrate(std::size_t slots) {
    Table* old = old_.load(std::memory_order_relaxed);
    return old == nullptr ? nullptr : copy_out(old, slots);
  }
  [[gnu::noinline]] Table* copy_out(Table* old, std::size_t slots) {
    Table* t = table_.load(std::memory_order_relaxed);
    const std::size_t end = std::min(old->capacity, copied_ + slots);
    for (std::size_t i = copied_; i < end; ++i) {
      // Every entry's key is hashed again: fetch nodes a few slots ahead, so that the
      // misses overlap instead of following one another.
      if (i + kPrefetchDistance < old->capacity) {
        std::uint64_t ahead = old->slot(i + kPrefetchDistance).load(std::memory_order_relaxed);
        if (ahead > kTombstone) __builtin_prefetch(node_of(ahead));
      }
      std::uint64_t s = old->slot(i).load(std::memory_order_relaxed);
      if (s != kEmpty && s != kTombstone) {
        Node* n = node_of(s);
        place(*t, n, hash(n->key()), false);
      }
    }
    copied_ = end;
    if (copied_ < old->capacity) return nullptr;
    // Release: a reader that sees no old table sees every copy.
    old_.store(nullptr, std::memory_order_release);
    return old;
  }

  // Completes a running migration at once (a new one is about to start). Returns the old
  // table to retire, or nullptr.
  Table* finish_migration() {
    Table* old = old_.load(std::memory_order_relaxed);
    return old == nullptr ? nullptr : migrate(old->capacity);
  }

  std::atomic<Table*> table_;
  std::atomic<Table*> old_{nullptr};  // the table being copied out of, if any
  std::size_t copied_ = 0;            // writer only: old_'s slots copied so far
  std::size_t step_ = kMigrateSlots;  // writer only: old slots copied per insert or erase
  std::size_t live_ = 0;              // writer only: nodes in the index
  Table* next_ = nullptr;             // writer only: the prepared next table, if any
  std::size_t faulted_ = 0;           // writer only: bytes of next_ faulted in so far
};

}  // namespace strata::kv
