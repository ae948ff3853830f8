// engine/point_map.hpp: a write map's point entries (key -> PointWrite), ordered by key.
//
// Most transactions write a few keys. Their entries sit in one array sorted by key, in the
// transaction's arena: a write is a binary search and a short move, and the keys and
// values are bump-allocated copies. Keys written in ascending order keep appending to the
// array however many there are. An insert or an erase that would move more than kMaxShift
// entries first moves everything into a tree (std::pmr::set, in the same arena), and the
// map stays a tree until clear(). So no write costs more than O(log n) plus a bounded move.
//
// Iterators and references: in the array, an insert or erase invalidates those at and after
// its position (as a vector's), and growing the array all of them. In the tree, only erased
// entries are invalidated. Nothing reads the map while it is being changed.
//
// Memory: the array's first room (kInlineCapacity entries) is inside the map, so a small
// transaction's first write grows nothing, and the room serves every transaction after a
// clear(). Everything else comes from the arena given at construction, which gives nothing
// back until its owner releases it (after clear()). A key written many times reuses its
// value's room, which grows by doubling, so rewriting a key does not grow the arena without
// bound.
// Thread safety: none (one transaction's).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory_resource>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/transaction.hpp"

#include "base/arena.hpp"
#include "base/copy_bytes.hpp"
#include "base/invariant.hpp"

namespace strata::engine {

struct AtomicOp {
  MutationType type;
  std::string param;
};

// A key's pending write. Its value bytes live in the map's arena (PointMap::assign).
struct PointWrite {
  enum class Kind : std::uint8_t { set, clear, dependent, stamped };

  // set: the value; stamped: the value template.
  std::string_view value() const { return {bytes, size}; }

  Kind kind = Kind::set;
  std::uint32_t stamp_offset = 0;  // stamped: where the 10 stamp bytes go
  std::vector<AtomicOp> ops;       // dependent (stamped: after the stamp), in the order issued
  char* bytes = nullptr;           // the value's, with room for `capacity`
  std::uint32_t size = 0;
  std::uint32_t capacity = 0;
};

// One entry: `first` the key (its bytes in the map's arena), `second` its write, named as
// a map's value_type is.
struct PointEntry {
  std::string_view first;
  mutable PointWrite second;  // mutable: a tree orders its entries by `first` only
};

class PointMap {
  struct Less {
    using is_transparent = void;
    static std::string_view key(const PointEntry& e) { return e.first; }
    static std::string_view key(std::string_view k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return key(a) < key(b);
    }
  };
  using Tree = std::pmr::set<PointEntry, Less>;

 public:
  // Beyond this many entries moved by one insert or erase, the map becomes a tree.
  static constexpr std::size_t kMaxShift = 16;

  class Iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = PointEntry;
    using difference_type = std::ptrdiff_t;
    using pointer = const PointEntry*;
    using reference = const PointEntry&;

    Iterator() = default;
    reference operator*() const { return in_tree_ ? *node_ : *element_; }
    pointer operator->() const { return &**this; }
    Iterator& operator++() {
      in_tree_ ? void(++node_) : void(++element_);
      return *this;
    }
    Iterator& operator--() {
      in_tree_ ? void(--node_) : void(--element_);
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    Iterator operator--(int) {
      Iterator old = *this;
      --*this;
      return old;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) {
      return a.in_tree_ ? a.node_ == b.node_ : a.element_ == b.element_;
    }

   private:
    friend class PointMap;
    explicit Iterator(const PointEntry* element) : element_(element) {}
    explicit Iterator(Tree::const_iterator node) : node_(node), in_tree_(true) {}

    const PointEntry* element_ = nullptr;
    Tree::const_iterator node_{};
    bool in_tree_ = false;
  };
  using const_iterator = Iterator;
  using iterator = Iterator;  // entries change through PointEntry::second (mutable)

  // `arena` must outlive the map.
  explicit PointMap(base::Arena* arena) : arena_(arena), tree_(arena) {}
  PointMap(const PointMap&) = delete;
  PointMap& operator=(const PointMap&) = delete;
  ~PointMap() { clear(); }

  bool empty() const { return in_tree_ ? tree_.empty() : size_ == 0; }
  std::size_t size() const { return in_tree_ ? tree_.size() : size_; }
  bool in_tree() const { return in_tree_; }
  // The entries, in key order. REQUIRES: !in_tree().
  std::span<const PointEntry> array() const {
    STRATA_INVARIANT(!in_tree_);
    return {array_, size_};
  }

  const_iterator begin() const {
    return in_tree_ ? const_iterator(tree_.begin()) : const_iterator(array_);
  }
  const_iterator end() const {
    return in_tree_ ? const_iterator(tree_.end()) : const_iterator(array_ + size_);
  }
  // The first entry whose key is >= `key`.
  const_iterator lower_bound(std::string_view key) const {
    if (in_tree_) return const_iterator(tree_.lower_bound(key));
    return const_iterator(array_ + array_index(key));
  }
  // The entry of `key`, or nullptr.
  PointWrite* find(std::string_view key) const {
    const_iterator it = lower_bound(key);
    return it != end() && it->first == key ? &it->second : nullptr;
  }
  // The entry of `key`, made (a set of the empty value) if absent. Appending to the array
  // with room left (a transaction's first write, or keys in ascending order) is inline;
  // the rest, out of line, keeps its frame and register saves off that path.
  PointWrite& find_or_insert(std::string_view key) {
    if (appends(key)) {
      auto* entry = new (array_ + size_) PointEntry{arena_->copy(key), {}};
      ++size_;
      return entry->second;
    }
    return find_or_insert_slow(key);
  }
  // A new last entry for `key` of kind `kind` with value `value` (a transaction's first
  // write, or keys in ascending order), its key and value bytes in one arena block; false,
  // with nothing done, when the map cannot simply append it (the key may be present, or the
  // array is full or a tree): then find_or_insert() and assign() it.
  bool try_append(std::string_view key, std::string_view value, PointWrite::Kind kind) {
    if (!appends(key)) return false;
    auto* bytes = static_cast<char*>(arena_->bump(key.size() + value.size(), 1));
    base::copy_key_bytes(bytes, key);
    auto* entry = new (array_ + size_) PointEntry{{bytes, key.size()}, {}};
    entry->second.kind = kind;
    entry->second.bytes = bytes + key.size();
    entry->second.size = static_cast<std::uint32_t>(value.size());
    entry->second.capacity = static_cast<std::uint32_t>(value.size());
    ++size_;
    std::copy(value.begin(), value.end(), bytes + key.size());
    return true;
  }
  // Sets w's value bytes to `value`, in place when they fit (an arena frees nothing, so
  // a key written many times reuses its room, which grows by doubling).
  void assign(PointWrite& w, std::string_view value);
  // Erases the entries with keys in [begin, end).
  void erase(std::string_view begin, std::string_view end);
  // Erases every entry and returns to the empty inline array (the arena's owner may now
  // release any room the array grew into).
  void clear();
  // clear() without running the entries' destructors, which is what a transaction's reset
  // does for a map of sets and clears only. REQUIRES: no entry ever held an AtomicOp (so no
  // entry owns memory outside the arena: an `ops` vector that was never added to holds
  // none, and skipping its destructor leaks nothing).
  void forget() {
    if (in_tree_) [[unlikely]] {
      clear();
      return;
    }
    for ([[maybe_unused]] const PointEntry& e : std::span(array_, size_)) {
      STRATA_INVARIANT(e.second.ops.capacity() == 0);  // (the walk clear() would make)
    }
    array_ = inline_array();
    size_ = 0;
    capacity_ = kInlineCapacity;
  }

 private:
  std::size_t array_index(std::string_view key) const;  // of the first key >= `key`
  // Whether `key` goes after every entry of the array, which has room for it.
  bool appends(std::string_view key) const {
    return !in_tree_ && size_ < capacity_ && (size_ == 0 || array_[size_ - 1].first < key);
  }
  [[gnu::noinline]] PointWrite& find_or_insert_slow(std::string_view key);
  // Room for one more entry in the array (which moves to twice the room, in the arena). Out
  // of line: only a transaction that writes more than kInlineCapacity keys calls it, and
  // inlined it would make every write save and restore registers.
  [[gnu::noinline]] void grow();
  // A new entry for `key` at array_[at], moving those from `at` on up by one. REQUIRES:
  // at < size() (find_or_insert appends a last key itself).
  PointWrite& insert_in_array(std::size_t at, std::string_view key);
  void erase_in_array(std::size_t first, std::size_t last);
  void destroy_array();
  void move_to_tree();

  PointEntry* inline_array() { return reinterpret_cast<PointEntry*>(inline_room_); }

  // Room in the map itself for the array's first entries: most transactions write one or
  // two keys.
  static constexpr std::uint32_t kInlineCapacity = 2;

  base::Arena* arena_;
  alignas(PointEntry) std::byte inline_room_[kInlineCapacity * sizeof(PointEntry)];
  PointEntry* array_ = inline_array();  // size_ entries, room for capacity_
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInlineCapacity;
  Tree tree_;
  bool in_tree_ = false;
};

}  // namespace strata::engine
