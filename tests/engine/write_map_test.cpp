#include "engine/write_map.hpp"

#include <array>
#include <cstddef>
#include <cstdio>
#include <map>
#include <memory_resource>
#include <random>
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
  EXPECT_EQ(w.find("d")->value(), "2");
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
  EXPECT_EQ(w.find("k")->value(), std::string_view("\x03", 1));
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
  base::Arena arena(nullptr, 0);
  ArenaRanges out(&arena);
  w.append_unwritten("a", "z", out);
  EXPECT_EQ(plain(out),
            (std::vector<KeyRange>{{"a", "c"}, {std::string("c\0", 2), "e"}, {"g", "z"}}));
}

TEST(WriteMap, UnwrittenPartsWhenEverythingIsWritten) {
  WriteMap w;
  w.clear_range("a", "z");
  base::Arena arena(nullptr, 0);
  ArenaRanges out(&arena);
  w.append_unwritten("b", "c", out);
  EXPECT_TRUE(out.empty());
}

// A limited forward read's span ends just after its last key: [begin, end + 00), whole
// when nothing was written, and cut the same way as any range when something was.
TEST(WriteMap, UnwrittenPartsOfASpanEndingAfterItsLastKey) {
  const std::string c_after("c\0", 2);
  base::Arena arena(nullptr, 0);
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

TEST(WriteMap, KeysAndValuesLiveInTheGivenArenaAndRewritesReuseTheirRoom) {
  std::array<std::byte, 4096> buffer{};
  base::Arena arena(buffer.data(), buffer.size());
  auto inside = [&](std::string_view bytes) {
    const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
    return p >= buffer.data() && p + bytes.size() <= buffer.data() + buffer.size();
  };
  WriteMap w(&arena);
  const std::string long_key(100, 'k');
  w.set(long_key, std::string(200, 'v'));
  ASSERT_NE(w.find(long_key), nullptr);
  EXPECT_TRUE(inside(w.points().begin()->first));
  EXPECT_TRUE(inside(w.find(long_key)->value()));
  const char* room = w.find(long_key)->value().data();
  w.clear(long_key);
  w.set(long_key, std::string(150, 'w'));  // fits where the value was
  EXPECT_EQ(w.find(long_key)->value().data(), room);
  EXPECT_EQ(w.find(long_key)->value(), std::string(150, 'w'));
  w.set(long_key, std::string(300, 'x'));  // does not: new room, twice the old (400 bytes)
  const char* grown = w.find(long_key)->value().data();
  EXPECT_NE(grown, room);
  w.set(long_key, std::string(400, 'y'));
  EXPECT_EQ(w.find(long_key)->value().data(), grown);
  EXPECT_EQ(w.find(long_key)->value(), std::string(400, 'y'));
  w.reset();
  EXPECT_TRUE(w.empty());
}

// A key written after every other (a transaction's first write, or keys in ascending order)
// is appended with its key and value in one arena block; rewriting, clearing and setting it
// again must read as for a key written in any other order.
TEST(WriteMap, AppendedKeysRewriteAsOthers) {
  auto exercise = [](WriteMap& w, bool ascending) {
    const char* first = ascending ? "a" : "b";
    const char* second = ascending ? "b" : "a";
    w.set(first, "1");
    w.clear(second);
    w.set(ascending ? "a" : "b", std::string(50, 'x'));  // grows past its first room
    w.set(ascending ? "b" : "a", "22");                  // a clear's room was empty
    w.set(ascending ? "a" : "b", "3");                   // fits again
    w.clear("c");
  };
  WriteMap appended;
  exercise(appended, true);
  WriteMap inserted;
  exercise(inserted, false);
  EXPECT_EQ(appended.find("a")->value(), "3");
  EXPECT_EQ(appended.find("b")->value(), "22");
  EXPECT_EQ(inserted.find("b")->value(), "3");
  EXPECT_EQ(inserted.find("a")->value(), "22");
  for (WriteMap* w : {&appended, &inserted}) {
    ASSERT_EQ(w->points().size(), 3u);
    EXPECT_EQ(w->find("a")->kind, PointWrite::Kind::set);
    EXPECT_EQ(w->find("c")->kind, PointWrite::Kind::clear);
    EXPECT_EQ(w->find("c")->value(), "");
    EXPECT_TRUE(w->overwrites("c"));
    EXPECT_TRUE(w->only_sets_and_clears());
    // A reset of sets and clears drops the entries as one; the map then starts over.
    w->reset();
    EXPECT_TRUE(w->empty());
    w->set("z", "9");
    ASSERT_EQ(w->points().size(), 1u);
    EXPECT_EQ(w->find("z")->value(), "9");
    EXPECT_EQ(w->find("a"), nullptr);
  }
}

// Keys written in random order past PointMap::kMaxShift move the entries into a tree; the
// map must read the same as a std::map throughout, in both representations, and after a
// reset start over as an array.
TEST(WriteMap, ManyKeysInRandomOrderMatchAMapModel) {
  WriteMap w;
  std::map<std::string, std::string> model;
  std::mt19937 rng(42);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 400; ++i) {
      std::string key = "k" + std::to_string(rng() % 500);
      switch (rng() % 5) {
        case 0: {
          std::string b = key, e = "k" + std::to_string(rng() % 500);
          if (b > e) std::swap(b, e);
          w.clear_range(b, e);
          model.erase(model.lower_bound(b), model.lower_bound(e));
          break;
        }
        default: {
          std::string value(rng() % 40, static_cast<char>('a' + i % 26));
          w.set(key, value);
          model[key] = value;
        }
      }
      if (i % 50 == 0 || i == 399) {
        std::map<std::string, std::string> seen;
        for (const auto& [k, pw] : w.points()) {
          if (pw.kind == PointWrite::Kind::set) seen.emplace(std::string(k), pw.value());
        }
        ASSERT_EQ(seen, model) << "round " << round << " step " << i;
        // lower_bound and backwards iteration agree with the model too.
        auto it = w.points().lower_bound("k3");
        auto want = model.lower_bound("k3");
        ASSERT_EQ(it == w.points().end(), want == model.end());
        if (want != model.begin()) {
          ASSERT_NE(it, w.points().begin());
          EXPECT_EQ(std::prev(it)->first, std::prev(want)->first);
        }
      }
    }
    EXPECT_TRUE(w.points().in_tree()) << "random keys past kMaxShift";
    w.reset();
    model.clear();
    EXPECT_TRUE(w.empty());
    EXPECT_FALSE(w.points().in_tree());
  }
}

// The array's first room is inside the map: the first entries stay there, entries with
// heap-owning operations move intact when the array outgrows it, and after a reset the
// map writes into the same room again.
TEST(WriteMap, FirstEntriesUseTheMapsOwnRoomAfterEveryReset) {
  std::array<std::byte, 4096> buffer{};
  base::Arena arena(buffer.data(), buffer.size());
  WriteMap w(&arena);
  w.atomic("a", MutationType::add, std::string("\x01", 1));
  w.atomic("b", MutationType::bit_xor, std::string("\x03", 1));
  auto in_arena = [&](const PointEntry* e) {
    const auto* p = reinterpret_cast<const std::byte*>(e);
    return p >= buffer.data() && p < buffer.data() + buffer.size();
  };
  const PointEntry* room = &*w.points().begin();
  EXPECT_FALSE(in_arena(room));
  w.set("c", "3");  // past the inline room: the entries move to the arena
  EXPECT_TRUE(in_arena(&*w.points().begin()));
  ASSERT_EQ(w.points().size(), 3u);
  ASSERT_NE(w.find("a"), nullptr);
  ASSERT_EQ(w.find("a")->ops.size(), 1u);
  EXPECT_EQ(w.find("a")->ops[0].type, MutationType::add);
  ASSERT_NE(w.find("b"), nullptr);
  ASSERT_EQ(w.find("b")->ops.size(), 1u);
  EXPECT_EQ(w.find("b")->ops[0].param, std::string("\x03", 1));
  EXPECT_EQ(w.find("c")->value(), "3");
  w.reset();
  arena.release();
  EXPECT_TRUE(w.empty());
  w.set("z", "1");
  EXPECT_EQ(&*w.points().begin(), room);
  w.set("y", "2");  // before "z": moves it within the room
  EXPECT_EQ(&*w.points().begin(), room);
  ASSERT_EQ(w.points().size(), 2u);
  EXPECT_EQ(w.points().begin()->first, "y");
  EXPECT_EQ(w.find("z")->value(), "1");
}

TEST(WriteMap, KeysInAscendingOrderStayInTheArray) {
  WriteMap w;
  for (int i = 0; i < 1000; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%04d", i);
    w.set(key, "v");
  }
  EXPECT_FALSE(w.points().in_tree());
  EXPECT_EQ(w.points().size(), 1000u);
  w.clear_range("k0990", "k1000");  // the tail: a short move
  EXPECT_FALSE(w.points().in_tree());
  EXPECT_EQ(w.points().size(), 990u);
  w.clear_range("k0100", "k0101");  // 889 entries would move: becomes a tree
  EXPECT_TRUE(w.points().in_tree());
  EXPECT_EQ(w.points().size(), 989u);
  EXPECT_EQ(w.find("k0100"), nullptr);
  EXPECT_NE(w.find("k0101"), nullptr);
}

}  // namespace
}  // namespace strata::engine
