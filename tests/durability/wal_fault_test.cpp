// Fault injection at the file boundary: lost unsynced bytes, torn writes, failing writes
// and syncs, a full disk. Each gives a clean recovery of every acknowledged (synced)
// record or a clear error, never silent loss; a failed writer never appends again.
#include <atomic>
#include <future>
#include <random>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "durability/wal_format.hpp"
#include "durability/wal_writer.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"
#include "wal_test_util.hpp"

namespace dur = strata::durability;
using strata::ErrorCode;
using strata::Version;
using strata::testing::FaultFileSystem;
using strata::testing::payload_for;
using strata::testing::Record;
using strata::testing::recover_log;
using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using strata::testing::wal_segments;
using Op = FaultFileSystem::Op;

namespace {

class WalFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.create_dir(dir_); }

  // Appends versions [first, last] as one group and flushes it.
  void group(dur::WalWriter& writer, Version first, Version last, bool sync,
             std::size_t extra = 10) {
    for (Version v = first; v <= last; ++v) writer.append(v, payload_for(v, extra));
    writer.flush(sync);
  }
  static std::vector<Version> versions(const std::vector<Record>& records) {
    std::vector<Version> out;
    for (const auto& [v, payload] : records) {
      const std::size_t prefix = ("batch-" + std::to_string(v)).size();
      EXPECT_EQ(payload, payload_for(v, payload.size() - prefix));
      out.push_back(v);
    }
    return out;
  }
  static std::vector<Version> range(Version first, Version last) {
    std::vector<Version> out;
    for (Version v = first; v <= last; ++v) out.push_back(v);
    return out;
  }

  FaultFileSystem fs_;
  const std::filesystem::path dir_ = "/db";
};

TEST_F(WalFaultTest, LostUnsyncedBytesTakeOnlyUnacknowledgedRecords) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 10, /*sync=*/true);
    group(writer, 11, 15, /*sync=*/false);
    fs_.drop_unsynced();  // Power loss while the writer is open.
  }
  Version last = 0;
  EXPECT_EQ(versions(recover_log(fs_, dir_, &last)), range(1, 10));
  EXPECT_EQ(last, 10);
}

TEST_F(WalFaultTest, NewSegmentNeverSyncedDisappearsWholeAfterPowerLoss) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 3, /*sync=*/false);
    fs_.drop_unsynced();
  }
  EXPECT_TRUE(wal_segments(fs_, dir_).empty());
  EXPECT_TRUE(recover_log(fs_, dir_).empty());
}

TEST_F(WalFaultTest, SyncedNewSegmentSurvivesPowerLossWithItsDirectoryEntry) {
  {
    dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 100});
    group(writer, 1, 3, true);
    group(writer, 4, 6, true);  // Second segment (the first is full).
    fs_.drop_unsynced();
  }
  EXPECT_EQ(wal_segments(fs_, dir_).size(), 2u);
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 6));
}

TEST_F(WalFaultTest, TornGroupWriteKeepsItsCompleteRecordsAndCutsTheRest) {
  dur::WalWriter writer(fs_, dir_, 0);
  group(writer, 1, 4, true);
  group(writer, 5, 9, true);
  const std::string full = fs_.contents(dir_ / dur::wal_file_name(1));
  const std::size_t record_bytes = strata::durability::wal::kRecordHeaderSize + 17;
  for (std::size_t keep = 0; keep <= 5 * record_bytes; keep += 7) {
    // Tear the second group's write: recreate it as the last write, then cut.
    fs_.set_contents(dir_ / dur::wal_file_name(1), full.substr(0, full.size() - 5 * record_bytes));
    auto file = fs_.open_writable(dir_ / dur::wal_file_name(1), strata::base::OpenMode::append);
    file->append(full.substr(full.size() - 5 * record_bytes));
    fs_.tear_last_write(keep);
    const auto got = versions(recover_log(fs_, dir_));
    const auto complete = static_cast<Version>(std::min<std::size_t>(keep / record_bytes, 5));
    EXPECT_EQ(got, range(1, 4 + complete)) << "keep " << keep;
  }
}

TEST_F(WalFaultTest, FailingSyncFailsTheWriterForeverAndItNeverAppendsAgain) {
  dur::WalWriter writer(fs_, dir_, 0);
  group(writer, 1, 5, true);
  fs_.fail_nth(Op::sync, 1);
  writer.append(6, "six");
  EXPECT_THAT([&] { writer.flush(true); },
              ThrowsCodeWith(ErrorCode::io_error, "sync (injected fault)"));
  EXPECT_TRUE(writer.failed());
  const int writes = fs_.count(Op::write);
  const std::string contents = fs_.contents(dir_ / dur::wal_file_name(1));
  EXPECT_THAT([&] { writer.append(7, "x"); }, ThrowsCode(ErrorCode::database_failed));
  EXPECT_THAT([&] { writer.flush(true); }, ThrowsCode(ErrorCode::database_failed));
  EXPECT_THAT([&] { writer.flush(false); }, ThrowsCode(ErrorCode::database_failed));
  EXPECT_THAT([&] { writer.roll(); }, ThrowsCode(ErrorCode::database_failed));
  EXPECT_THAT([&] { writer.close(); },
              ThrowsCodeWith(ErrorCode::database_failed, "sync (injected fault)"));
  EXPECT_EQ(fs_.count(Op::write), writes);
  EXPECT_EQ(fs_.contents(dir_ / dur::wal_file_name(1)), contents);
}

TEST_F(WalFaultTest, FailingWriteWithAPartialPrefixRecoversTheSyncedRecords) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 5, true);
    fs_.fail_nth(Op::write, 1, /*partial_bytes=*/40);
    writer.append(6, payload_for(6, 10));
    writer.append(7, payload_for(7, 10));
    EXPECT_THAT([&] { writer.flush(true); }, ThrowsCode(ErrorCode::io_error));
    EXPECT_THAT([&] { writer.append(8, "x"); }, ThrowsCode(ErrorCode::database_failed));
  }
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 5));  // The 40-byte fragment is cut.
}

TEST_F(WalFaultTest, FailingDirectorySyncOfANewSegmentFailsTheWriter) {
  dur::WalWriter writer(fs_, dir_, 0);
  fs_.fail_nth(Op::sync_dir, 1);
  writer.append(1, "a");
  EXPECT_THAT([&] { writer.flush(true); }, ThrowsCode(ErrorCode::io_error));
  EXPECT_THAT([&] { writer.append(2, "b"); }, ThrowsCode(ErrorCode::database_failed));
}

TEST_F(WalFaultTest, FailingSyncWhenRollingFailsTheWriter) {
  dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 100});
  group(writer, 1, 3, /*sync=*/false);
  fs_.fail_nth(Op::sync, 1);
  EXPECT_THAT([&] { writer.append(4, "x"); }, ThrowsCode(ErrorCode::io_error));
  EXPECT_THAT([&] { writer.append(5, "x"); }, ThrowsCode(ErrorCode::database_failed));
}

TEST_F(WalFaultTest, FullDiskIsAnIoErrorAndSyncedRecordsSurvive) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 10, true, 100);
    fs_.set_capacity(fs_.file_size(dir_ / dur::wal_file_name(1)) + 300);
    for (Version v = 11; v <= 20; ++v) writer.append(v, payload_for(v, 100));
    EXPECT_THAT([&] { writer.flush(true); },
                ThrowsCodeWith(ErrorCode::io_error, "No space left on device"));
    EXPECT_THAT([&] { writer.append(21, "x"); }, ThrowsCode(ErrorCode::database_failed));
  }
  fs_.drop_unsynced();
  fs_.set_capacity(UINT64_MAX);
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 10));
}

TEST_F(WalFaultTest, FullDiskWithoutPowerLossKeepsTheCompleteRecordsThatFit) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 2, true, 100);
    fs_.set_capacity(fs_.file_size(dir_ / dur::wal_file_name(1)) + 300);
    for (Version v = 3; v <= 9; ++v) writer.append(v, payload_for(v, 100));
    EXPECT_THAT([&] { writer.flush(true); }, ThrowsCode(ErrorCode::io_error));
  }
  // 300 bytes hold two 136-byte records; the rest is a torn tail. Those two were never
  // acknowledged (the flush failed), so keeping them is allowed: commit_unknown_result.
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 4));
}

// The crash loop of the reliability targets, at the file boundary: random groups, random
// syncs, random power losses and torn writes; after each restart every acknowledged record
// is present, records are exactly a prefix of what was appended, and writing continues.
TEST_F(WalFaultTest, RandomCrashesNeverLoseAcknowledgedRecords) {
  std::mt19937 rng(12345);
  std::vector<Version> appended;  // Everything ever handed to the writer, in order.
  Version acknowledged = 0;       // Highest version covered by a successful flush(true).
  Version last = 0;
  bool last_sync = false;
  for (int round = 0; round < 200; ++round) {
    {
      dur::WalWriter writer(fs_, dir_, last, {.segment_bytes = 1500});
      const int groups = 1 + static_cast<int>(rng() % 6);
      Version v = last;
      for (int g = 0; g < groups; ++g) {
        const int n = 1 + static_cast<int>(rng() % 5);
        for (int i = 0; i < n; ++i) {
          v += 1 + static_cast<Version>(rng() % 4);
          writer.append(v, payload_for(v, rng() % 60));
          appended.push_back(v);
        }
        last_sync = rng() % 3 != 0;
        writer.flush(last_sync);
        if (last_sync) acknowledged = v;
      }
      switch (rng() % 3) {
        case 0:
          fs_.drop_unsynced();
          break;
        case 1:  // A crash in the middle of the last (unacknowledged) write.
          if (!last_sync) fs_.tear_last_write(rng() % 200);
          break;
        default:
          break;  // Process crash: the page cache keeps everything written.
      }
    }
    const auto got = versions(recover_log(fs_, dir_, &last));
    ASSERT_GE(got.empty() ? 0 : got.back(), acknowledged) << "round " << round;
    // Exactly a prefix of the appended sequence, restricted to what survived.
    const std::vector<Version> prefix(appended.begin(), appended.begin() + got.size());
    ASSERT_EQ(got, prefix) << "round " << round;
    appended = prefix;  // Lost unacknowledged records are gone for good.
    acknowledged = got.empty() ? 0 : got.back();
    EXPECT_EQ(last, acknowledged);
  }
  EXPECT_GT(wal_segments(fs_, dir_).size(), 5u);
}

// sync_written() lets the writer's lock go while the disk works: a group is appended and
// written while a sync is held (it would wait for the lock otherwise). The writer does not
// count it as covered by that sync (the disk may have taken it or not): the next
// sync_written() syncs again.
TEST_F(WalFaultTest, SyncWrittenLetsWritesGoOnAndSyncsThemNextTime) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 5, /*sync=*/true);  // the segment and its directory entry are durable
    group(writer, 6, 10, /*sync=*/false);
    std::promise<void> in_sync;
    std::promise<void> release;
    fs_.set_sync_hook([&, released = release.get_future().share()] {
      in_sync.set_value();
      released.wait();
    });
    std::thread syncer([&] { writer.sync_written(); });
    in_sync.get_future().wait();
    group(writer, 11, 15, /*sync=*/false);
    release.set_value();
    syncer.join();
    fs_.set_sync_hook(nullptr);
    const int syncs = fs_.count(Op::sync);
    writer.sync_written();
    EXPECT_EQ(fs_.count(Op::sync), syncs + 1);
    fs_.drop_unsynced();
  }
  Version last = 0;
  EXPECT_EQ(versions(recover_log(fs_, dir_, &last)), range(1, 15));
}

TEST_F(WalFaultTest, SyncWrittenTwiceCoversEverythingWritten) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    group(writer, 1, 5, /*sync=*/false);  // a new segment: synced with its directory entry
    writer.sync_written();
    group(writer, 6, 9, /*sync=*/false);
    writer.sync_written();
    EXPECT_EQ(fs_.unsynced_bytes(dir_ / dur::wal_file_name(1)), 0U);
    const int syncs = fs_.count(Op::sync);
    writer.sync_written();  // nothing new: no sync
    EXPECT_EQ(fs_.count(Op::sync), syncs);
    fs_.drop_unsynced();
  }
  Version last = 0;
  EXPECT_EQ(versions(recover_log(fs_, dir_, &last)), range(1, 9));
}

// A segment roll (the active segment is full) waits for a sync_written() in progress
// rather than close the file under it; both segments are whole afterwards.
TEST_F(WalFaultTest, ARollWaitsForASyncWrittenInProgress) {
  {
    dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 100});
    group(writer, 1, 3, /*sync=*/true, 40);
    group(writer, 4, 4, /*sync=*/false, 40);
    std::promise<void> in_sync;
    std::promise<void> release;
    std::atomic<bool> held{false};
    fs_.set_sync_hook([&, released = release.get_future().share()] {
      if (held.exchange(true)) return;  // only the first
      in_sync.set_value();
      released.wait();
    });
    std::thread syncer([&] { writer.sync_written(); });
    in_sync.get_future().wait();
    std::atomic<bool> rolled{false};
    std::thread roller([&] {
      writer.append(5, payload_for(5, 40));  // the segment is full: closes it first
      writer.flush(/*sync=*/true);
      rolled = true;
    });
    // The roll cannot finish while the sync is held (it waits for it, then closes).
    EXPECT_FALSE(rolled.load());
    release.set_value();
    syncer.join();
    roller.join();
    fs_.set_sync_hook(nullptr);
    EXPECT_TRUE(rolled.load());
    EXPECT_EQ(wal_segments(fs_, dir_).size(), 2U);
    fs_.drop_unsynced();
  }
  Version last = 0;
  EXPECT_EQ(versions(recover_log(fs_, dir_, &last)), range(1, 5));
}

// reserve() opens the next segment's file ahead of its first record; when making it ready
// (grow_ahead) fails, the file is removed again rather than left behind for each commit
// that fails so. The flush that starts the segment opens it anew.
TEST_F(WalFaultTest, ASegmentOpenedAheadThatCannotGrowIsRemoved) {
  dur::WalWriter writer(fs_, dir_, 0, {.grow_ahead_bytes = 4096});
  fs_.fail_nth(Op::grow_ahead, 1);
  writer.reserve(1, 10);
  EXPECT_EQ(fs_.count(Op::grow_ahead), 1);
  EXPECT_TRUE(wal_segments(fs_, dir_).empty());
  group(writer, 1, 1, /*sync=*/true);
  EXPECT_EQ(wal_segments(fs_, dir_).size(), 1U);
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 1));
}

// A full segment is closed (synced, its grow-ahead padding cut) before the next one's file
// exists: reserve() for a group that will start a segment opens nothing while the full one
// is open. Otherwise a kill between reserve() and the append leaves an empty newest file
// behind a segment that ends in padding, which recovery must refuse as damage in a segment
// that is not the newest.
TEST_F(WalFaultTest, ReserveOpensNoSegmentWhileTheFullOneIsOpen) {
  dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 256, .grow_ahead_bytes = 4096});
  group(writer, 1, 4, /*sync=*/true, 80);  // over 256 bytes: the next group starts a segment
  ASSERT_EQ(wal_segments(fs_, dir_).size(), 1U);
  writer.reserve(5, 10);
  EXPECT_EQ(wal_segments(fs_, dir_).size(), 1U);
  // The process dies here: what is on disk recovers every synced record.
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 4));
  group(writer, 5, 5, /*sync=*/true);
  EXPECT_EQ(wal_segments(fs_, dir_).size(), 2U);
  EXPECT_EQ(versions(recover_log(fs_, dir_)), range(1, 5));
}

}  // namespace
