// The commit pipeline with a log, one committer at a time: a batch is published only once
// logged, so what was acknowledged survives a power loss (a buffered log opens to a prefix
// of its commits, and is synced at close), a version acknowledged with nothing to log
// stays taken, and a failing log fails the batch it held (commit_unknown_result) and
// every commit after it (database_failed) without publishing anything. The same with
// threads is tests/engine/commit_pipeline_test.cpp's.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/limits.hpp"
#include "engine/blind_write.hpp"
#include "engine/commit_pipeline.hpp"
#include "engine/persistence.hpp"
#include "engine/synced_pipeline.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"

namespace strata::engine {
namespace {

using strata::testing::FaultFileSystem;
using strata::testing::ThrowsCodeWith;
using testing::SyncedPipeline;

using base::key_after;

std::string key(int i) { return "k0/" + std::to_string(i); }

// A buffered log (Durability::buffered: no sync per batch, here 512 commits of values up to
// 3 kB) after a power loss that kept its directory entries and any of its unsynced pages:
// it opens, to the state after some prefix of the commits (they were never promised to
// survive a power loss, but the database must open: damage followed only by unmarked valid
// records is a torn tail, not corruption, docs/decisions/0023).
TEST(CommitLog, ABufferedLogOpensAfterAPowerLossToAPrefixOfItsCommits) {
  Options options;
  options.path = "/db";
  options.durability = Durability::buffered;
  constexpr int kCommits = 512;
  int shortest = kCommits;
  int longest = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    FaultFileSystem fs;
    auto value_of = [](int i) { return std::string(static_cast<std::size_t>(i * 37 % 3000), 'v'); };
    {
      kv::MvccStore store;
      Persistence persistence(options, store, fs);
      CommitPipeline pipeline(store);
      pipeline.set_persistence(&persistence);
      for (int i = 0; i < kCommits; ++i) {
        BlindWrite w(key(i), value_of(i));
        pipeline.commit(w.request);
        ASSERT_EQ(w.request.error, ErrorCode::success);
      }
      fs.drop_unsynced_pages(seed);
      fs.set_capacity(0);  // the process is gone: no checkpoint at close
    }
    fs.set_capacity(~std::uint64_t{0});
    kv::MvccStore store;
    std::optional<Persistence> recovered;
    ASSERT_NO_THROW(recovered.emplace(options, store, fs));
    int prefix = 0;
    while (prefix < kCommits && store.latest(key(prefix)) == value_of(prefix)) ++prefix;
    for (int i = prefix; i < kCommits; ++i) {
      EXPECT_EQ(store.latest(key(i)), std::nullopt) << "commit " << i << " after a lost one";
    }
    shortest = std::min(shortest, prefix);
    longest = std::max(longest, prefix);
  }
  // The seeds lose some commits, and keep some.
  EXPECT_LT(shortest, kCommits);
  EXPECT_GT(longest, 0);
}

// Closing a buffered log syncs it, also when the final checkpoint fails (here its rename):
// the commits made before a clean close survive a power loss after it.
TEST(CommitLog, ABufferedLogIsSyncedAtCloseEvenWhenTheFinalCheckpointFails) {
  Options options;
  options.path = "/db";
  options.durability = Durability::buffered;
  FaultFileSystem fs;
  constexpr int kCommits = 20;
  {
    kv::MvccStore store;
    Persistence persistence(options, store, fs);
    CommitPipeline pipeline(store);
    pipeline.set_persistence(&persistence);
    for (int i = 0; i < kCommits; ++i) {
      BlindWrite w(key(i), "v");
      pipeline.commit(w.request);
      ASSERT_EQ(w.request.error, ErrorCode::success);
    }
    fs.fail_nth(FaultFileSystem::Op::rename, 1);
  }
  fs.drop_unsynced();
  kv::MvccStore store;
  Persistence recovered(options, store, fs);
  for (int i = 0; i < kCommits; ++i) EXPECT_EQ(store.latest(key(i)), "v") << i;
}

// A commit with nothing to log (only a write conflict range) still takes a version, and
// its versionstamp is made of it. Acknowledged under Durability::fsync, that version is
// durable: after a power loss the database reopens at it or later, and never hands it,
// or the versionstamp, to another commit.
TEST(CommitLog, AnAcknowledgedCommitWithNothingToLogKeepsItsVersionAfterAPowerLoss) {
  FaultFileSystem fs;
  Version acknowledged = 0;
  {
    SyncedPipeline synced(fs);
    BlindWrite w("k", "v");
    synced.pipeline.commit(w.request);
    ASSERT_EQ(w.request.error, ErrorCode::success);
    WriteMap nothing;
    CommitRequest conflict_only;
    conflict_only.writes = &nothing;
    const std::vector<KeyRange> ranges{KeyRange{"x", key_after("x")}};
    conflict_only.write_ranges = &ranges;
    synced.pipeline.commit(conflict_only);
    ASSERT_EQ(conflict_only.error, ErrorCode::success);
    ASSERT_GT(conflict_only.version, w.request.version);
    acknowledged = conflict_only.version;
    fs.drop_unsynced();
    fs.set_capacity(0);  // the process is gone: no checkpoint at close
  }
  fs.set_capacity(~std::uint64_t{0});
  SyncedPipeline recovered(fs);
  EXPECT_GE(recovered.store.committed(), acknowledged)
      << "a version acknowledged before the power loss would be handed out again";
  BlindWrite next("k2", "v");
  recovered.pipeline.commit(next.request);
  ASSERT_EQ(next.request.error, ErrorCode::success);
  EXPECT_GT(next.request.version, acknowledged);
}

TEST(CommitLog, FailingLogFailsThatBatchAsUnknownAndEveryLaterCommit) {
  FaultFileSystem fs;
  SyncedPipeline synced(fs);
  CommitPipeline& pipeline = synced.pipeline;
  kv::MvccStore& store = synced.store;

  BlindWrite ok("a", "1");
  pipeline.commit(ok.request);
  ASSERT_EQ(ok.request.error, ErrorCode::success);
  const Version published = store.committed();

  fs.fail_nth(FaultFileSystem::Op::sync, 1);
  BlindWrite lost("b", "2");
  pipeline.commit(lost.request);
  EXPECT_EQ(lost.request.error, ErrorCode::commit_unknown_result);
  EXPECT_EQ(store.committed(), published);  // never published

  BlindWrite after("c", "3");
  // The refusal names the log's own error, so that the first failure is not lost.
  EXPECT_THAT([&] { pipeline.commit(after.request); },
              ThrowsCodeWith(ErrorCode::database_failed, "sync (injected fault)"));
  EXPECT_EQ(store.committed(), published);
}

}  // namespace
}  // namespace strata::engine
