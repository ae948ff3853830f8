#include "kv/mvcc_store.hpp"

#include <algorithm>
#include <limits>
#include <new>
#include <type_traits>

#include "base/coarse_clock.hpp"

namespace strata::kv {

MvccStore::~MvccStore() {
  // Quiescent: no readers remain. Nodes and records live in the pools' slabs, which free
  // them all; one by one, only when some are blocks of their own (above kMaxPooled).
  // Retired index tables are memory of their own either way.
  static_assert(std::is_trivially_destructible_v<VersionRecord>);
  if (all_in_slabs()) {
    for (std::size_t i = 0; i < retired_.size(); ++i) {
      if (retired_[i].kind == Retired::Kind::index_table) free_retired(retired_[i]);
    }
    list_.leave_nodes_to_pools();
    return;
  }
  // Free every chain; the list frees its nodes.
  for (Node* n = list_.first(); n != nullptr; n = n->next(0)) {
    retire_chain(n->payload().load(std::memory_order_relaxed));
  }
  // Keys unlinked early wait in gc_queue_ for the entry that retires them.
  std::vector<Node*> early;
  for (std::size_t i = 0; i < gc_queue_.size(); ++i) {
    if (gc_queue_[i].node->unlinked()) early.push_back(gc_queue_[i].node);
  }
  std::sort(early.begin(), early.end());
  early.erase(std::unique(early.begin(), early.end()), early.end());
  for (Node* n : early) retired_.push_back({0, n, Retired::Kind::key});
  for (std::size_t i = 0; i < retired_.size(); ++i) free_retired(retired_[i]);
}

// Inline in free_retired: a dead queue item's chain is freed there at every pop.
[[gnu::always_inline]] inline void MvccStore::destroy_chain(VersionRecord* r) {
  while (r != nullptr) {
    VersionRecord* older = r->older();
    VersionRecord::destroy(record_pool_, r);
    r = older;
  }
}

void MvccStore::free_retired(const Retired& r) {
  switch (r.kind) {
    case Retired::Kind::record:
      VersionRecord::destroy(record_pool_, static_cast<VersionRecord*>(r.ptr));
      break;
    case Retired::Kind::chain:
      destroy_chain(static_cast<VersionRecord*>(r.ptr));
      --retired_unbounded_;
      break;
    case Retired::Kind::key: {
      auto* node = static_cast<Node*>(r.ptr);
      destroy_chain(node->payload().load(std::memory_order_relaxed));
      list_.destroy_node(node);
      break;
    }
    case Retired::Kind::index_table:
      Index::destroy(static_cast<Index::Table*>(r.ptr));
      --retired_unbounded_;
      --retired_tables_;
      break;
  }
}

const VersionRecord* MvccStore::get(std::string_view key, Version version) const {
  Node* n = index_.find(key);
  return n == nullptr ? nullptr : visible(n, version);
}

namespace {

// The walk behind first_visible: keys are compared with `end` only every kEndCheckStride
// steps, so a run of invisible nodes costs no key comparison per node.
template <class Node, class Invisible>
Node* walk_to_visible(Node* n, std::string_view end, Invisible invisible) {
  constexpr unsigned kEndCheckStride = 16;
  for (unsigned step = 1; n != nullptr; ++step, n = n->next(0)) {
    if (!invisible(n)) return key_less(n->key(), end) ? n : nullptr;
    if (step % kEndCheckStride == 0 && !key_less(n->key(), end)) return nullptr;
  }
  return nullptr;
}

}  // namespace

MvccStore::Node* MvccStore::first_visible(Node* n, std::string_view end, Version version) const {
  auto by_record = [version](const Node* x) { return visible(x, version) == nullptr; };
  bool hinted = false;
  Node* found = walk_to_visible(n, end, [&](const Node* x) {
    if (x->payload().deleted_by(version)) return hinted = true;
    return by_record(x);
  });
  // A hint read during the walk belongs to a tombstone at or below newest_tombstone_ loaded
  // after it (its store comes before the hint's, and the hint was loaded with acquire). If
  // that bound is below version + kWindow / 2, every hint used was right; if not (a reader
  // far behind), walk again on the records alone.
  constexpr Version kHintReach = RecordHead::kWindow / 2 - 1;
  if (hinted && newest_tombstone_.load(std::memory_order_acquire) - version >= kHintReach) {
    return walk_to_visible(n, end, by_record);
  }
  return found;
}

std::optional<std::string_view> MvccStore::latest(std::string_view key) const {
  Node* n = index_.find(key);
  if (n == nullptr) return std::nullopt;
  const VersionRecord* r = n->payload().load(std::memory_order_relaxed);
  if (r == nullptr || r->is_tombstone()) return std::nullopt;
  return r->value();
}

void MvccStore::set(std::string_view key, std::string_view value, Version version,
                    std::uint64_t hash, const List::Path* path, Repeats repeats) {
  if (Node* n = index_.find(key, hash)) {
    push(n, n->payload().load(std::memory_order_relaxed), value, version, hash, repeats);
    return;
  }
  Node* n = insert(key, hash, path);
  // A new key's first record right behind its node, when the node was just carved. It is
  // what push() makes of a node without records, without push's look at an older head:
  // no earlier write of this batch, nothing to collect, no collection entry (see push).
  const std::size_t bytes = VersionRecord::bytes_for(value, nullptr);
  void* memory = node_pool_.allocate_after(n, List::allocation_size(*n), bytes);
  VersionRecord* r = memory != nullptr ? VersionRecord::make_at(memory, version, value, nullptr)
                                       : VersionRecord::make(record_pool_, version, value, nullptr);
  n->payload().store(r, std::memory_order_release);
}

void MvccStore::reserve_room(std::size_t keys, std::size_t bytes) {
  // Room for many commits at once: most then find it there.
  constexpr std::size_t kRoomKeys = 256;
  constexpr std::size_t kRoomBytes = std::size_t{64} << 10;
  room_keys_ = 0;
  room_bytes_ = 0;
  const std::size_t k = std::max(keys, kRoomKeys);
  const std::size_t b = std::max(bytes, kRoomBytes);
  node_pool_.reserve(b);
  record_pool_.reserve(b);
  // Tall nodes: a quarter to a third of new keys on average (SkipList::insert); past this
  // a tall node is made short.
  list_.reserve_tall_nodes(std::min(b, SizeClassPool::kHugeSlab));
  list_.keep_tall_nodes_reserved(true);
  // A write pushes at most one entry on the collection queue, and the collection that
  // follows notes at most one short-lived deletion per key; the index's growth retires a
  // table.
  gc_queue_.reserve_more(k);
  short_lived_.reserve_more(k);
  retired_.reserve_more(k + 4);
  // The index only for this commit: room ahead there would grow a small index that
  // collection then shrinks again. Its room is looked at on each commit (ready_for).
  retire_table(index_.prepare_inserts(keys));
  room_keys_ = k;
  room_bytes_ = b;
}

std::size_t MvccStore::live_keys(std::string_view begin, std::string_view end) const {
  std::size_t n = 0;
  for (const Node* x = list_.find_greater_or_equal(begin); x != nullptr && x->key() < end;
       x = x->next(0)) {
    const VersionRecord* head = x->payload().load(std::memory_order_relaxed);
    if (head != nullptr && !head->is_tombstone()) ++n;
  }
  return n;
}

void MvccStore::prepare_writes(std::span<const std::string_view> keys, std::span<List::Path> paths,
                               std::span<std::uint64_t> hashes) {
  constexpr std::size_t kGroup = 32;
  std::uint64_t group_hashes[kGroup];
  std::string_view absent[kGroup];
  List::Path* absent_paths[kGroup];
  for (std::size_t first = 0; first < keys.size(); first += kGroup) {
    const std::span<const std::string_view> group =
        keys.subspan(first, std::min(kGroup, keys.size() - first));
    for (std::size_t i = 0; i < group.size(); ++i) {
      group_hashes[i] = prefetch(group[i]);
      if (!hashes.empty()) hashes[first + i] = group_hashes[i];
    }
    std::size_t missing = 0;
    for (std::size_t i = 0; i < group.size(); ++i) {
      if (!paths.empty()) paths[first + i].height = 0;
      if (index_.find(group[i], group_hashes[i]) != nullptr) continue;
      if (!paths.empty()) absent_paths[missing] = &paths[first + i];
      absent[missing++] = group[i];
    }
    list_.prefetch_paths({absent, missing},
                         {absent_paths, paths.empty() ? std::size_t{0} : missing});
  }
}

void MvccStore::prepare_writes_in_order(std::span<const std::string_view> keys,
                                        std::span<List::Path> paths,
                                        std::span<std::uint64_t> hashes) {
  constexpr std::size_t kGroup = 32;
  std::vector<std::string_view>& absent = absent_keys_;
  std::vector<List::Path*>& absent_paths = absent_paths_;
  absent.clear();
  absent_paths.clear();
  for (std::size_t first = 0; first < keys.size(); first += kGroup) {
    const std::span<const std::string_view> group =
        keys.subspan(first, std::min(kGroup, keys.size() - first));
    for (std::size_t i = 0; i < group.size(); ++i) hashes[first + i] = prefetch(group[i]);
    for (std::size_t i = 0; i < group.size(); ++i) {
      paths[first + i].height = 0;
      if (index_.find(group[i], hashes[first + i]) != nullptr) continue;
      absent_paths.push_back(&paths[first + i]);
      absent.push_back(group[i]);
    }
  }
  list_.find_paths_in_order(absent, absent_paths);
}

void MvccStore::clear(std::string_view key, Version version, std::uint64_t h) {
  Node* n = index_.find(key, h);
  if (n == nullptr) return;
  VersionRecord* head = n->payload().load(std::memory_order_relaxed);
  if (head == nullptr || head->is_tombstone()) return;
  deletion_queued_ = true;  // push() queues the tombstone
  push(n, head, std::nullopt, version, h);
}

void MvccStore::clear_range(std::string_view begin, std::string_view end, Version version) {
  for (Node* n = list_.find_greater_or_equal(begin); n != nullptr && n->key() < end;
       n = n->next(0)) {
    VersionRecord* head = n->payload().load(std::memory_order_relaxed);
    if (head != nullptr && !head->is_tombstone()) {
      deletion_queued_ = true;
      push(n, head, std::nullopt, version, hash(n->key()));
    }
  }
}

MvccStore::Node* MvccStore::insert(std::string_view key, std::uint64_t hash,
                                   const List::Path* path) {
  Node* n = path != nullptr && path->height > 0 ? list_.insert_along(key, *path, next_random())
                                                : list_.insert(key, next_random(), in_key_order_);
  retire_table(index_.insert(n, hash));
  return n;
}

void MvccStore::unlink(Node* node, std::uint64_t hash) {
  if (node->unlinked()) return;
  list_.unlink(node);
  retire_table(index_.erase(node, hash));
}

// An index table copied out by a migration: readers may still be probing it.
void MvccStore::retire_table(Index::Table* t) {
  if (t != nullptr) {
    retired_.push_back({retire_tag(), t, Retired::Kind::index_table});
    ++retired_unbounded_;
    ++retired_tables_;
    take_room_key();
  }
}

void MvccStore::push(Node* node, VersionRecord* head, std::optional<std::string_view> value,
                     Version version, std::uint64_t hash, Repeats repeats) {
  // Before the head's release store: a reader that sees the hint sees this too.
  if (!value.has_value() && version > newest_tombstone_.load(std::memory_order_relaxed)) {
    newest_tombstone_.store(version, std::memory_order_relaxed);
  }
  if (repeats == Repeats::possible && head != nullptr && head->version() == version) {
    // A second write to the key in one commit batch replaces the first. Readers of the
    // published version may be standing on it: retire, do not free. A linkless head of
    // this batch is a new key's first record, which has no collection entry (below): the
    // key gets its one entry now (this write may delete it). The replacement is made with
    // room for a link, so that a third write in the batch finds the entry queued.
    const bool queued = head->chained();
    node->payload().store(VersionRecord::make_chained(record_pool_, version, value, head->older()),
                          std::memory_order_release);
    retired_.push_back({retire_tag(), head, Retired::Kind::record});
    if (!queued) gc_queue_.push_back({node, version, hash});
    return;
  }
  // A deletion of a key written once since the horizon is noted as short-lived from its
  // collection entry, by the next collection that finds it beyond the horizon
  // (note_short_lived): most are collected by the ordinary path first.
  // Release: a reader that loads the new head sees its contents and its older link.
  node->payload().store(VersionRecord::make(record_pool_, version, value, head),
                        std::memory_order_release);
  // A new key's first record (a value: clear skips absent keys) is not queued for
  // collection: there is nothing behind it to cut, it is no tombstone to unlink, and it
  // has no link to compact away. Every later write to the key queues its own entry, which
  // does all that an entry for this one would have done.
  STRATA_INVARIANT(head != nullptr || value.has_value());
  if (head != nullptr) gc_queue_.push_back({node, version, hash});
}

void MvccStore::revoke_now() {
  collections_since_revoke_ = 0;
  registry_.revoke_expired(base::CoarseClock::now().time_since_epoch().count());
}

bool MvccStore::whole_at(Version version) const {
  if (version < horizon_) return false;
  for (const Span& span : early_spans_) {
    if (span.born <= version && version < span.died) {
      // Something visible at `version` may be gone, unless a live reader or a retention
      // holds exactly that version: then every key it can see was kept for it. Not a
      // revoked reader: its keys were not kept, though a read it is being refused may show
      // it for a moment.
      if (retained_.count(version) != 0) return true;
      std::vector<Version> exact;
      Version tentative;
      registry_.snapshot(exact, tentative, /*count_revoked=*/false);
      return std::binary_search(exact.begin(), exact.end(), version);
    }
  }
  return true;
}

bool MvccStore::retain(Version version, std::int64_t deadline) noexcept {
  base::UniqueLock lock(horizon_mu_);
  if (!whole_at(version)) return false;
  retains_versions_.store(true, std::memory_order_relaxed);
  // A version handed out again at once (a transaction asked twice) extends its retention.
  if (!retentions_.empty() && retentions_.back().version == version) {
    retentions_.back().deadline = std::max(retentions_.back().deadline, deadline);
    return true;
  }
  try {
    retentions_.push_back({deadline, version});
  } catch (const std::bad_alloc&) {
    return false;
  }
  try {
    ++retained_[version];
  } catch (const std::bad_alloc&) {
    retentions_.pop_back();
    return false;
  }
  return true;
}

std::size_t MvccStore::retained() {
  base::UniqueLock lock(horizon_mu_);
  return retained_.size();
}

Version MvccStore::expire_retentions() {
  const std::int64_t now = base::CoarseClock::now().time_since_epoch().count();
  while (!retentions_.empty() && retentions_.front().deadline <= now) {
    auto it = retained_.find(retentions_.front().version);
    if (--it->second == 0) retained_.erase(it);
    retentions_.pop_front();
  }
  return retained_.empty() ? ReaderRegistry::kIdle : retained_.begin()->first;
}

bool MvccStore::retained_within(Version born, Version died) const {
  auto it = retained_.lower_bound(born);
  return it != retained_.end() && it->first < died;
}

Version MvccStore::advance_horizon() {
  revoke_expired_readers();
  base::UniqueLock lock(horizon_mu_);
  Version oldest = std::min(registry_.oldest(committed_), retained_floor());
  raise_horizon(oldest);
  return oldest;
}

bool MvccStore::pin_at(ReaderRegistry::Slot* slot, Version version, std::int64_t deadline) {
  // Relaxed: the seq_cst store of the version below publishes it.
  slot->deadline.store(deadline, std::memory_order_relaxed);
  base::UniqueLock lock(horizon_mu_);
  if (!whole_at(version)) return false;
  slot->version.store(version, std::memory_order_seq_cst);
  return true;
}

Version MvccStore::collect_garbage(std::size_t budget) {
  revoke_expired_readers();
  Version oldest;
  Version resolving;
  {
    // advance_horizon() and the first step of collection under one lock. Short-lived keys
    // are looked at against the new horizon: those it passed belong to the ordinary path,
    // and a lone client's queue items always are (see short_lived_due), so the registry's
    // snapshot is taken only when some reader holds one back.
    base::UniqueLock lock(horizon_mu_);
    const ReaderRegistry::Horizons horizons = registry_.horizons(committed_);
    const Version floor = retained_floor();
    oldest = std::min(horizons.reading, floor);
    resolving = std::min(horizons.resolving, floor);
    raise_horizon(oldest);
    collect_short_lived_if_due(budget);
  }
  collect_below(budget, oldest);
  return resolving;
}

// What a skipped collection leaves undone is safe to leave: the horizon stays where the
// last collection that used one put it, so pin_at refuses no version whose records are
// gone and accepts none that are (versions between the two were collected by nobody);
// the conflict history is pruned no further (it only keeps more); and reclaim frees at
// most kIdleRetired entries later, at the next collection, which any queued write brings
// within a few commits (decision 0041; never an index table or a cut chain, which the
// collection after its retirement frees).
bool MvccStore::skip_idle_collection() {
  if (!gc_queue_.empty() || !short_lived_.empty() || retired_.size() > kIdleRetired ||
      retired_unbounded_ != 0 || !writer_sees_no_early_span()) {
    return false;
  }
  defer_collection();
  return true;
}

void MvccStore::step_index() { retire_table(index_.advance()); }

void MvccStore::collect_garbage(std::size_t budget, Version oldest) {
  {
    // Collection below `oldest` is about to start: no pin may go below it from now on.
    base::UniqueLock lock(horizon_mu_);
    raise_horizon(oldest);
    collect_short_lived_if_due(budget);
  }
  collect_below(budget, oldest);
}

void MvccStore::collect_short_lived_if_due(std::size_t budget) {
  if (!short_lived_due()) {
    drop_passed_spans();
    return;
  }
  const Version published = committed_.load(std::memory_order_seq_cst);
  Version tentative;
  registry_.snapshot(exact_readers_, tentative);
  collect_short_lived(budget, tentative, published);
}

void MvccStore::collect_below(std::size_t budget, Version oldest) {
  // Every commit moves a running index migration on, even one that inserts nothing.
  retire_table(index_.advance());
  while (budget > 0 && !gc_queue_.empty() && gc_queue_.front().version <= oldest) {
    collect_key(gc_queue_.front(), oldest);
    gc_queue_.pop_front();
    --budget;
  }
  // Every entry was looked at for short-lived deletions just before (raise_horizon).
  gc_examined_ = gc_queue_.size();
  if (gc_queue_.empty()) deletion_queued_ = false;
  reclaim(oldest);
}

// Every reader reads at `oldest` or later, so the newest record at or below `oldest`
// is the oldest anyone can see: cut what lies behind it. If it is the head and a
// tombstone, nobody can see the key at all: unlink it, and retire the node with its whole
// chain in one entry (no reader goes past the tombstone, so nothing needs cutting).
// Only the entry of the newest write may unlink or compact: earlier entries of the same
// node are still queued ahead of it, and must find the node and its head as they were.
void MvccStore::collect_key(const GcEntry& entry, Version oldest) {
  Node* node = entry.node;
  VersionRecord* head = node->payload().load(std::memory_order_relaxed);
  if (head->version() == entry.version && head->version() <= oldest && head->is_tombstone()) {
    unlink(node, entry.hash);
    retired_.push_back({retire_tag(), node, Retired::Kind::key});
    take_room_key();
    return;
  }
  VersionRecord* keep = head;
  while (keep != nullptr && keep->version() > oldest) keep = keep->older();
  if (keep == nullptr) return;
  if (VersionRecord* older = keep->older()) {
    keep->cut_older();
    retire_chain(older);  // reclaimed below, once readers are past
  }
  if (keep == head && head->version() == entry.version && head->chained()) {
    compact_head(node, head);
  }
}

// A key left with one record, made with room for an older link, gets an unlinked copy of
// it. Otherwise an overwritten key's first record (a block of the linkless size) is freed
// into a size that overwrites never ask for again, and a store of keys that are each
// overwritten once grows by a record per key. Readers standing on the old head keep it
// until they are past.
void MvccStore::compact_head(Node* node, VersionRecord* head) {
  const std::size_t bytes =
      VersionRecord::bytes_for(head->value(), nullptr) + SizeClassPool::kGranule;
  VersionRecord* copy = VersionRecord::make(record_pool_, head->version(), head->value(), nullptr);
  node->payload().store(copy, std::memory_order_release);
  retired_.push_back({retire_tag(), head, Retired::Kind::record});
  take_room_key();
  room_bytes_ -= std::min(room_bytes_, bytes);
}

void MvccStore::raise_horizon(Version oldest) {
  note_short_lived(std::max(horizon_, oldest));
  horizon_ = std::max(horizon_, oldest);
}

// note_short_lived's look at the entries: those queued since the last look were all queued
// under the horizon as it is still. A deletion among them of a key whose one record was born above
// it is short-lived, unless `horizon` (the one about to be taken) is not below the deletion (the
// ordinary path then owns it, as short_lived_due says). The entry of the newest write to
// its key shows it: its head is the tombstone, behind it the one record it deleted. (A key
// set and then cleared by one batch's later write looks the same: the same chain, which
// unlinks the same way.)
void MvccStore::scan_short_lived(Version horizon) {
  for (std::size_t i = gc_examined_; i < gc_queue_.size(); ++i) {
    const GcEntry& e = gc_queue_[i];
    if (e.version <= horizon) continue;
    const VersionRecord* head = e.node->payload().load(std::memory_order_relaxed);
    if (head->version() != e.version || !head->is_tombstone()) continue;
    const VersionRecord* born = head->older();
    if (born == nullptr || born->is_tombstone() || born->older() != nullptr ||
        born->version() <= horizon_) {
      continue;
    }
    short_lived_.push_back({e.node, born->version(), e.version, 0});
  }
}

// A key deleted by the newest published batch waits for a later collection: its deleter
// read it (at a version inside its lifetime) and holds that version until its commit
// returns, so looking now would only fail. A lone client's queue items are never looked
// at: the next commit's horizon passes them first.
bool MvccStore::short_lived_due() {
  while (!short_lived_.empty() && short_lived_.front().died <= horizon_) short_lived_.pop_front();
  return !short_lived_.empty() && short_lived_.front().died < committed();
}

void MvccStore::drop_passed_spans() {
  while (!early_spans_.empty() && early_spans_.front().died <= horizon_) early_spans_.pop_front();
}

// Unlinks keys that lived only between the versions live readers hold: a reader at v
// sees a key written at `born` and deleted at `died` only if born <= v < died. Called with
// horizon_mu_ held, so a concurrent pin_at either is in the snapshot or sees the new span.
void MvccStore::collect_short_lived(std::size_t budget, Version tentative, Version published) {
  drop_passed_spans();
  for (std::size_t n = std::min(budget, short_lived_.size()); n > 0; --n) {
    ShortLived c = short_lived_.front();
    short_lived_.pop_front();
    // At or below the horizon the ordinary path owns the key (and may have freed it).
    if (c.died <= horizon_ || !still_short_lived(c)) continue;
    // Not due yet (see short_lived_due). `published` was loaded before the registry's
    // snapshot: a version published since (by the log's syncer) may have a reader the
    // snapshot missed, announced at a version inside [born, died).
    if (c.died >= published) {
      short_lived_.push_back(c);
      continue;
    }
    auto reader = std::lower_bound(exact_readers_.begin(), exact_readers_.end(), c.born);
    if (tentative < c.died || (reader != exact_readers_.end() && *reader < c.died) ||
        retained_within(c.born, c.died)) {
      if (++c.tries < kMaxTries) short_lived_.push_back(c);  // look again later
      continue;
    }
    // The span first: if recording it runs out of memory, the key stays linked.
    if (!early_spans_.empty() && c.born <= early_spans_.back().died &&
        early_spans_.back().born <= c.died) {
      early_spans_.back().born = std::min(early_spans_.back().born, c.born);
      early_spans_.back().died = std::max(early_spans_.back().died, c.died);
    } else {
      early_spans_.push_back({c.born, c.died});
      if (early_spans_.size() > kMaxEarlySpans) {
        Span first = early_spans_.front();
        early_spans_.pop_front();
        early_spans_.front().born = std::min(early_spans_.front().born, first.born);
        early_spans_.front().died = std::max(early_spans_.front().died, first.died);
      }
    }
    // Its records and node are retired by its gc_queue_ entries.
    unlink(c.node, hash(c.node->key()));
    ++early_unlinks_;
  }
}

// The key was not written again since it was scheduled, nor unlinked.
bool MvccStore::still_short_lived(const ShortLived& c) const {
  if (c.node->unlinked()) return false;
  const VersionRecord* head = c.node->payload().load(std::memory_order_relaxed);
  if (head == nullptr || !head->is_tombstone() || head->version() != c.died) return false;
  const VersionRecord* born = head->older();
  return born != nullptr && born->version() == c.born && born->older() == nullptr;
}

void MvccStore::retire_chain(VersionRecord* r) {
  if (r == nullptr) return;
  // One entry, whatever the chain's length: its records are not read until it is freed,
  // a collection or more later. An overwrite's old record is then read once, from the
  // cache, instead of missing on the commit's path; the fetch starts now.
  __builtin_prefetch(r);
  // committed() is tag enough for a cut chain, batches applied ahead or not: a reader of a
  // later version stops at the record the cut kept, and never reaches it.
  retired_.push_back({committed(), r, Retired::Kind::chain});
  ++retired_unbounded_;
  take_room_key();
}

// Out of line: inlined, it grew the functions that retire enough for GCC to stop inlining
// the pool's allocation into push().
[[gnu::noinline]] Version MvccStore::retire_tag() const { return newest_assigned(); }

void MvccStore::reclaim(Version oldest) {
  while (!retired_.empty() && retired_.front().tag < oldest) {
    free_retired(retired_.front());
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
