// The commit pipeline's queue, with threads: concurrent committers all finish with the
// right results in both modes (each committer alone, or grouped behind a leader), waiters
// asleep behind a sync are all woken, what queued behind one sync is split into batches
// within the log and count limits, and commits acknowledged by several committers survive
// a power loss inside a sync. What one batch does (resolution, versions, the log record)
// is tests/engine/commit_batch_test.cpp's; the pipeline's log with one committer,
// tests/engine/commit_log_test.cpp's.
#include "engine/commit_pipeline.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/arena.hpp"
#include "base/arena_vector.hpp"
#include "base/limits.hpp"
#include "engine/blind_write.hpp"
#include "engine/commit_batch.hpp"
#include "engine/persistence.hpp"
#include "engine/synced_pipeline.hpp"
#include "support/fault_file_system.hpp"
#include <sys/syscall.h>
#include <unistd.h>

namespace strata::engine {
namespace {

using strata::testing::FaultFileSystem;

std::string thread_key(int thread, int i) {
  return "k" + std::to_string(thread) + "/" + std::to_string(i);
}

// `threads` threads each commit `commits` blind writes thread_key(t, i) = i through
// `pipeline`; each must succeed and be published by the time its commit returns. Returns
// each thread's commit versions, in its order.
std::vector<std::vector<Version>> commit_from_threads(CommitPipeline& pipeline,
                                                      const kv::MvccStore& store, int threads,
                                                      int commits) {
  std::vector<std::vector<Version>> versions(threads);
  std::vector<std::thread> running;
  running.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      for (int i = 0; i < commits; ++i) {
        BlindWrite w(thread_key(t, i), std::to_string(i));
        pipeline.commit(w.request);
        ASSERT_EQ(w.request.error, ErrorCode::success);
        ASSERT_GE(store.committed(), w.request.version);
        versions[t].push_back(w.request.version);
      }
    });
  }
  for (std::thread& t : running) t.join();
  return versions;
}

// Every key commit_from_threads wrote holds its value in `store`.
void expect_every_key(const kv::MvccStore& store, int threads, int commits) {
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < commits; ++i) {
      auto value = store.latest(thread_key(t, i));
      ASSERT_TRUE(value.has_value()) << thread_key(t, i);
      EXPECT_EQ(*value, std::to_string(i));
    }
  }
}

class CommitPipelineModes : public ::testing::TestWithParam<CommitMode> {};

// A transaction that read at v and is committing (kv::ReaderRegistry::begin_commit) holds
// no record: the commits ahead of it collect what only v could see. Its commit is still
// checked against every write after v, so it fails as a conflict, not as too old
// (transaction_too_old is what a read below the pruned history gets).
TEST_P(CommitPipelineModes, ACommitterWaitingHoldsItsConflictHistoryButNoRecords) {
  kv::MvccStore store;
  CommitPipeline pipeline(store);
  pipeline.set_mode(GetParam());
  BlindWrite first("k", "1");
  pipeline.commit(first.request);
  kv::ReaderRegistry::Slot* slot = store.registry().acquire();
  const Version read_version = kv::ReaderRegistry::announce(slot, store.committed_atomic());
  BlindWrite overwrite("k", "2");  // after the read: the committer conflicts
  pipeline.commit(overwrite.request);

  kv::ReaderRegistry::begin_commit(slot);
  // The commits ahead of it, enough that one collects: a collection of overwrites alone
  // waits for kDeferredUnits (docs/decisions/0041).
  const int ahead =
      static_cast<int>(CommitBatch::kDeferredUnits / CommitBatch::earned_collection(1)) + 3;
  for (int i = 0; i < ahead; ++i) {
    BlindWrite other("other", std::to_string(i));
    pipeline.commit(other.request);
  }
  // Collection passed read_version: "k"@1, visible there only, may be gone, and a new
  // reader cannot take that version any more.
  kv::ReaderRegistry::Slot* pin = store.registry().acquire();
  EXPECT_FALSE(store.pin_at(pin, read_version));
  kv::ReaderRegistry::withdraw(pin);
  store.registry().release(pin);

  base::Arena arena(nullptr, 0);
  base::ArenaVector<std::string_view> read_k(&arena);
  read_k.push_back("k");
  BlindWrite committer("out", "x");
  committer.request.read_version = read_version;
  committer.request.read_keys = &read_k;
  pipeline.commit(committer.request);
  EXPECT_EQ(committer.request.error, ErrorCode::not_committed);
  kv::ReaderRegistry::withdraw(slot);
  store.registry().release(slot);
}

TEST_P(CommitPipelineModes, ConcurrentCommittersAllFinishInDistinctOrderedBatches) {
  kv::MvccStore store;
  CommitPipeline pipeline(store);
  pipeline.set_mode(GetParam());
  constexpr int kThreads = 8;
  constexpr int kCommits = 500;
  const auto versions = commit_from_threads(pipeline, store, kThreads, kCommits);

  EXPECT_EQ(pipeline.stats().commits, std::uint64_t{kThreads} * kCommits);
  EXPECT_EQ(pipeline.stats().conflicts, 0u);
  if (GetParam() == CommitMode::alone) {
    EXPECT_EQ(pipeline.stats().batches, pipeline.stats().commits);  // each its own batch
  } else {
    EXPECT_LE(pipeline.stats().batches, pipeline.stats().commits);
  }
  EXPECT_EQ(store.committed(), static_cast<Version>(pipeline.stats().batches));
  for (int t = 0; t < kThreads; ++t) {
    // One thread's commits land in increasing versions.
    for (std::size_t i = 1; i < versions[t].size(); ++i) {
      EXPECT_LT(versions[t][i - 1], versions[t][i]);
    }
  }
  expect_every_key(store, kThreads, kCommits);
}

std::string mode_name(const ::testing::TestParamInfo<CommitMode>& mode) {
  return mode.param == CommitMode::alone ? "Alone" : "Grouped";
}
INSTANTIATE_TEST_SUITE_P(BothModes, CommitPipelineModes,
                         ::testing::Values(CommitMode::alone, CommitMode::grouped), mode_name);

// A request that reports its conflicts (CommitRequest::conflicting) names every read that
// met a newer write and only those, whichever thread leads its batch (the vector is the
// committer's, filled in by the leader; tests/engine/commit_batch_test.cpp checks the
// reports themselves). Every request reads at version 0
// (held by a reader, so no history is pruned): a private range, the key "hot" that every
// request writes, and a private key. So the first request to commit succeeds and every
// other one conflicts on "hot" alone: read index 1 (the range is index 0).
TEST_P(CommitPipelineModes, AReportingRequestNamesEveryConflictingReadAndNoOther) {
  kv::MvccStore store;
  CommitPipeline pipeline(store);
  pipeline.set_mode(GetParam());
  kv::ReaderRegistry::Slot* reader = store.registry().acquire();
  ASSERT_EQ(kv::ReaderRegistry::announce(reader, store.committed_atomic()), 0);
  constexpr int kThreads = 4;
  constexpr int kCommits = 200;
  std::atomic<int> succeeded{0};
  std::atomic<int> misreported{0};
  std::vector<std::thread> running;
  running.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    running.emplace_back([&, t] {
      const std::string own = "p" + std::to_string(t);
      base::Arena arena(nullptr, 0);
      ArenaRanges ranges(&arena);
      append_range(ranges, own + "/", own + "0");
      base::ArenaVector<std::string_view> keys(&arena);
      keys.push_back("hot");
      keys.push_back(own);
      std::vector<std::uint32_t> conflicting;
      for (int i = 0; i < kCommits; ++i) {
        BlindWrite w("hot", own);
        w.request.read_version = 0;
        w.request.read_ranges = &ranges;
        w.request.read_keys = &keys;
        conflicting.clear();
        conflicting.reserve(3);
        w.request.conflicting = &conflicting;
        pipeline.commit(w.request);
        if (w.request.error == ErrorCode::success) {
          succeeded.fetch_add(1);
          if (!conflicting.empty()) misreported.fetch_add(1);
        } else if (w.request.error != ErrorCode::not_committed ||
                   conflicting != std::vector<std::uint32_t>{1}) {
          misreported.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : running) t.join();
  EXPECT_EQ(succeeded.load(), 1);
  EXPECT_EQ(misreported.load(), 0);
  EXPECT_EQ(pipeline.stats().conflicts, std::uint64_t{kThreads} * kCommits - 1);
  kv::ReaderRegistry::withdraw(reader);
  store.registry().release(reader);
}

using testing::SyncedPipeline;

// Under Durability::fsync, the power fails inside a sync (the n-th, by seed) and the disk
// keeps any of the pages written since the sync before. Four committers write values up
// to 3 kB until their commits fail; every commit acknowledged before the loss is there
// after recovery.
TEST(CommitPipeline, APowerLossInsideASyncLosesNoAcknowledgedCommit) {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    FaultFileSystem fs;
    std::mutex mu;
    std::map<std::string, std::string> acknowledged;
    {
      SyncedPipeline synced(fs);
      std::atomic<int> syncs{0};
      const int lost_at = 20 + static_cast<int>(seed * 7 % 60);
      fs.set_sync_hook([&] {
        if (++syncs != lost_at) return;
        fs.drop_unsynced_pages(seed);
        fs.set_capacity(0);  // the process is gone: nothing more reaches the disk
      });
      std::vector<std::thread> committers;
      for (int t = 0; t < 4; ++t) {
        committers.emplace_back([&, t] {
          for (int i = 0; i < 100; ++i) {
            const std::string value(static_cast<std::size_t>((t * 100 + i) * 31 % 3000), 'v');
            BlindWrite w(thread_key(t, i), value);
            try {
              synced.pipeline.commit(w.request);
            } catch (const Error&) {
              return;  // database_failed: the log failed at the power loss
            }
            if (w.request.error != ErrorCode::success) return;
            std::lock_guard lock(mu);
            acknowledged[thread_key(t, i)] = value;
          }
        });
      }
      for (std::thread& t : committers) t.join();
      ASSERT_GE(syncs.load(), lost_at) << "the power never failed";
      ASSERT_FALSE(acknowledged.empty());
    }
    fs.set_sync_hook(nullptr);
    fs.set_capacity(~std::uint64_t{0});
    std::optional<SyncedPipeline> recovered;
    ASSERT_NO_THROW(recovered.emplace(fs));
    for (const auto& [key, value] : acknowledged) {
      EXPECT_EQ(recovered->store.latest(key), value) << key;
    }
  }
}

// Under Durability::fsync waiters sleep at once, all of a batch on one shared word, and
// the leader wakes the batch with one call outside the pipeline's lock. Every commit
// still finishes once, in order per thread, and is in the log (a reopen from the same
// files recovers every key).
class SyncedLogCommitters : public ::testing::TestWithParam<int> {};

TEST_P(SyncedLogCommitters, AllFinishAndAreLogged) {
  FaultFileSystem fs;
  const int threads = GetParam();
  const int commits = 2400 / threads;
  {
    SyncedPipeline synced(fs);
    // Published (and so durable) by the time each commit returns.
    const auto versions = commit_from_threads(synced.pipeline, synced.store, threads, commits);
    EXPECT_EQ(synced.pipeline.stats().commits,
              static_cast<std::uint64_t>(threads) * static_cast<std::uint64_t>(commits));
    for (const auto& v : versions) EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  }
  SyncedPipeline recovered(fs);
  expect_every_key(recovered.store, threads, commits);
}

INSTANTIATE_TEST_SUITE_P(Threads, SyncedLogCommitters, ::testing::Values(8, 48));

#if defined(__linux__)
// Whether thread `tid` of this process is blocked in a futex wait (/proc says which system
// call a thread is in).
bool in_futex_wait(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  std::string call;
  return static_cast<bool>(in >> call) && call == std::to_string(SYS_futex);
}

// A leader's commit held inside its log sync (the first sync of `fs`): the committers
// started meanwhile queue behind its batch. release_once_asleep lets it go once they all
// sleep in the kernel.
class LeaderHeldInSync {
 public:
  LeaderHeldInSync(FaultFileSystem& fs, CommitPipeline& pipeline) : fs_(fs) {
    fs.set_sync_hook([this, released = release_.get_future().share()] {
      if (held_.exchange(true)) return;  // only the first sync is held
      in_sync_.set_value();
      released.wait();
    });
    leader_ = std::thread([&pipeline] {
      BlindWrite w("leader", "0");
      pipeline.commit(w.request);
      EXPECT_EQ(w.request.error, ErrorCode::success);
    });
    in_sync_.get_future().wait();
  }
  LeaderHeldInSync(const LeaderHeldInSync&) = delete;
  LeaderHeldInSync& operator=(const LeaderHeldInSync&) = delete;
  ~LeaderHeldInSync() { fs_.set_sync_hook(nullptr); }

  // `tids`: the committers' thread ids, each set by its thread before it commits.
  template <std::size_t N>
  void release_once_asleep(const std::array<std::atomic<pid_t>, N>& tids) {
    for (const auto& tid : tids) {
      while (tid.load() == 0 || !in_futex_wait(tid.load())) std::this_thread::yield();
    }
    release_.set_value();
    leader_.join();
  }

 private:
  FaultFileSystem& fs_;
  std::promise<void> in_sync_;
  std::promise<void> release_;
  std::atomic<bool> held_{false};
  std::thread leader_;
};

// Alone mode hands the commit lock's streak length to base::StreakTuner every
// kTuneEvery (64) commits that succeed, and at no other commit: the first epoch probes
// the short length, so the first change (to the long one, for the second probe) comes at
// a tick one epoch in.
TEST(CommitPipeline, TheStreakLengthChangesOnlyAtATickEvery64Commits) {
  kv::MvccStore store;
  CommitPipeline pipeline(store);
  ASSERT_EQ(pipeline.mode(), CommitMode::alone);
  bool was_long = pipeline.long_streaks();
  EXPECT_FALSE(was_long);
  int changes = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (std::uint64_t n = 1; changes < 3 && std::chrono::steady_clock::now() < deadline; ++n) {
    BlindWrite w("k" + std::to_string(n % 1000), "v");
    pipeline.commit(w.request);
    ASSERT_EQ(w.request.error, ErrorCode::success);
    if (pipeline.long_streaks() != was_long) {
      was_long = !was_long;
      ++changes;
      EXPECT_EQ(n % 64, 0U) << "the length changed at commit " << n;
    }
  }
  // Probes short, long, long, short change it twice; the third change is the choice of
  // long after them, or the next cycle's long probe.
  EXPECT_EQ(changes, 3);
}

// The sleeping path, made certain: the leader's sync is held until every other committer
// has queued behind it and sleeps in the kernel; then the one wake of their batch must
// get every one of them out (a lost wake-up hangs the test).
TEST(CommitPipeline, CommittersAsleepBehindASyncAreAllWoken) {
  FaultFileSystem fs;
  SyncedPipeline synced(fs);
  CommitPipeline& pipeline = synced.pipeline;
  kv::MvccStore& store = synced.store;
  LeaderHeldInSync leader(fs, pipeline);

  constexpr int kWaiters = 6;
  std::array<std::atomic<pid_t>, kWaiters> tids{};
  std::vector<std::thread> waiters;
  for (int t = 0; t < kWaiters; ++t) {
    waiters.emplace_back([&, t] {
      tids[static_cast<std::size_t>(t)] = static_cast<pid_t>(syscall(SYS_gettid));
      BlindWrite w(thread_key(t, 0), "0");
      pipeline.commit(w.request);
      EXPECT_EQ(w.request.error, ErrorCode::success);
    });
  }
  leader.release_once_asleep(tids);
  for (std::thread& t : waiters) t.join();

  EXPECT_EQ(pipeline.stats().commits, std::uint64_t{kWaiters} + 1);
  EXPECT_GE(pipeline.stats().batches, 2U);  // the held one, then the sleepers' (one or more)
  expect_every_key(store, kWaiters, 1);
}

// A batch is everything queued behind the leader, but a log record holds at most 1 GiB
// (wal::kMaxPayloadBytes): 110 transactions of ~10 MB each (the transaction limit) queued
// behind one sync would pass it. The leader splits what it takes into batches whose
// records stay under CommitPipeline::kBatchLogBytes, each with a version of its own, so
// every transaction commits and the database goes on, instead of the writer refusing one
// oversized record, the batch ending in commit_unknown_result and the database failing until
// reopened. Disabled: it needs ~3.5 GB of memory; the next test checks the same split with
// a small limit on any machine.
TEST(CommitPipeline, DISABLED_ABatchLargerThanALogRecordDoesNotFailTheDatabase) {
  FaultFileSystem fs;
  SyncedPipeline synced(fs);
  CommitPipeline& pipeline = synced.pipeline;
  LeaderHeldInSync leader(fs, pipeline);

  constexpr int kBig = 110;  // x ~10 MB > 1 GiB
  const std::string value(99'000, 'v');
  std::array<std::atomic<pid_t>, kBig> tids{};
  std::array<ErrorCode, kBig> errors{};
  std::vector<std::thread> big;
  for (int t = 0; t < kBig; ++t) {
    big.emplace_back([&, t] {
      WriteMap writes;
      for (int i = 0; i < 100; ++i) writes.set(thread_key(t, i), value);
      CommitRequest request;
      request.writes = &writes;
      tids[static_cast<std::size_t>(t)] = static_cast<pid_t>(syscall(SYS_gettid));
      pipeline.commit(request);
      errors[static_cast<std::size_t>(t)] = request.error;
    });
  }
  leader.release_once_asleep(tids);
  for (std::thread& t : big) t.join();

  EXPECT_EQ(std::count(errors.begin(), errors.end(), ErrorCode::commit_unknown_result), 0)
      << "a record that was never written is reported as of unknown fate";
  BlindWrite after("after", "1");
  EXPECT_NO_THROW(pipeline.commit(after.request)) << "the database failed";
  EXPECT_EQ(after.request.error, ErrorCode::success);
}

// With a small limit the split is visible: a dozen ~1 kB transactions queued behind one
// sync go out two by two, each pair its own version and record; all of them commit, and a reopen
// over the same files recovers every one.
TEST(CommitPipeline, ABatchWhoseLogWouldPassTheLimitIsSplitIntoSeveralVersions) {
  FaultFileSystem fs;
  constexpr int kWriters = 12;
  std::array<Version, kWriters> versions{};
  const std::string value(1000, 'v');
  {
    SyncedPipeline synced(fs);
    CommitPipeline& pipeline = synced.pipeline;
    pipeline.set_batch_log_limit(2 * (value.size() + 40));  // two of them, not three
    LeaderHeldInSync leader(fs, pipeline);
    std::array<std::atomic<pid_t>, kWriters> tids{};
    std::vector<std::thread> writers;
    for (int t = 0; t < kWriters; ++t) {
      writers.emplace_back([&, t] {
        BlindWrite w(thread_key(t, 0), value);
        tids[static_cast<std::size_t>(t)] = static_cast<pid_t>(syscall(SYS_gettid));
        pipeline.commit(w.request);
        EXPECT_EQ(w.request.error, ErrorCode::success);
        versions[static_cast<std::size_t>(t)] = w.request.version;
      });
    }
    leader.release_once_asleep(tids);
    for (std::thread& t : writers) t.join();

    EXPECT_EQ(pipeline.stats().commits, std::uint64_t{kWriters} + 1);
    EXPECT_EQ(synced.store.committed(), static_cast<Version>(pipeline.stats().batches));
    std::map<Version, int> per_version;
    for (Version v : versions) ++per_version[v];
    EXPECT_EQ(per_version.size(), std::size_t{kWriters} / 2);  // all queued behind the leader
    for (const auto& [version, count] : per_version) EXPECT_EQ(count, 2) << version;
  }
  SyncedPipeline recovered(fs);
  for (int t = 0; t < kWriters; ++t) EXPECT_EQ(recovered.store.latest(thread_key(t, 0)), value);
}

// A versionstamp numbers a commit within its version in two bytes, so a batch holds at
// most that many: more requests queued behind one sync go out as several versions, each
// numbering its own from 0 (here with a limit of three).
TEST(CommitPipeline, ABatchOfMoreRequestsThanABatchIndexNumbersIsSplitIntoSeveralVersions) {
  FaultFileSystem fs;
  constexpr int kWriters = 12;
  constexpr std::size_t kLimit = 3;
  std::array<Version, kWriters> versions{};
  std::array<std::uint16_t, kWriters> indexes{};
  SyncedPipeline synced(fs);
  CommitPipeline& pipeline = synced.pipeline;
  pipeline.set_batch_count_limit(kLimit);
  LeaderHeldInSync leader(fs, pipeline);
  std::array<std::atomic<pid_t>, kWriters> tids{};
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      BlindWrite w(thread_key(t, 0), "v");
      tids[static_cast<std::size_t>(t)] = static_cast<pid_t>(syscall(SYS_gettid));
      pipeline.commit(w.request);
      EXPECT_EQ(w.request.error, ErrorCode::success);
      versions[static_cast<std::size_t>(t)] = w.request.version;
      indexes[static_cast<std::size_t>(t)] = w.request.batch_index;
    });
  }
  leader.release_once_asleep(tids);
  for (std::thread& t : writers) t.join();

  std::map<Version, std::set<std::uint16_t>> per_version;
  for (int t = 0; t < kWriters; ++t) {
    per_version[versions[static_cast<std::size_t>(t)]].insert(indexes[static_cast<std::size_t>(t)]);
  }
  EXPECT_EQ(per_version.size(), kWriters / kLimit);  // all queued behind the leader
  for (const auto& [version, numbers] : per_version) {
    EXPECT_EQ(numbers, (std::set<std::uint16_t>{0, 1, 2})) << version;
  }
}

#endif

}  // namespace
}  // namespace strata::engine
