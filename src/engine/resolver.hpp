// engine/resolver.hpp: the committed-write history that conflict checks run against.
//
// The key space is cut into intervals at boundary keys; each interval carries the newest
// commit version that wrote anywhere in it (FoundationDB's ConflictSet model). The
// boundaries live in a treap whose nodes also keep the maximum version of their subtree,
// so "the newest write in [begin, end)" costs O(log n), independent of history length.
// History at or below the oldest live read version can never cause a conflict; prune()
// merges it away in one in-order pass whenever the boundary count has doubled since the
// last pass (amortized O(1) per recorded write), or at once when all of it is (the treap
// an old reader's burst left behind). Nodes are recycled, so a steady stream of
// short transactions allocates nothing here.
//
// The newest writes wait in a ring, oldest first, before entering the treap. Most are
// pruned from there without ever paying for a treap insert: a lone client's write is
// history as soon as its next transaction starts, and with more clients than cores a few
// thousand commits pass while a preempted reader holds its version. The ring grows (by
// doubling) up to kMaxRecent entries; when full it moves into the treap. It does not
// shrink: its strings keep their capacity for the next burst.
//
// Commits ask written_after(range, read_version), not for the newest version: the ring is
// scanned from the newest write back to the read version only (a commit whose reader is
// recent looks at a handful of writes), and the treap is searched only when it holds a
// write newer than the read version. prepare() moves the ring into the treap first when
// scanning it once per read range would cost more than the inserts (an old reader with
// many read ranges): a commit never pays much more than whichever is cheaper.
//
// Thread safety: none; the commit pipeline owns it and calls it under its lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "base/copy_bytes.hpp"

namespace strata::engine {

class Resolver {
 public:
  Resolver();
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // The newest version written in [begin, end); 0 when nothing newer than the pruned
  // floor was written there. REQUIRES: begin < end. Exact, and it scans the whole ring:
  // commits ask written_after, and the tests check that against this.
  Version newest_write(std::string_view begin, std::string_view end) const;
  // newest_write(key, key+00) without building key+00.
  Version newest_write_at(std::string_view key) const;
  // Whether anything was written in [begin, end) (at `key`) after `version`: the same as
  // newest_write(...) > version, at a cost that grows with the writes after `version`.
  bool written_after(std::string_view begin, std::string_view end, Version version) const;
  bool written_after_at(std::string_view key, Version version) const;
  // Whether anything was recorded after `version`. When not, written_after(..., version)
  // and written_after_at(..., version) are false for every range and key, and a commit
  // read at `version` need not ask them one by one.
  bool recorded_after(Version version) const { return newest_ > version; }
  // Before `queries` written_after checks at `version`: moves the recent writes into the
  // treap when scanning them for every query would cost more than inserting them.
  void prepare(Version version, std::size_t queries);
  // Records a write of [begin, end) at `version`. REQUIRES: begin < end; version >= every
  // version recorded before. A single key ([k, k+00)) takes a faster path in the treap.
  void record_write(std::string_view begin, std::string_view end, Version version);
  // record_write(key, key+00, version) without building key+00.
  void record_write_at(std::string_view key, Version version);
  // Forgets boundaries at or below `oldest` (merging their intervals into neighbours that
  // are too) once the boundary count has doubled since the last pass; `force` prunes now.
  void prune(Version oldest, bool force = false);
  // The highest `oldest` prune() was given: writes at or below it may be forgotten, so a
  // read at a version below it can no longer be checked (transaction_too_old).
  Version floor() const { return floor_; }

  std::size_t boundary_count() const { return size_; }
  // Writes recorded but not yet in the treap.
  std::size_t recent_count() const { return recent_size_; }

 private:
  struct Node;
  struct Split;
  // A key's bytes, which keep their room from one write to the next: a copy is a few
  // moves inline (base::copy_key_bytes), not std::string::assign's general path.
  class KeyCopy {
   public:
    [[gnu::always_inline]] void assign(std::string_view key) {
      if (key.size() > capacity_) [[unlikely]]
        make_room(key.size());
      base::copy_key_bytes(bytes_.get(), key);
      size_ = key.size();
    }
    operator std::string_view() const { return {bytes_.get(), size_}; }  // implicit: a key

   private:
    [[gnu::noinline]] void make_room(std::size_t bytes) {
      bytes_ = std::make_unique_for_overwrite<char[]>(bytes);
      capacity_ = bytes;
    }

    std::unique_ptr<char[]> bytes_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
  };
  struct Recent {
    KeyCopy begin, end;
    Version version;
    bool point;  // [begin, begin+00); end unused
  };

  Recent& recent_at(std::size_t i) { return recent_[(recent_first_ + i) & recent_mask_]; }
  const Recent& recent_at(std::size_t i) const {
    return recent_[(recent_first_ + i) & recent_mask_];
  }
  // A slot at the end of the ring (growing it, or flushing it into the treap, when full).
  // Inline: every commit records its writes here, and the ring is rarely full.
  Recent& next_recent(Version version) {
    if (recent_size_ > recent_mask_) [[unlikely]]
      make_room();
    Recent& r = recent_at(recent_size_++);
    r.version = version;
    newest_ = version;
    return r;
  }
  // Grows the full ring, or flushes it into the treap at kMaxRecent.
  [[gnu::noinline]] void make_room();
  // The number of recent writes newer than `version` (a suffix: versions only grow).
  std::size_t recent_after(Version version) const;
  // Whether a recent write newer than `version` satisfies `meets`: scans from the newest
  // back, stopping at `version`.
  template <class Meets>
  bool recent_meets_after(Version version, Meets meets) const {
    for (std::size_t i = recent_size_; i > 0 && recent_at(i - 1).version > version; --i) {
      if (meets(recent_at(i - 1))) return true;
    }
    return false;
  }
  static bool meets(const Recent& r, std::string_view begin, std::string_view end);
  static bool meets_at(const Recent& r, std::string_view key);
  // Moves the recent writes into the treap, oldest first.
  void flush_recent();
  void record_in_treap(std::string_view begin, std::string_view end, Version version);

  static Version max_of(const Node* n);
  static void update(Node* n);
  static Split split(Node* n, std::string_view key);  // [< key], [>= key]
  static Node* merge(Node* a, Node* b);
  // Inserts `fresh` (whose key is not in the treap) below `n`; returns the new subtree.
  static Node* insert(Node* n, Node* fresh);
  // Sets the version of the boundary at `key` (which must exist) to `version`, the newest.
  void raise(std::string_view key, Version version);
  const Node* floor_of(std::string_view key) const;  // the last boundary <= key, or null
  void record_point(std::string_view key, std::string_view key_after, Version version);
  // Treap of `sorted` (ascending keys), keeping their priorities; recomputes maxima.
  static Node* build(const std::vector<Node*>& sorted);
  static Version fix_maxima(Node* n);
  Node* make_node(std::string_view key, Version version);
  void recycle(Node* n);  // n's subtree, through release()
  void release(Node* n);  // into spare_, or deleted when spare_ is full
  // Version of the interval containing `key` (the last boundary <= key).
  Version version_at(std::string_view key) const;
  // Max version of boundaries with begin < key < end.
  static Version max_strictly_inside(const Node* n, std::string_view begin, std::string_view end);
  std::uint32_t next_priority();

  static constexpr std::size_t kMinPrune = 32;      // boundaries before the first pass
  static constexpr std::size_t kMaxSpare = 4096;    // recycled nodes kept
  static constexpr std::size_t kMinRecent = 16;     // the ring's first capacity
  static constexpr std::size_t kMaxRecent = 16384;  // writes waiting before the treap
  static constexpr std::size_t kInsertCost = 32;    // see prepare()

  Node* root_ = nullptr;
  std::size_t size_ = 0;
  std::size_t prune_at_ = kMinPrune;
  Version floor_ = 0;
  Version newest_ = 0;  // the newest version recorded (recorded_after)
  // A ring: recent_at(0) .. recent_at(recent_size_ - 1), oldest first. Versions only grow,
  // so pruning drops a prefix. Its capacity is a power of two.
  std::vector<Recent> recent_ = std::vector<Recent>(kMinRecent);
  std::size_t recent_mask_ = kMinRecent - 1;  // recent_.size() - 1, kept at hand
  std::size_t recent_first_ = 0;
  std::size_t recent_size_ = 0;
  std::vector<Node*> spare_;    // recycled nodes (their keys keep their capacity)
  std::vector<Node*> scratch_;  // prune's in-order list
  std::string flush_end_;       // a point write's end, built when it enters the treap
  std::uint64_t rng_ = 0x853C49E6748FEA9Bull;
};

}  // namespace strata::engine
