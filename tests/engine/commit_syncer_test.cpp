// Submitted commits under Durability::fsync: with submitted requests queued behind a
// batch, the leader writes it and hands its sync to the syncer, which publishes batches in
// version order and settles them once durable. What is acknowledged survives a power
// loss; a sync that fails there fails its batches as unknown and every later commit; and
// committers that wait in commit() go through the same pipeline meanwhile.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/commit_pipeline.hpp"
#include "engine/persistence.hpp"
#include "engine/synced_pipeline.hpp"
#include "support/fault_file_system.hpp"

namespace strata::engine {
namespace {

using strata::testing::FaultFileSystem;

// The first sync of `fs` waits until `submitter` has queued three commits or more: the
// next batch then holds two submitted requests at least, and goes to the syncer. (A
// memory file system's syncs take no time: a submitter would rarely get ahead of them.)
template <class Submitter>
auto hold_first_sync(const Submitter& submitter) {
  return [&submitter, first = std::make_shared<std::atomic<bool>>(true)] {
    if (!first->exchange(false)) return;
    while (submitter.submitted() < 3) std::this_thread::yield();
  };
}

using testing::SyncedPipeline;

// A submitter that keeps up to `in_flight` blind writes queued with submit(), from one
// thread, and records how each ended.
class Submitter {
 public:
  struct Outcome {
    std::string key;
    std::string value;
    ErrorCode error;
    Version version;
    std::uint16_t batch_index;
    Version published_at_settle;
  };

  Submitter(CommitPipeline& pipeline, const kv::MvccStore& store, std::size_t in_flight)
      : pipeline_(pipeline), store_(store), in_flight_(in_flight) {}

  // Submits `count` writes of key "s/<i>" with values of `value_size(i)` bytes, never more
  // than in_flight at once, and waits until all are settled.
  template <class ValueSize>
  void run(int count, ValueSize value_size) {
    for (int i = 0; i < count; ++i) {
      auto& w = writes_.emplace_back(std::make_unique<Write>());
      w->owner = this;
      w->key = "s/" + std::to_string(i);
      w->value.assign(value_size(i), 'v');
      w->map.set(w->key, w->value);
      w->request.writes = &w->map;
      w->request.on_done = &Submitter::settled;
      w->request.context = w.get();
      {
        std::unique_lock lock(mu_);
        changed_.wait(lock, [&] { return pending_ < in_flight_; });
        ++pending_;
      }
      pipeline_.submit(w->request);
      submitted_.fetch_add(1);
    }
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return pending_ == 0; });
  }

  const std::vector<Outcome>& outcomes() const { return outcomes_; }
  int submitted() const { return submitted_.load(); }

 private:
  struct Write {
    Submitter* owner;
    std::string key;
    std::string value;
    WriteMap map;
    CommitRequest request;
  };

  static void settled(CommitRequest& request) noexcept {
    auto* w = static_cast<Write*>(request.context);
    Submitter& s = *w->owner;
    std::lock_guard lock(s.mu_);
    s.outcomes_.push_back(Outcome{w->key, w->value, request.error, request.version,
                                  request.batch_index, s.store_.committed()});
    --s.pending_;
    s.changed_.notify_all();
  }

  CommitPipeline& pipeline_;
  const kv::MvccStore& store_;
  const std::size_t in_flight_;
  std::deque<std::unique_ptr<Write>> writes_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::size_t pending_ = 0;  // guarded by mu_
  std::atomic<int> submitted_{0};
  std::vector<Outcome> outcomes_;  // guarded by mu_, in the order settled
};

TEST(CommitSyncer, SubmittedCommitsSettleInOrderOnceTheirVersionIsPublished) {
  FaultFileSystem fs;
  SyncedPipeline synced(fs);
  Submitter submitter(synced.pipeline, synced.store, 64);
  fs.set_sync_hook(hold_first_sync(submitter));
  submitter.run(2000, [](int) { return 100; });
  fs.set_sync_hook(nullptr);

  ASSERT_EQ(submitter.outcomes().size(), 2000U);
  Version last = 0;
  int last_index = -1;
  for (const Submitter::Outcome& o : submitter.outcomes()) {
    ASSERT_EQ(o.error, ErrorCode::success) << o.key;
    // Settled in submission order: versions ascend, and within one the batch index.
    ASSERT_TRUE(o.version > last || (o.version == last && o.batch_index > last_index)) << o.key;
    last = o.version;
    last_index = o.batch_index;
    EXPECT_GE(o.published_at_settle, o.version) << o.key;
    EXPECT_EQ(synced.store.latest(o.key), o.value);
  }
  EXPECT_EQ(synced.store.committed(), last);
  // The syncer did the syncing: batches queued behind others went to it.
  EXPECT_GT(synced.pipeline.batches_synced_apart(), 0U);
  EXPECT_LT(synced.pipeline.stats().batches, 2000U);
}

// The power fails inside the n-th sync (by seed), keeping any of the pages written since
// the sync before; every commit settled as a success before that is there after recovery.
TEST(CommitSyncer, APowerLossLosesNoAcknowledgedSubmittedCommit) {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    FaultFileSystem fs;
    std::map<std::string, std::string> acknowledged;
    std::uint64_t synced_apart = 0;
    {
      SyncedPipeline synced(fs);
      Submitter submitter(synced.pipeline, synced.store, 32);
      std::atomic<int> syncs{0};
      const int lost_at = 10 + static_cast<int>(seed * 7 % 40);
      fs.set_sync_hook([&, hold = hold_first_sync(submitter)] {
        hold();
        if (++syncs != lost_at) return;
        fs.drop_unsynced_pages(seed);
        fs.set_capacity(0);  // the process is gone: nothing more reaches the disk
      });
      submitter.run(1500, [](int i) { return static_cast<std::size_t>(i * 31 % 3000); });
      ASSERT_GE(syncs.load(), lost_at) << "the power never failed";
      bool failed = false;
      for (const Submitter::Outcome& o : submitter.outcomes()) {
        if (o.error == ErrorCode::success) {
          ASSERT_FALSE(failed) << o.key << " succeeded after a failed commit";
          acknowledged[o.key] = o.value;
        } else {
          failed = true;
          EXPECT_THAT(o.error, ::testing::AnyOf(ErrorCode::commit_unknown_result,
                                                ErrorCode::database_failed));
        }
      }
      ASSERT_TRUE(failed);
      synced_apart = synced.pipeline.batches_synced_apart();
      fs.set_sync_hook(nullptr);
    }
    EXPECT_GT(synced_apart, 0U);
    fs.set_capacity(~std::uint64_t{0});
    std::optional<SyncedPipeline> recovered;
    ASSERT_NO_THROW(recovered.emplace(fs));
    for (const auto& [key, value] : acknowledged) {
      EXPECT_EQ(recovered->store.latest(key), value) << key;
    }
  }
}

// A sync that fails on the syncer: what it covered is unknown (commit_unknown_result), is
// never published, and every commit after it fails, submitted or not.
TEST(CommitSyncer, AFailedSyncFailsItsBatchesAsUnknownAndEveryLaterCommit) {
  FaultFileSystem fs;
  SyncedPipeline synced(fs);
  fs.fail_nth(FaultFileSystem::Op::sync, 5);  // early: 2,000 commits take 30 or more
  Submitter submitter(synced.pipeline, synced.store, 64);
  fs.set_sync_hook(hold_first_sync(submitter));
  submitter.run(2000, [](int) { return 100; });
  fs.set_sync_hook(nullptr);

  Version last_success = 0;
  int unknown = 0;
  int refused = 0;
  for (const Submitter::Outcome& o : submitter.outcomes()) {
    switch (o.error) {
      case ErrorCode::success:
        ASSERT_EQ(unknown + refused, 0) << o.key << " succeeded after a failed commit";
        last_success = o.version;
        break;
      case ErrorCode::commit_unknown_result:
        ASSERT_EQ(refused, 0) << o.key;
        ++unknown;
        break;
      case ErrorCode::database_failed:
        ++refused;
        break;
      default:
        FAIL() << o.key << ": " << static_cast<int>(o.error);
    }
  }
  EXPECT_GT(unknown, 0);
  EXPECT_GT(refused, 0) << unknown << " unknown of " << submitter.outcomes().size();
  EXPECT_EQ(synced.store.committed(), last_success);  // nothing after it was published
  EXPECT_GT(synced.pipeline.batches_synced_apart(), 0U);
  WriteMap map;
  map.set("after", "x");
  CommitRequest after;
  after.writes = &map;
  EXPECT_THROW(synced.pipeline.commit(after), Error);
}

// Committers that wait in commit() beside a submitter: all commit, each sees its version
// published when it returns, and every write is in the store. With `batch_limit`, batches
// are split into parts of that many requests: once a part goes to the syncer every later
// part of the batch must too (the leader wakes only the parts before it; a part it synced
// itself after one it sent would be woken by nobody, and hang).
void waiting_committers_and_a_submitter(std::size_t batch_limit) {
  FaultFileSystem fs;
  SyncedPipeline synced(fs);
  synced.pipeline.set_batch_count_limit(batch_limit);
  constexpr int kThreads = 4;
  constexpr int kCommits = 200;
  Submitter submitter(synced.pipeline, synced.store, 48);
  fs.set_sync_hook(hold_first_sync(submitter));  // before any sync runs
  std::vector<std::thread> committers;
  for (int t = 0; t < kThreads; ++t) {
    committers.emplace_back([&, t] {
      for (int i = 0; i < kCommits; ++i) {
        WriteMap map;
        const std::string key = "w/" + std::to_string(t) + "/" + std::to_string(i);
        map.set(key, std::to_string(i));
        CommitRequest request;
        request.writes = &map;
        synced.pipeline.commit(request);
        ASSERT_EQ(request.error, ErrorCode::success) << key;
        ASSERT_GE(synced.store.committed(), request.version) << key;
      }
    });
  }
  submitter.run(1500, [](int) { return 50; });
  for (std::thread& t : committers) t.join();
  fs.set_sync_hook(nullptr);
  EXPECT_GT(synced.pipeline.batches_synced_apart(), 0U);

  for (const Submitter::Outcome& o : submitter.outcomes()) {
    ASSERT_EQ(o.error, ErrorCode::success) << o.key;
    EXPECT_EQ(synced.store.latest(o.key), o.value);
  }
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kCommits; ++i) {
      EXPECT_EQ(synced.store.latest("w/" + std::to_string(t) + "/" + std::to_string(i)),
                std::to_string(i));
    }
  }
}

TEST(CommitSyncer, WaitingCommittersAndASubmitterShareThePipeline) {
  waiting_committers_and_a_submitter(CommitPipeline::kBatchCommits);
}

TEST(CommitSyncer, APartOfABatchAfterOneSentToTheSyncerIsSentToo) {
  waiting_committers_and_a_submitter(3);
}

}  // namespace
}  // namespace strata::engine
