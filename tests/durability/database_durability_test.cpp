// A durable Database end to end: reopen, modes, the lock, damage, and the crash loop.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "durability/temp_dir.hpp"
#include "support/error_matchers.hpp"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace strata {
namespace {

using testing::TempDir;
using testing::ThrowsCode;

std::map<std::string, std::string> contents(Database& db) {
  std::map<std::string, std::string> out;
  for (auto& kv : db.run([](Transaction& tr) { return tr.get_range("", "\xff"); })) {
    out.emplace(kv.key, kv.value);
  }
  return out;
}

Options on_disk(const std::filesystem::path& dir, Durability mode = Durability::fsync) {
  Options o;
  o.path = dir;
  o.durability = mode;
  return o;
}

// Buffered, with no checkpoint before close: everything stays in the log.
Options log_only(const std::filesystem::path& dir) {
  Options o = on_disk(dir, Durability::buffered);
  o.checkpoint_log_bytes = ~std::uint64_t{0};
  return o;
}

// Copies the database directory `from` as a crash would leave it (no checkpoint at close).
void copy_as_a_crash_leaves_it(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::copy(
      from, to,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
}

// The bytes of the log segments in `dir`.
std::uint64_t log_bytes_in(const std::filesystem::path& dir) {
  std::uint64_t bytes = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log") bytes += e.file_size();
  }
  return bytes;
}

class DurableModes : public ::testing::TestWithParam<Durability> {};

TEST_P(DurableModes, CommittedDataSurvivesReopen) {
  TempDir dir;
  std::map<std::string, std::string> model;
  {
    Database db = Database::open(on_disk(dir.path(), GetParam()));
    for (int i = 0; i < 200; ++i) {
      db.run([&](Transaction& tr) {
        tr.set("k" + std::to_string(i), "v" + std::to_string(i));
        if (i % 10 == 9) tr.clear_range("k1", "k2");
        tr.atomic_op(MutationType::add, "counter", std::string(1, '\1'));
      });
    }
    model = contents(db);
  }
  Database again = Database::open(on_disk(dir.path(), GetParam()));
  EXPECT_EQ(contents(again), model);
  // Versions continue from where they stopped.
  Version before = again.committed_version();
  again.run([](Transaction& tr) { tr.set("after", "reopen"); });
  EXPECT_GT(again.committed_version(), before);
}

// A reopened database holds one version of each key (the checkpoint's, or the replay's
// last): a read version from before the open is refused as too old, not answered with
// the wrong state.
TEST_P(DurableModes, ReadVersionsFromBeforeTheOpenAreTooOld) {
  TempDir dir;
  Version early = 0;
  {
    Database db = Database::open(on_disk(dir.path(), GetParam()));
    db.run([](Transaction& tr) { tr.set("a", "1"); });
    early = db.committed_version();
    db.run([](Transaction& tr) { tr.set("a", "2"); });
  }
  Database again = Database::open(on_disk(dir.path(), GetParam()));
  Transaction old = again.create_transaction();
  EXPECT_THAT([&] { old.set_read_version(early); }, ThrowsCode(ErrorCode::transaction_too_old));
  Transaction now = again.create_transaction();
  now.set_read_version(again.committed_version());
  EXPECT_EQ(now.get("a"), "2");
}

INSTANTIATE_TEST_SUITE_P(AllModes, DurableModes,
                         ::testing::Values(Durability::none, Durability::buffered,
                                           Durability::fsync));

TEST(DurableDatabase, CheckpointsReplaceTheLogAndRecoveryUsesThem) {
  TempDir dir;
  Options o = on_disk(dir.path(), Durability::buffered);
  o.checkpoint_log_bytes = 4096;  // a checkpoint every few commits
  std::map<std::string, std::string> model;
  {
    Database db = Database::open(o);
    std::string value(300, 'x');
    for (int i = 0; i < 500; ++i) {
      db.run([&](Transaction& tr) {
        tr.set("key" + std::to_string(i % 97), value + std::to_string(i));
      });
    }
    model = contents(db);
  }
  int checkpoints = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().extension() == ".ckpt") ++checkpoints;
  }
  EXPECT_EQ(checkpoints, 1) << "older checkpoints are removed once a newer one is durable";
  Database again = Database::open(o);
  EXPECT_EQ(contents(again), model);
}

// Database::checkpoint() (docs/decisions/0031): returns once a checkpoint holds every
// commit published so far, on disk in every mode; in memory it has nothing to do. (Failed
// checkpoints: tests/engine/checkpoint_failure_test.cpp, over a file system that fails.)
TEST(DurableDatabase, AnExplicitCheckpointHoldsEveryCommitSoFar) {
  auto newest_checkpoint = [](const std::filesystem::path& dir) {
    std::string newest;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".ckpt") newest = std::max(newest, e.path().filename().string());
    }
    return newest;
  };
  for (Durability mode : {Durability::none, Durability::buffered, Durability::fsync}) {
    SCOPED_TRACE(static_cast<int>(mode));
    TempDir dir;
    Database db = Database::open(on_disk(dir.path(), mode));
    db.run([](Transaction& tr) { tr.set("a", "1"); });
    db.checkpoint();
    const std::string name = newest_checkpoint(dir.path());
    EXPECT_NE(name.find(std::to_string(db.committed_version()) + ".ckpt"), std::string::npos)
        << name;
    EXPECT_NO_THROW(db.checkpoint());  // nothing new: nothing written
    EXPECT_EQ(newest_checkpoint(dir.path()), name);
    EXPECT_EQ(db.stats().checkpoint_failures, 0U);
  }
  Database in_memory = Database::open();
  EXPECT_NO_THROW(in_memory.checkpoint());
  EXPECT_EQ(in_memory.stats().checkpoint_failures, 0U);
}

// A log of several megabytes: a replay that long sizes the index from the keys its first
// part made (an estimate), then goes on inserting, overwriting and clearing past it.
TEST(DurableDatabase, ALongLogReplaysToExactlyWhatWasCommitted) {
  TempDir dir;
  TempDir copy;
  const Options o = log_only(dir.path());
  std::map<std::string, std::string> model;
  {
    Database db = Database::open(o);
    std::mt19937_64 rng(7);
    const std::string value(100, 'v');
    for (int batch = 0; batch < 80; ++batch) {
      db.run([&](Transaction& tr) {
        for (int i = 0; i < 1000; ++i) {
          const int n = batch < 40 ? batch * 1000 + i : static_cast<int>(rng() % 60000);
          tr.set("key" + std::to_string(1000000 + n), value + std::to_string(batch));
        }
        if (batch % 10 == 9) tr.clear_range("key1000100", "key1000200");
      });
    }
    model = contents(db);
    copy_as_a_crash_leaves_it(dir.path(), copy.path());
  }
  EXPECT_GT(log_bytes_in(copy.path()), std::uint64_t{8} << 20);
  Options again_options = o;
  again_options.path = copy.path();
  Database again = Database::open(again_options);
  EXPECT_EQ(contents(again), model);
}

// A version can be committed with nothing to log (a transaction with only a write conflict
// range). A checkpoint at such a version leaves the log's last record below it, and the
// next opening's first record continues from the checkpoint's version: a crash before that
// opening's first checkpoint must not read as a version gap between the two segments.
TEST(DurableDatabase, ALogContinuedFromACheckpointVersionWithoutARecordSurvivesACrash) {
  TempDir dir;
  TempDir copy;
  {
    Database db = Database::open(on_disk(dir.path()));
    db.run([](Transaction& tr) { tr.set("a", "1"); });
    db.run([](Transaction& tr) { tr.add_write_conflict_range("x", "y"); });  // nothing to log
  }  // closing checkpoints the last version; the segment (active then) keeps the first
  {
    Database db = Database::open(on_disk(dir.path()));
    db.run([](Transaction& tr) { tr.set("b", "2"); });
    copy_as_a_crash_leaves_it(dir.path(), copy.path());
  }
  Database again = Database::open(on_disk(copy.path()));
  EXPECT_EQ(contents(again), (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
}

// An atomic operation whose result is larger than itself (an append onto a long value, a
// compare_and_clear that keeps one) is logged as the operation, and replay applies it to
// the value before: 40 transactions appending a byte to each of 20 values of 90 kB log a
// few kB, not 72 MB, and a crash leaves exactly what was committed. A counter's add, no
// larger as its result, is logged as a set.
TEST(DurableDatabase, AtomicOperationsLargerAsResultsAreLoggedAsOperations) {
  TempDir dir;
  TempDir copy;
  const Options o = log_only(dir.path());
  std::map<std::string, std::string> model;
  std::uint64_t loaded = 0;
  {
    Database db = Database::open(o);
    db.run([](Transaction& tr) {
      for (int k = 0; k < 20; ++k) tr.set("long" + std::to_string(k), std::string(90'000, 'a'));
      tr.set("gone", "match");
    });
    loaded = log_bytes_in(dir.path());
    for (int i = 0; i < 40; ++i) {
      db.run([&](Transaction& tr) {
        for (int k = 0; k < 20; ++k) {
          const std::string key = "long" + std::to_string(k);
          tr.atomic_op(MutationType::append_if_fits, key,
                       std::string(1, static_cast<char>('b' + i % 20)));
          if (k % 5 == 0) tr.atomic_op(MutationType::compare_and_clear, key, "no match");
          if (k % 7 == 0) tr.atomic_op(MutationType::byte_max, key, "b");
        }
        tr.atomic_op(MutationType::add, "counter", std::string(1, '\1'));
        if (i == 39) tr.atomic_op(MutationType::compare_and_clear, "gone", "match");
      });
    }
    model = contents(db);
    copy_as_a_crash_leaves_it(dir.path(), copy.path());
  }
  ASSERT_EQ(model.at("long3").size(), 90'040U);
  ASSERT_EQ(model.at("counter"), std::string(1, '\50'));
  ASSERT_EQ(model.count("gone"), 0U);
  EXPECT_LT(log_bytes_in(copy.path()) - loaded, 64U << 10);
  Options again_options = o;
  again_options.path = copy.path();
  Database again = Database::open(again_options);
  EXPECT_EQ(contents(again), model);
}

// The metadata version key is stored like any key: a layer's cached metadata stays
// checked against it across a restart, from the log and from a checkpoint.
TEST(DurableDatabase, TheMetadataVersionSurvivesARestart) {
  const std::string key = "\xff/metadataVersion";
  auto bump = [&](Database& db) {
    Transaction tr = db.create_transaction();
    tr.atomic_op(MutationType::set_versionstamped_value, key, std::string(14, '\0'));
    tr.commit();
    return tr.versionstamp();
  };
  auto read = [&](Database& db) { return db.run([&](Transaction& tr) { return tr.get(key); }); };
  TempDir dir;
  std::string stamp;
  {
    Database db = Database::open(log_only(dir.path()));
    stamp = bump(db);
  }
  {
    Database db = Database::open(log_only(dir.path()));  // replayed from the log
    EXPECT_EQ(read(db), stamp);
    stamp = bump(db);
  }
  {
    Database db = Database::open(on_disk(dir.path()));  // closes with a checkpoint
    EXPECT_EQ(read(db), stamp);
  }
  Database db = Database::open(on_disk(dir.path()));
  EXPECT_EQ(read(db), stamp);
}

TEST(DurableDatabase, QueueItemsSurviveARestartInOrder) {
  TempDir dir;
  {
    Database db = Database::open(on_disk(dir.path()));
    Queue queue;
    PriorityQueue pq;
    for (int i = 0; i < 100; ++i) {
      queue.enqueue(db, "item" + std::to_string(1000 + i));
      pq.push(db, "p" + std::to_string(i), static_cast<std::int64_t>(i % 7));
    }
    for (int i = 0; i < 10; ++i) EXPECT_EQ(queue.dequeue(db), "item" + std::to_string(1000 + i));
  }
  Database db = Database::open(on_disk(dir.path()));
  Queue queue;
  PriorityQueue pq;
  for (int i = 10; i < 100; ++i) EXPECT_EQ(queue.dequeue(db), "item" + std::to_string(1000 + i));
  EXPECT_EQ(queue.dequeue(db), std::nullopt);
  // Priorities 0..6, each in push order.
  for (int priority = 0; priority < 7; ++priority) {
    for (int i = priority; i < 100; i += 7) EXPECT_EQ(pq.pop_min(db), "p" + std::to_string(i));
  }
  EXPECT_EQ(pq.pop_min(db), std::nullopt);
}

TEST(DurableDatabase, SecondOpenOfTheSameDirectoryIsRefused) {
  TempDir dir;
  Database db = Database::open(on_disk(dir.path()));
  EXPECT_THAT([&] { (void)Database::open(on_disk(dir.path())); },
              ThrowsCode(ErrorCode::database_locked));
}

// A finished transaction is kept as its thread's spare for the next one; it must not keep
// its database open (the directory lock would outlive the last handle).
TEST(DurableDatabase, AFinishedTransactionDoesNotKeepTheDirectoryOpen) {
  TempDir dir;
  {
    Database db = Database::open(on_disk(dir.path(), Durability::none));
    db.run([](Transaction& tr) { tr.set("k", "v"); });
    Transaction reader = db.create_transaction();
    EXPECT_EQ(reader.get("k"), "v");
  }
  Database again = Database::open(on_disk(dir.path(), Durability::none));
  EXPECT_EQ(contents(again), (std::map<std::string, std::string>{{"k", "v"}}));
}

TEST(DurableDatabase, DamagedLogIsAClearErrorNamingTheFile) {
  TempDir dir;
  {
    Options o = on_disk(dir.path());
    o.checkpoint_log_bytes = 1ull << 40;
    Database db = Database::open(o);
    for (int i = 0; i < 50; ++i)
      db.run([&](Transaction& tr) { tr.set("k" + std::to_string(i), "v"); });
  }
  // The clean close wrote a checkpoint; damage it in the middle.
  std::filesystem::path ckpt;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().extension() == ".ckpt") ckpt = e.path();
  }
  ASSERT_FALSE(ckpt.empty());
  {
    std::fstream f(ckpt, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(ckpt) / 2));
    f.put('\x5a');
  }
  EXPECT_THAT([&] { (void)Database::open(on_disk(dir.path())); },
              testing::ThrowsCodeWith(ErrorCode::corrupt_data, ckpt.filename().string()));
}

#if !defined(__SANITIZE_THREAD__)
// The crash test: a child commits in a loop and reports each acknowledged commit through a
// pipe; the parent kills it with SIGKILL at a random moment, reopens, and checks that every
// acknowledged commit is there and the contents are exactly those of the last commit that
// made it (nothing half-applied). Commit n sets item/n and last=n, and clears item/(n-20).
void child_loop(const std::filesystem::path& dir, int fd) {
  Options o = on_disk(dir, Durability::fsync);
  o.checkpoint_log_bytes = 16 * 1024;  // checkpoints happen during the run
  Database db = Database::open(o);
  auto last = db.run([](Transaction& tr) { return tr.get("last"); });
  std::uint32_t n = last ? static_cast<std::uint32_t>(std::stoul(*last)) : 0;
  for (;;) {
    ++n;
    db.run([&](Transaction& tr) {
      tr.set("item/" + std::to_string(100000 + n), std::string(100, 'a' + n % 26));
      if (n > 20) tr.clear("item/" + std::to_string(100000 + n - 20));
      tr.set("last", std::to_string(n));
    });
    if (write(fd, &n, sizeof n) != sizeof n) _exit(1);
  }
}

std::map<std::string, std::string> expected_after(std::uint32_t n) {
  std::map<std::string, std::string> m;
  if (n == 0) return m;
  for (std::uint32_t i = (n > 20 ? n - 19 : 1); i <= n; ++i) {
    m["item/" + std::to_string(100000 + i)] = std::string(100, 'a' + i % 26);
  }
  m["last"] = std::to_string(n);
  return m;
}

// Under Durability::fsync the log's active segment grows on disk ahead of its records (by
// zeros). A process that ends without closing the database leaves that zero tail behind;
// the next open reads every commit, and cuts the segment back to its records.
TEST(DurableDatabase, AZeroTailLeftByAProcessThatDiedIsCutAndLosesNothing) {
  TempDir dir;
  constexpr int kCommits = 50;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Database db = Database::open(on_disk(dir.path(), Durability::fsync));
    for (int i = 0; i < kCommits; ++i) {
      db.run([&](Transaction& tr) { tr.set("k" + std::to_string(i), std::to_string(i)); });
    }
    _exit(0);  // no close: the segment keeps its zero tail
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  auto segment_bytes = [&] {
    std::uintmax_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      if (entry.path().extension() == ".log") bytes += entry.file_size();
    }
    return bytes;
  };
  const std::uintmax_t before = segment_bytes();
  EXPECT_GE(before, std::uintmax_t{1} << 20) << "the segment did not grow ahead";
  {
    Database db = Database::open(on_disk(dir.path(), Durability::fsync));
    const auto state = contents(db);
    ASSERT_EQ(state.size(), static_cast<std::size_t>(kCommits));
    for (int i = 0; i < kCommits; ++i)
      EXPECT_EQ(state.at("k" + std::to_string(i)), std::to_string(i));
  }
  EXPECT_LT(segment_bytes(), std::uintmax_t{64} << 10) << "the zero tail was not cut";
}

TEST(DurableDatabase, SigkillNeverLosesAnAcknowledgedCommit) {
  TempDir dir;
  std::mt19937 rng(12345);
  std::uint32_t acknowledged = 0;
  for (int round = 0; round < 12; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child_loop(dir.path(), fds[1]);
      _exit(0);
    }
    close(fds[1]);
    // Let it acknowledge a random number of commits, then kill it mid-flight.
    std::uint32_t target = acknowledged + 20 + rng() % 300, n = 0;
    while (acknowledged < target && read(fds[0], &n, sizeof n) == sizeof n) acknowledged = n;
    kill(pid, SIGKILL);
    while (read(fds[0], &n, sizeof n) == sizeof n) acknowledged = n;  // drain what it sent
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));

    Database db = Database::open(on_disk(dir.path()));
    auto state = contents(db);
    ASSERT_TRUE(state.count("last")) << "round " << round;
    std::uint32_t last = static_cast<std::uint32_t>(std::stoul(state["last"]));
    ASSERT_GE(last, acknowledged) << "an acknowledged commit was lost in round " << round;
    ASSERT_LE(last, acknowledged + 1) << "more commits than were ever attempted";
    ASSERT_EQ(state, expected_after(last)) << "half-applied state in round " << round;
    acknowledged = last;
  }
}
#endif

}  // namespace
}  // namespace strata
