// kv/skiplist.hpp: an ordered map from byte-string keys to a small payload, with one
// writer and lock-free readers. It knows nothing about versions.
//
// Thread safety:
//   - Writes (insert, unlink) need external synchronisation: one writer at a time.
//   - Reads (find_*, Node::next) need none, but a reader must hold a reclamation pin
//     (kv::ReaderRegistry) so that unlinked nodes it may still reach are not freed.
// Invariants:
//   - A node's key, height and payload address never change once it is linked.
//   - next pointers are published with release stores, read with acquire loads, so a
//     reader that reaches a node sees it fully initialised.
//   - An unlinked node keeps its next pointers, which still lead forward into the list
//     (or to nodes unlinked later), so a reader standing on it can carry on.
//   - Nodes are freed only by the owner, after unlink, once no reader can hold them.
//   - max_height() is the height of the tallest linked node (at least 1): every level at
//     or above it is empty at head_.
//   - Each level is a sorted list (strictly ascending keys), and every node of a level is
//     on the level below too. A node being unlinked is its predecessor's successor on
//     each of its levels.
//   These are checked (STRATA_INVARIANT, base/invariant.hpp) where a node is linked or
//   unlinked, and over the whole list when it is destroyed.
//   - Node memory comes from the SizeClassPool the list is built on, which must outlive it,
//     except for nodes of height >= 2 (a quarter to a third of them, the list's index),
//     which come from a pool of the list's own. Kept apart from the bottom-only nodes,
//     the index of a million keys packs into a few MB that stay cached, which makes seeks
//     over a hot set much faster than with one shared pool (uniformly random seeks,
//     bound by the misses of the last levels, gain nothing).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>

#include "base/copy_bytes.hpp"
#include "base/invariant.hpp"
#include "base/key_compare.hpp"
#include "kv/size_class_pool.hpp"

namespace strata::kv {

using base::key_less;

template <class Payload>
class SkipList {
 public:
  static constexpr int kMaxHeight = 20;
  // A seek that steps past kCrowdedGap nodes or more on a level found a crowded stretch;
  // an insert there is made tall enough to split it (see insert). Only in a list at least
  // kCrowdingHeight levels high: a smaller one is cached, and its seeks cost no misses.
  static constexpr int kCrowdedGap = 4;
  static constexpr int kCrowdingHeight = 6;

  class Node {
   public:
    std::string_view key() const { return {key_data(), key_size_}; }
    Payload& payload() { return payload_; }
    const Payload& payload() const { return payload_; }
    int height() const { return height_; }
    // Writer only: whether unlink() has taken the node out of the list.
    bool unlinked() const { return unlinked_; }

    // Acquire: the node we reach is fully built before we look at it.
    Node* next(int level) const { return next_[level].load(std::memory_order_acquire); }

   private:
    friend class SkipList;
    // Each level's next pointer starts as prev[level]'s successor there (the node goes
    // right after prev[level]), or nullptr when `prev` is null (the head).
    Node(std::string_view key, int height, Node* const* prev)
        : key_size_(static_cast<std::uint32_t>(key.size())),
          height_(static_cast<std::uint8_t>(height)) {
      for (int i = 0; i < height; ++i) {
        new (&next_[i]) std::atomic<Node*>(prev != nullptr ? prev[i]->next(i) : nullptr);
      }
      // A key of 8 to 64 bytes is copied inline (base::copy_key_bytes); the head's empty
      // key, whose data() may be null, not at all.
      base::copy_key_bytes(key_data(), key);
    }
    // Release: publishes everything written to the node before this link.
    void set_next(int level, Node* n) { next_[level].store(n, std::memory_order_release); }
    char* key_data() { return reinterpret_cast<char*>(&next_[height_]); }
    const char* key_data() const { return reinterpret_cast<const char*>(&next_[height_]); }

    Payload payload_{};
    std::uint32_t key_size_;
    std::uint8_t height_;
    bool unlinked_ = false;       // writer only; sits in what would be padding
    std::atomic<Node*> next_[1];  // really next_[height_], followed by the key bytes
  };

  explicit SkipList(SizeClassPool& pool) : pool_(pool), head_(make_node({}, kMaxHeight, nullptr)) {}
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;
  ~SkipList() {
    if constexpr (base::kDebugInvariants) check_levels();
    if (nodes_left_to_pools_) return;
    Node* n = head_;
    while (n != nullptr) {
      Node* next = n->next(0);
      destroy_node(n);
      n = next;
    }
  }

  // First node with key >= `key`, or nullptr.
  Node* find_greater_or_equal(std::string_view key) const {
    return descend(key, nullptr).at_or_after;
  }
  // Last node with key < `key`, or nullptr.
  Node* find_less_than(std::string_view key) const {
    Node* x = descend(key, nullptr).before;
    return x == head_ ? nullptr : x;
  }
  // The last node with floor <= key < `key` for which keep(node) holds, or nullptr. A run
  // of k rejected nodes costs O(k + log n), not one seek per node: the walk goes back up
  // the descent's path, scanning forward at level 0 from each level's predecessor.
  template <class Keep>
  Node* find_last_less_than_if(std::string_view key, std::string_view floor, Keep keep) const {
    Node* prev[kMaxHeight];
    const int height = descend(key, prev).height;
    Node* top = prev[0];  // rejected below: the candidates lie before it
    if (top == head_ || key_less(top->key(), floor)) return nullptr;
    if (keep(top)) return top;
    for (int level = 1; level <= height; ++level) {
      Node* start = level < height ? prev[level] : head_;
      if (start == top) continue;  // on this level too: nothing lies between
      const bool last = start == head_ || key_less(start->key(), floor);
      Node* found = nullptr;
      // Nothing lies between when `top` follows `start` (the usual case of a short list):
      // then no seek for the floor, and no key compared.
      Node* n = start->next(0);
      if (last && n != top) n = find_from(start, floor);
      // Bounded by key, not only by reaching `top`: a concurrent unlink may bypass it.
      for (; n != nullptr && n != top && key_less(n->key(), top->key()); n = n->next(0)) {
        if (keep(n)) found = n;
      }
      if (found != nullptr || last) return found;
      if (keep(start)) return start;
      top = start;
    }
    return nullptr;
  }
  // The first node with key >= `floor` after `from` (head, or a node before `floor`): a
  // few steps at level 0 when it is that close (a reverse read's floor usually is: the
  // first node of a small store, or of a subspace just after a node before it), else a
  // seek.
  [[gnu::noinline]] Node* find_from(const Node* from, std::string_view floor) const {
    constexpr int kSteps = 4;
    Node* n = from->next(0);
    for (int step = 0; step < kSteps; ++step, n = n->next(0)) {
      if (n == nullptr || !key_less(n->key(), floor)) return n;
    }
    return find_greater_or_equal(floor);
  }
  // Last node in the list, or nullptr.
  Node* find_last() const {
    Node* x = head_;
    for (int level = max_height() - 1; level >= 0; --level) {
      for (Node* n = x->next(level); n != nullptr; n = x->next(level)) x = n;
    }
    return x == head_ ? nullptr : x;
  }
  Node* first() const { return head_->next(0); }
  // The levels a seek descends: the tallest linked node's height, at least 1.
  int height() const { return max_height(); }

  // Where a key goes: its predecessor on each level a walk descended (prefetch_paths).
  // Inserts made since leave it usable, as insert_along walks forward from it; an unlink
  // may not (its nodes may be freed).
  struct Path {
    Node* prev[kMaxHeight];
    int height = 0;  // the levels filled; 0 for none
  };

  // Reader (pinned) or writer: walks towards each of `keys` at once, one step of each walk
  // in turn, and fetches the node each walk compares next while the other walks step. A
  // seek for these keys right afterwards finds its nodes cached. For a writer about to
  // insert a batch of keys in no order (a commit batch): a seek's misses come one after
  // another, each address read from the node before; here the batch's misses overlap.
  // When `paths` is given (as long as `keys`), each walk's predecessors go to *paths[i],
  // for insert_along; paths[i]->prev[0] is what find_less_than would return, or head.
  void prefetch_paths(std::span<const std::string_view> keys,
                      std::span<Path* const> paths = {}) const {
    struct Walk {
      Node* at;      // the last node found before the key, at `level`
      Node* next;    // the node to compare next, fetched one round ahead
      Node* bigger;  // the node found not before the key one level up
      int level;
    };
    constexpr std::size_t kGroup = 32;
    Walk walks[kGroup];
    for (std::size_t first = 0; first < keys.size(); first += kGroup) {
      const std::size_t n = std::min(kGroup, keys.size() - first);
      const int top = max_height() - 1;
      for (std::size_t i = 0; i < n; ++i) {
        walks[i] = {head_, head_->next(top), nullptr, top};
        if (!paths.empty()) paths[first + i]->height = top + 1;
      }
      for (std::size_t walking = n; walking > 0;) {
        for (std::size_t i = 0; i < n; ++i) {
          Walk& w = walks[i];
          if (w.level < 0) continue;
          Node* c = w.next;
          if (c == nullptr || c == w.bigger || !key_less(c->key(), keys[first + i])) {
            w.bigger = c;
            if (!paths.empty()) paths[first + i]->prev[w.level] = w.at;
            if (--w.level < 0) {
              --walking;
              continue;
            }
            w.next = w.at->next(w.level);
          } else {
            w.at = c;
            w.next = c->next(w.level);
          }
          if (w.next != nullptr && w.next != w.bigger) fetch(w.next);
        }
      }
    }
  }
  // Writer: the path of each of `keys`, which ascend, into *paths[i] (as prefetch_paths).
  // Each walk starts from the path before it (a finger search): it climbs while the
  // previous key's predecessor is followed by a node before its key, then descends from
  // there, so neighbouring keys cost a few steps each rather than a seek apiece.
  void find_paths_in_order(std::span<const std::string_view> keys,
                           std::span<Path* const> paths) const {
    const int height = max_height();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      Path& p = *paths[i];
      p.height = height;
      if (i == 0) {
        descend(keys[0], p.prev);
        continue;
      }
      const Path& q = *paths[i - 1];
      const std::string_view key = keys[i];
      // From `level` up, q's predecessors are key's: a node on level l + 1 is on level l,
      // so q.prev[l + 1]'s successor is at or after q.prev[l]'s.
      int level = 0;
      while (level < height) {
        const Node* n = q.prev[level]->next(level);
        if (n == nullptr || !key_less(n->key(), key)) break;
        ++level;
      }
      std::copy(q.prev + level, q.prev + height, p.prev + level);
      // Below, each level walks on from the later of q's predecessor there and the node
      // found one level up.
      for (int l = level - 1; l >= 0; --l) {
        const bool moved = l + 1 < height && p.prev[l + 1] != q.prev[l + 1];
        Node* x = moved ? p.prev[l + 1] : q.prev[l];
        for (Node* n = x->next(l); n != nullptr && key_less(n->key(), key); n = x->next(l)) x = n;
        p.prev[l] = x;
      }
    }
  }
  // Blocks above SizeClassPool::kMaxPooled that the taller nodes' pool holds (see
  // SizeClassPool::large_blocks).
  std::ptrdiff_t large_blocks() const { return index_pool_.large_blocks(); }
  // Writer, before the destructor: the nodes stay in their pools, whose slabs free them, so
  // the destructor walks none. REQUIRES: no node is a block above kMaxPooled (the pools'
  // large_blocks() add up to 0), and the node pool is destroyed after the list.
  void leave_nodes_to_pools() {
    static_assert(std::is_trivially_destructible_v<Node>);
    nodes_left_to_pools_ = true;
  }
  // The head node: the predecessor of keys that have none (Path::prev[0] for them).
  const Node* head() const { return head_; }

  // REQUIRES: writer; no node with `key` is linked. Returns the new, linked node.
  // `in_key_order`: the caller expects keys to come mostly in ascending order (a log
  // replay). Then a key that goes right after the previous in-order insert takes its
  // predecessors from it without a seek (see finger_); random inserts skip that check,
  // whose loads cost them a few per cent.
  // In a list kCrowdingHeight high or more, a node whose seek stepped past kCrowdedGap
  // nodes on each of levels 0 to l-1 is made at least l + 1 high, whatever random_bits
  // say. A seek lands in a long stretch more often than in a short one, so with heights
  // drawn at random alone it steps past nearly 4 nodes a level; on the lowest levels each
  // step is a cache miss, the next address read out of the node before. Over 1 M random
  // 16-byte keys inserted this way, a seek's steps on level 0 fall by about 40 %, and the
  // share of nodes taller than one level grows from about a quarter to about a third
  // (their first records are not carved behind them, so a read of such a key waits on one
  // more miss). Only here: insert_along, and an in-order insert that follows the last, keep
  // the heights drawn.
  Node* insert(std::string_view key, std::uint64_t random_bits, bool in_key_order = false) {
    Node* prev[kMaxHeight];
    const int old_height = max_height();
    int min_height = 1;
    if (in_key_order && follows_last_insert(key)) {
      std::copy_n(finger_, old_height, prev);
    } else if (old_height < kCrowdingHeight) {
      find_predecessors(key, prev);
    } else {
      min_height = find_predecessors_in_crowds(key, prev);
    }
    return link(key, prev, old_height, random_bits, in_key_order, min_height);
  }
  // The same, with the predecessors found from `path` (prefetch_paths' walk for `key`,
  // unlinks none since): on each level, forward from the walk's predecessor past what
  // was inserted since. The levels' steps do not wait for one another, as a seek's do.
  // REQUIRES: path.height > 0.
  Node* insert_along(std::string_view key, const Path& path, std::uint64_t random_bits) {
    Node* prev[kMaxHeight];
    const int old_height = max_height();
    for (int level = 0; level < old_height; ++level) {
      Node* x = level < path.height ? path.prev[level] : head_;  // higher: grown since
      for (Node* n = x->next(level); n != nullptr && key_less(n->key(), key); n = x->next(level)) {
        x = n;
      }
      prev[level] = x;
    }
    return link(key, prev, old_height, random_bits, false);
  }

  // REQUIRES: writer. Afterwards the node is unreachable for new readers; the caller frees
  // it with destroy_node once no reader can hold it. Unlinking an unlinked node does nothing.
  void unlink(Node* node) {
    if (node->unlinked_) return;
    node->unlinked_ = true;
    last_insert_ = nullptr;  // the finger may point at the node
    Node* prev[kMaxHeight];
    if (!find_predecessors_near_head(node, prev)) find_predecessors(node->key(), prev);
    const int levels = node->height();
    for (int i = 0; i < levels; ++i) {
      STRATA_INVARIANT(prev[i]->next(i) == node);
      if (prev[i]->next(i) == node) prev[i]->set_next(i, node->next(i));
    }
    // Levels no node reaches any more cost every seek a step (a queue that drains keeps
    // the height its longest past needed): drop them, as Redis's zset does. A reader that
    // still uses the old height finds nullptr at head_ there and steps down.
    int height = max_height();
    while (height > 1 && head_->next(height - 1) == nullptr) --height;
    max_height_.store(height, std::memory_order_relaxed);
    if constexpr (base::kDebugInvariants) {
      for (int i = height; i < kMaxHeight; ++i) STRATA_INVARIANT(head_->next(i) == nullptr);
    }
  }

  // The most bytes a node of a key of `key_size` bytes takes.
  static std::size_t max_node_size(std::size_t key_size) { return node_size(key_size, kMaxHeight); }
  // The bytes a node of a key of `key_size` bytes and `height` levels takes.
  static std::size_t node_size_at_height(std::size_t key_size, int height) {
    return node_size(key_size, height);
  }
  // Makes `bytes` of nodes taller than one level allocatable without a new slab (see
  // SizeClassPool::reserve); nodes of one level come from the pool the list was given.
  void reserve_tall_nodes(std::size_t bytes) { index_pool_.reserve(bytes); }
  // While on, a node drawn taller than one level whose block would take a new slab (past
  // what reserve_tall_nodes made room for), or would be above SizeClassPool::kMaxPooled, is
  // made one level high instead: inserts then allocate only from the list's own pool and
  // what was reserved there. Heights only balance the list, so a rare short node costs a
  // step or two of a seek, nothing else. Off by default.
  void keep_tall_nodes_reserved(bool on) { tall_reserved_only_ = on; }

  // The bytes `n` was allocated with.
  static std::size_t allocation_size(const Node& n) {
    return node_size(n.key().size(), n.height());
  }

  void destroy_node(Node* n) {
    std::size_t size = node_size(n->key().size(), n->height());
    SizeClassPool& pool = pool_for(n->height());
    n->~Node();
    pool.deallocate(n, size);
  }

 private:
  int max_height() const { return max_height_.load(std::memory_order_relaxed); }

  // Links a new node for `key` behind prev[i] on each of its levels; `old_height` is
  // max_height() when prev was found. Keeps the finger when `in_key_order`.
  [[gnu::always_inline]] Node* link(std::string_view key, Node** prev, int old_height,
                                    std::uint64_t random_bits, bool in_key_order,
                                    int min_height = 1) {
    int height = random_height(random_bits);
    if (height < min_height) height = min_height;
    if (height > 1 && tall_reserved_only_) [[unlikely]]
      height = reserved_height(key, height);
    if (height > old_height) {
      for (int i = old_height; i < height; ++i) prev[i] = head_;
      // Relaxed: a reader that sees the new height before the links just finds nullptr
      // at the new levels of head_ and drops down.
      max_height_.store(height, std::memory_order_relaxed);
    }
    if constexpr (base::kDebugInvariants) {
      for (int i = 0; i < height; ++i) {
        // The new node goes between its predecessor and that one's successor, on each level.
        const Node* after = prev[i]->next(i);
        STRATA_INVARIANT(prev[i] == head_ || key_less(prev[i]->key(), key));
        STRATA_INVARIANT(after == nullptr || key_less(key, after->key()));
      }
    }
    // Built with its successors already in place: one store per level links it.
    Node* n = make_node(key, height, prev);
    for (int i = 0; i < height; ++i) prev[i]->set_next(i, n);
    if (in_key_order) {
      for (int i = 0; i < std::max(height, old_height); ++i) finger_[i] = i < height ? n : prev[i];
      last_insert_ = n;
    } else {
      last_insert_ = nullptr;
    }
    return n;
  }

  void find_predecessors(std::string_view key, Node** prev) const { descend(key, prev); }
  // The same, returning the height that splits the crowded stretches passed (see insert).
  // Out of line: inlined into the callers of insert, its counting costs them registers.
  [[gnu::noinline]] int find_predecessors_in_crowds(std::string_view key, Node** prev) const {
    return std::min(std::countr_one(descend<true>(key, prev).crowded) + 1, kMaxHeight);
  }

  // Writer: the predecessors of linked `node` on its levels, found by following pointers
  // from head_ with no key comparison, when that takes at most kNearHead steps in all (a
  // queue's head, or the node after it, nearly always). False otherwise, prev then unset.
  // On each level the walk starts from the predecessor one level up (a node of that level
  // too, and before `node`), so it meets `node` before the end of the level.
  bool find_predecessors_near_head(const Node* node, Node** prev) const {
    constexpr int kNearHead = 4;
    int steps = 0;
    Node* x = head_;
    for (int level = node->height() - 1; level >= 0; --level) {
      for (Node* n = x->next(level); n != node; n = x->next(level)) {
        if (++steps > kNearHead) return false;
        x = n;
      }
      prev[level] = x;
    }
    return true;
  }

  // Writer, with no reader left: each level ascends strictly, holds only linked nodes of
  // at least its height, and each of its nodes is on the level below.
  void check_levels() const {
    for (int level = max_height() - 1; level >= 0; --level) {
      const Node* below = head_;
      for (const Node* n = head_->next(level); n != nullptr; n = n->next(level)) {
        STRATA_INVARIANT(!n->unlinked_ && n->height() > level);
        if (level == 0) continue;
        while (below != nullptr && below != n) below = below->next(level - 1);
        STRATA_INVARIANT(below == n);
      }
      const Node* prev = nullptr;
      for (const Node* n = head_->next(level); n != nullptr; prev = n, n = n->next(level)) {
        STRATA_INVARIANT(prev == nullptr || key_less(prev->key(), n->key()));
      }
    }
  }

  // Whether `key` falls between the last in-order insert and its successor. Then finger_
  // holds its predecessors: a node on some level between finger_[i] and `key` would be on
  // level 0 between the last insert and its successor too.
  bool follows_last_insert(std::string_view key) const {
    if (last_insert_ == nullptr || !key_less(last_insert_->key(), key)) return false;
    const Node* after = last_insert_->next(0);
    return after == nullptr || key_less(key, after->key());
  }

  struct Position {
    Node* before;               // the last node with key < `key` (head_ if none)
    Node* at_or_after;          // the node that followed it when compared: key >= `key`, or nullptr
    int height;                 // the levels descended (and filled in `prev`)
    std::uint32_t crowded = 0;  // bit l: the walk passed kCrowdedGap nodes or more on level l
  };
  static_assert(kMaxHeight <= 32, "Position::crowded has a bit per level");

  // Finds `key`'s position, recording the predecessor at each level in `prev` when given.
  // at_or_after is the very pointer that was compared, never a reload of before->next(0):
  // a concurrent insert between the two loads could put a smaller key there.
  // A node found larger at one level is not compared again at the levels below
  // (leveldb's trick): it is the most common next node there.
  // kInsertIntoLargeList: the seek of an insert into a list kCrowdingHeight high or more
  // (find_predecessors_in_crowds), whose nodes are mostly not cached. It also fetches each
  // node's second line with its first, and fills Position::crowded for insert. (In a
  // small list the lines are cached, or being written by the writer on another core,
  // where fetching them ahead only moves them back and forth.)
  template <bool kInsertIntoLargeList = false>
  Position descend(std::string_view key, Node** prev) const {
    const int height = max_height();
    Node* x = head_;
    Node* known_bigger = nullptr;
    std::uint32_t crowded = 0;
    for (int level = height - 1; level >= 0; --level) {
      [[maybe_unused]] int passed = 0;
      for (;;) {
        Node* n = x->next(level);
        // n's key may run into the line after its header's: fetch both at once, rather
        // than the second only once the header gives the key's offset.
        if constexpr (kInsertIntoLargeList) fetch_tail(n);
        // Whichever way the comparison goes, the next node is n or x's successor one level
        // down: fetch the latter while n's key is compared, so the two misses overlap.
        if (level > 0) {
          if constexpr (kInsertIntoLargeList) {
            fetch(x->next(level - 1));
          } else {
            __builtin_prefetch(x->next(level - 1));
          }
        }
        if (n == nullptr || n == known_bigger || !key_less(n->key(), key)) {
          known_bigger = n;
          break;
        }
        x = n;
        if constexpr (kInsertIntoLargeList) ++passed;
      }
      if constexpr (kInsertIntoLargeList) crowded |= std::uint32_t{passed >= kCrowdedGap} << level;
      if (prev != nullptr) prev[level] = x;
    }
    return {x, known_bigger, height, crowded};
  }

  // Starts loading `n`'s header and key (which may run into the next cache line). `n` may
  // be null: a prefetch never faults.
  static void fetch(const Node* n) {
    __builtin_prefetch(n);
    fetch_tail(n);
  }
  // Starts loading the line 63 bytes into `n`, which holds the rest of a short key of a
  // low node when it does not fit in the line `n` starts in. An address only, never
  // dereferenced.
  static void fetch_tail(const Node* n) {
    const auto at = reinterpret_cast<std::uintptr_t>(n);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address to fetch, never to read
    __builtin_prefetch(reinterpret_cast<const void*>(at + 63));
  }

  // Geometric heights with p = 1/4, from two bits per level.
  static int random_height(std::uint64_t bits) {
    int height = 1;
    while (height < kMaxHeight && (bits & 3) == 0) {
      ++height;
      bits >>= 2;
    }
    return height;
  }

  // keep_tall_nodes_reserved's height for a node drawn `height` levels high.
  [[gnu::noinline]] int reserved_height(std::string_view key, int height) const {
    const std::size_t size = node_size(key.size(), height);
    return size > SizeClassPool::kMaxPooled || !index_pool_.has_room(size) ? 1 : height;
  }
  static std::size_t node_size(std::size_t key_size, int height) {
    return offsetof(Node, next_) + sizeof(std::atomic<Node*>) * height + key_size;
  }
  SizeClassPool& pool_for(int height) { return height >= 2 ? index_pool_ : pool_; }
  // `prev`: as Node's constructor.
  Node* make_node(std::string_view key, int height, Node* const* prev) {
    void* mem = pool_for(height).allocate(node_size(key.size(), height));
    return new (mem) Node(key, height, prev);
  }

  SizeClassPool& pool_;               // nodes of height 1
  SizeClassPool index_pool_;          // taller nodes (and head_); before head_, which it holds
  bool tall_reserved_only_ = false;   // keep_tall_nodes_reserved
  bool nodes_left_to_pools_ = false;  // leave_nodes_to_pools
  Node* const head_;
  std::atomic<int> max_height_{1};
  // Writer only. The last in-order insert's predecessors at each level below max_height()
  // (the new node itself on its own levels), and that node; nullptr after any other insert
  // or any unlink (which may free what the finger points at, or lower max_height()).
  Node* finger_[kMaxHeight] = {};
  Node* last_insert_ = nullptr;
};

}  // namespace strata::kv
