// Failed checkpoints are seen through the API: Persistence::checkpoint() (behind
// Database::checkpoint()) throws what made its checkpoint fail, every failure, background
// ones included, counts in checkpoint_failures() (stats().checkpoint_failures), and under
// Durability::none a failed closing checkpoint loses exactly the commits made since the
// last checkpoint that succeeded.
#include <cstdint>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/commit_pipeline.hpp"
#include "engine/persistence.hpp"
#include "engine/write_map.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"

namespace strata::engine {
namespace {

using strata::testing::FaultFileSystem;
using strata::testing::ThrowsCode;
using Op = FaultFileSystem::Op;

Options on_disk(Durability mode, std::uint64_t checkpoint_log_bytes = 64ull << 20) {
  Options o;
  o.path = "/db";
  o.durability = mode;
  o.checkpoint_log_bytes = checkpoint_log_bytes;
  return o;
}

// A durable store and its pipeline over `fs`; reopened over the same files, it recovers.
struct Opened {
  Opened(const Options& options, FaultFileSystem& fs) : persistence(options, store, fs) {
    pipeline.set_persistence(&persistence);
  }
  void put(const std::string& key, const std::string& value) {
    WriteMap writes;
    writes.set(key, value);
    CommitRequest request;
    request.writes = &writes;
    pipeline.commit(request);
    ASSERT_EQ(request.error, ErrorCode::success);
  }
  kv::MvccStore store;
  Persistence persistence;
  CommitPipeline pipeline{store};
};

// A checkpoint is published by a rename of its finished file: failing that rename fails
// the checkpoint and nothing else (the log is appended to in place).
TEST(CheckpointFailure, AnExplicitCheckpointThrowsItsFailureAndCountsIt) {
  for (Durability mode : {Durability::fsync, Durability::buffered, Durability::none}) {
    SCOPED_TRACE(static_cast<int>(mode));
    FaultFileSystem fs;
    Opened db(on_disk(mode), fs);
    db.put("a", "1");
    fs.fail_nth(Op::rename, 1);
    EXPECT_THAT([&] { db.persistence.checkpoint(); }, ThrowsCode(ErrorCode::io_error));
    EXPECT_EQ(db.persistence.checkpoint_failures(), 1U);
    // The database goes on; the next checkpoint succeeds and is not counted.
    db.put("b", "2");
    EXPECT_NO_THROW(db.persistence.checkpoint());
    EXPECT_NO_THROW(db.persistence.checkpoint());  // nothing new: nothing written
    EXPECT_EQ(db.persistence.checkpoint_failures(), 1U);
  }
}

// The background checkpoint a commit triggers: its failure counts. The explicit checkpoint
// after it is answered only once the background attempt is done (one thread makes both,
// or one attempt serves both), so the count is settled when it returns.
TEST(CheckpointFailure, ABackgroundCheckpointFailureCounts) {
  FaultFileSystem fs;
  Opened db(on_disk(Durability::fsync, /*checkpoint_log_bytes=*/1), fs);
  fs.fail_nth(Op::rename, 1);
  db.put("a", "1");  // the log has grown past 1 byte: the commit wakes the checkpoint thread
  try {
    db.persistence.checkpoint();  // throws if the same attempt served it
  } catch (const Error& e) {
    EXPECT_EQ(e.error_code(), ErrorCode::io_error);
  }
  EXPECT_EQ(db.persistence.checkpoint_failures(), 1U);
  EXPECT_NO_THROW(db.persistence.checkpoint());
  EXPECT_EQ(db.persistence.checkpoint_failures(), 1U);
}

// Durability::none keeps no log: what the closing checkpoint fails to write is lost, and
// that is exactly the commits after the last checkpoint that succeeded.
TEST(CheckpointFailure, UnderNoneAFailedClosingCheckpointLosesExactlyTheLaterCommits) {
  FaultFileSystem fs;
  {
    Opened db(on_disk(Durability::none), fs);
    db.put("kept", "1");
    db.persistence.checkpoint();
    db.put("lost", "2");
    db.put("kept", "overwritten, lost");
    fs.fail_nth(Op::rename, 1);  // the closing checkpoint's
  }
  {
    Opened db(on_disk(Durability::none), fs);
    EXPECT_EQ(db.store.latest("kept"), "1");
    EXPECT_EQ(db.store.latest("lost"), std::nullopt);
    db.put("second", "3");
  }  // closes with a checkpoint that succeeds: nothing lost
  Opened db(on_disk(Durability::none), fs);
  EXPECT_EQ(db.store.latest("kept"), "1");
  EXPECT_EQ(db.store.latest("second"), "3");
}

// With a log, a failed closing checkpoint loses nothing: the next open replays the log.
TEST(CheckpointFailure, WithALogAFailedClosingCheckpointLosesNothing) {
  for (Durability mode : {Durability::fsync, Durability::buffered}) {
    SCOPED_TRACE(static_cast<int>(mode));
    FaultFileSystem fs;
    {
      Opened db(on_disk(mode), fs);
      db.put("a", "1");
      fs.fail_nth(Op::rename, 1);
    }
    Opened db(on_disk(mode), fs);
    EXPECT_EQ(db.store.latest("a"), "1");
  }
}

}  // namespace
}  // namespace strata::engine
