// One batch of commits on its own, on this thread alone: requests are resolved in order
// (each against the history and the earlier requests of its batch), a batch with a
// survivor takes the next version and numbers its requests, the survivors' writes reach
// the store at that version unpublished, and their net effect is encoded as the log
// record within the bound each committer puts on it.
#include "engine/commit_batch.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/limits.hpp"
#include "durability/mutation_batch.hpp"
#include "engine/blind_write.hpp"
#include "engine/versionstamp.hpp"

namespace strata::engine {
namespace {

using base::key_after;

// A request that writes `key` = `value` having read "a" (as a range) at `read_version`.
struct ReadOfA : BlindWrite {
  base::Arena arena{nullptr, 0};
  ArenaRanges read_range{&arena};
  ReadOfA(const std::string& key, const std::string& value, Version read_version)
      : BlindWrite(key, value) {
    append_range(read_range, "a", key_after("a"));
    request.read_version = read_version;
    request.read_ranges = &read_range;
  }
};

// A store, a batch step over it, and a reader holding version 0 (as a live transaction
// holds its read version, this keeps the history above it from being pruned).
struct Fixture {
  Fixture() { EXPECT_EQ(kv::ReaderRegistry::announce(reader, store.committed_atomic()), 0); }
  ~Fixture() {
    kv::ReaderRegistry::withdraw(reader);
    store.registry().release(reader);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  // Runs the requests as one batch and publishes what it applied, as the pipeline does.
  BatchOutcome run(std::vector<CommitRequest*> requests) {
    BatchOutcome out = batch.run(requests);
    if (out.version >= 0) store.publish(out.version);
    return out;
  }

  kv::MvccStore store;
  CommitBatch batch{store};
  kv::ReaderRegistry::Slot* reader = store.registry().acquire();
};

// Runs `writes` through `request` as a batch of its own, with the room its log record may
// take (as the pipeline asks of a logging batch).
BatchOutcome run_logged(CommitBatch& batch, const WriteMap& writes, CommitRequest& request) {
  request.writes = &writes;
  request.log_bytes = log_bytes_bound(writes);
  CommitRequest* const one[] = {&request};
  return batch.run(one);
}

TEST(CommitBatch, AConflictWithAnEarlierBatchIsRefusedAndTakesNoVersion) {
  Fixture f;
  BlindWrite first("a", "1");
  const BatchOutcome applied = f.run({&first.request});
  ASSERT_EQ(first.request.error, ErrorCode::success);
  EXPECT_EQ(applied.version, first.request.version);
  EXPECT_EQ(applied.committed, 1U);

  ReadOfA stale("b", "2", first.request.version - 1);  // read "a" before `first` committed
  const BatchOutcome refused = f.run({&stale.request});
  EXPECT_EQ(stale.request.error, ErrorCode::not_committed);
  EXPECT_EQ(refused.status, BatchOutcome::Status::applied);
  EXPECT_EQ(refused.committed, 0U);
  // A batch of refused commits takes no version (a durable one would have no record of it).
  EXPECT_EQ(refused.version, -1);
  EXPECT_FALSE(f.store.latest("b").has_value());

  ReadOfA fresh("b", "3", first.request.version);  // read "a" after it
  f.run({&fresh.request});
  EXPECT_EQ(fresh.request.error, ErrorCode::success);
  EXPECT_EQ(f.store.latest("b"), "3");
  EXPECT_EQ(fresh.request.version, first.request.version + 1);

  // The same with "a" read by get() (a read key rather than a range).
  base::Arena arena(nullptr, 0);
  base::ArenaVector<std::string_view> read_a(&arena);
  read_a.push_back("a");
  BlindWrite stale_get("c", "4");
  stale_get.request.read_version = first.request.version - 1;
  stale_get.request.read_keys = &read_a;
  f.run({&stale_get.request});
  EXPECT_EQ(stale_get.request.error, ErrorCode::not_committed);
  BlindWrite fresh_get("c", "5");
  fresh_get.request.read_version = first.request.version;
  fresh_get.request.read_keys = &read_a;
  f.run({&fresh_get.request});
  EXPECT_EQ(fresh_get.request.error, ErrorCode::success);
}

// Within a batch, requests are resolved in order and each survivor's writes are recorded
// before the next is checked: a request that read what an earlier one of its batch wrote
// fails, as in FoundationDB (fdbserver/Resolver.actor.cpp resolves a batch's transactions
// in order against a conflict set that each committed one extends); one whose write an
// earlier request read does not make that one fail.
TEST(CommitBatch, ARequestThatReadWhatAnEarlierOneOfItsBatchWroteFails) {
  Fixture f;
  ReadOfA reads_a("x", "1", 0);  // reads "a", writes "x"
  BlindWrite writes_a("a", "2");
  ReadOfA reads_a_after("y", "3", 0);
  BlindWrite other("z", "4");
  const BatchOutcome out =
      f.run({&reads_a.request, &writes_a.request, &reads_a_after.request, &other.request});
  EXPECT_EQ(reads_a.request.error, ErrorCode::success);
  EXPECT_EQ(writes_a.request.error, ErrorCode::success);
  EXPECT_EQ(reads_a_after.request.error, ErrorCode::not_committed);
  EXPECT_EQ(other.request.error, ErrorCode::success);
  EXPECT_EQ(out.committed, 3U);
  EXPECT_EQ(f.store.latest("x"), "1");
  EXPECT_EQ(f.store.latest("a"), "2");
  EXPECT_FALSE(f.store.latest("y").has_value());
  EXPECT_EQ(f.store.latest("z"), "4");
}

// A batch takes one version, one above both the published version and the last version
// given (which may not be published yet: its sync is under way), and numbers its
// requests 0, 1, 2... in order, failed ones included; the versionstamp of each survivor
// is its version and number.
TEST(CommitBatch, ABatchTakesTheNextVersionAndNumbersItsRequestsInOrder) {
  Fixture f;
  BlindWrite writes[] = {{"k0", "v"}, {"k1", "v"}, {"k2", "v"}};
  ReadOfA stale("s", "v", -1);
  BlindWrite first_a("a", "1");
  f.run({&first_a.request});
  const Version published = f.store.committed();
  stale.request.read_version = published - 1;

  CommitRequest* const three[] = {&writes[0].request, &stale.request, &writes[1].request};
  const BatchOutcome unpublished = f.batch.run(three);
  EXPECT_EQ(unpublished.version, published + 1);
  EXPECT_EQ(f.store.committed(), published) << "a batch publishes nothing itself";
  EXPECT_EQ(writes[0].request.batch_index, 0);
  EXPECT_EQ(stale.request.batch_index, 1);
  EXPECT_EQ(writes[1].request.batch_index, 2);
  EXPECT_EQ(stale.request.error, ErrorCode::not_committed);
  EXPECT_EQ(stale.request.version, -1);

  // The next batch goes above the version not yet published, and numbers from 0 again.
  CommitRequest* const next[] = {&writes[2].request};
  const BatchOutcome after = f.batch.run(next);
  EXPECT_EQ(after.version, published + 2);
  EXPECT_EQ(writes[2].request.batch_index, 0);
  f.store.publish(after.version);

  // Stamped keys take the version and number of their request.
  WriteMap stamping;
  stamping.add_stamped_key({std::string("t") + std::string(kVersionstampSize, '\0'), 1, "v", ""});
  BlindWrite before("b", "v");
  CommitRequest request;
  request.writes = &stamping;
  const BatchOutcome stamped = f.run({&before.request, &request});
  ASSERT_EQ(request.error, ErrorCode::success);
  ASSERT_EQ(stamped.stamped->size(), 1U);
  EXPECT_EQ((*stamped.stamped)[0], "t" + make_versionstamp(stamped.version, 1));
  EXPECT_EQ(f.store.latest((*stamped.stamped)[0]), "v");
}

// A commit that writes nothing but a write conflict range still takes the next version and
// its batch index, and it conflicts with a later reader of that range as a write would.
// The log record is empty: it only makes the version durable.
TEST(CommitBatch, ACommitOfOnlyAWriteConflictRangeTakesAVersionAndConflicts) {
  Fixture f;
  BlindWrite first("k", "v");
  f.run({&first.request});
  const Version before = f.store.committed();

  WriteMap nothing;
  CommitRequest conflict_only;
  conflict_only.writes = &nothing;
  const std::vector<KeyRange> ranges{KeyRange{"a", key_after("a")}};
  conflict_only.write_ranges = &ranges;
  const BatchOutcome out = f.run({&conflict_only});
  ASSERT_EQ(conflict_only.error, ErrorCode::success);
  EXPECT_EQ(out.version, before + 1);
  EXPECT_EQ(conflict_only.version, before + 1);
  EXPECT_EQ(conflict_only.batch_index, 0);
  EXPECT_EQ(f.store.latest("a"), std::nullopt) << "a conflict range writes nothing";

  ReadOfA reader("r", "v", before);  // read "a" before the conflict-only commit
  f.run({&reader.request});
  EXPECT_EQ(reader.request.error, ErrorCode::not_committed);
}

// A request whose read version lies below the history the batch step has pruned fails
// with transaction_too_old rather than be checked against what is left: the writes that
// would conflict with it may be gone. (A transaction's version is held by its reader slot,
// but a version revoked past the MVCC window is not, and the commit may pass its age check
// just before that.) Here no reader holds version 0, so the first commit's history is
// pruned by the collection it earned.
TEST(CommitBatch, AReadBelowThePrunedHistoryIsTooOld) {
  kv::MvccStore store;
  CommitBatch batch(store);
  BlindWrite first("a", "1");
  CommitRequest* const one[] = {&first.request};
  BatchOutcome out = batch.run(one);
  ASSERT_EQ(first.request.error, ErrorCode::success);
  store.publish(out.version);
  batch.collect(out.collect);
  // A commit that only adds keys leaves collection nothing to do, and its pruning waits
  // for the next collection (kv::MvccStore::skip_idle_collection), as a lone overwrite's
  // does (docs/decisions/0041): a deletion of "a" collects at once.
  WriteMap deletion;
  deletion.clear("a");
  CommitRequest again;
  again.writes = &deletion;
  CommitRequest* const over[] = {&again};
  out = batch.run(over);
  ASSERT_EQ(again.error, ErrorCode::success);
  store.publish(out.version);
  batch.collect(out.collect);

  ReadOfA stale("b", "2", first.request.version - 1);  // read "a" before `first` committed
  CommitRequest* const two[] = {&stale.request};
  out = batch.run(two);
  EXPECT_EQ(stale.request.error, ErrorCode::transaction_too_old);
  EXPECT_EQ(out.version, -1);
  EXPECT_FALSE(store.latest("b").has_value());

  BlindWrite blind("c", "3");  // no reads: nothing to check, at any read version
  blind.request.read_version = first.request.version - 1;
  CommitRequest* const three[] = {&blind.request};
  out = batch.run(three);
  EXPECT_EQ(blind.request.error, ErrorCode::success);
}

// Commits that only add keys queue no collection work, so their collections are skipped
// (kv::MvccStore::skip_idle_collection), but only while the conflict history is short: the
// history each commit records is still pruned, and a bulk load of new keys does not grow it.
TEST(CommitBatch, CommitsThatOnlyAddKeysStillPruneTheConflictHistory) {
  kv::MvccStore store;
  CommitBatch batch(store);
  std::size_t most = 0;
  for (int i = 0; i < 1000; ++i) {
    BlindWrite add("k" + std::to_string(i), "v");
    CommitRequest* const one[] = {&add.request};
    const BatchOutcome out = batch.run(one);
    ASSERT_EQ(add.request.error, ErrorCode::success);
    store.publish(out.version);
    batch.collect(out.collect);
    most = std::max(most, batch.resolver().recent_count() + batch.resolver().boundary_count());
  }
  // No reader holds any version: a collection that runs prunes all but the newest writes.
  EXPECT_LE(most, CommitBatch::kIdleHistory + 2);
}

// Collections of overwrites alone wait until their commits earned kDeferredUnits, so that
// several commits share one collection's fixed part (docs/decisions/0041); a commit that
// deletes collects at once, and what waits stays within the bound.
TEST(CommitBatch, OverwritesWaitForACollectionAndADeletionDoesNot) {
  kv::MvccStore store;
  CommitBatch batch(store);
  auto commit = [&](CommitRequest& r) {
    CommitRequest* const one[] = {&r};
    const BatchOutcome out = batch.run(one);
    ASSERT_EQ(r.error, ErrorCode::success);
    store.publish(out.version);
    batch.collect(out.collect);
  };
  BlindWrite first("a", "0");
  commit(first.request);
  // At most seven one-key commits wait, and the eighth collects them all, retiring two
  // entries (the chain cut behind the newest record, the head compacted), which the next
  // collection frees.
  const std::size_t waits = (CommitBatch::kDeferredUnits - 1) / CommitBatch::earned_collection(1);
  std::size_t waited = 0;
  std::size_t most_queued = 0;
  std::size_t most_pending = 0;
  for (int i = 1; i <= 100; ++i) {
    BlindWrite over("a", std::to_string(i));
    commit(over.request);
    if (store.queued_for_collection() != 0) ++waited;
    most_queued = std::max(most_queued, store.queued_for_collection());
    most_pending = std::max(most_pending, store.pending_gc());
  }
  EXPECT_GT(waited, 50u) << "most collections of an overwrite wait";
  EXPECT_EQ(most_queued, waits);
  EXPECT_LE(most_pending, waits + 2);

  WriteMap deletion;
  deletion.clear("a");
  CommitRequest clear;
  clear.writes = &deletion;
  commit(clear);
  EXPECT_EQ(store.queued_for_collection(), 0u) << "the deletion and the overwrites before it";
  EXPECT_EQ(store.latest("a"), std::nullopt);
}

// A request that reports its conflicts (CommitRequest::conflicting) names every read that
// met a newer write and only those, also when the write is an earlier request's of the
// same batch. Every request reads at version 0: a private range, the key "hot" that every
// request writes, and a private key. So the first request succeeds and every other one
// conflicts on "hot" alone: read index 1 (the range is index 0).
TEST(CommitBatch, AReportingRequestNamesEveryConflictingReadAndNoOther) {
  Fixture f;
  struct Reporting {
    base::Arena arena{nullptr, 0};
    ArenaRanges ranges{&arena};
    base::ArenaVector<std::string_view> keys{&arena};
    std::vector<std::uint32_t> conflicting;
    std::string own;
    WriteMap writes;
    CommitRequest request;
  };
  std::vector<Reporting> reporting(6);
  std::vector<CommitRequest*> batch;
  for (std::size_t i = 0; i < reporting.size(); ++i) {
    Reporting& r = reporting[i];
    r.own = "p" + std::to_string(i);
    append_range(r.ranges, r.own + "/", r.own + "0");
    r.keys.push_back("hot");
    r.keys.push_back(r.own);
    r.conflicting.reserve(3);
    r.writes.set("hot", r.own);
    r.request.writes = &r.writes;
    r.request.read_version = 0;
    r.request.read_ranges = &r.ranges;
    r.request.read_keys = &r.keys;
    r.request.conflicting = &r.conflicting;
    batch.push_back(&r.request);
  }
  // The first batch holds the first three requests, the second the rest.
  f.run({batch.begin(), batch.begin() + 3});
  f.run({batch.begin() + 3, batch.end()});
  EXPECT_EQ(reporting[0].request.error, ErrorCode::success);
  EXPECT_TRUE(reporting[0].conflicting.empty());
  for (std::size_t i = 1; i < reporting.size(); ++i) {
    EXPECT_EQ(reporting[i].request.error, ErrorCode::not_committed) << i;
    EXPECT_EQ(reporting[i].conflicting, std::vector<std::uint32_t>{1}) << i;
  }
}

// A batch holds at most the count limit of requests, and with a log no more than fit the
// log limit by the bound each put on its record (the first always, however large).
TEST(CommitBatch, TheFirstBatchStopsAtTheCountLimitAndTheLogLimit) {
  kv::MvccStore store;
  CommitBatch batch(store);
  std::vector<CommitRequest> requests(10);
  std::vector<CommitRequest*> queued;
  for (CommitRequest& r : requests) {
    r.log_bytes = 100;
    queued.push_back(&r);
  }
  EXPECT_EQ(batch.first_batch(queued), 10U);
  batch.set_batch_count_limit(3);
  EXPECT_EQ(batch.first_batch(queued), 3U);
  EXPECT_EQ(batch.first_batch(std::span(queued).subspan(9)), 1U);

  batch.set_batch_count_limit(CommitBatch::kBatchCommits);
  batch.set_batch_log_limit(250);
  EXPECT_EQ(batch.first_batch(queued), 10U) << "without a log the bytes do not count";
  batch.set_logging(true, nullptr);
  EXPECT_EQ(batch.first_batch(queued), 2U);
  requests[0].log_bytes = 1000;
  EXPECT_EQ(batch.first_batch(queued), 1U);
}

// The bound a committer puts on its record: what its writes log as sets, clears and
// ranges, and for a key's atomic operations the smaller of any value and the operations.
TEST(CommitBatch, TheLogBoundCoversEveryKindOfWriteAndNoMore) {
  WriteMap small;
  small.set("k", "value");                       // 1 + 5 + 11
  small.clear("c");                              // 1 + 11
  small.clear_range("r0", "r9");                 // 4 + 11
  small.atomic("n", MutationType::add, "\x01");  // 1 + 1 + 12
  EXPECT_EQ(log_bytes_bound(small), 17U + 12U + 15U + 14U);

  WriteMap appends;  // 30 appends onto one key: at most a value, not 30 operations
  for (int i = 0; i < 30; ++i) {
    appends.atomic("a", MutationType::append_if_fits, std::string(9000, 'x'));
  }
  EXPECT_EQ(log_bytes_bound(appends), 1U + 100'000U + 11U);
}

// Against the record itself: each kind of write committed alone encodes a record no larger
// than its bound, and appends and a kept compare_and_clear onto a 90 kB value encode as
// the operations (tens of bytes), not the value. A refused request encodes nothing.
TEST(CommitBatch, EveryRecordIsWithinTheBoundOfItsWrites) {
  kv::MvccStore store;
  CommitBatch batch(store);
  batch.set_logging(true, nullptr);
  const std::string long_value(90'000, 'a');
  const std::vector<std::function<void(WriteMap&)>> kinds = {
      [&](WriteMap& w) { w.set("long", long_value); },
      [](WriteMap& w) {
        w.set("k", "value");
        w.clear("gone");
        w.clear_range("r0", "r9");
      },
      [](WriteMap& w) {
        for (int i = 0; i < 5; ++i) w.atomic("n", MutationType::add, "\x01");
      },
      [](WriteMap& w) { w.atomic("long", MutationType::append_if_fits, "b"); },
      [](WriteMap& w) {
        w.atomic("long", MutationType::compare_and_clear, "no match");
        w.atomic("long", MutationType::byte_min, "b");
      },
      [](WriteMap& w) { w.atomic("n", MutationType::compare_and_clear, "no match"); },
      [](WriteMap& w) {
        w.set_stamped_value("stamped", std::string(12, 's'), 1);
        w.atomic("stamped", MutationType::append_if_fits, "xyz");
      },
      [](WriteMap& w) {
        w.add_stamped_key({std::string(14, 'k'), 2, "value", ""});
      },
  };
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    WriteMap writes;
    kinds[i](writes);
    CommitRequest request;
    const BatchOutcome out = run_logged(batch, writes, request);
    ASSERT_EQ(request.error, ErrorCode::success) << i;
    store.publish(out.version);
    EXPECT_LE(batch.log_record().size(), log_bytes_bound(writes)) << "kind " << i;
    if (i == 3 || i == 4) {
      EXPECT_LT(batch.log_record().size(), 100U) << "kind " << i << " logged the value";
    }
  }
  EXPECT_EQ(store.latest("long"), long_value + "b");

  base::Arena arena(nullptr, 0);
  base::ArenaVector<std::string_view> read_long(&arena);
  read_long.push_back("long");
  BlindWrite stale("unlogged", "v");
  stale.request.read_version = 0;
  stale.request.read_keys = &read_long;
  CommitRequest* const one[] = {&stale.request};
  const BatchOutcome out = batch.run(one);
  EXPECT_EQ(stale.request.error, ErrorCode::not_committed);
  EXPECT_EQ(out.version, -1);
  EXPECT_TRUE(batch.log_record().empty());
}

// A batch of four or more requests has its writes fetched together first, each key's path
// and hash found once for the apply (CommitBatch::prepare_writes). Its sets, clears and
// atomic operations land as they do from lone commits, with a failed request's writes
// skipped between the others'.
TEST(CommitBatch, APreparedBatchAppliesEveryKindOfWriteAsLoneCommitsDo) {
  Fixture f;
  BlindWrite seed_kept("kept", "old");
  BlindWrite seed_gone("gone", "x");
  BlindWrite seed_count("count", std::string("\x01", 1));
  BlindWrite seed_a("a", "0");
  f.run({&seed_kept.request, &seed_gone.request, &seed_count.request, &seed_a.request});

  BlindWrite writes_a("a", "1");
  ReadOfA stale("lost", "v", 0);  // reads "a" after writes_a: fails, its write skipped
  stale.writes.clear("kept");
  BlindWrite sets("new", "n");
  sets.writes.set("kept", "new value");
  BlindWrite clears("never", "");
  clears.writes.clear("never");
  clears.writes.clear("gone");
  BlindWrite adds("other", "o");
  adds.writes.atomic("count", MutationType::add, std::string("\x02", 1));
  const BatchOutcome out =
      f.run({&writes_a.request, &stale.request, &sets.request, &clears.request, &adds.request});
  EXPECT_EQ(stale.request.error, ErrorCode::not_committed);
  EXPECT_EQ(out.committed, 4U);
  EXPECT_EQ(f.store.latest("a"), "1");
  EXPECT_FALSE(f.store.latest("lost").has_value());
  EXPECT_EQ(f.store.latest("kept"), "new value");
  EXPECT_EQ(f.store.latest("new"), "n");
  EXPECT_FALSE(f.store.latest("never").has_value());
  EXPECT_FALSE(f.store.latest("gone").has_value());
  EXPECT_EQ(f.store.latest("count"), std::string("\x03", 1));
  EXPECT_EQ(f.store.latest("other"), "o");
}

// A commit of only sets and clears of keys takes apply's short path
// (WriteMap::only_sets_and_clears); the same net writes in a map that once held an atomic
// operation take the general one. Both leave the same values and encode the same record.
TEST(CommitBatch, PlainSetsAndClearsApplyAndLogAsTheGeneralPathDoes) {
  std::vector<std::string> records;
  for (const bool plain : {true, false}) {
    kv::MvccStore store;
    CommitBatch batch(store);
    batch.set_logging(true, nullptr);
    BlindWrite existing("gone", "x");
    CommitRequest* const first[] = {&existing.request};
    store.publish(batch.run(first).version);

    WriteMap writes;
    if (!plain) writes.atomic("k", MutationType::add, "\x01");  // replaced by the set below
    writes.set("k", "value");
    writes.set("a", "1");
    writes.clear("gone");
    writes.clear("never");
    ASSERT_EQ(writes.only_sets_and_clears(), plain);
    CommitRequest request;
    const BatchOutcome out = run_logged(batch, writes, request);
    ASSERT_EQ(request.error, ErrorCode::success) << plain;
    store.publish(out.version);
    EXPECT_EQ(store.latest("k"), "value") << plain;
    EXPECT_EQ(store.latest("a"), "1") << plain;
    EXPECT_EQ(store.latest("gone"), std::nullopt) << plain;
    EXPECT_EQ(store.latest("never"), std::nullopt) << plain;
    records.push_back(batch.log_record());
  }
  EXPECT_FALSE(records[0].empty());
  EXPECT_EQ(records[0], records[1]);
}

// A batch of one request of a few sets and clears, with nothing to log, takes run()'s lone
// path (a lone in-memory commit: the request's write_bytes bound its reservation); the same
// requests without write_bytes take the general path. Both answer the same: a read that a
// commit in between wrote still conflicts (and is reported), a read at the newest version
// commits, a clear removes the key, and a read below the pruned history is too old.
TEST(CommitBatch, ALoneCommitAnswersAsTheGeneralPathDoes) {
  struct Answer {
    ErrorCode error;
    Version version;
    std::uint16_t batch_index;
    std::vector<std::uint32_t> conflicting;
    std::size_t collect;
    bool operator==(const Answer&) const = default;
  };
  std::vector<std::vector<Answer>> answers;
  std::vector<std::vector<std::optional<std::string>>> values;
  for (const bool lone : {true, false}) {
    std::vector<Answer>& got = answers.emplace_back();
    kv::MvccStore store;
    CommitBatch batch(store);
    kv::ReaderRegistry::Slot* reader = store.registry().acquire();
    ASSERT_EQ(kv::ReaderRegistry::announce(reader, store.committed_atomic()), 0);
    auto run = [&](CommitRequest& r, const WriteMap& writes) {
      r.writes = &writes;
      if (lone) r.write_bytes = 64;  // at least its bytes (TransactionImpl::commit's count)
      CommitRequest* const one[] = {&r};
      const BatchOutcome out = batch.run(one);
      if (out.version >= 0) store.publish(out.version);
      batch.collect(out.collect);
      got.push_back({r.error, r.version, r.batch_index,
                     r.conflicting != nullptr ? *r.conflicting : std::vector<std::uint32_t>{},
                     out.collect});
    };
    BlindWrite first("a", "1");
    run(first.request, first.writes);
    const Version v1 = first.request.version;
    BlindWrite second("a", "2");  // a second transaction commits in between
    run(second.request, second.writes);

    ReadOfA stale("b", "2", v1);  // read "a" before `second` wrote it
    std::vector<std::uint32_t> conflicting;
    conflicting.reserve(1);
    stale.request.conflicting = &conflicting;
    run(stale.request, stale.writes);
    ReadOfA fresh("b", "3", store.committed());  // nothing written after its read
    run(fresh.request, fresh.writes);
    WriteMap clears;
    clears.clear("a");
    clears.set("c", "4");
    CommitRequest clearing;
    clearing.read_version = store.committed();
    run(clearing, clears);

    // No reader holds the old versions any more: collection prunes their history.
    kv::ReaderRegistry::withdraw(reader);
    store.registry().release(reader);
    BlindWrite later("d", "5");
    run(later.request, later.writes);
    ReadOfA too_old("e", "6", v1);
    run(too_old.request, too_old.writes);
    std::vector<std::optional<std::string>>& now = values.emplace_back();
    for (const char* key : {"a", "b", "c", "d", "e"}) {
      const std::optional<std::string_view> value = store.latest(key);
      now.push_back(value ? std::optional<std::string>(*value) : std::nullopt);
    }
  }
  ASSERT_EQ(answers[0].size(), 7U);
  EXPECT_EQ(answers[0][2].error, ErrorCode::not_committed);
  EXPECT_EQ(answers[0][2].conflicting, std::vector<std::uint32_t>{0});
  EXPECT_EQ(answers[0][3].error, ErrorCode::success);
  EXPECT_EQ(answers[0][4].error, ErrorCode::success);
  EXPECT_EQ(answers[0][6].error, ErrorCode::transaction_too_old);
  EXPECT_EQ(answers[0], answers[1]);
  EXPECT_EQ(values[0],
            (std::vector<std::optional<std::string>>{std::nullopt, "3", "4", "5", std::nullopt}));
  EXPECT_EQ(values[0], values[1]);
}

}  // namespace
}  // namespace strata::engine
