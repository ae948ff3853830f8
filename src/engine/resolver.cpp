#include "engine/resolver.hpp"

#include <algorithm>
#include <utility>

#include "base/key_compare.hpp"

namespace strata::engine {

using base::key_compare;
using base::key_less;

struct Resolver::Node {
  std::string key;  // the interval [key, next boundary) ...
  Version version;  // ... was last written at this version
  Version subtree_max;
  std::uint32_t priority;
  Node* left = nullptr;
  Node* right = nullptr;
};

struct Resolver::Split {
  Node* less;
  Node* rest;
};

Resolver::Resolver() = default;

Resolver::~Resolver() {
  recycle(root_);
  for (Node* n : spare_) delete n;
}

Version Resolver::max_of(const Node* n) { return n == nullptr ? 0 : n->subtree_max; }

void Resolver::update(Node* n) {
  n->subtree_max = std::max({n->version, max_of(n->left), max_of(n->right)});
}

Resolver::Split Resolver::split(Node* n, std::string_view key) {
  if (n == nullptr) return {nullptr, nullptr};
  if (key_less(n->key, key)) {
    Split s = split(n->right, key);
    n->right = s.less;
    update(n);
    return {n, s.rest};
  }
  Split s = split(n->left, key);
  n->left = s.rest;
  update(n);
  return {s.less, n};
}

Resolver::Node* Resolver::merge(Node* a, Node* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  if (a->priority > b->priority) {
    a->right = merge(a->right, b);
    update(a);
    return a;
  }
  b->left = merge(a, b->left);
  update(b);
  return b;
}

// Iterative, so a degenerate subtree cannot overflow the stack.
void Resolver::recycle(Node* n) {
  while (n != nullptr) {
    if (n->left != nullptr) {  // rotate the left child up, then continue
      Node* l = n->left;
      n->left = l->right;
      l->right = n;
      n = l;
      continue;
    }
    Node* right = n->right;
    release(n);
    n = right;
  }
}

void Resolver::release(Node* n) {
  --size_;
  if (spare_.size() < kMaxSpare) {
    spare_.push_back(n);
  } else {
    delete n;
  }
}

Resolver::Node* Resolver::make_node(std::string_view key, Version version) {
  Node* n;
  if (spare_.empty()) {
    n = new Node{std::string(key), version, version, next_priority()};
  } else {
    n = spare_.back();
    spare_.pop_back();
    n->key.assign(key);
    n->version = n->subtree_max = version;
    n->priority = next_priority();
    n->left = n->right = nullptr;
  }
  ++size_;
  return n;
}

Version Resolver::version_at(std::string_view key) const {
  const Node* n = floor_of(key);  // none: the interval before the first boundary, unwritten
  return n == nullptr ? 0 : n->version;
}

// Walks the two search paths for `begin` and `end`; whole subtrees between them count by
// their stored maximum, so the walk is O(depth).
Version Resolver::max_strictly_inside(const Node* n, std::string_view begin, std::string_view end) {
  // Descend to the split point: the first node with begin < key < end.
  while (n != nullptr) {
    std::string_view k = n->key;
    if (!key_less(begin, k)) {
      n = n->right;
    } else if (!key_less(k, end)) {
      n = n->left;
    } else {
      break;
    }
  }
  if (n == nullptr) return 0;
  Version best = n->version;
  // Left path: nodes > begin; their right subtrees lie wholly inside.
  for (const Node* l = n->left; l != nullptr;) {
    if (key_less(begin, l->key)) {
      best = std::max({best, l->version, max_of(l->right)});
      l = l->left;
    } else {
      l = l->right;
    }
  }
  // Right path: nodes < end; their left subtrees lie wholly inside.
  for (const Node* r = n->right; r != nullptr;) {
    if (key_less(r->key, end)) {
      best = std::max({best, r->version, max_of(r->left)});
      r = r->right;
    } else {
      r = r->left;
    }
  }
  return best;
}

// A point write [k, k+00) meets [begin, end) when begin <= k < end.
bool Resolver::meets(const Recent& r, std::string_view begin, std::string_view end) {
  if (!key_less(r.begin, end)) return false;
  return r.point ? !key_less(r.begin, begin) : key_less(begin, r.end);
}

bool Resolver::meets_at(const Recent& r, std::string_view key) {
  return r.point ? key == r.begin : !key_less(key, r.begin) && key_less(key, r.end);
}

Version Resolver::newest_write(std::string_view begin, std::string_view end) const {
  Version best =
      root_ == nullptr ? 0 : std::max(version_at(begin), max_strictly_inside(root_, begin, end));
  for (std::size_t i = 0; i < recent_size_; ++i) {
    const Recent& r = recent_at(i);
    if (r.version > best && meets(r, begin, end)) best = r.version;
  }
  return best;
}

Version Resolver::newest_write_at(std::string_view key) const {
  Version best = root_ == nullptr ? 0 : version_at(key);  // nothing lies inside [k, k+00)
  for (std::size_t i = 0; i < recent_size_; ++i) {
    const Recent& r = recent_at(i);
    if (r.version > best && meets_at(r, key)) best = r.version;
  }
  return best;
}

bool Resolver::written_after(std::string_view begin, std::string_view end, Version version) const {
  if (recent_meets_after(version, [&](const Recent& r) { return meets(r, begin, end); })) {
    return true;
  }
  if (max_of(root_) <= version) return false;
  return std::max(version_at(begin), max_strictly_inside(root_, begin, end)) > version;
}

bool Resolver::written_after_at(std::string_view key, Version version) const {
  if (recent_meets_after(version, [&](const Recent& r) { return meets_at(r, key); })) return true;
  return max_of(root_) > version && version_at(key) > version;
}

std::size_t Resolver::recent_after(Version version) const {
  std::size_t lo = 0, hi = recent_size_;  // the first entry newer than `version`
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (recent_at(mid).version > version) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return recent_size_ - lo;
}

// Scanning costs (writes after `version`) x `queries` comparisons; moving the ring costs a
// treap insert of some kInsertCost comparisons per write, once.
void Resolver::prepare(Version version, std::size_t queries) {
  if (queries <= kInsertCost) return;  // at most kInsertCost x recent_size_ to scan
  if (recent_after(version) * queries > kInsertCost * recent_size_) flush_recent();
}

Resolver::Node* Resolver::insert(Node* n, Node* fresh) {
  if (n == nullptr) return fresh;
  if (fresh->priority > n->priority) {
    Split s = split(n, fresh->key);
    fresh->left = s.less;
    fresh->right = s.rest;
    update(fresh);
    return fresh;
  }
  if (key_less(fresh->key, n->key)) {
    n->left = insert(n->left, fresh);
  } else {
    n->right = insert(n->right, fresh);
  }
  update(n);
  return n;
}

const Resolver::Node* Resolver::floor_of(std::string_view key) const {
  const Node* best = nullptr;
  for (const Node* n = root_; n != nullptr;) {
    if (key_less(key, n->key)) {
      n = n->left;
    } else {
      best = n;
      n = n->right;
    }
  }
  return best;
}

// `version` is the newest ever recorded, so it is the new maximum of every subtree on the
// path to the boundary.
void Resolver::raise(std::string_view key, Version version) {
  for (Node* n = root_; n != nullptr;) {
    n->subtree_max = version;
    int c = key_compare(key, n->key);
    if (c == 0) {
      n->version = version;
      return;
    }
    n = c < 0 ? n->left : n->right;
  }
}

// [key, key+00) holds one key, so no boundary lies strictly inside: the interval at
// key+00 keeps the version it has now, and key's own interval takes `version`. One
// descent usually answers both "is key+00 a boundary" and "what is key's interval".
void Resolver::record_point(std::string_view key, std::string_view key_after, Version version) {
  const Node* floor = floor_of(key_after);
  if (floor == nullptr || floor->key != key_after) {
    // Nothing lies between key and key+00, so this is also the last boundary <= key.
    const bool key_is_boundary = floor != nullptr && floor->key == key;
    root_ = insert(root_, make_node(key_after, floor == nullptr ? 0 : floor->version));
    if (key_is_boundary) {
      raise(key, version);
    } else {
      root_ = insert(root_, make_node(key, version));
    }
    return;
  }
  floor = floor_of(key);
  if (floor != nullptr && floor->key == key) {
    raise(key, version);
  } else {
    root_ = insert(root_, make_node(key, version));
  }
}

void Resolver::make_room() {
  if (recent_.size() < kMaxRecent) {
    std::vector<Recent> grown(2 * recent_.size());
    for (std::size_t i = 0; i < recent_size_; ++i) grown[i] = std::move(recent_at(i));
    recent_.swap(grown);
    recent_mask_ = recent_.size() - 1;
    recent_first_ = 0;
  } else {
    flush_recent();
  }
}

void Resolver::record_write(std::string_view begin, std::string_view end, Version version) {
  Recent& r = next_recent(version);
  r.begin.assign(begin);
  r.end.assign(end);
  r.point = false;
}

void Resolver::record_write_at(std::string_view key, Version version) {
  Recent& r = next_recent(version);
  r.begin.assign(key);
  r.point = true;  // end is not built: one string copy per write, not two
}

void Resolver::flush_recent() {
  for (std::size_t i = 0; i < recent_size_; ++i) {
    const Recent& r = recent_at(i);
    if (r.point) {
      flush_end_.assign(r.begin);
      flush_end_.push_back('\0');
      record_point(r.begin, flush_end_, r.version);
    } else {
      record_in_treap(r.begin, r.end, r.version);
    }
  }
  recent_size_ = 0;
}

void Resolver::record_in_treap(std::string_view begin, std::string_view end, Version version) {
  if (end.size() == begin.size() + 1 && end.back() == '\0' && end.starts_with(begin)) {
    record_point(begin, end, version);
    return;
  }
  Version after = version_at(end);  // the interval containing `end` keeps its version
  Split lower = split(root_, begin);
  Split upper = split(lower.rest, end);
  recycle(upper.less);
  Node* b = make_node(begin, version);
  Node* tail = upper.rest;
  bool end_is_boundary = false;
  if (tail != nullptr) {
    const Node* first = tail;
    while (first->left != nullptr) first = first->left;
    end_is_boundary = first->key == end;
  }
  if (!end_is_boundary) {
    Node* e = make_node(end, after);
    tail = merge(e, tail);
  }
  root_ = merge(lower.less, merge(b, tail));
}

// A boundary whose interval is at or below `oldest` can merge into its predecessor when
// that is at or below `oldest` too: no live reader can tell them apart. One in-order pass
// keeps the rest and rebuilds the treap from them, so a pass costs O(boundaries) and runs
// only after their count has doubled.
void Resolver::prune(Version oldest, bool force) {
  floor_ = std::max(floor_, oldest);
  // Recent writes at or below `oldest` can go: oldest first, so they are a prefix.
  std::size_t first = recent_first_;
  std::size_t size = recent_size_;
  while (size > 0 && recent_[first].version <= oldest) {
    first = (first + 1) & recent_mask_;
    --size;
  }
  recent_first_ = first;
  recent_size_ = size;
  // All of the treap is history (a burst that an old reader held there is over): free it
  // now. Later writes may never reach the treap to double its count.
  if (size_ < prune_at_ && !force && (root_ == nullptr || max_of(root_) > oldest)) return;
  if (max_of(root_) <= oldest) {
    recycle(root_);
    root_ = nullptr;
    prune_at_ = kMinPrune;
    return;
  }
  scratch_.clear();
  std::vector<Node*> stack;  // in-order walk; as deep as the treap
  for (Node* n = root_; n != nullptr || !stack.empty();) {
    if (n != nullptr) {
      stack.push_back(n);
      n = n->left;
      continue;
    }
    n = stack.back();
    stack.pop_back();
    scratch_.push_back(n);
    n = n->right;
  }
  std::size_t kept = 0;
  Version prev = 0;  // the interval before the first boundary: nothing recorded
  for (Node* n : scratch_) {
    const Version v = n->version;
    n->left = n->right = nullptr;
    if (v <= oldest && prev <= oldest) {
      release(n);
    } else {
      scratch_[kept++] = n;
    }
    prev = v;
  }
  scratch_.resize(kept);
  root_ = build(scratch_);
  prune_at_ = std::max(kMinPrune, 2 * size_);
}

Resolver::Node* Resolver::build(const std::vector<Node*>& sorted) {
  // The right spine of the treap built so far; a node with a higher priority than the
  // spine's tail takes the popped part as its left subtree.
  std::vector<Node*> spine;
  for (Node* n : sorted) {
    Node* last = nullptr;
    while (!spine.empty() && spine.back()->priority < n->priority) {
      last = spine.back();
      spine.pop_back();
    }
    n->left = last;
    if (!spine.empty()) spine.back()->right = n;
    spine.push_back(n);
  }
  if (spine.empty()) return nullptr;
  fix_maxima(spine.front());
  return spine.front();
}

Version Resolver::fix_maxima(Node* n) {
  if (n == nullptr) return 0;
  n->subtree_max = std::max({n->version, fix_maxima(n->left), fix_maxima(n->right)});
  return n->subtree_max;
}

std::uint32_t Resolver::next_priority() {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return static_cast<std::uint32_t>(rng_ >> 16);
}

}  // namespace strata::engine
