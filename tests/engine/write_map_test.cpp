#include "engine/write_map.hpp"

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

TEST(WriteMap, ClearRangeErasesPointWritesInside) {
  WriteMap w;
  w.set("b", "1");
  w.set("d", "2");
  w.clear_range("a", "c");
  EXPECT_EQ(w.find("b"), nullptr);
  EXPECT_TRUE(w.cleared("b"));
  ASSERT_NE(w.find("d"), nullptr);
  EXPECT_EQ(w.find("d")->value, "2");
}

TEST(WriteMap, SetInsideClearedRangeOverridesIt) {
  WriteMap w;
  w.clear_range("a", "z");
  w.set("m", "v");
  ASSERT_NE(w.find("m"), nullptr);
  EXPECT_EQ(w.find("m")->kind, PointWrite::Kind::set);
  EXPECT_TRUE(w.overwrites("m"));
  EXPECT_TRUE(w.overwrites("n"));
}

TEST(WriteMap, AtomicOnKnownValueFoldsIntoASet) {
  WriteMap w;
  w.set("k", std::string("\x01", 1));
  w.atomic("k", MutationType::add, std::string("\x02", 1));
  ASSERT_NE(w.find("k"), nullptr);
  EXPECT_EQ(w.find("k")->kind, PointWrite::Kind::set);
  EXPECT_EQ(w.find("k")->value, std::string("\x03", 1));
}

TEST(WriteMap, AtomicOnClearedRangeStartsFromAbsent) {
  WriteMap w;
  w.clear_range("a", "z");
  w.atomic("k", MutationType::compare_and_clear, "x");
  ASSERT_NE(w.find("k"), nullptr);
  EXPECT_EQ(w.find("k")->kind, PointWrite::Kind::clear);
}

TEST(WriteMap, AtomicOnUnknownValueStacksInOrder) {
  WriteMap w;
  w.atomic("k", MutationType::add, std::string("\x01", 1));
  w.atomic("k", MutationType::bit_xor, std::string("\x03", 1));
  const PointWrite* e = w.find("k");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, PointWrite::Kind::dependent);
  EXPECT_FALSE(w.overwrites("k"));
  // (4 + 1) ^ 3 = 6
  EXPECT_EQ(resolve_dependent(*e, std::string("\x04", 1)), std::string("\x06", 1));
}

TEST(WriteMap, UnwrittenPartsOfARangeSkipOwnWrites) {
  WriteMap w;
  w.set("c", "1");
  w.clear_range("e", "g");
  w.atomic("h", MutationType::add, "x");  // dependent: still conflicts
  std::vector<KeyRange> out;
  w.append_unwritten("a", "z", out);
  EXPECT_EQ(out, (std::vector<KeyRange>{{"a", "c"}, {std::string("c\0", 2), "e"}, {"g", "z"}}));
}

TEST(WriteMap, UnwrittenPartsWhenEverythingIsWritten) {
  WriteMap w;
  w.clear_range("a", "z");
  std::vector<KeyRange> out;
  w.append_unwritten("b", "c", out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace strata::engine
