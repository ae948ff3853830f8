// Write-ahead log: round trips across segment rolls, group commit (one write and one sync
// per flush), version chaining across reopen, segment accounting and removal.
#include <atomic>
#include <random>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "durability/checkpoint_writer.hpp"
#include "durability/wal_format.hpp"
#include "durability/wal_writer.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"
#include "temp_dir.hpp"
#include "wal_test_util.hpp"

namespace dur = strata::durability;
using strata::ErrorCode;
using strata::Version;
using strata::testing::FaultFileSystem;
using strata::testing::payload_for;
using strata::testing::read_log;
using strata::testing::Record;
using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using strata::testing::wal_segments;

namespace {

class WalTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.create_dir(dir_); }
  FaultFileSystem fs_;
  const std::filesystem::path dir_ = "/db";
};

TEST_F(WalTest, ManyRecordsRoundTripAcrossSegmentRolls) {
  std::mt19937 rng(7);
  std::vector<Record> expected;
  {
    dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 4096});
    Version v = 0;
    for (int group = 0; group < 400; ++group) {
      const int n = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < n; ++i) {
        v += 1 + static_cast<Version>(rng() % 3);  // Increasing, not consecutive.
        expected.emplace_back(v, payload_for(v, rng() % 300));
        writer.append(v, expected.back().second);
      }
      writer.flush(rng() % 2 == 0);
    }
    writer.close();
  }
  const auto segments = wal_segments(fs_, dir_);
  EXPECT_GT(segments.size(), 10u);
  dur::WalReadResult result;
  EXPECT_EQ(read_log(fs_, dir_, 0, &result), expected);
  EXPECT_EQ(result.end, dur::WalEnd::clean);
  EXPECT_EQ(result.last_version, expected.back().first);
  // Each segment is named after its first record.
  std::set<Version> versions;
  for (const auto& r : expected) versions.insert(r.first);
  for (const auto& name : segments) {
    EXPECT_TRUE(versions.count(dur::parse_file_name(name).version)) << name;
  }
}

// docs/format/wal.md's worked example, byte for byte: the first record of a new segment
// is not marked after_sync (its header is written with it), the first of a group written
// after a sync is.
TEST_F(WalTest, TheSpecificationsWorkedExampleIsWhatTheWriterWrites) {
  {
    dur::WalWriter writer(fs_, dir_, 3);
    writer.append(7, "hello");
    writer.flush(true);
    writer.append(9, "");
    writer.flush(true);
  }
  const unsigned char expected[] = {
      0x53, 0x54, 0x52, 0x41, 0x54, 0x41, 0x57, 0x4c, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x99, 0x3b, 0x91, 0x5c, 0x43, 0x57, 0xa7, 0xe1, 0x25, 0x0a,
      0x94, 0x1f, 0x05, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x43, 0x57, 0xa7,
      0xe1, 0x20, 0xe9, 0xc9, 0xb2, 0x00, 0x00, 0x00, 0x80, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(fs_.contents(dir_ / dur::wal_file_name(7)),
            std::string(reinterpret_cast<const char*>(expected), sizeof expected));
}

TEST_F(WalTest, GroupOfRecordsIsOneWriteAndOneSync) {
  dur::WalWriter writer(fs_, dir_, 0);
  writer.append(1, "first");
  writer.flush(true);  // Creates the segment: one write, one sync, one directory sync.
  const int writes = fs_.count(FaultFileSystem::Op::write);
  const int syncs = fs_.count(FaultFileSystem::Op::sync);
  const int dir_syncs = fs_.count(FaultFileSystem::Op::sync_dir);
  for (Version v = 2; v < 66; ++v) writer.append(v, payload_for(v));
  writer.flush(true);
  EXPECT_EQ(fs_.count(FaultFileSystem::Op::write), writes + 1);
  EXPECT_EQ(fs_.count(FaultFileSystem::Op::sync), syncs + 1);
  EXPECT_EQ(fs_.count(FaultFileSystem::Op::sync_dir), dir_syncs);
  writer.flush(true);  // Nothing new: no write, no sync.
  EXPECT_EQ(fs_.count(FaultFileSystem::Op::write), writes + 1);
  EXPECT_EQ(fs_.count(FaultFileSystem::Op::sync), syncs + 1);
  EXPECT_EQ(read_log(fs_, dir_).size(), 65u);
}

TEST_F(WalTest, UnsyncedFlushIsSyncedByALaterEmptyFlush) {
  dur::WalWriter writer(fs_, dir_, 0);
  writer.append(1, "a");
  writer.flush(false);
  const auto segment = dir_ / dur::wal_file_name(1);
  EXPECT_GT(fs_.unsynced_bytes(segment), 0u);
  writer.flush(true);
  EXPECT_EQ(fs_.unsynced_bytes(segment), 0u);
}

TEST_F(WalTest, RollStartsANewSegmentAtTheNextVersion) {
  dur::WalWriter writer(fs_, dir_, 0);
  writer.append(3, "a");
  writer.flush(false);
  writer.roll();
  EXPECT_EQ(fs_.unsynced_bytes(dir_ / dur::wal_file_name(3)), 0u);  // Synced before rolling.
  writer.append(9, "b");
  writer.flush(true);
  EXPECT_THAT(wal_segments(fs_, dir_),
              ::testing::ElementsAre(dur::wal_file_name(3), dur::wal_file_name(9)));
  EXPECT_EQ(read_log(fs_, dir_), (std::vector<Record>{{3, "a"}, {9, "b"}}));
}

TEST_F(WalTest, ReopenedWriterStartsAFreshSegmentAndContinuesTheChain) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    writer.append(1, "one");
    writer.append(2, "two");
    writer.close();
  }
  const Version last = read_log(fs_, dir_).back().first;
  {
    dur::WalWriter writer(fs_, dir_, last);
    writer.append(5, "five");
    writer.close();
  }
  EXPECT_EQ(wal_segments(fs_, dir_).size(), 2u);
  dur::WalReader reader(fs_, dir_);
  std::vector<std::pair<Version, Version>> chain;
  (void)reader.read(
      0, [&](const dur::WalRecord& r) { chain.emplace_back(r.prev_version, r.version); });
  EXPECT_EQ(chain, (std::vector<std::pair<Version, Version>>{{0, 1}, {1, 2}, {2, 5}}));
}

TEST_F(WalTest, WriterRefusesALogThatWasNotRecovered) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    writer.append(10, "x");
    writer.close();
  }
  EXPECT_THAT([&] { dur::WalWriter w(fs_, dir_, 0); }, ThrowsCode(ErrorCode::invalid_argument));
}

TEST_F(WalTest, NonIncreasingVersionIsRejectedAndTheWriterStaysUsable) {
  dur::WalWriter writer(fs_, dir_, 5);
  EXPECT_THAT([&] { writer.append(5, "x"); }, ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([&] { writer.append(4, "x"); }, ThrowsCode(ErrorCode::invalid_argument));
  writer.append(6, "ok");
  writer.flush(true);
  EXPECT_FALSE(writer.failed());
  dur::WalReadResult result;
  EXPECT_EQ(read_log(fs_, dir_, 5, &result), (std::vector<Record>{{6, "ok"}}));
}

TEST_F(WalTest, SegmentsBeforeAndRemovalKeepASuffixThatContinuesTheCheckpoint) {
  dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 1000});
  for (Version v = 1; v <= 200; ++v) {
    writer.append(v, payload_for(v, 40));
    writer.flush(true);
  }
  const auto all = wal_segments(fs_, dir_);
  ASSERT_GT(all.size(), 5u);
  const Version checkpoint = 120;
  const auto before = writer.segments_before(checkpoint);
  ASSERT_FALSE(before.empty());
  // Every segment listed holds only records <= checkpoint; the next one starts above it
  // or later.
  for (const auto& path : before) {
    EXPECT_LE(dur::parse_file_name(path.filename().string()).version, checkpoint);
  }
  const auto first_kept = all[before.size()];
  EXPECT_LE(dur::parse_file_name(first_kept).version, checkpoint + 1);
  writer.remove_segments_before(checkpoint);
  EXPECT_EQ(wal_segments(fs_, dir_).size(), all.size() - before.size());
  EXPECT_TRUE(writer.segments_before(checkpoint).empty());
  // The log after the checkpoint is complete; the log from 0 has a gap.
  const auto after = read_log(fs_, dir_, checkpoint);
  ASSERT_EQ(after.size(), 80u);
  EXPECT_EQ(after.front().first, checkpoint + 1);
  EXPECT_THAT([&] { (void)read_log(fs_, dir_, 0); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "version gap"));
  // Never the active segment, even if the checkpoint covers it.
  for (const auto& path : writer.segments_before(1000)) {
    EXPECT_NE(path.filename().string(), wal_segments(fs_, dir_).back());
  }
}

TEST_F(WalTest, BytesSinceTracksTheLogWrittenAfterAVersion) {
  dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 256 << 10});
  std::uint64_t total = 0;
  std::map<Version, std::uint64_t> after;  // Bytes of records with versions > key.
  for (Version v = 1; v <= 3000; ++v) {
    const std::string p = payload_for(v, 200);
    writer.append(v, p);
    writer.flush(false);
    total += dur::wal::kRecordHeaderSize + p.size();
    after[v] = total;
  }
  const std::uint64_t slack = (64 << 10) + 10 * dur::wal::kFileHeaderSize + 300;
  for (const Version v : {0, 1, 500, 1500, 2999, 3000}) {
    const std::uint64_t exact = total - (v == 0 ? 0 : after[v]);
    const std::uint64_t got = writer.bytes_since(v);
    EXPECT_GE(got, exact) << v;
    EXPECT_LE(got, exact + slack) << v;
  }
}

TEST(WalPosixTest, RoundTripOnTheRealFileSystem) {
  strata::testing::TempDir dir;
  auto& fs = strata::base::default_file_system();
  std::vector<Record> expected;
  {
    dur::WalWriter writer(fs, dir.path(), 0, {.segment_bytes = 8192});
    for (Version v = 1; v <= 500; ++v) {
      expected.emplace_back(v * 2, payload_for(v, v % 97));
      writer.append(v * 2, expected.back().second);
      if (v % 5 == 0) writer.flush(v % 10 == 0);
    }
    writer.close();
  }
  EXPECT_EQ(read_log(fs, dir.path()), expected);
  EXPECT_GT(wal_segments(fs, dir.path()).size(), 3u);
}

}  // namespace

namespace {

// The commit pipeline appends and flushes while a background checkpoint thread asks for
// bytes_since, writes checkpoints and removes covered segments (run under TSan).
TEST(WalConcurrencyTest, CheckpointThreadRemovesSegmentsWhileTheLeaderAppends) {
  strata::testing::TempDir dir;
  auto& fs = strata::base::default_file_system();
  dur::WalWriter writer(fs, dir.path(), 0, {.segment_bytes = 2048});
  std::atomic<Version> durable{0};
  std::atomic<bool> done{false};
  std::thread checkpointer([&] {
    Version last_checkpoint = 0;
    while (!done.load()) {
      const Version v = durable.load();
      if (v > last_checkpoint && writer.bytes_since(last_checkpoint) > 4096) {
        // Contents are irrelevant here; publication and removal order are what is tested.
        dur::write_checkpoint(fs, dir.path(), v, [](std::string&, std::string&) { return false; });
        writer.remove_segments_before(v);
        last_checkpoint = v;
      }
      std::this_thread::yield();
    }
  });
  for (Version v = 1; v <= 3000; ++v) {
    writer.append(v, payload_for(v, 30));
    if (v % 4 == 0) {
      writer.flush(v % 100 == 0);
      durable.store(v);
    }
  }
  writer.close();
  done.store(true);
  checkpointer.join();
  const auto plan = dur::recover(
      fs, dir.path(), [](const std::string&, const std::string&) {},
      [](Version, std::string_view) {});
  EXPECT_EQ(plan, 3000);
}

}  // namespace
