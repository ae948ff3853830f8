// Recovery: newest checkpoint plus the later log records, in order; temp files ignored and
// removed; a damaged newest checkpoint or a gap is an error, never silent loss; segments
// removed after a checkpoint; versions continue where they stopped.
#include "durability/recovery.hpp"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "durability/checkpoint_writer.hpp"
#include "durability/wal_writer.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"
#include "temp_dir.hpp"
#include "wal_test_util.hpp"

namespace dur = strata::durability;
using strata::ErrorCode;
using strata::Version;
using strata::testing::FaultFileSystem;
using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using strata::testing::wal_segments;
using Model = std::map<std::string, std::string>;

namespace {

// A toy engine: each WAL payload is "key=value"; the model applies them in order.
struct Recovered {
  Model contents;
  std::vector<Version> replayed;
  Version last = -1;
};

Recovered recover_all(strata::base::FileSystem& fs, const std::filesystem::path& dir) {
  Recovered r;
  r.last = dur::recover(
      fs, dir, [&](const std::string& k, const std::string& v) { r.contents[k] = v; },
      [&](Version version, std::string_view payload) {
        const auto eq = payload.find('=');
        r.contents[std::string(payload.substr(0, eq))] = std::string(payload.substr(eq + 1));
        r.replayed.push_back(version);
      });
  return r;
}

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.create_dir(dir_); }

  // Commits key=value at version v through the writer and the model.
  void commit(dur::WalWriter& writer, Version v, const std::string& key, const std::string& value) {
    writer.append(v, key + "=" + value);
    writer.flush(true);
    model_[key] = value;
  }
  void checkpoint(Version v) {
    auto it = std::make_shared<Model::const_iterator>(model_.begin());
    dur::write_checkpoint(fs_, dir_, v, [this, it](std::string& k, std::string& val) {
      if (*it == model_.end()) return false;
      k = (*it)->first;
      val = (*it)->second;
      ++*it;
      return true;
    });
  }

  FaultFileSystem fs_;
  const std::filesystem::path dir_ = "/db";
  Model model_;
};

TEST_F(RecoveryTest, EmptyDirectoryRecoversVersionZero) {
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.last, 0);
  EXPECT_TRUE(r.contents.empty());
  const auto plan = dur::plan_recovery(fs_, dir_);
  EXPECT_FALSE(plan.checkpoint);
  EXPECT_EQ(plan.checkpoint_version, 0);
}

TEST_F(RecoveryTest, CheckpointPlusLaterLogRecordsInOrder) {
  dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 300});
  for (Version v = 1; v <= 60; ++v)
    commit(writer, v * 10, "k" + std::to_string(v % 7), std::to_string(v));
  checkpoint(600);
  writer.remove_segments_before(600);
  for (Version v = 61; v <= 90; ++v)
    commit(writer, v * 10, "k" + std::to_string(v % 11), std::to_string(v));
  writer.close();

  const auto plan = dur::plan_recovery(fs_, dir_);
  ASSERT_TRUE(plan.checkpoint);
  EXPECT_EQ(plan.checkpoint_version, 600);
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.last, 900);
  EXPECT_EQ(r.contents, model_);
  std::vector<Version> expected;
  for (Version v = 61; v <= 90; ++v) expected.push_back(v * 10);
  EXPECT_EQ(r.replayed, expected) << "only records after the checkpoint, in order";
}

TEST_F(RecoveryTest, CheckpointNewerThanTheWholeLog) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    for (Version v = 1; v <= 5; ++v) commit(writer, v, "k" + std::to_string(v), "v");
    writer.close();
  }
  checkpoint(5);
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.last, 5);
  EXPECT_TRUE(r.replayed.empty());
  EXPECT_EQ(r.contents, model_);
}

TEST_F(RecoveryTest, VersionsContinueAcrossRestarts) {
  Version last = 0;
  for (int restart = 0; restart < 5; ++restart) {
    last = recover_all(fs_, dir_).last;
    dur::WalWriter writer(fs_, dir_, last);
    for (int i = 1; i <= 3; ++i) commit(writer, last + i, "k" + std::to_string(last + i), "v");
    if (restart == 2) {
      checkpoint(last + 3);
      writer.remove_segments_before(last + 3);
    }
    writer.close();
  }
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.last, 15);
  EXPECT_EQ(r.contents, model_);
}

TEST_F(RecoveryTest, DamagedNewestCheckpointIsAnErrorNotASilentFallback) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    commit(writer, 1, "a", "1");
    checkpoint(1);
    commit(writer, 2, "b", "2");
    checkpoint(2);
    writer.close();
  }
  const auto newest = dir_ / dur::checkpoint_file_name(2);
  std::string bytes = fs_.contents(newest);
  bytes[bytes.size() / 2] ^= 0x20;
  fs_.set_contents(newest, bytes);
  EXPECT_THAT([&] { recover_all(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, dur::checkpoint_file_name(2)));
}

TEST_F(RecoveryTest, GapBetweenCheckpointAndLogIsCorruption) {
  {
    dur::WalWriter writer(fs_, dir_, 0, {.segment_bytes = 100});
    for (Version v = 1; v <= 20; ++v) commit(writer, v, "k", std::to_string(v));
    checkpoint(5);
    writer.close();
  }
  // Lose the segments holding 6..?: everything up to version 12.
  for (const auto& name : wal_segments(fs_, dir_)) {
    if (dur::parse_file_name(name).version <= 12) fs_.remove(dir_ / name);
  }
  EXPECT_THAT([&] { recover_all(fs_, dir_); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "records in between are missing"));
}

TEST_F(RecoveryTest, TempCheckpointIsIgnoredAndRemoved) {
  {
    dur::WalWriter writer(fs_, dir_, 0);
    commit(writer, 1, "a", "1");
    commit(writer, 2, "b", "2");
    writer.close();
  }
  const auto temp = dir_ / dur::checkpoint_temp_file_name(2);
  fs_.set_contents(temp, "half a checkpoint");
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.contents, model_);
  EXPECT_EQ(r.last, 2);
  EXPECT_FALSE(fs_.exists(temp));
}

TEST_F(RecoveryTest, CrashDuringCheckpointPublicationLosesNothing) {
  dur::WalWriter writer(fs_, dir_, 0);
  for (Version v = 1; v <= 10; ++v) commit(writer, v, "k" + std::to_string(v), "v");
  fs_.fail_nth(FaultFileSystem::Op::rename, 1);
  EXPECT_THAT([&] { checkpoint(10); }, ThrowsCode(ErrorCode::io_error));
  fs_.drop_unsynced();
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.contents, model_);
  EXPECT_EQ(r.last, 10);
}

TEST_F(RecoveryTest, TornTailIsTruncatedSoLaterAppendsAreClean) {
  Version last = 0;
  {
    dur::WalWriter writer(fs_, dir_, 0);
    for (Version v = 1; v <= 4; ++v) commit(writer, v, "k" + std::to_string(v), "v");
    writer.append(5, "k5=lost");
    writer.flush(false);
    fs_.tear_last_write(9);
  }
  last = recover_all(fs_, dir_).last;
  EXPECT_EQ(last, 4);
  {
    dur::WalWriter writer(fs_, dir_, last);
    commit(writer, 5, "k5", "kept");
    writer.close();
  }
  const auto r = recover_all(fs_, dir_);
  EXPECT_EQ(r.contents, model_);
  EXPECT_EQ(r.contents.at("k5"), "kept");
  EXPECT_EQ(r.last, 5);
}

TEST(RecoveryPosixTest, CheckpointAndLogOnTheRealFileSystem) {
  strata::testing::TempDir dir;
  auto& fs = strata::base::default_file_system();
  Model model;
  {
    dur::WalWriter writer(fs, dir.path(), 0, {.segment_bytes = 4096});
    for (Version v = 1; v <= 300; ++v) {
      const std::string key = "key" + std::to_string(v % 50);
      writer.append(v, key + "=" + std::to_string(v));
      writer.flush(v % 3 == 0);
      model[key] = std::to_string(v);
      if (v == 200) {
        writer.flush(true);
        auto it = std::make_shared<Model::const_iterator>(model.begin());
        dur::write_checkpoint(fs, dir.path(), 200, [&model, it](std::string& k, std::string& val) {
          if (*it == model.end()) return false;
          k = (*it)->first;
          val = (*it)->second;
          ++*it;
          return true;
        });
        writer.remove_segments_before(200);
      }
    }
    writer.close();
  }
  const auto r = recover_all(fs, dir.path());
  EXPECT_EQ(r.contents, model);
  EXPECT_EQ(r.last, 300);
  EXPECT_EQ(r.replayed.size(), 100u);
}

}  // namespace
