#include "kv/mvcc_store.hpp"

#include <algorithm>

namespace strata::kv {

MvccStore::~MvccStore() {
  // Quiescent: no readers remain. Free every chain; the list frees its nodes.
  for (Node* n = list_.first(); n != nullptr; n = n->next(0)) {
    retire_chain(n->payload().load(std::memory_order_relaxed));
  }
  for (const Retired& r : retired_) {
    if (r.is_node) {
      list_.destroy_node(static_cast<Node*>(r.ptr));
    } else {
      VersionRecord::destroy(record_pool_, static_cast<VersionRecord*>(r.ptr));
    }
  }
}

const VersionRecord* MvccStore::get(std::string_view key, Version version) const {
  Node* n = list_.find_greater_or_equal(key);
  if (n == nullptr || n->key() != key) return nullptr;
  return visible(n, version);
}

std::optional<std::string_view> MvccStore::latest(std::string_view key) const {
  Node* n = list_.find_greater_or_equal(key);
  if (n == nullptr || n->key() != key) return std::nullopt;
  const VersionRecord* r = n->payload().load(std::memory_order_relaxed);
  if (r == nullptr || r->is_tombstone()) return std::nullopt;
  return r->value();
}

void MvccStore::set(std::string_view key, std::string_view value, Version version) {
  push(find_or_insert(key), value, version);
}

void MvccStore::clear(std::string_view key, Version version) {
  Node* n = list_.find_greater_or_equal(key);
  if (n == nullptr || n->key() != key) return;
  const VersionRecord* head = n->payload().load(std::memory_order_relaxed);
  if (head == nullptr || head->is_tombstone()) return;
  push(n, std::nullopt, version);
}

void MvccStore::clear_range(std::string_view begin, std::string_view end, Version version) {
  for (Node* n = list_.find_greater_or_equal(begin); n != nullptr && n->key() < end;
       n = n->next(0)) {
    const VersionRecord* head = n->payload().load(std::memory_order_relaxed);
    if (head != nullptr && !head->is_tombstone()) push(n, std::nullopt, version);
  }
}

MvccStore::Node* MvccStore::find_or_insert(std::string_view key) {
  Node* n = list_.find_greater_or_equal(key);
  if (n != nullptr && n->key() == key) return n;
  return list_.insert(key, next_random());
}

void MvccStore::push(Node* node, std::optional<std::string_view> value, Version version) {
  VersionRecord* head = node->payload().load(std::memory_order_relaxed);
  if (head != nullptr && head->version() == version) {
    // A second write to the key in one commit batch replaces the first. Readers of the
    // published version may be standing on it: retire, do not free.
    node->payload().store(VersionRecord::make(record_pool_, version, value, head->older()),
                          std::memory_order_release);
    retired_.push_back({committed(), head, false});
    return;
  }
  // Release: a reader that loads the new head sees its contents and its older link.
  node->payload().store(VersionRecord::make(record_pool_, version, value, head),
                        std::memory_order_release);
  gc_queue_.push_back({node, version});
}

Version MvccStore::advance_horizon() {
  std::lock_guard lock(horizon_mu_);
  Version oldest = registry_.oldest(committed_);
  horizon_ = std::max(horizon_, oldest);
  return oldest;
}

bool MvccStore::pin_at(ReaderRegistry::Slot* slot, Version version) {
  std::lock_guard lock(horizon_mu_);
  if (version < horizon_) return false;
  slot->version.store(version, std::memory_order_seq_cst);
  return true;
}

void MvccStore::collect_garbage(std::size_t budget, Version oldest) {
  while (budget > 0 && !gc_queue_.empty() && gc_queue_.front().version <= oldest) {
    collect_key(gc_queue_.front(), oldest);
    gc_queue_.pop_front();
    --budget;
  }
  reclaim(oldest);
}

// Every reader reads at `oldest` or later, so the newest record at or below `oldest`
// is the oldest anyone can see: cut what lies behind it. If it is the head and a
// tombstone, nobody can see the key at all: unlink it.
void MvccStore::collect_key(const GcEntry& entry, Version oldest) {
  Node* node = entry.node;
  VersionRecord* head = node->payload().load(std::memory_order_relaxed);
  VersionRecord* keep = head;
  while (keep != nullptr && keep->version() > oldest) keep = keep->older();
  if (keep == nullptr) return;
  if (VersionRecord* older = keep->older()) {
    keep->cut_older();
    retire_chain(older);  // reclaimed below, once readers are past
  }
  // Only the entry of the newest write may unlink: earlier entries of the same node are
  // still queued ahead of it, and must find the node alive.
  if (keep == head && head->is_tombstone() && head->version() == entry.version) {
    list_.unlink(node);
    Version tag = committed();
    retired_.push_back({tag, head, false});
    retired_.push_back({tag, node, true});
  }
}

void MvccStore::retire_chain(VersionRecord* r) {
  Version tag = committed();
  while (r != nullptr) {
    VersionRecord* older = r->older();
    retired_.push_back({tag, r, false});
    r = older;
  }
}

void MvccStore::reclaim(Version oldest) {
  while (!retired_.empty() && retired_.front().tag < oldest) {
    const Retired& r = retired_.front();
    if (r.is_node) {
      list_.destroy_node(static_cast<Node*>(r.ptr));
    } else {
      VersionRecord::destroy(record_pool_, static_cast<VersionRecord*>(r.ptr));
    }
    retired_.pop_front();
  }
}

std::uint64_t MvccStore::next_random() {
  // xorshift64*: heights only need to be roughly geometric.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1Dull;
}

}  // namespace strata::kv
