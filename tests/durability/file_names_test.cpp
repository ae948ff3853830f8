// File names: formatting, parsing, and near-misses that must not be taken for our files.
#include "durability/file_names.hpp"

#include <limits>

#include <gtest/gtest.h>

namespace dur = strata::durability;

namespace {

TEST(FileNames, FormatsZeroPaddedVersions) {
  EXPECT_EQ(dur::wal_file_name(42), "wal-00000000000000000042.log");
  EXPECT_EQ(dur::checkpoint_file_name(7), "checkpoint-00000000000000000007.ckpt");
  EXPECT_EQ(dur::checkpoint_temp_file_name(7), "checkpoint-00000000000000000007.ckpt.tmp");
  const auto max = std::numeric_limits<strata::Version>::max();
  EXPECT_EQ(dur::wal_file_name(max), "wal-09223372036854775807.log");
}

TEST(FileNames, ParsesWhatItFormats) {
  for (const strata::Version v :
       {strata::Version{0}, strata::Version{1}, std::numeric_limits<strata::Version>::max()}) {
    EXPECT_EQ(dur::parse_file_name(dur::wal_file_name(v)).kind, dur::FileKind::wal_segment);
    EXPECT_EQ(dur::parse_file_name(dur::wal_file_name(v)).version, v);
    EXPECT_EQ(dur::parse_file_name(dur::checkpoint_file_name(v)).kind, dur::FileKind::checkpoint);
    EXPECT_EQ(dur::parse_file_name(dur::checkpoint_temp_file_name(v)).kind,
              dur::FileKind::checkpoint_temp);
  }
  EXPECT_EQ(dur::parse_file_name("LOCK").kind, dur::FileKind::lock);
}

TEST(FileNames, NearMissesAreOther) {
  for (const char* name :
       {"wal-42.log", "wal-0000000000000000004x.log", "wal-00000000000000000042.log.bak",
        "wal-00000000000000000042.LOG",
        "wal-18446744073709551615.log",  // Above INT64_MAX.
        "checkpoint-00000000000000000042.ckp", "xwal-00000000000000000042.log", "", "LOCK2"}) {
    EXPECT_EQ(dur::parse_file_name(name).kind, dur::FileKind::other) << name;
  }
}

}  // namespace
