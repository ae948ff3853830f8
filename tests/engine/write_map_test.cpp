#include "engine/write_map.hpp"

#include <cstddef>
#include <memory_resource>
#include <string>

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
  EXPECT_EQ(std::string_view(w.find("k")->value), std::string_view("\x03", 1));
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

std::vector<KeyRange> plain(const ArenaRanges& ranges) {
  std::vector<KeyRange> out;
  for (const ArenaRange& r : ranges) out.push_back({std::string(r.begin), std::string(r.end)});
  return out;
}

TEST(WriteMap, UnwrittenPartsOfARangeSkipOwnWrites) {
  WriteMap w;
  w.set("c", "1");
  w.clear_range("e", "g");
  w.atomic("h", MutationType::add, "x");  // dependent: still conflicts
  std::pmr::monotonic_buffer_resource arena;
  ArenaRanges out(&arena);
  w.append_unwritten("a", "z", out);
  EXPECT_EQ(plain(out),
            (std::vector<KeyRange>{{"a", "c"}, {std::string("c\0", 2), "e"}, {"g", "z"}}));
}

TEST(WriteMap, UnwrittenPartsWhenEverythingIsWritten) {
  WriteMap w;
  w.clear_range("a", "z");
  std::pmr::monotonic_buffer_resource arena;
  ArenaRanges out(&arena);
  w.append_unwritten("b", "c", out);
  EXPECT_TRUE(out.empty());
}

// A limited forward read's span ends just after its last key: [begin, end + 00), whole
// when nothing was written, and cut the same way as any range when something was.
TEST(WriteMap, UnwrittenPartsOfASpanEndingAfterItsLastKey) {
  const std::string c_after("c\0", 2);
  std::pmr::monotonic_buffer_resource arena;
  WriteMap nothing;
  ArenaRanges whole(&arena);
  nothing.append_unwritten("a", "c", true, whole);
  nothing.append_unwritten("c", "c", true, whole);  // one key: [c, c+00)
  EXPECT_EQ(plain(whole), (std::vector<KeyRange>{{"a", c_after}, {"c", c_after}}));

  WriteMap w;
  w.set("b", "1");
  ArenaRanges cut(&arena);
  w.append_unwritten("a", "c", true, cut);
  EXPECT_EQ(plain(cut), (std::vector<KeyRange>{{"a", "b"}, {std::string("b\0", 2), c_after}}));
  w.set("c", "2");  // the last key itself written: nothing of it is left
  ArenaRanges none(&arena);
  w.append_unwritten("c", "c", true, none);
  EXPECT_TRUE(none.empty());
}

// Counts what is allocated through it (and passes it on to the heap).
class CountingResource : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    ++allocations;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

TEST(WriteMap, PointEntriesLiveInTheGivenResource) {
  CountingResource arena;
  WriteMap w(&arena);
  const std::string long_key(100, 'k');  // beyond any small-string buffer
  const std::string long_value(200, 'v');
  w.set(long_key, long_value);
  // The node, the key and the value: three allocations, all from the arena.
  EXPECT_EQ(arena.allocations, 3u);
  ASSERT_NE(w.find(long_key), nullptr);
  EXPECT_EQ(std::string_view(w.find(long_key)->value), long_value);
  EXPECT_EQ(w.find(long_key)->value.get_allocator().resource(), &arena);
  EXPECT_EQ(w.points().begin()->first.get_allocator().resource(), &arena);
  w.clear(long_key);  // the same entry: nothing new
  EXPECT_EQ(arena.allocations, 3u);
  w.reset();
  EXPECT_TRUE(w.empty());
}

}  // namespace
}  // namespace strata::engine
