#include "kv/mvcc_store.hpp"

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/coarse_clock.hpp"

namespace strata::kv {
namespace {

std::optional<std::string> read(const MvccStore& s, std::string_view key, Version v) {
  const VersionRecord* r = s.get(key, v);
  return r ? std::optional<std::string>(std::string(r->value())) : std::nullopt;
}

std::size_t count_keys(const MvccStore& s) {
  std::size_t n = 0;
  for (auto* node = s.seek_ge(""); node != nullptr; node = MvccStore::next(node)) ++n;
  return n;
}

// A transaction that read at v and is committing holds no record: collection frees what
// only v could see, and v can no longer be pinned. Its commit is still checked against
// the writes after v: collect_garbage returns v for the conflict history's pruning.
TEST(MvccStore, ACommittingReaderHoldsTheConflictHistoryButNoRecords) {
  MvccStore s;
  s.set("a", "1", 1);
  s.publish(1);
  ReaderRegistry::Slot* committer = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(committer, s.committed_atomic()), 1);
  s.set("a", "2", 2);
  s.publish(2);
  EXPECT_EQ(s.collect_garbage(64), 1);  // reading at 1: "a"@1 stays
  EXPECT_EQ(read(s, "a", 1), "1");

  ReaderRegistry::begin_commit(committer);
  s.publish(3);  // empty commits move collection on: "a"@1 is cut, then freed
  EXPECT_EQ(s.collect_garbage(64), 1);
  s.publish(4);
  EXPECT_EQ(s.collect_garbage(64), 1);
  EXPECT_EQ(s.pending_gc(), 0u);
  EXPECT_EQ(read(s, "a", 4), "2");
  ReaderRegistry::Slot* pin = s.registry().acquire();
  EXPECT_FALSE(s.pin_at(pin, 1));
  EXPECT_TRUE(s.pin_at(pin, 4));
  ReaderRegistry::withdraw(pin);
  s.registry().release(pin);

  ReaderRegistry::withdraw(committer);  // the commit settled
  s.registry().release(committer);
  s.publish(5);
  EXPECT_EQ(s.collect_garbage(64), 5);
}

TEST(MvccStore, ReadsSeeTheNewestVersionAtOrBelowTheirs) {
  MvccStore s;
  s.set("a", "1", 1);
  s.publish(1);
  s.set("a", "2", 3);
  s.publish(3);
  s.clear("a", 5);
  s.publish(5);
  EXPECT_EQ(read(s, "a", 0), std::nullopt);
  EXPECT_EQ(read(s, "a", 1), "1");
  EXPECT_EQ(read(s, "a", 2), "1");
  EXPECT_EQ(read(s, "a", 4), "2");
  EXPECT_EQ(read(s, "a", 5), std::nullopt);
}

// A store's nodes and records go with its pools' slabs when it is destroyed, unless one of
// them is a block of its own (above SizeClassPool::kMaxPooled): then each is freed. A cut
// chain and unlinked keys wait to be freed here, as at any close. A block left behind
// fails the sanitizer job's leak check; one freed twice, its use-after-free check.
TEST(MvccStore, ADestroyedStoreFreesTheBlocksTooBigForItsPools) {
  const std::string big(SizeClassPool::kMaxPooled + 100, 'b');
  for (bool large : {false, true}) {
    SCOPED_TRACE(large ? "with blocks of their own" : "all in slabs");
    const std::string value = large ? big : std::string(100, 'v');
    const std::string key = large ? big : std::string(100, 'k');
    MvccStore s;
    Version v = 0;
    for (int i = 0; i < 2000; ++i) s.set("key" + std::to_string(i), "small", ++v);
    s.set(key, value, ++v);
    s.set("held", "old " + value, ++v);
    s.publish(v);
    const Version old = v;
    ReaderRegistry::Slot* reader = s.registry().acquire();
    ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), old);
    s.set("held", value, ++v);
    s.clear(key, ++v);
    for (int i = 0; i < 1000; ++i) s.clear("key" + std::to_string(i), ++v);
    s.publish(v);
    s.collect_garbage(1 << 20);  // keeps what the reader may read
    EXPECT_EQ(read(s, "held", old), "old " + value);
    EXPECT_EQ(read(s, "held", v), value);
    ReaderRegistry::withdraw(reader);
    s.registry().release(reader);
    s.collect_garbage(1 << 20);  // cuts and unlinks; what it retires waits for the next one
    EXPECT_GT(s.pending_gc(), 0u);
    EXPECT_EQ(s.all_in_slabs(), !large);
  }
}

// The layout a point read counts on: a freshly carved node's first record right behind
// it, so that the record's lines arrive with the node's (kv/mvcc_store.hpp).
TEST(MvccStore, ANewKeysFirstRecordSitsRightBehindItsNode) {
  MvccStore s;
  const std::string value(100, 'v');
  int short_nodes = 0;
  for (int i = 0; i < 200; ++i) s.set("key" + std::to_string(1000 + i), value, 1);
  s.publish(1);
  for (auto* n = s.seek_ge(""); n != nullptr; n = MvccStore::next(n)) {
    if (n->height() != 1) continue;  // taller nodes live in the list's own pool
    ++short_nodes;
    const std::size_t node_bytes = (MvccStore::List::allocation_size(*n) + 7) / 8 * 8;
    EXPECT_EQ(reinterpret_cast<const char*>(MvccStore::visible(n, 1)),
              reinterpret_cast<const char*>(n) + node_bytes)
        << n->key();
  }
  EXPECT_GT(short_nodes, 100);  // three in four nodes are one level high
  // A later version of a key is an ordinary record; the first still reads as before.
  s.set("key1000", "w", 2);
  s.publish(2);
  EXPECT_EQ(read(s, "key1000", 1), value);
  EXPECT_EQ(read(s, "key1000", 2), "w");
}

// A commit batch's writes fetched together first (prepare_writes) land as they would
// without it: keys already present, new ones, repeats and batches over one group (32),
// new keys linked after a seek or along the paths prepare_writes found.
TEST(MvccStore, PreparedBatchesOfWritesLandAsUnpreparedOnes) {
  MvccStore prepared;
  MvccStore along;  // sets take their paths from prepare_writes
  MvccStore plain;
  MvccStore in_order;  // each batch sorted, its paths from prepare_writes_in_order
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(7);
  for (Version v = 1; v <= 40; ++v) {
    std::vector<std::string> keys;
    for (std::uint64_t i = 0; i < 5 + rng() % 60; ++i)
      keys.push_back("k" + std::to_string(rng() % 900));
    keys.push_back(keys.front());
    std::vector<std::string_view> views(keys.begin(), keys.end());
    prepared.prepare_writes(views);
    std::vector<MvccStore::List::Path> paths(keys.size());
    along.prepare_writes(views, paths);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::string& k = keys[i];
      const std::string value = k + "@" + std::to_string(v);
      prepared.set(k, value, v);
      along.set(k, value, v, along.prefetch(k), &paths[i]);
      plain.set(k, value, v);
      model[k] = value;
    }
    const std::set<std::string> sorted(keys.begin(), keys.end());
    std::vector<std::string_view> ascending(sorted.begin(), sorted.end());
    std::vector<MvccStore::List::Path> in_order_paths(ascending.size());
    std::vector<std::uint64_t> hashes(ascending.size());
    in_order.prepare_writes_in_order(ascending, in_order_paths, hashes);
    for (std::size_t i = 0; i < ascending.size(); ++i) {
      const std::string k(ascending[i]);
      EXPECT_EQ(hashes[i], MvccStore::hash(k));
      EXPECT_EQ(in_order_paths[i].height == 0, read(in_order, k, v - 1).has_value()) << k;
      in_order.set(k, k + "@" + std::to_string(v), v, hashes[i], &in_order_paths[i]);
    }
    prepared.publish(v);
    along.publish(v);
    plain.publish(v);
    in_order.publish(v);
  }
  std::vector<std::string> expect;
  for (const auto& entry : model) expect.push_back(entry.first);
  for (const MvccStore* s : {&prepared, &along, &plain, &in_order}) {
    std::vector<std::string> listed;
    for (auto* n = s->seek_ge(""); n != nullptr; n = MvccStore::next(n)) {
      listed.emplace_back(n->key());
    }
    EXPECT_EQ(listed, expect);
    for (const auto& [key, value] : model) {
      EXPECT_EQ(read(*s, key, 40), value) << key;
      const MvccStore::Node* n = s->seek_ge(key);  // a seek, not the index
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->key(), key);
    }
  }
}

// A bulk load the way a recovery does it: index reserved up front, slabs from a source.
TEST(MvccStore, ABulkLoadWithAReservedIndexAndASlabSourceKeepsEveryKey) {
  MvccStore s;
  SlabSource source(2);
  s.set_slab_source(&source);
  constexpr int kKeys = 60000;
  s.reserve_keys(kKeys);
  const std::string value(100, 'v');
  for (int i = 0; i < kKeys; ++i)
    s.set("key" + std::to_string(100000 + i), value + std::to_string(i), 1);
  s.set_slab_source(nullptr);
  s.publish(1);
  EXPECT_EQ(s.key_count(), static_cast<std::size_t>(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(read(s, "key" + std::to_string(100000 + i), 1), value + std::to_string(i)) << i;
  }
  int listed = 0;
  for (auto* n = s.seek_ge(""); n != nullptr; n = MvccStore::next(n)) ++listed;
  EXPECT_EQ(listed, kKeys);
}

TEST(MvccStore, ClearRangeTombstonesOnlyLiveKeysInTheRange) {
  MvccStore s;
  for (std::string k : {"a", "b", "c", "d"}) s.set(k, k, 1);
  s.publish(1);
  s.clear_range("b", "d", 2);
  s.publish(2);
  EXPECT_EQ(read(s, "a", 2), "a");
  EXPECT_EQ(read(s, "b", 2), std::nullopt);
  EXPECT_EQ(read(s, "c", 2), std::nullopt);
  EXPECT_EQ(read(s, "d", 2), "d");
  EXPECT_EQ(read(s, "b", 1), "b");
}

TEST(MvccStore, SecondWriteInOneBatchReplacesTheFirst) {
  MvccStore s;
  s.set("k", "x", 1);
  s.set("k", "y", 1);
  s.publish(1);
  EXPECT_EQ(read(s, "k", 1), "y");
  EXPECT_EQ(s.latest("k"), "y");
}

// A new key's first record is not queued for collection; written again in its batch, the
// key is queued once. A key made and deleted in one batch is unlinked and freed like any
// other, however many times the batch wrote it (a second entry would free it twice).
TEST(MvccStore, AKeyMadeAndDeletedInOneBatchIsCollectedOnce) {
  MvccStore s;
  s.set("once", "x", 1);   // a first record: nothing queued
  s.set("twice", "x", 1);  // a first record, then its replacement
  s.clear("twice", 1);
  for (int i = 0; i < 3; ++i) {  // value, tombstone, value, ...: one entry
    s.set("often", "x", 1);
    s.clear("often", 1);
  }
  s.set("back", "x", 1);  // made, deleted and made again
  s.clear("back", 1);
  s.set("back", "y", 1);
  s.publish(1);
  EXPECT_EQ(s.pending_gc(), 3u + 8u);  // twice, often, back; eight replaced records
  EXPECT_EQ(read(s, "twice", 1), std::nullopt);
  EXPECT_EQ(read(s, "often", 1), std::nullopt);
  EXPECT_EQ(read(s, "back", 1), "y");
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(count_keys(s), 2u);  // "back" and "once"
  s.publish(2);
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(s.pending_gc(), 0u);
  EXPECT_EQ(read(s, "once", 2), "x");
  EXPECT_EQ(read(s, "back", 2), "y");
  // The kept keys' later writes are queued as usual: deleted, they go.
  s.clear("once", 3);
  s.clear("back", 3);
  s.publish(3);
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(count_keys(s), 0u);
  s.publish(4);
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(s.pending_gc(), 0u);
}

// A collection with no key queued and little retired memory is skipped; the memory waits
// for the next collection, which any queued write brings. Queued keys, a cut chain, or
// more retired entries than a skip may leave, make it run.
TEST(MvccStore, ACollectionWithNothingQueuedIsSkipped) {
  MvccStore s;
  s.set("a", "1", 1);
  s.publish(1);
  EXPECT_TRUE(s.skip_idle_collection());  // a first record: nothing queued
  s.set("a", "2", 2);
  s.publish(2);
  EXPECT_FALSE(s.skip_idle_collection());
  s.collect_garbage(64);  // cuts "a"@1 and compacts "a"@2: retired until the version moves on
  EXPECT_EQ(s.pending_gc(), 2u);
  s.set("b", "1", 3);
  s.publish(3);
  // A cut chain is not left waiting: its one entry may hold every version a reader held.
  EXPECT_FALSE(s.skip_idle_collection());
  s.collect_garbage(64);  // frees what "a" left
  EXPECT_EQ(s.pending_gc(), 0u);
  s.clear("b", 4);
  s.publish(4);
  EXPECT_FALSE(s.skip_idle_collection());
  s.collect_garbage(64);  // unlinks "b"
  EXPECT_EQ(count_keys(s), 1u);
  EXPECT_EQ(s.pending_gc(), 1u);  // "b", retired at 4
  s.set("c", "1", 5);
  s.publish(5);
  EXPECT_TRUE(s.skip_idle_collection());  // "b" waits for the next collection
  EXPECT_EQ(s.pending_gc(), 1u);
  Version v = 5;
  for (int i = 0; i < 40; ++i) {  // overwrites: each retires a record
    s.set("a", std::to_string(i), ++v);
    s.publish(v);
    EXPECT_FALSE(s.skip_idle_collection());
    s.collect_garbage(64);
  }
  for (int i = 0; i < 40; ++i) {  // new keys only: skipped, and the retired list stays short
    s.set("n" + std::to_string(i), "x", ++v);
    s.publish(v);
    if (!s.skip_idle_collection()) s.collect_garbage(64);
    EXPECT_LE(s.pending_gc(), 17u);
  }
  EXPECT_EQ(read(s, "a", v), "39");
}

// Commits whose collection is skipped or deferred still count toward revocation: the 64th
// since the last look revokes a reader whose deadline has passed, as a collection would.
TEST(MvccStore, SkippedCollectionsStillRevokeExpiredReadersOnSchedule) {
  MvccStore s;
  s.set("a", "1", 1);
  s.publish(1);
  ReaderRegistry::Slot* idle = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(idle, s.committed_atomic(), /*deadline=*/1), 1);
  for (int i = 1; i < 64; ++i) {  // commits with nothing to collect, skipped or deferred
    if (i % 2 == 0) {
      ASSERT_TRUE(s.skip_idle_collection()) << i;
    } else {
      s.defer_collection();
    }
    ASSERT_NE(idle->deadline.load(), ReaderRegistry::kRevoked) << "revoked after " << i;
  }
  s.defer_collection();  // the 64th
  EXPECT_EQ(idle->deadline.load(), ReaderRegistry::kRevoked);
  ReaderRegistry::withdraw(idle);
  s.registry().release(idle);
}

// They also move a running migration of the point index on, one step each, until the
// old table is copied out and retired, with no write in between.
TEST(MvccStore, SkippedCollectionsStillMoveTheIndexMigrationOn) {
  MvccStore s;
  Version v = 0;
  while (!s.index_migrating()) {  // new keys until one grows the index
    ASSERT_LT(v, 1000000) << "the index never grew";
    s.set("k" + std::to_string(v), "x", v + 1);
    s.publish(++v);
  }
  const std::size_t pending = s.pending_gc();
  int steps = 0;
  while (s.index_migrating()) {
    s.defer_collection();
    ++steps;
  }
  // Every call took a step: a step every 64th call (revocation's schedule) would take 64.
  EXPECT_LT(steps, 64);
  EXPECT_EQ(s.pending_gc(), pending + 1) << "the old table waits to be freed";
  for (Version k = 0; k < v; ++k) ASSERT_EQ(read(s, "k" + std::to_string(k), v), "x") << k;
}

// A collection of overwrites alone may wait (docs/decisions/0041); one with a deletion
// queued may not, by clear or by clear_range, until a collection has emptied the queue.
TEST(MvccStore, OnlyACollectionWithNoDeletionQueuedMayWait) {
  MvccStore s;
  s.set("a", "1", 1);
  s.set("b", "1", 1);
  s.publish(1);
  EXPECT_TRUE(s.may_defer_collection());
  s.set("a", "2", 2);
  s.publish(2);
  EXPECT_TRUE(s.may_defer_collection());  // an overwrite
  s.clear("a", 3);
  s.publish(3);
  EXPECT_FALSE(s.may_defer_collection());
  s.set("a", "4", 4);  // a later overwrite does not hide the deletion queued before it
  s.publish(4);
  EXPECT_FALSE(s.may_defer_collection());
  s.collect_garbage(64);
  EXPECT_EQ(s.queued_for_collection(), 0u);
  EXPECT_TRUE(s.may_defer_collection());
  s.clear_range("a", "c", 5);
  s.publish(5);
  EXPECT_FALSE(s.may_defer_collection());
  s.collect_garbage(64);
  EXPECT_TRUE(s.may_defer_collection());
  EXPECT_EQ(count_keys(s), 0u);
  s.set("n", "1", 6);  // a new key set and deleted by one batch
  s.clear("n", 6);
  s.publish(6);
  EXPECT_FALSE(s.may_defer_collection());
  s.collect_garbage(64);
  EXPECT_TRUE(s.may_defer_collection());
  EXPECT_EQ(count_keys(s), 0u);
}

// first_visible passes deleted keys on their head's hint, and the hint holds a tombstone's
// version modulo 2^15: a reader far behind the delete must still see the older value.
TEST(MvccStore, FirstVisibleIsExactWhateverTheDistanceToTheDelete) {
  constexpr Version kFar = RecordHead::kWindow + 3'000;  // past the hint's reach
  MvccStore s;
  s.set("k", "v", 1);
  s.publish(1);
  for (Version v = 2; v <= kFar; ++v) {
    s.set("filler", "x", v);  // versions go by without touching "k"
    s.publish(v);
  }
  s.clear("k", kFar + 1);
  s.publish(kFar + 1);
  for (Version reader :
       {Version{1}, kFar - 20'000, kFar - RecordHead::kWindow / 2, kFar - 20, kFar}) {
    MvccStore::Node* n = s.first_visible(s.seek_ge("k"), "l", reader);
    ASSERT_NE(n, nullptr) << "reader at " << reader;
    EXPECT_EQ(n->key(), "k");
  }
  EXPECT_EQ(s.first_visible(s.seek_ge("k"), "l", kFar + 1), nullptr);
  // Runs of deleted keys are passed; the walk stops at the first key still visible.
  for (int i = 0; i < 100; ++i) s.set("q" + std::to_string(100 + i), "item", kFar + 2);
  s.publish(kFar + 2);
  for (int i = 0; i < 99; ++i) s.clear("q" + std::to_string(100 + i), kFar + 3);
  s.publish(kFar + 3);
  MvccStore::Node* head = s.first_visible(s.seek_ge("q"), "r", kFar + 3);
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->key(), "q199");
  head = s.first_visible(s.seek_ge("q"), "r", kFar + 2);
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->key(), "q100");
  EXPECT_EQ(s.first_visible(s.seek_ge("q"), "q199", kFar + 3), nullptr);
}

// With a log, batches are applied ahead of the published version while an earlier one is
// being synced: a delete may sit several versions above committed(). A reader whose
// version is 2^14 + 1 below that delete must not take its hint as a delete.
TEST(MvccStore, FirstVisibleIsExactWithBatchesAppliedAheadOfPublication) {
  constexpr Version kPublished = RecordHead::kWindow + 3'000;
  MvccStore s;
  s.set("k", "v", 1);
  s.publish(1);
  for (Version v = 2; v <= kPublished; ++v) {
    s.set("filler", "x", v);
    s.publish(v);
  }
  s.set("filler", "y", kPublished + 1);  // applied, not yet published
  s.set("filler", "z", kPublished + 2);
  s.clear("k", kPublished + 3);
  const Version reader = kPublished + 3 - (RecordHead::kWindow / 2 + 1);
  MvccStore::Node* n = s.first_visible(s.seek_ge("k"), "l", reader);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->key(), "k");
  s.publish(kPublished + 3);
  EXPECT_EQ(s.first_visible(s.seek_ge("k"), "l", kPublished + 3), nullptr);
}

TEST(RecordHead, HintAnswersWithinItsWindow) {
  SizeClassPool pool;
  RecordHead head;
  EXPECT_FALSE(head.deleted_by(10));  // empty
  VersionRecord* value = VersionRecord::make(pool, 5, std::string_view("v"), nullptr);
  head.store(value, std::memory_order_release);
  EXPECT_EQ(head.load(std::memory_order_acquire), value);
  EXPECT_FALSE(head.deleted_by(1'000));              // a value: never deleted
  const Version died = 3 * RecordHead::kWindow + 7;  // wraps the 15-bit field
  VersionRecord* tombstone = VersionRecord::make(pool, died, std::nullopt, value);
  head.store(tombstone, std::memory_order_release);
  EXPECT_EQ(head.load(std::memory_order_acquire), tombstone);
  EXPECT_TRUE(head.deleted_by(died));
  EXPECT_TRUE(head.deleted_by(died + RecordHead::kWindow / 2 - 1));
  EXPECT_FALSE(head.deleted_by(died - 1));
  EXPECT_FALSE(head.deleted_by(died - RecordHead::kWindow / 2));
  VersionRecord::destroy(pool, tombstone);
  VersionRecord::destroy(pool, value);
}

// The queue-head problem: a key that is written and then deleted must disappear from the
// skiplist once no reader can see it, so "first key" seeks never walk over dead keys.
TEST(MvccStore, DeletedKeysAreUnlinkedOnceNoReaderCanSeeThem) {
  MvccStore s;
  Version v = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string k = "q" + std::to_string(100000 + i);
    s.set(k, "item", ++v);
    s.publish(v);
    s.clear(k, ++v);
    s.publish(v);
    s.collect_garbage(64, s.registry().oldest(s.committed_atomic()));
  }
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(count_keys(s), 0u);
  // What was unlinked at the current version may still be held by a reader at it; it is
  // freed once the version moves on.
  s.publish(++v);
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(s.pending_gc(), 0u);
}

// Overwrites keep memory flat: a key's first record has no room for an older link, so
// once an overwrite's chain is cut its head must go back to a linkless block, or every
// key overwritten once strands its first record's block (the store grew by ~115 B a key).
TEST(MvccStore, OverwritingEveryKeyKeepsTheStoreItsLoadedSize) {
  constexpr int kKeys = 20000;
  MvccStore s;
  const std::string value(100, 'a');
  auto key = [](int i) { return "key" + std::to_string(100000 + i); };
  Version v = 1;
  for (int i = 0; i < kKeys; ++i) s.set(key(i), value, v);
  s.publish(v);
  s.collect_garbage(kKeys, s.advance_horizon());
  const std::size_t loaded = s.pool_bytes();
  std::mt19937 rng(7);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kKeys; ++i) {
      s.set(key(static_cast<int>(rng() % kKeys)), std::string(100, static_cast<char>('b' + round)),
            ++v);
      s.publish(v);
      s.collect_garbage(4, s.advance_horizon());
    }
  }
  // Three rounds touch 95 % of the keys; each round's slack is a few blocks in flight.
  EXPECT_LT(s.pool_bytes(), loaded + loaded / 20) << "loaded " << loaded;
  for (int i = 0; i < kKeys; ++i) {
    std::optional<std::string> got = read(s, key(i), v);
    ASSERT_TRUE(got.has_value());
    ASSERT_EQ(got->size(), 100u);
  }
}

// A write its batch makes to no other key of the same name (Repeats::none) is pushed
// without a look at the head it replaces: the older version stays for its reader, and
// collection cuts and frees it once the reader leaves.
TEST(MvccStore, AWriteAloneInItsBatchKeepsTheVersionBehindIt) {
  MvccStore s;
  s.set("k", "one", 1);
  s.publish(1);
  ReaderRegistry::Slot* reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), 1);
  s.set("k", "two", 2, MvccStore::hash("k"), nullptr, MvccStore::Repeats::none);
  s.publish(2);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(read(s, "k", 1), "one");
  EXPECT_EQ(read(s, "k", 2), "two");
  ReaderRegistry::withdraw(reader);
  s.registry().release(reader);
  s.publish(3);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(read(s, "k", 1), std::nullopt);
  s.publish(4);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(s.pending_gc(), 0u);
  EXPECT_EQ(read(s, "k", 4), "two");
}

// The versions a reader held back are cut as one chain once it leaves, and every record
// of the chain is freed: a store that goes through that again and again stays its size.
TEST(MvccStore, AChainCutBehindAReaderIsFreedWhole) {
  MvccStore s;
  const std::string value(100, 'a');
  Version v = 0;
  s.set("k", value, ++v);
  s.publish(v);
  auto cycle = [&] {
    ReaderRegistry::Slot* reader = s.registry().acquire();
    ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), v);
    for (int i = 0; i < 50; ++i) {
      s.set("k", value, ++v, MvccStore::hash("k"), nullptr, MvccStore::Repeats::none);
      s.publish(v);
      s.collect_garbage(64, s.advance_horizon());
    }
    ReaderRegistry::withdraw(reader);
    s.registry().release(reader);
    for (int i = 0; i < 2; ++i) {  // cut, then freed once the version moves on
      s.publish(++v);
      s.collect_garbage(64, s.advance_horizon());
    }
    EXPECT_EQ(s.pending_gc(), 0u);
  };
  for (int i = 0; i < 4; ++i) cycle();
  const std::size_t settled = s.pool_bytes();
  for (int i = 0; i < 100; ++i) cycle();
  EXPECT_EQ(s.pool_bytes(), settled);  // fifty records a cycle, none of them kept
  EXPECT_EQ(read(s, "k", v), value);
}

// The versions a reader held back, cut in one chain when it leaves, are freed by the next
// collection even when the commits after it only add keys (which queue no collection).
TEST(MvccStore, ACutChainIsFreedWhileCommitsOnlyAddKeys) {
  MvccStore s;
  Version v = 0;
  s.set("k", "0", ++v);
  s.publish(v);
  ReaderRegistry::Slot* reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), v);
  for (int i = 0; i < 100; ++i) {
    s.set("k", std::to_string(i), ++v);
    s.publish(v);
    s.collect_garbage(1 << 20);
  }
  ReaderRegistry::withdraw(reader);
  s.registry().release(reader);
  s.set("new0", "x", ++v);
  s.publish(v);
  s.collect_garbage(1 << 20);  // cuts the chain behind "k"'s head
  EXPECT_EQ(read(s, "k", v - 1), "99");
  for (int i = 1; i < 4; ++i) {
    s.set("new" + std::to_string(i), "x", ++v);
    s.publish(v);
    if (!s.skip_idle_collection()) s.collect_garbage(1 << 20);
  }
  EXPECT_EQ(s.pending_gc(), 0u);  // skips leave no cut chain behind
  EXPECT_TRUE(s.skip_idle_collection());
}

// A reader standing on a head that collection replaces keeps reading it until it leaves.
TEST(MvccStore, AReaderKeepsTheHeadThatCompactionReplaces) {
  MvccStore s;
  s.set("k", "one", 1);
  s.publish(1);
  s.set("k", "two", 2);
  s.publish(2);
  ReaderRegistry::Slot* reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), 2);
  const VersionRecord* held = s.get("k", 2);
  ASSERT_NE(held, nullptr);
  s.collect_garbage(64, s.advance_horizon());  // cuts "one", replaces the head
  s.set("other", "x", 3);
  s.publish(3);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(held->value(), "two");  // still allocated: ASan reports it otherwise
  EXPECT_NE(s.get("k", 3), held);
  EXPECT_EQ(read(s, "k", 3), "two");
  EXPECT_EQ(read(s, "k", 1), std::nullopt);  // below the horizon: cut
  ReaderRegistry::withdraw(reader);
  s.registry().release(reader);
  s.publish(4);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(s.pending_gc(), 0u);
}

// Batches applied ahead of publication, as a log's syncer publishes them (the writer notes
// each version it gives): a record that a later batch's second write replaces is kept
// until readers are past the batch before it. A reader
// of the version published meanwhile may have loaded it (that publication orders none of
// the later batch's writes before the reader), and what it loaded must stay readable.
TEST(MvccStore, ARecordReplacedInABatchAppliedAheadWaitsForThatBatch) {
  MvccStore s;
  s.set("k", "one", 1);
  s.publish(1);
  s.set("k", "two", 2);  // batch 2: applied, its sync under way
  s.note_assigned(2);
  s.set("k", "three", 3);                     // batch 3: applied ahead of it
  const VersionRecord* held = s.get("k", 3);  // loaded before the replacement below
  ASSERT_NE(held, nullptr);
  s.set("k", "three again", 3);  // batch 3 writes "k" again: the record is replaced
  s.note_assigned(3);
  s.publish(2);
  ReaderRegistry::Slot* reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), 2);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(held->version(), 3u);  // still allocated: ASan reports it otherwise
  EXPECT_EQ(held->value(), "three");
  EXPECT_EQ(read(s, "k", 2), "two");
  ReaderRegistry::withdraw(reader);
  s.registry().release(reader);
  s.publish(3);
  EXPECT_EQ(read(s, "k", 3), "three again");
  for (Version v = 4; v < 6; ++v) {  // collected, then freed once the version moves on
    s.publish(v);
    s.collect_garbage(64, s.advance_horizon());
  }
  EXPECT_EQ(s.pending_gc(), 0u);
}

// An old reader must not hold back keys it cannot see: a queue item written and deleted
// after the reader's version is unlinked at once (its memory waits for the reader).
TEST(MvccStore, ShortLivedKeysGoWhileAnOlderReaderLives) {
  MvccStore s;
  s.set("base", "b", 1);
  s.publish(1);
  ReaderRegistry::Slot* old_reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(old_reader, s.committed_atomic()), 1);
  Version v = 1;
  for (int i = 0; i < 100; ++i) {
    std::string k = "q" + std::to_string(1000 + i);
    s.set(k, "item", ++v);
    s.publish(v);
    s.clear(k, ++v);
    s.publish(v);
    s.collect_garbage(64, s.advance_horizon());
  }
  // Each key goes at the collection after the one of its delete (its deleter may still
  // hold a version inside its lifetime until then).
  EXPECT_EQ(s.early_unlinks(), 99u);
  s.publish(++v);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(count_keys(s), 1u);  // only "base"
  EXPECT_EQ(s.early_unlinks(), 100u);
  EXPECT_EQ(read(s, "base", 1), "b");
  // Nothing visible at the reader's version went, and versions inside the dead keys'
  // lifetimes can no longer be pinned; the newest can.
  ReaderRegistry::Slot* pin = s.registry().acquire();
  EXPECT_FALSE(s.pin_at(pin, 2));      // the first key's lifetime
  EXPECT_FALSE(s.pin_at(pin, v - 2));  // the last key's: born at v - 2, deleted at v - 1
  EXPECT_TRUE(s.pin_at(pin, v - 1));
  EXPECT_TRUE(s.pin_at(pin, v));
  ReaderRegistry::withdraw(pin);
  s.registry().release(pin);
  ReaderRegistry::withdraw(old_reader);
  s.registry().release(old_reader);
  s.publish(++v);
  s.collect_garbage(1 << 20, s.advance_horizon());
  s.publish(++v);
  s.collect_garbage(1 << 20, s.advance_horizon());
  EXPECT_EQ(s.pending_gc(), 0u);
}

// A reader whose version falls inside a key's lifetime keeps it until it leaves.
TEST(MvccStore, ReaderInsideTheLifetimeKeepsAShortLivedKey) {
  MvccStore s;
  s.set("q", "item", 1);
  s.publish(1);
  ReaderRegistry::Slot* reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), 1);
  s.clear("q", 2);
  s.publish(2);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(count_keys(s), 1u);
  EXPECT_EQ(read(s, "q", 1), "item");
  EXPECT_EQ(s.early_unlinks(), 0u);
  ReaderRegistry::withdraw(reader);
  s.registry().release(reader);
  s.publish(3);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(count_keys(s), 0u);
}

// A key set once and then, in one later batch, set again and cleared (the clear replaces
// the batch's own set) lived from its first version to the batch's: a reader older than
// that lets it go early, a reader inside that lifetime keeps it and reads its value.
TEST(MvccStore, AKeySetAndClearedInOneBatchAfterItsFirstRecordIsShortLived) {
  for (const bool reader_inside : {false, true}) {
    SCOPED_TRACE(reader_inside ? "a reader inside the lifetime" : "an older reader only");
    MvccStore s;
    s.set("base", "b", 1);
    s.publish(1);
    ReaderRegistry::Slot* reader = s.registry().acquire();
    if (!reader_inside) {
      ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), 1);
    }
    s.set("q", "item", 2);
    s.publish(2);
    if (reader_inside) {
      ASSERT_EQ(ReaderRegistry::announce(reader, s.committed_atomic()), 2);
    }
    s.set("q", "again", 3);
    s.clear("q", 3);
    s.publish(3);
    s.collect_garbage(64, s.advance_horizon());
    s.publish(4);
    s.collect_garbage(64, s.advance_horizon());
    if (reader_inside) {
      EXPECT_EQ(s.early_unlinks(), 0u);
      EXPECT_EQ(read(s, "q", 2), "item");
      EXPECT_EQ(count_keys(s), 2u);
    } else {
      EXPECT_EQ(s.early_unlinks(), 1u);
      EXPECT_EQ(count_keys(s), 1u);  // only "base"
    }
    EXPECT_EQ(read(s, "base", 1), "b");
    EXPECT_EQ(read(s, "q", 4), std::nullopt);
    ReaderRegistry::withdraw(reader);
    s.registry().release(reader);
    s.publish(5);
    s.collect_garbage(1 << 20, s.advance_horizon());
    s.publish(6);
    s.collect_garbage(1 << 20, s.advance_horizon());
    EXPECT_EQ(count_keys(s), 1u);
    EXPECT_EQ(s.pending_gc(), 0u);
  }
}

// A key written again (or written twice before its delete) is not short-lived: an old
// reader may see an earlier value, so only ordinary collection may touch it.
TEST(MvccStore, KeysWithSeveralVersionsWaitForOrdinaryCollection) {
  MvccStore s;
  s.publish(1);
  ReaderRegistry::Slot* old_reader = s.registry().acquire();
  ASSERT_EQ(ReaderRegistry::announce(old_reader, s.committed_atomic()), 1);
  s.set("k", "a", 2);
  s.publish(2);
  s.set("k", "b", 3);
  s.publish(3);
  s.clear("k", 4);
  s.publish(4);
  s.collect_garbage(64, s.advance_horizon());
  EXPECT_EQ(count_keys(s), 1u);
  EXPECT_EQ(s.early_unlinks(), 0u);
  ReaderRegistry::withdraw(old_reader);
  s.registry().release(old_reader);
}

TEST(MvccStore, AnnouncedReaderKeepsItsVersionAlive) {
  MvccStore s;
  s.set("k", "old", 1);
  s.publish(1);
  ReaderRegistry::Slot* slot = s.registry().acquire();
  Version rv = ReaderRegistry::announce(slot, s.committed_atomic());
  ASSERT_EQ(rv, 1);
  s.clear("k", 2);
  s.publish(2);
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(read(s, "k", rv), "old") << "collected under a live reader";
  EXPECT_EQ(count_keys(s), 1u);
  s.registry().release(slot);
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(count_keys(s), 0u);
}

TEST(MvccStore, OldVersionsAreCutButTheVisibleOneStays) {
  MvccStore s;
  for (Version v = 1; v <= 100; ++v) {
    s.set("k", std::to_string(v), v);
    s.publish(v);
  }
  s.collect_garbage(1 << 20, s.registry().oldest(s.committed_atomic()));
  EXPECT_EQ(read(s, "k", 100), "100");
  // Versions below the watermark are gone: reading them now finds nothing.
  EXPECT_EQ(read(s, "k", 50), std::nullopt);
}

}  // namespace
}  // namespace strata::kv

namespace strata::kv {
namespace {

std::int64_t clock_ns() { return base::CoarseClock::now().time_since_epoch().count(); }

// A retained version stays readable and pinnable until its deadline, though no reader holds
// it: what it sees is kept, a queue item alive at it included, while the items no retained
// version saw go early and the versions nobody was given go. (FoundationDB's storage
// servers keep MAX_READ_TRANSACTION_LIFE_VERSIONS, fdbserver/Knobs.cpp; strata keeps the
// versions it handed out.)
TEST(MvccStoreRetain, ARetainedVersionStaysReadableAndOthersGo) {
  MvccStore s;
  const std::int64_t later = clock_ns() + std::int64_t{3600} * 1000000000;
  Version v = 0;
  s.set("a", "1", ++v);
  s.publish(v);
  s.collect_garbage(1 << 20);
  const Version first = v;
  ASSERT_TRUE(s.retain(first, later));
  Version inside = 0;   // inside the first queue item's lifetime
  Version unnamed = 0;  // inside the second's, never retained
  for (int i = 0; i < 10; ++i) {
    s.set("a", std::to_string(i + 2), ++v);
    s.set("q" + std::to_string(i), "item", v);
    s.publish(v);
    s.collect_garbage(1 << 20);
    if (i == 0) {
      inside = v;
      ASSERT_TRUE(s.retain(inside, later));
    }
    if (i == 1) unnamed = v;
    s.clear("q" + std::to_string(i), ++v);
    s.publish(v);
    s.collect_garbage(1 << 20);
  }
  EXPECT_EQ(s.retained(), 2u);
  // Every item but q0, alive at `inside`, and q9, deleted by the newest batch (its
  // deleter's version is looked at by a later collection).
  EXPECT_EQ(s.early_unlinks(), 8u);
  EXPECT_EQ(count_keys(s), 3u);  // "a", q0 and q9
  ReaderRegistry::Slot* pin = s.registry().acquire();
  ASSERT_TRUE(s.pin_at(pin, first));
  EXPECT_EQ(read(s, "a", first), "1");
  ReaderRegistry::withdraw(pin);
  ASSERT_TRUE(s.pin_at(pin, inside));
  EXPECT_EQ(read(s, "q0", inside), "item");
  EXPECT_EQ(read(s, "a", inside), "2");
  ReaderRegistry::withdraw(pin);
  EXPECT_FALSE(s.pin_at(pin, unnamed));  // q1, alive there, went early: nobody kept it
  EXPECT_FALSE(s.retain(unnamed, later));
  ReaderRegistry::withdraw(pin);
  s.registry().release(pin);
}

// Past its deadline a retention is dropped by the next collection, and what it kept goes.
TEST(MvccStoreRetain, ARetentionPastItsDeadlineIsDropped) {
  MvccStore s;
  Version v = 0;
  s.set("a", "0", ++v);
  s.set("q", "item", v);
  s.publish(v);
  s.collect_garbage(1 << 20);
  const Version old = v;
  ASSERT_TRUE(s.retain(old, clock_ns() - 1));  // already due
  s.clear("q", ++v);
  s.set("a", "1", v);
  s.publish(v);
  s.collect_garbage(1 << 20);
  for (int i = 0; i < 3; ++i) {
    s.set("a", "last", ++v);
    s.publish(v);
    s.collect_garbage(1 << 20);
  }
  EXPECT_EQ(s.retained(), 0u);
  EXPECT_EQ(count_keys(s), 1u);
  ReaderRegistry::Slot* pin = s.registry().acquire();
  EXPECT_FALSE(s.pin_at(pin, old));
  EXPECT_TRUE(s.pin_at(pin, v));
  ReaderRegistry::withdraw(pin);
  s.registry().release(pin);
}

}  // namespace
}  // namespace strata::kv
