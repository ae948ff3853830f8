// Transaction::commit_async: many commits in flight from one thread, each settled once
// with the outcome commit() would have had; destruction waits for the callback; callbacks
// may submit again, may not commit() (it would wait for the thread they run on), and may
// drop the last handles.
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "durability/temp_dir.hpp"
#include "support/error_matchers.hpp"

namespace strata {
namespace {

using testing::TempDir;
using testing::ThrowsCode;

Options on_disk(const std::filesystem::path& dir, Durability mode = Durability::fsync) {
  Options o;
  o.path = dir;
  o.durability = mode;
  return o;
}

// Counts callbacks and keeps their error codes (0 for success); wait_for(n) blocks until
// n callbacks have run.
class Outcomes {
 public:
  CommitCallback callback() {
    return [this](const Error* error) { add(error == nullptr ? 0 : error->code()); };
  }
  // Notifies under the lock: a waiter that sees the count may destroy this at once.
  void add(int code) {
    std::lock_guard lock(mu_);
    codes_.push_back(code);
    cv_.notify_all();
  }
  std::vector<int> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return codes_.size() >= n; });
    return codes_;
  }
  std::size_t count() {
    std::lock_guard lock(mu_);
    return codes_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> codes_;
};

class CommitAsync : public ::testing::TestWithParam<Durability> {};

TEST_P(CommitAsync, ManyInFlightFromOneThreadAllCommitAndSurviveAReopen) {
  TempDir dir;
  constexpr int kInFlight = 64;
  constexpr int kRounds = 8;
  {
    Database db = Database::open(on_disk(dir.path(), GetParam()));
    Outcomes outcomes;
    for (int round = 0; round < kRounds; ++round) {
      std::vector<Transaction> trs;
      for (int i = 0; i < kInFlight; ++i) {
        trs.push_back(db.create_transaction());
        trs.back().set("k" + std::to_string(round) + "/" + std::to_string(i), std::to_string(i));
        trs.back().commit_async(outcomes.callback());
      }
      const std::vector<int> codes = outcomes.wait_for((round + 1) * std::size_t{kInFlight});
      EXPECT_THAT(codes, ::testing::Each(0));
      for (Transaction& tr : trs) EXPECT_GT(tr.committed_version(), 0);
    }
    // Every commit of a round queued while the pipeline's thread was busy with the first:
    // they share batches.
    EXPECT_LT(db.stats().batches, std::uint64_t{kRounds} * kInFlight);
  }
  Database db = Database::open(on_disk(dir.path(), GetParam()));
  Transaction tr = db.create_transaction();
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kInFlight; ++i) {
      EXPECT_EQ(tr.get("k" + std::to_string(round) + "/" + std::to_string(i)), std::to_string(i));
    }
  }
}

TEST_P(CommitAsync, AConflictReachesTheCallbackAsCommitWouldThrowIt) {
  TempDir dir;
  Database db = Database::open(on_disk(dir.path(), GetParam()));
  Transaction first = db.create_transaction();
  Transaction second = db.create_transaction();
  for (Transaction* tr : {&first, &second}) {
    EXPECT_EQ(tr->get("counter"), std::nullopt);
    tr->set("counter", "1");
  }
  Outcomes outcomes;
  first.commit_async(outcomes.callback());
  std::string message;
  second.commit_async([&](const Error* error) {
    if (error != nullptr) message = error->what();
    outcomes.add(error == nullptr ? 0 : error->code());
  });
  EXPECT_THAT(outcomes.wait_for(2), ::testing::ElementsAre(0, 1020));
  EXPECT_THAT(message, ::testing::HasSubstr("wrote a range this one read"));
  EXPECT_GT(first.committed_version(), 0);
  EXPECT_THAT([&] { (void)second.committed_version(); },
              ThrowsCode(ErrorCode::client_invalid_operation));
  // The failed transaction retries as after commit().
  second.on_error(Error(ErrorCode::not_committed));
  EXPECT_EQ(second.get("counter"), "1");
}

TEST_P(CommitAsync, DestroyingTheTransactionWaitsForItsCallback) {
  TempDir dir;
  Database db = Database::open(on_disk(dir.path(), GetParam()));
  for (int i = 0; i < 50; ++i) {
    bool done = false;  // written by the callback's thread, read after the destructor
    {
      Transaction tr = db.create_transaction();
      tr.set("k", std::to_string(i));
      tr.commit_async([&](const Error* error) {
        EXPECT_EQ(error, nullptr);
        done = true;
      });
    }
    EXPECT_TRUE(done);
  }
}

TEST_P(CommitAsync, TheCallbackMaySubmitTheSameTransactionAgain) {
  TempDir dir;
  Database db = Database::open(on_disk(dir.path(), GetParam()));
  constexpr int kCommits = 20;
  Transaction tr = db.create_transaction();
  Outcomes outcomes;
  int next = 0;
  // Recording the outcome is each callback's last act: once the twentieth is recorded the
  // test's frame, which the callback refers to, may be gone.
  std::function<void(const Error*)> chain = [&](const Error* error) {
    const int code = error == nullptr ? 0 : error->code();
    if (++next < kCommits) {
      tr.reset();
      tr.atomic_op(MutationType::add, "sum", std::string("\x01\0\0\0\0\0\0\0", 8));
      tr.commit_async(chain);
    }
    outcomes.add(code);
  };
  tr.atomic_op(MutationType::add, "sum", std::string("\x01\0\0\0\0\0\0\0", 8));
  tr.commit_async(chain);
  EXPECT_THAT(outcomes.wait_for(kCommits), ::testing::Each(0));
  tr.reset();
  EXPECT_EQ(tr.get("sum"), std::string("\x14\0\0\0\0\0\0\0", 8));
}

TEST_P(CommitAsync, CommitInsideACallbackIsRefusedRatherThanWaitingForItself) {
  TempDir dir;
  Database db = Database::open(on_disk(dir.path(), GetParam()));
  Transaction other = db.create_transaction();
  other.set("other", "x");
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  Outcomes outcomes;
  tr.commit_async([&](const Error* error) {
    EXPECT_EQ(error, nullptr);
    int code = 0;
    try {
      other.commit();
    } catch (const Error& e) {
      code = e.code();
    }
    outcomes.add(code);  // the last act: the test may end once it is recorded
  });
  EXPECT_THAT(outcomes.wait_for(1), ::testing::ElementsAre(2000));
}

// The close runs on a thread of its own (the callback's thread is the pipeline's, which
// the close stops); a reopen from this process waits for it rather than find the
// directory locked. Each round reopens as soon as the callback has run, through a second
// spelling of the directory every other time.
TEST_P(CommitAsync, CallbacksMayDropTheLastHandlesAndTheDirectoryReopensAtOnce) {
  TempDir dir;
  auto db = std::make_unique<Database>(Database::open(on_disk(dir.path(), GetParam())));
  for (int round = 0; round < 8; ++round) {
    Outcomes outcomes;
    const std::string value = "kept " + std::to_string(round);
    auto* tr = new Transaction(db->create_transaction());
    tr->set("k", value);
    db.reset();  // the transaction holds the database now
    tr->commit_async([&, tr](const Error* error) {
      delete tr;  // the last handle: the database closes on a thread of its own
      outcomes.add(error == nullptr ? 0 : error->code());
    });
    EXPECT_THAT(outcomes.wait_for(1), ::testing::ElementsAre(0));
    const std::filesystem::path path = round % 2 == 0 ? dir.path() : dir.path() / "." / "";
    ASSERT_NO_THROW(db = std::make_unique<Database>(Database::open(on_disk(path, GetParam()))))
        << "round " << round;
    EXPECT_EQ(db->create_transaction().get("k"), value);
  }
}

TEST_P(CommitAsync, ReadOnlyRefusedAndMisusedCommitsCallBackBeforeReturning) {
  TempDir dir;
  Database db = Database::open(on_disk(dir.path(), GetParam()));
  Transaction tr = db.create_transaction();
  EXPECT_EQ(tr.get("absent"), std::nullopt);
  Outcomes outcomes;
  tr.commit_async(outcomes.callback());  // read-only
  EXPECT_EQ(outcomes.count(), 1U);
  EXPECT_EQ(tr.committed_version(), -1);
  tr.commit_async(outcomes.callback());  // used_during_commit
  EXPECT_EQ(outcomes.count(), 2U);
  tr.reset();
  tr.set_size_limit(32);
  tr.set(std::string(40, 'k'), "v");
  tr.commit_async(outcomes.callback());  // transaction_too_large
  EXPECT_THAT(outcomes.wait_for(3), ::testing::ElementsAre(0, 2017, 2101));
}

INSTANTIATE_TEST_SUITE_P(Durabilities, CommitAsync,
                         ::testing::Values(Durability::fsync, Durability::buffered),
                         [](const auto& param_info) {
                           return param_info.param == Durability::fsync ? "Fsync" : "Buffered";
                         });

TEST(CommitAsyncInMemory, CommitsBeforeReturning) {
  Database db = Database::open();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  Outcomes outcomes;
  tr.commit_async(outcomes.callback());
  EXPECT_EQ(outcomes.count(), 1U);
  EXPECT_GT(tr.committed_version(), 0);
  EXPECT_EQ(db.create_transaction().get("k"), "v");
}

TEST(CommitAsyncInMemory, MovedFromThrows) {
  Database db = Database::open();
  Transaction tr = db.create_transaction();
  Transaction taken = std::move(tr);
  EXPECT_THAT([&] { tr.commit_async([](const Error*) {}); },  // NOLINT(bugprone-use-after-move)
              ThrowsCode(ErrorCode::client_invalid_operation));
}

}  // namespace
}  // namespace strata
