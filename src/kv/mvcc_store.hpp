// kv/mvcc_store.hpp: the multi-version ordered store.
//
// One skiplist node per key; each node heads a newest-first chain of VersionRecords. A
// hash index beside the list (kv/point_index.hpp) finds a key's node without a seek.
// A read at version v sees, for each key, the newest record at or below v.
//
// A new key whose one-level node was just carved from a slab (a bulk load, a growing
// store) gets its first record carved right behind the node, and the index's lookup
// fetches the lines after a node with the node (PointIndex::prefetch_following). A point
// read of it then pays two dependent cache misses (the index slot, the node) instead of
// three. A node reused from a free list (a churning store's) takes its first record
// from the record pool, as every later record does: one pool for both kinds would give
// point reads the same gain but slow a churning queue.
//
// Garbage collection (the reason queue heads do not rot): every write schedules its key,
// but a new key's first (a lone first record leaves nothing to collect); once the write's
// version is at or below the oldest version any live reader holds
// (ReaderRegistry::oldest), records older than the newest visible one are cut, and a
// key whose only remaining record is a tombstone is unlinked. A lone value record made
// with room for an older link is replaced by a linkless copy, so that overwrites reuse
// the blocks of the records they replace. Cut, replaced and unlinked memory is freed once
// no reader that might hold it remains. A write that is the only one to its key in its
// batch (Repeats::none) does not read the record it replaces: that record's first read
// is its release, a collection later, and its cut starts fetching it.
//
// One old reader would hold all of that back, so a key that lived a short while (written
// once at `born`, deleted at `died`, like a queue item) is also unlinked as soon as no live
// reader's version falls in [born, died): no reader can see it, however old the oldest.
// Its memory still waits for the ordinary path. pin_at() refuses versions in such spans.
//
// Retained versions (retain): a version handed out to a program, which may set it as a
// read version later, stays readable until a deadline whether or not a reader holds it, as
// FoundationDB's storage servers keep MAX_READ_TRANSACTION_LIFE_VERSIONS (5 s). It counts
// as a reader at that version for collection (the watermark is min(oldest reader, oldest
// retained)) and for short-lived keys (one alive at it stays), until its deadline. Versions
// nobody was given go as without it, so a queue's popped items still go at once.
//
// Thread safety:
//   - Writer methods (set, clear, clear_range, publish, collect_garbage, latest) need
//     external synchronisation: the commit pipeline calls them under its lock.
//   - Reader methods (seek_*, next, visible_at, get) are lock-free; the caller must hold
//     an announced ReaderRegistry slot at a version <= the version it reads at, for the
//     whole time it uses returned pointers.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "strata/types.hpp"

#include "base/adaptive_mutex.hpp"
#include "base/invariant.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "kv/fifo.hpp"
#include "kv/point_index.hpp"
#include "kv/reader_registry.hpp"
#include "kv/record_head.hpp"
#include "kv/size_class_pool.hpp"
#include "kv/skiplist.hpp"
#include "kv/slab_source.hpp"
#include "kv/version_chain.hpp"
#include "kv/version_wait.hpp"

namespace strata::kv {

class MvccStore {
 public:
  using List = SkipList<RecordHead>;
  using Node = List::Node;

  MvccStore() : list_(node_pool_) {
    gc_queue_.zero_on_give_back(&room_keys_);
    retired_.zero_on_give_back(&room_keys_);
    short_lived_.zero_on_give_back(&room_keys_);
  }
  ~MvccStore();
  MvccStore(const MvccStore&) = delete;
  MvccStore& operator=(const MvccStore&) = delete;

  // --- Visibility -------------------------------------------------------------------
  // The newest published version. Reads at or below it see complete commits only.
  Version committed() const { return committed_.load(std::memory_order_acquire); }
  const std::atomic<Version>& committed_atomic() const { return committed_; }
  ReaderRegistry& registry() { return registry_; }

  // --- Readers (pinned) -------------------------------------------------------------
  Node* seek_ge(std::string_view key) const { return list_.find_greater_or_equal(key); }
  // Whether no key in [first, last] is linked (one seek): new keys from first to last,
  // in order, then each link right behind the one before (expect_key_order).
  bool none_between(std::string_view first, std::string_view last) const {
    const Node* n = seek_ge(first);
    return n == nullptr || last < n->key();
  }
  // The last node with floor <= key < `key` that has a value visible at `version`, or
  // nullptr; a run of invisible nodes (a drained queue's tail) costs no seek per node.
  Node* seek_visible_lt(std::string_view key, std::string_view floor, Version version) const {
    return list_.find_last_less_than_if(
        key, floor, [version](const Node* n) { return visible(n, version) != nullptr; });
  }
  // The first node from `n` on (n included) with a value visible at `version`, or nullptr
  // when there is none below `end`. It may step up to 16 nodes past `end` before noticing.
  // Deleted keys are passed on their head's hint (kv/record_head.hpp) without a load of
  // their record, when the walk can show afterwards that every hint it used was exact.
  Node* first_visible(Node* n, std::string_view end, Version version) const;
  static Node* next(const Node* n) { return n->next(0); }
  // The record of `n` visible at `version`, or nullptr when the key is absent then.
  static const VersionRecord* visible(const Node* n, Version version) {
    const VersionRecord* r = kv::visible_at(n->payload().load(std::memory_order_acquire), version);
    return (r == nullptr || r->is_tombstone()) ? nullptr : r;
  }
  const VersionRecord* get(std::string_view key, Version version) const;

  // --- Writer -----------------------------------------------------------------------
  // Record changes at `version`, which must be newer than committed(). They become
  // visible at publish(version).
  void set(std::string_view key, std::string_view value, Version version) {
    set(key, value, version, hash(key));
  }
  static std::uint64_t hash(std::string_view key) { return Index::hash(key); }
  // Whether a commit batch may write a key more than once. A second write at a version
  // replaces the first, so a write looks at the key's newest record for its own version;
  // a batch that writes each key once (a lone transaction's: its write map holds each key
  // once) spares an overwrite that look, one cache miss on the record it replaces.
  enum class Repeats : bool { possible, none };
  // The same with `hash` from prefetch(key) or hash(key), and when `path` is given (prepare_writes'
  // for `key`), a new key's node linked along it rather than after a seek.
  void set(std::string_view key, std::string_view value, Version version, std::uint64_t hash,
           const List::Path* path = nullptr, Repeats repeats = Repeats::possible);
  // Whether new keys will come mostly in ascending order (a log replay): then a key that
  // follows the previous new one is linked without a seek. Off by default.
  void expect_key_order(bool on) { in_key_order_ = on; }
  // --- Reserved writes: a commit that must not fail once it has begun ----------------
  // Makes room, before a commit changes anything, for writes of `keys` keys (point writes,
  // and the tombstones a clear_range pushes: see live_keys) with `key_bytes` of keys and
  // `record_bytes` of records (VersionRecord::max_bytes_for of each value; one over
  // SizeClassPool::kMaxPooled counts its min_bytes_for when that fits the pool, as a new
  // key's first record, and reserve_large_record takes its block), so that setting
  // and clearing them allocates nothing: new nodes and records, the point index's growth,
  // the collection queues' entries. A node drawn taller than one level that finds no room
  // reserved is made one level high (SkipList::keep_tall_nodes_reserved, on from the first
  // reservation). Room is taken for many commits at a time and counted down (room_keys_,
  // room_bytes_): a commit within it pays a few comparisons. Throws std::bad_alloc, having changed
  // nothing readers see. REQUIRES: once a commit reserved, every write to the store is a
  // reserved commit's (recovery's writes come before).
  void reserve_writes(std::size_t keys, std::size_t key_bytes, std::size_t record_bytes) {
    // A block is rounded up to 8 bytes; a new key's node may be tall, and its first record
    // may be carved right behind it, in the node pool.
    const std::size_t bytes =
        keys * (List::max_node_size(0) + 2 * SizeClassPool::kGranule) + key_bytes + record_bytes;
    if (keys > room_keys_ || bytes > room_bytes_ || !index_.ready_for(keys)) [[unlikely]] {
      reserve_room(keys, bytes);
    }
    room_keys_ -= keys;
    room_bytes_ -= bytes;
  }
  // Reserves the block of a record of a `value_size`-byte value above kMaxPooled (one per
  // such write; its set then takes it, or one a smaller value needs). Throws std::bad_alloc.
  void reserve_large_record(std::size_t value_size) {
    large_reserved_ = true;
    record_pool_.reserve_large(VersionRecord::max_bytes_for(value_size));
  }
  // Reserves the node of a new `key_size`-byte key whose node is above kMaxPooled (a key
  // of about 1,000 bytes or more; such nodes are made one level high). Throws std::bad_alloc.
  void reserve_large_node(std::size_t key_size) {
    const std::size_t size = List::node_size_at_height(key_size, 1);
    if (size > SizeClassPool::kMaxPooled) {
      large_reserved_ = true;
      node_pool_.reserve_large(size);
    }
  }
  // The keys in [begin, end) with a live value now: the tombstones clear_range(begin, end)
  // would push (a walk of the range). Writer.
  std::size_t live_keys(std::string_view begin, std::string_view end) const;
  // Ends a commit's reserved writes: frees the large blocks no write took.
  void end_writes() noexcept {
    if (large_reserved_) [[unlikely]] {
      large_reserved_ = false;
      record_pool_.release_large();
      node_pool_.release_large();
    }
  }
  // Whether the writes from here on are a reserved commit's: then, where invariants are
  // checked, one that takes a node or record from the system fails an invariant
  // (SizeClassPool::expect_reserved).
  void expect_reserved(bool on) {
    node_pool_.expect_reserved(on);
    record_pool_.expect_reserved(on);
  }
  // Makes the point index ready for `keys` keys in all (see PointIndex::reserve).
  void reserve_keys(std::size_t keys) { retire_table(index_.reserve(keys)); }
  // Keys linked in the store (tombstones not yet collected included).
  std::size_t key_count() const { return index_.size(); }
  // Take the store's huge slabs from `source` while it has them (nullptr: stop); for a
  // writer that will grow the store by much, such as a recovery (kv/slab_source.hpp).
  void set_slab_source(SlabSource* source) {
    node_pool_.set_slab_source(source);
    record_pool_.set_slab_source(source);
  }
  // Starts fetching what a write of `key` will probe first, for a writer that applies a
  // run of writes: prefetch a few writes ahead and the misses overlap. Returns the hash to
  // pass to set.
  std::uint64_t prefetch(std::string_view key) const {
    const std::uint64_t hash = Index::hash(key);
    index_.prefetch(hash);
    return hash;
  }
  // Fetches into the cache what writing each of `keys` will read first: its index slot,
  // its node when the key is in the store, and otherwise the list nodes its insert's seek
  // compares. For a writer about to write a batch of keys in no order (a commit batch of
  // many transactions): their cache misses then overlap instead of following one another.
  // When `paths` is given (as long as `keys`), each absent key's path goes there for set
  // (height 0 for a key in the store). A path stays usable through sets, clears and
  // clear_range, not through collect_garbage. When `hashes` is given (as long as `keys`),
  // hashes[i] gets keys[i]'s hash, for set and clear.
  void prepare_writes(std::span<const std::string_view> keys, std::span<List::Path> paths = {},
                      std::span<std::uint64_t> hashes = {});
  // The same for `keys` in ascending order, with `paths` required: the paths are found
  // by finger searches (List::find_paths_in_order), each from the one before. hashes[i]
  // gets keys[i]'s hash, for set.
  void prepare_writes_in_order(std::span<const std::string_view> keys, std::span<List::Path> paths,
                               std::span<std::uint64_t> hashes);
  void clear(std::string_view key, Version version) { clear(key, version, hash(key)); }
  // The same with `hash` from prefetch(key), hash(key) or prepare_writes.
  void clear(std::string_view key, Version version, std::uint64_t hash);
  void clear_range(std::string_view begin, std::string_view end, Version version);
  // The newest value of `key`, published or not (for atomic operations at apply time).
  std::optional<std::string_view> latest(std::string_view key) const;
  // The writer's note that `version` was given to a batch (applied, and published now or,
  // by a log's syncer, later). A writer that applies batches ahead of publication calls
  // it for each; memory it retires is then kept from readers of that version.
  void note_assigned(Version version) { assigned_ = version; }
  // The newest version given a batch, published or not (the writer's).
  Version newest_assigned() const { return std::max(committed(), assigned_); }
  // Publishes `version` and wakes the threads waiting for it (version_wait()).
  void publish(Version version) {
    committed_.store(version, std::memory_order_seq_cst);
    version_wait_.published();
  }
  // Threads waiting for a version newer than committed() (kv/version_wait.hpp).
  VersionWait& version_wait() { return version_wait_; }

  // Does up to `budget` units of collection and frees what no reader can still hold.
  // `oldest` is advance_horizon(), taken after the last publish.
  void collect_garbage(std::size_t budget, Version oldest);
  // The same with advance_horizon() taken under the same lock (one acquisition, not two).
  // Returns the oldest version a commit may still be checked at: the `oldest` it used, or
  // older while a transaction that read there is committing (ReaderRegistry::kCommitting).
  Version collect_garbage(std::size_t budget);

  // For a writer that collects after its commits (engine::CommitBatch): when collection
  // now could only free what waits in a short list of retired memory (no key queued, none
  // short-lived, no early span, no index table retired), takes the steps every
  // commit takes (revocation on its schedule, the point index's migration step) and returns true:
  // the rest waits for the next collection with work to do. Otherwise does nothing and returns
  // false: collect_garbage then.
  bool skip_idle_collection();
  // For the same writer, when skip_idle_collection() is false: whether the collection may
  // wait for later commits' (the writer bounds how many): what is queued holds no deletion
  // (none since the queue was last emptied), no key is short-lived, no early span is kept,
  // no index table waits to be freed, and no version was ever retained (a store that keeps
  // the MVCC window ends it at the first collection after it, which waiting would put
  // off). defer_collection() then takes the steps every commit takes.
  bool may_defer_collection() const {
    return !deletion_queued_ && retired_tables_ == 0 && short_lived_.empty() &&
           writer_sees_no_early_span() && !retains_versions_.load(std::memory_order_relaxed);
  }
  // The steps every commit takes, collecting or not: revocation on its schedule, and a
  // running index migration moved on (see collect_below). What a deferred collection leaves
  // undone waits for a collection a few commits later: the overwrites' entries, the memory
  // retired before, and the history's pruning (decision 0041). A deletion is not left: a
  // queue's next pop would step over the key until it is unlinked. Inline: at most commits
  // neither step is due, and a call would cost what the tests do.
  void defer_collection() {
    revoke_expired_readers();
    if (index_.advancing()) [[unlikely]]
      step_index();
  }

  // The collection horizon: the newest registry().oldest() that collection may have used.
  // A read at a version below it may miss collected records. advance_horizon() (writer)
  // takes oldest() and raises the horizon to it; pin_at() (any thread) announces an older
  // read version in `slot` only if the horizon is not past it. The two serialize on one
  // mutex, so collection either sees the pinned slot or the pin sees the new horizon.
  // advance_horizon() and collect_garbage() first revoke the versions of readers past
  // their deadline (ReaderRegistry::revoke_expired), every kRevokeEvery calls. pin_at
  // announces with `deadline`.
  Version advance_horizon();
  // Any thread: keeps `version` readable (pin_at accepts it) until `deadline`
  // (base::CoarseClock nanoseconds; see the top). False, keeping nothing, when collection
  // may have taken something visible at it (as pin_at refuses) or out of memory.
  bool retain(Version version, std::int64_t deadline) noexcept;
  // Versions retained and not yet dropped (for tests).
  std::size_t retained();
  bool pin_at(ReaderRegistry::Slot* slot, Version version,
              std::int64_t deadline = ReaderRegistry::kNever);

  // Statistics (writer, or quiescent).
  std::size_t pending_gc() const { return gc_queue_.size() + retired_.size(); }
  std::size_t queued_for_collection() const { return gc_queue_.size(); }
  bool index_migrating() const { return index_.migrating(); }
  std::uint64_t early_unlinks() const { return early_unlinks_; }
  // Bytes taken from the system for records and for the list's height-1 nodes.
  std::size_t pool_bytes() const { return node_pool_.slab_bytes() + record_pool_.slab_bytes(); }
  // Whether every node and record is in a pool's slab (none is a block above the pools'
  // largest class), so that destroying the store frees them with the slabs, walking none.
  bool all_in_slabs() const {
    const std::ptrdiff_t blocks =
        node_pool_.large_blocks() + record_pool_.large_blocks() + list_.large_blocks();
    STRATA_INVARIANT(blocks >= 0);  // each block is freed with the size it was taken with
    return blocks == 0;
  }

 private:
  struct GcEntry {
    Node* node;
    Version version;
    std::uint64_t hash;  // hash(node->key()), for the index when the key is unlinked
  };
  // A key written once at `born` and deleted at `died`, to unlink early (see above).
  struct ShortLived {
    Node* node;
    Version born;
    Version died;
    std::uint32_t tries;  // times a reader inside [born, died) kept it
  };
  struct Span {
    Version born;
    Version died;
  };
  static constexpr std::uint32_t kMaxTries = 8;      // then ordinary collection takes over
  static constexpr std::size_t kMaxEarlySpans = 64;  // beyond, the oldest two merge
  using Index = PointIndex<Node>;
  struct Retired {
    // key: an unlinked node with every record of its chain (one entry for a dead key);
    // chain: a record and every record behind it, cut from a live key's chain.
    enum class Kind : std::uint8_t { record, chain, key, index_table };
    Version tag;  // retire_tag() when it was unlinked
    void* ptr;
    Kind kind;
  };

  // The new newest record of `node`, from record_pool_ (a new key's first record is set's
  // own). `head` is node's newest record (the caller loaded it), `hash` hash(node->key()).
  void push(Node* node, VersionRecord* head, std::optional<std::string_view> value, Version version,
            std::uint64_t hash, Repeats repeats = Repeats::possible);
  // Replaces `head`, the only record of `node` and a live value, by a linkless copy.
  void compact_head(Node* node, VersionRecord* head);
  // A new key's node, linked (along `path` when given and filled).
  Node* insert(std::string_view key, std::uint64_t hash, const List::Path* path);
  void collect_below(std::size_t budget, Version oldest);  // the FIFO, then reclaim
  void collect_key(const GcEntry& entry, Version oldest);
  // Unlinks short-lived keys no reader can see. `exact_readers_` and `tentative` are a
  // registry snapshot taken under the same hold of horizon_mu_. REQUIRES: horizon_mu_ held.
  // `published`: committed() loaded before the registry snapshot behind `tentative`.
  void collect_short_lived(std::size_t budget, Version tentative, Version published)
      REQUIRES(horizon_mu_);
  // collect_short_lived with a registry snapshot taken now, when short_lived_due.
  void collect_short_lived_if_due(std::size_t budget) REQUIRES(horizon_mu_);
  // Raises horizon_ to `oldest` (when above it), noting first the short-lived deletions
  // queued since the last look.
  void raise_horizon(Version oldest) REQUIRES(horizon_mu_);
  // Adds to short_lived_ the short-lived deletions among the collection entries queued
  // since the last look (gc_examined_ on) that lie above `horizon`. The look is out of
  // line: most collections find every new entry at or below the horizon.
  void note_short_lived(Version horizon) REQUIRES(horizon_mu_) {
    const std::size_t size = gc_queue_.size();
    if (gc_examined_ == size) return;
    if (gc_queue_[size - 1].version > horizon) scan_short_lived(horizon);
    gc_examined_ = size;
  }
  [[gnu::noinline]] void scan_short_lived(Version horizon) REQUIRES(horizon_mu_);
  void drop_passed_spans() REQUIRES(horizon_mu_);
  // Drops candidates the ordinary path owns now; whether one is due for a look.
  bool short_lived_due() REQUIRES(horizon_mu_);
  bool still_short_lived(const ShortLived& c) const;
  // From the list and the index (`hash` is hash(node->key())); again does nothing.
  void unlink(Node* node, std::uint64_t hash);
  void retire_table(Index::Table* t);
  // Retires `r` and every record behind it (nothing: nullptr), cut from a key's chain (or
  // the whole chain, at destruction), to be freed with destroy_chain.
  void retire_chain(VersionRecord* r);
  void destroy_chain(VersionRecord* r);
  void free_retired(const Retired& r);
  void reclaim(Version oldest);
  std::uint64_t next_random();

  // Nodes and version records come from separate pools, so the nodes a seek walks sit
  // together rather than between values; only a freshly carved node's first record is
  // carved from node_pool_ (see the top), and it is freed into record_pool_ like any
  // record. Before list_: the list frees into node_pool_.
  SizeClassPool node_pool_;
  SizeClassPool record_pool_;
  List list_;
  Index index_;  // every linked node by key, for point lookups
  // prepare_writes_in_order's scratch: the keys not in the store, and their paths.
  std::vector<std::string_view> absent_keys_;
  std::vector<List::Path*> absent_paths_;
  ReaderRegistry registry_;
  std::atomic<Version> committed_{0};
  // The newest version of a tombstone written, stored before the head that carries its
  // hint: a reader that saw a hint loads it after and bounds every hint it used. Batches
  // may be applied ahead of committed() (a log's syncer publishes them later), so
  // committed() does not bound them.
  std::atomic<Version> newest_tombstone_{0};
  // The newest version note_assigned() was given (the writer's alone). Memory unlinked
  // now may be held by a reader of any version up to newest_assigned(), not by one of a later
  // version: that is published only once the batch doing the unlinking is applied.
  // committed() alone is too low while batches are applied ahead of it: the publication
  // of the batch before orders none of this one's writes before a reader.
  Version assigned_ = 0;
  Version retire_tag() const;
  VersionWait version_wait_;
  static constexpr std::uint32_t kRevokeEvery = 64;  // collections
  static constexpr std::size_t kIdleRetired = 16;    // most retired entries a skip leaves
  // Index tables and cut chains among retired_: a skip leaves none waiting. A table is the
  // size of the whole index, and its memory serves the growth that follows once it is
  // freed; a chain's one entry may hold every version a reader held back.
  std::size_t retired_unbounded_ = 0;
  // A deletion was queued in gc_queue_ since it was last empty (may_defer_collection).
  bool deletion_queued_ = false;
  std::size_t retired_tables_ = 0;  // index tables among retired_ (may_defer_collection)
  // retain() was called once (may_defer_collection).
  std::atomic<bool> retains_versions_{false};
  // By count, not time: the clock read is what a queue operation would pay, and what an
  // idle reader holds grows with commits, so a revocation every kRevokeEvery calls bounds
  // it. The count inline, the revocation and the index's step (retire_table(index_.advance()))
  // out of line: a commit that inlines the tests saves no registers for them.
  void revoke_expired_readers() {
    if (++collections_since_revoke_ < kRevokeEvery) [[likely]]
      return;
    revoke_now();
  }
  [[gnu::noinline]] void revoke_now();
  [[gnu::noinline]] void step_index();
  // Drops the retained versions whose deadline has passed; the oldest left, or kIdle.
  Version retained_floor() REQUIRES(horizon_mu_) {
    return retentions_.empty() ? ReaderRegistry::kIdle : expire_retentions();  // no clock read
  }
  Version expire_retentions() REQUIRES(horizon_mu_);
  // Whether nothing visible at `version` can have been collected: it is at or above the
  // horizon, and outside the early spans unless a live reader or a retention holds it
  // exactly (pin_at's and retain's test).
  bool whole_at(Version version) const REQUIRES(horizon_mu_);
  // Whether a retained version lies in [born, died).
  bool retained_within(Version born, Version died) const REQUIRES(horizon_mu_);
  struct Retention {
    std::int64_t deadline;  // base::CoarseClock nanoseconds
    Version version;
  };
  std::uint32_t collections_since_revoke_ = 0;  // writer only

  base::AdaptiveMutex horizon_mu_;
  Version horizon_ GUARDED_BY(horizon_mu_) = 0;
  // Whether early_spans_ is empty, read by the writer without the lock: only the writer
  // changes it.
  bool writer_sees_no_early_span() const NO_THREAD_SAFETY_ANALYSIS { return early_spans_.empty(); }
  // Spans covering [born, died) of every key unlinked early whose died is above horizon_
  // (overlapping ones merged, and the oldest two when there are too many): pin_at refuses
  // versions inside them unless a live reader holds that very version.
  std::deque<Span> early_spans_ GUARDED_BY(horizon_mu_);
  // The retained versions, each with how many retentions hold it, and the retentions in
  // the order they were made (deadlines a little out of order only keep a version longer).
  std::map<Version, std::uint32_t> retained_ GUARDED_BY(horizon_mu_);
  std::deque<Retention> retentions_ GUARDED_BY(horizon_mu_);
  // Writer-only state.
  Fifo<GcEntry> gc_queue_;
  std::size_t gc_examined_ = 0;  // gc_queue_'s first entries note_short_lived looked at
  Fifo<Retired> retired_;
  Fifo<ShortLived> short_lived_;
  std::vector<Version> exact_readers_;  // scratch for collect_short_lived
  std::uint64_t early_unlinks_ = 0;
  bool in_key_order_ = false;
  std::uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  // What reserve_writes made room for and no write took yet: writes of room_keys_ keys
  // (an entry on each collection queue) and room_bytes_ of nodes and records (in each
  // pool). Collection takes its share: each entry it retires counts against room_keys_,
  // each record it copies against room_bytes_, and a queue that gives its ring back
  // zeroes room_keys_.
  std::size_t room_keys_ = 0;
  std::size_t room_bytes_ = 0;
  bool large_reserved_ = false;  // reserve_large_* took blocks: end_writes frees the rest
  [[gnu::noinline]] void reserve_room(std::size_t keys, std::size_t bytes);
  void take_room_key() { room_keys_ -= room_keys_ != 0 ? 1 : 0; }
};

}  // namespace strata::kv
