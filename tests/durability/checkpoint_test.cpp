// Checkpoints: round trips (empty, large, incompressible), LZ4 use, every flipped byte and
// every truncation detected as corrupt_data naming the file, publication by temp file and
// rename, and failure cleanup.
#include <map>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "durability/checkpoint_reader.hpp"
#include "durability/checkpoint_writer.hpp"
#include "durability/file_names.hpp"
#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"
#include "temp_dir.hpp"

namespace dur = strata::durability;
using strata::ErrorCode;
using strata::Version;
using strata::testing::FaultFileSystem;
using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using Model = std::map<std::string, std::string>;
using Op = FaultFileSystem::Op;

namespace {

dur::CheckpointSource source(const Model& model) {
  auto it = std::make_shared<Model::const_iterator>(model.begin());
  return [&model, it](std::string& key, std::string& value) {
    if (*it == model.end()) return false;
    key = (*it)->first;
    value = (*it)->second;
    ++*it;
    return true;
  };
}

Model read_back(strata::base::FileSystem& fs, const std::filesystem::path& path,
                dur::CheckpointInfo* info = nullptr) {
  Model model;
  const auto i = dur::read_checkpoint(
      fs, path, [&](std::string_view k, std::string_view v) { model.emplace(k, v); });
  if (info != nullptr) *info = i;
  return model;
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.create_dir(dir_); }
  std::filesystem::path path(Version v) const { return dir_ / dur::checkpoint_file_name(v); }

  FaultFileSystem fs_;
  const std::filesystem::path dir_ = "/db";
};

TEST_F(CheckpointTest, RoundTripOfManyEntriesInManyCompressedBlocks) {
  Model model;
  char key[32];
  for (int i = 0; i < 50000; ++i) {
    std::snprintf(key, sizeof key, "user/%08d", i);
    model[key] = "value-" + std::to_string(i * 7) + std::string(i % 50, 'v');
  }
  const auto stats = dur::write_checkpoint(fs_, dir_, 77, source(model));
  EXPECT_EQ(stats.path, path(77));
  EXPECT_EQ(stats.entries, model.size());
  EXPECT_GT(stats.blocks, 4u);
  EXPECT_LT(stats.file_bytes, stats.raw_bytes / 2) << "LZ4 should compress this";
  dur::CheckpointInfo info;
  EXPECT_EQ(read_back(fs_, path(77), &info), model);
  EXPECT_EQ(info.version, 77);
  EXPECT_EQ(info.entries, model.size());
  EXPECT_EQ(info.blocks, stats.blocks);
  EXPECT_EQ(info.file_bytes, fs_.file_size(path(77)));
  EXPECT_FALSE(fs_.exists(dir_ / dur::checkpoint_temp_file_name(77)));
}

// The footer's count is announced once, before the first entry (a reader may size its
// store by it).
TEST_F(CheckpointTest, TheEntryCountIsAnnouncedBeforeTheFirstEntry) {
  Model model;
  for (int i = 0; i < 3000; ++i) model["k" + std::to_string(100000 + i)] = std::to_string(i);
  dur::write_checkpoint(fs_, dir_, 5, source(model));
  std::vector<std::uint64_t> counts;
  std::size_t entries_before_count = 0;
  std::size_t entries = 0;
  dur::read_checkpoint(
      fs_, path(5), [&](std::string_view, std::string_view) { ++entries; },
      [&](std::uint64_t n) {
        counts.push_back(n);
        entries_before_count = entries;
      });
  EXPECT_THAT(counts, ::testing::ElementsAre(model.size()));
  EXPECT_EQ(entries_before_count, 0U);
  EXPECT_EQ(entries, model.size());
}

// docs/format/checkpoint.md's worked examples, byte for byte: what the writer writes, and
// what the reader reads back. (The format's document and the code cannot drift apart.)
TEST_F(CheckpointTest, TheSpecificationsWorkedExamplesAreWhatTheWriterWrites) {
  auto bytes = [](std::initializer_list<unsigned char> b) {
    return std::string(b.begin(), b.end());
  };
  dur::write_checkpoint(fs_, dir_, 9, source({{"a", "1"}, {"b", "22"}}));
  EXPECT_EQ(fs_.contents(path(9)),
            bytes({0x53, 0x54, 0x52, 0x41, 0x54, 0x41, 0x43, 0x4b, 0x01, 0x00, 0x00, 0x00, 0x09,
                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6f, 0x29, 0xd5, 0xfe, 0x00, 0x09,
                   0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0xf9, 0x60, 0xbc, 0x14, 0x01, 0x61,
                   0x01, 0x31, 0x01, 0x62, 0x02, 0x32, 0x32, 0x53, 0x54, 0x52, 0x41, 0x54, 0x41,
                   0x4e, 0x44, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                   0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x1e, 0x83, 0xd6, 0x7d, 0x5d, 0x3f, 0x47, 0x85}));
  EXPECT_EQ(read_back(fs_, path(9)), (Model{{"a", "1"}, {"b", "22"}}));

  dur::write_checkpoint(fs_, dir_, 12, source({{"key", std::string(64, 'x')}}));
  EXPECT_EQ(
      fs_.contents(path(12)),
      bytes({0x53, 0x54, 0x52, 0x41, 0x54, 0x41, 0x43, 0x4b, 0x01, 0x00, 0x00, 0x00, 0x0c, 0x00,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xac, 0xd9, 0x49, 0x45, 0x01, 0x10, 0x00, 0x00,
             0x00, 0x45, 0x00, 0x00, 0x00, 0x31, 0x55, 0x80, 0x02, 0x6f, 0x03, 0x6b, 0x65, 0x79,
             0x40, 0x78, 0x01, 0x00, 0x27, 0x50, 0x78, 0x78, 0x78, 0x78, 0x78, 0x53, 0x54, 0x52,
             0x41, 0x54, 0x41, 0x4e, 0x44, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0xf4, 0x1f, 0xe0, 0x3b, 0xc6, 0x7d, 0x73, 0x8e}));
  EXPECT_EQ(read_back(fs_, path(12)), (Model{{"key", std::string(64, 'x')}}));
}

TEST_F(CheckpointTest, EmptyDatabaseIsAHeaderAndAFooter) {
  const auto stats = dur::write_checkpoint(fs_, dir_, 0, source({}));
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.blocks, 0u);
  EXPECT_EQ(fs_.file_size(path(0)),
            dur::checkpoint::kFileHeaderSize + dur::checkpoint::kFooterSize);
  dur::CheckpointInfo info;
  EXPECT_TRUE(read_back(fs_, path(0), &info).empty());
  EXPECT_EQ(info.version, 0);
}

TEST_F(CheckpointTest, LargeKeysAndValuesAndIncompressibleData) {
  std::mt19937_64 rng(3);
  Model model;
  model[std::string(dur::checkpoint::kMaxKeyBytes, 'k')] =
      random_bytes(rng, dur::checkpoint::kMaxValueBytes);
  for (int i = 0; i < 40; ++i) {
    model["r" + std::to_string(1000 + i)] = random_bytes(rng, 50000 + i);
  }
  model["empty"] = "";
  model[std::string(1, '\0')] = std::string(3, '\0');
  const auto stats = dur::write_checkpoint(fs_, dir_, 5, source(model));
  // Incompressible blocks are stored raw: no LZ4 expansion beyond the framing.
  EXPECT_LE(stats.file_bytes, stats.raw_bytes + stats.blocks * dur::checkpoint::kBlockHeaderSize +
                                  dur::checkpoint::kFileHeaderSize + dur::checkpoint::kFooterSize);
  EXPECT_GT(stats.file_bytes, stats.raw_bytes * 99 / 100);
  EXPECT_EQ(read_back(fs_, path(5)), model);
}

TEST_F(CheckpointTest, EveryFlippedByteIsCorruptionNamingTheFile) {
  Model model;
  for (int i = 0; i < 60; ++i) model["key" + std::to_string(100 + i)] = std::string(i, 'x');
  dur::write_checkpoint(fs_, dir_, 9, source(model), {.block_bytes = 512});
  const std::string good = fs_.contents(path(9));
  ASSERT_GT(dur::read_checkpoint(fs_, path(9), [](auto, auto) {}).blocks, 2u);
  for (std::size_t at = 0; at < good.size(); ++at) {
    for (const char bit : {'\x01', '\x80'}) {
      std::string bad = good;
      bad[at] ^= bit;
      fs_.set_contents(path(9), bad);
      EXPECT_THAT([&] { read_back(fs_, path(9)); },
                  ThrowsCodeWith(ErrorCode::corrupt_data, dur::checkpoint_file_name(9)))
          << "byte " << at;
    }
  }
}

TEST_F(CheckpointTest, EveryTruncationIsCorruption) {
  Model model;
  for (int i = 0; i < 30; ++i) model["k" + std::to_string(100 + i)] = "v" + std::to_string(i);
  dur::write_checkpoint(fs_, dir_, 4, source(model), {.block_bytes = 100});
  const std::string good = fs_.contents(path(4));
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    fs_.set_contents(path(4), good.substr(0, cut));
    EXPECT_THAT([&] { read_back(fs_, path(4)); }, ThrowsCode(ErrorCode::corrupt_data)) << cut;
  }
  fs_.set_contents(path(4), good + "x");
  EXPECT_THAT([&] { read_back(fs_, path(4)); }, ThrowsCode(ErrorCode::corrupt_data));
}

TEST_F(CheckpointTest, FileRenamedToAnotherVersionIsCorruption) {
  dur::write_checkpoint(fs_, dir_, 4, source({{"a", "b"}}));
  fs_.rename(path(4), path(5));
  EXPECT_THAT([&] { read_back(fs_, path(5)); },
              ThrowsCodeWith(ErrorCode::corrupt_data, "disagrees with the file name"));
}

TEST_F(CheckpointTest, OutOfOrderOrOversizeEntriesAreRejectedAndTheTempFileRemoved) {
  std::vector<std::pair<std::string, std::string>> unordered = {{"b", "1"}, {"a", "2"}};
  std::size_t i = 0;
  EXPECT_THAT(
      [&] {
        dur::write_checkpoint(fs_, dir_, 2, [&](std::string& k, std::string& v) {
          if (i == unordered.size()) return false;
          k = unordered[i].first;
          v = unordered[i].second;
          ++i;
          return true;
        });
      },
      ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_FALSE(fs_.exists(dir_ / dur::checkpoint_temp_file_name(2)));
  EXPECT_FALSE(fs_.exists(path(2)));
  EXPECT_THAT(
      [&] {
        dur::write_checkpoint(
            fs_, dir_, 3, source({{"k", std::string(dur::checkpoint::kMaxValueBytes + 1, 'v')}}));
      },
      ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_FALSE(fs_.exists(dir_ / dur::checkpoint_temp_file_name(3)));
}

TEST_F(CheckpointTest, FailedRenameLeavesNoCheckpointAndNoTempFile) {
  fs_.fail_nth(Op::rename, 1);
  EXPECT_THAT(
      [&] {
        dur::write_checkpoint(fs_, dir_, 8, source({{"a", "b"}}));
      },
      ThrowsCode(ErrorCode::io_error));
  EXPECT_FALSE(fs_.exists(path(8)));
  EXPECT_FALSE(fs_.exists(dir_ / dur::checkpoint_temp_file_name(8)));
}

TEST_F(CheckpointTest, FailedSyncIsAnErrorAndNothingIsPublished) {
  fs_.fail_nth(Op::sync, 1);
  EXPECT_THAT(
      [&] {
        dur::write_checkpoint(fs_, dir_, 8, source({{"a", "b"}}));
      },
      ThrowsCode(ErrorCode::io_error));
  EXPECT_FALSE(fs_.exists(path(8)));
}

TEST_F(CheckpointTest, PublishedCheckpointSurvivesPowerLoss) {
  const Model model = {{"a", "1"}, {"b", "2"}};
  dur::write_checkpoint(fs_, dir_, 12, source(model));
  fs_.drop_unsynced();
  EXPECT_EQ(read_back(fs_, path(12)), model);
}

TEST_F(CheckpointTest, RemoveCheckpointsBeforeKeepsNewerOnes) {
  for (const Version v : {3, 5, 9}) dur::write_checkpoint(fs_, dir_, v, source({{"k", "v"}}));
  dur::remove_checkpoints_before(fs_, dir_, 9);
  EXPECT_FALSE(fs_.exists(path(3)));
  EXPECT_FALSE(fs_.exists(path(5)));
  EXPECT_TRUE(fs_.exists(path(9)));
}

TEST(CheckpointPosixTest, RoundTripOnTheRealFileSystem) {
  strata::testing::TempDir dir;
  auto& fs = strata::base::default_file_system();
  Model model;
  for (int i = 0; i < 20000; ++i) model["key" + std::to_string(i)] = std::string(100, 'a' + i % 26);
  const auto stats = dur::write_checkpoint(fs, dir.path(), 31, source(model));
  EXPECT_EQ(read_back(fs, stats.path), model);
  EXPECT_EQ(fs.list(dir.path()), std::vector<std::string>{dur::checkpoint_file_name(31)});
}

}  // namespace
