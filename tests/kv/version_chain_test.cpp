// A key's first record has no room for an older link; a record made over an older one
// does. Both read back the same, and go back to the pool at the size they took.
#include "kv/version_chain.hpp"

#include <string>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

TEST(VersionRecord, AFirstRecordHasNoLinkAndIsEightBytesSmaller) {
  const std::string value(100, 'v');
  SizeClassPool pool;
  VersionRecord* first = VersionRecord::make(pool, 7, std::string_view(value), nullptr);
  EXPECT_EQ(VersionRecord::bytes_for(std::string_view(value), nullptr), 112U);
  EXPECT_EQ(VersionRecord::bytes_for(std::string_view(value), first), 120U);
  EXPECT_EQ(VersionRecord::bytes_for(std::nullopt, first), 20U);

  VersionRecord* chained = VersionRecord::make(pool, 9, std::nullopt, first);
  EXPECT_EQ(first->version(), 7);
  EXPECT_EQ(first->value(), value);
  EXPECT_FALSE(first->is_tombstone());
  EXPECT_EQ(first->older(), nullptr);
  EXPECT_EQ(chained->version(), 9);
  EXPECT_TRUE(chained->is_tombstone());
  EXPECT_EQ(chained->value(), "");
  EXPECT_EQ(chained->older(), first);
  EXPECT_EQ(visible_at(chained, 8), first);
  EXPECT_EQ(visible_at(chained, 6), nullptr);

  // Cutting a first record's (absent) link does nothing; a chained one's is cut.
  first->cut_older();
  EXPECT_EQ(first->older(), nullptr);
  chained->cut_older();
  EXPECT_EQ(chained->older(), nullptr);
  EXPECT_EQ(chained->version(), 9);  // the version word keeps its value through the flag
  VersionRecord::destroy(pool, chained);
  VersionRecord::destroy(pool, first);
}

// destroy frees each layout at its own size: the next record of that exact size reuses the
// block (the pool keeps one free list per 8-byte size), and one 8 bytes larger does not.
TEST(VersionRecord, DestroyGivesBackTheSizeTheRecordTook) {
  SizeClassPool pool;
  const std::string value(100, 'v');
  VersionRecord* older = VersionRecord::make(pool, 1, std::string_view(value), nullptr);
  VersionRecord* first = VersionRecord::make(pool, 2, std::string_view(value), nullptr);
  void* at = first;
  VersionRecord::destroy(pool, first);
  EXPECT_NE(static_cast<void*>(VersionRecord::make(pool, 3, std::string_view(value), older)), at)
      << "a 120-byte record must not get the 112-byte block";
  EXPECT_EQ(static_cast<void*>(VersionRecord::make(pool, 4, std::string_view(value), nullptr)), at);
}

// Versions up to the largest a commit can have survive the flag in the top bit.
TEST(VersionRecord, LargeVersionsReadBackWhole) {
  SizeClassPool pool;
  const Version big = (Version{1} << 62) + 12345;
  VersionRecord* first = VersionRecord::make(pool, big, std::string_view("a"), nullptr);
  VersionRecord* chained = VersionRecord::make(pool, big + 1, std::string_view("b"), first);
  EXPECT_EQ(first->version(), big);
  EXPECT_EQ(chained->version(), big + 1);
  EXPECT_EQ(chained->value(), "b");
  VersionRecord::destroy(pool, chained);
  VersionRecord::destroy(pool, first);
}

// Where the invariants run (the sanitizer builds), a record made over one that is not
// older stops the process: a chain's versions strictly descend.
TEST(VersionRecordDeathTest, ARecordOverANewerOneBreaksAnInvariantWhereChecksRun) {
  if (!base::kDebugInvariants) GTEST_SKIP() << "built without STRATA_DEBUG_INVARIANTS";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        SizeClassPool pool;
        VersionRecord* newer = VersionRecord::make(pool, 9, std::nullopt, nullptr);
        (void)VersionRecord::make(pool, 7, std::nullopt, newer);
      },
      "invariant failed");
}

}  // namespace
}  // namespace strata::kv
