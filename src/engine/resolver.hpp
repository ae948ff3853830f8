// engine/resolver.hpp: the committed-write history that conflict checks run against.
//
// The key space is cut into intervals at boundary keys; each interval carries the newest
// commit version that wrote anywhere in it (FoundationDB's ConflictSet model). The
// boundaries live in a treap whose nodes also keep the maximum version of their subtree,
// so "the newest write in [begin, end)" costs O(log n), independent of history length.
// History at or below the oldest live read version can never cause a conflict; prune()
// merges it away a bounded number of boundaries at a time.
//
// Thread safety: none; the commit pipeline owns it and calls it under its lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "strata/types.hpp"

namespace strata::engine {

class Resolver {
 public:
  Resolver();
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // The newest version written in [begin, end); 0 when nothing newer than the pruned
  // floor was written there. REQUIRES: begin < end.
  Version newest_write(std::string_view begin, std::string_view end) const;
  // Records a write of [begin, end) at `version`. REQUIRES: begin < end; version >= every
  // version recorded before.
  void record_write(std::string_view begin, std::string_view end, Version version);
  // Forgets boundaries whose versions are all <= `oldest`, visiting at most `budget`.
  void prune(Version oldest, std::size_t budget);

  std::size_t boundary_count() const { return size_; }

 private:
  struct Node;
  struct Split;

  static Version max_of(const Node* n);
  static void update(Node* n);
  static Split split(Node* n, std::string_view key);  // [< key], [>= key]
  static Node* merge(Node* a, Node* b);
  static void destroy(Node* n, std::size_t& count);
  // Version of the interval containing `key` (the last boundary <= key).
  Version version_at(std::string_view key) const;
  // Max version of boundaries with begin < key < end.
  static Version max_strictly_inside(const Node* n, std::string_view begin, std::string_view end);
  const Node* next_boundary(std::string_view key) const;  // first boundary > key
  void erase(std::string_view key);
  std::uint32_t next_priority();

  Node* root_ = nullptr;
  std::size_t size_ = 0;
  std::string prune_cursor_;
  std::uint64_t rng_ = 0x853C49E6748FEA9Bull;
};

}  // namespace strata::engine
