#include "engine/resolver.hpp"

#include <algorithm>
#include <utility>

namespace strata::engine {

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
  std::size_t count = 0;
  destroy(root_, count);
}

Version Resolver::max_of(const Node* n) { return n == nullptr ? 0 : n->subtree_max; }

void Resolver::update(Node* n) {
  n->subtree_max = std::max({n->version, max_of(n->left), max_of(n->right)});
}

Resolver::Split Resolver::split(Node* n, std::string_view key) {
  if (n == nullptr) return {nullptr, nullptr};
  if (std::string_view(n->key) < key) {
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

void Resolver::destroy(Node* n, std::size_t& count) {
  while (n != nullptr) {
    destroy(n->left, count);
    Node* right = n->right;
    delete n;
    ++count;
    n = right;
  }
}

Version Resolver::version_at(std::string_view key) const {
  Version v = 0;  // the interval before the first boundary: nothing recorded
  for (const Node* n = root_; n != nullptr;) {
    if (std::string_view(n->key) <= key) {
      v = n->version;
      n = n->right;
    } else {
      n = n->left;
    }
  }
  return v;
}

const Resolver::Node* Resolver::next_boundary(std::string_view key) const {
  const Node* best = nullptr;
  for (const Node* n = root_; n != nullptr;) {
    if (std::string_view(n->key) > key) {
      best = n;
      n = n->left;
    } else {
      n = n->right;
    }
  }
  return best;
}

// Walks the two search paths for `begin` and `end`; whole subtrees between them count by
// their stored maximum, so the walk is O(depth).
Version Resolver::max_strictly_inside(const Node* n, std::string_view begin, std::string_view end) {
  // Descend to the split point: the first node with begin < key < end.
  while (n != nullptr) {
    std::string_view k = n->key;
    if (k <= begin) {
      n = n->right;
    } else if (k >= end) {
      n = n->left;
    } else {
      break;
    }
  }
  if (n == nullptr) return 0;
  Version best = n->version;
  // Left path: nodes > begin; their right subtrees lie wholly inside.
  for (const Node* l = n->left; l != nullptr;) {
    if (std::string_view(l->key) > begin) {
      best = std::max({best, l->version, max_of(l->right)});
      l = l->left;
    } else {
      l = l->right;
    }
  }
  // Right path: nodes < end; their left subtrees lie wholly inside.
  for (const Node* r = n->right; r != nullptr;) {
    if (std::string_view(r->key) < end) {
      best = std::max({best, r->version, max_of(r->left)});
      r = r->right;
    } else {
      r = r->left;
    }
  }
  return best;
}

Version Resolver::newest_write(std::string_view begin, std::string_view end) const {
  return std::max(version_at(begin), max_strictly_inside(root_, begin, end));
}

void Resolver::record_write(std::string_view begin, std::string_view end, Version version) {
  Version after = version_at(end);  // the interval containing `end` keeps its version
  Split lower = split(root_, begin);
  Split upper = split(lower.rest, end);
  std::size_t removed = 0;
  destroy(upper.less, removed);
  size_ -= removed;
  Node* b = new Node{std::string(begin), version, version, next_priority()};
  ++size_;
  Node* tail = upper.rest;
  bool end_is_boundary = false;
  if (tail != nullptr) {
    const Node* first = tail;
    while (first->left != nullptr) first = first->left;
    end_is_boundary = first->key == end;
  }
  if (!end_is_boundary) {
    Node* e = new Node{std::string(end), after, after, next_priority()};
    ++size_;
    tail = merge(e, tail);
  }
  root_ = merge(lower.less, merge(b, tail));
}

void Resolver::erase(std::string_view key) {
  Split lower = split(root_, key);
  Split upper = split(lower.rest, std::string(key) + '\0');
  std::size_t removed = 0;
  destroy(upper.less, removed);
  size_ -= removed;
  root_ = merge(lower.less, upper.rest);
}

// A boundary whose interval is at or below `oldest` can merge into its predecessor when
// that is at or below `oldest` too: no live reader can tell them apart. The scan resumes
// where it stopped and wraps around, so all of history is visited over time.
void Resolver::prune(Version oldest, std::size_t budget) {
  if (root_ == nullptr) return;
  if (max_of(root_) <= oldest) {
    std::size_t removed = 0;
    destroy(root_, removed);
    root_ = nullptr;
    size_ = 0;
    prune_cursor_.clear();
    return;
  }
  Version prev = version_at(prune_cursor_);
  const Node* n = next_boundary(prune_cursor_);
  if (prune_cursor_.empty()) {
    // Start of the key space: the first boundary (which may be "" itself).
    n = root_;
    while (n->left != nullptr) n = n->left;
    prev = 0;
  }
  while (budget-- > 0) {
    if (n == nullptr) {
      prune_cursor_.clear();
      return;
    }
    std::string key = n->key;
    Version v = n->version;
    if (v <= oldest && prev <= oldest) {
      erase(key);  // its interval joins the predecessor's
    } else {
      prev = v;
    }
    prune_cursor_ = key;
    n = next_boundary(key);
  }
}

std::uint32_t Resolver::next_priority() {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return static_cast<std::uint32_t>(rng_ >> 16);
}

}  // namespace strata::engine
