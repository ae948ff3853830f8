#include "kv/skiplist.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

using List = SkipList<int>;

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%06d", i);
  return buf;
}

// The keys on level 0, first to last.
std::vector<std::string> bottom_level(const List& list) {
  std::vector<std::string> keys;
  for (auto* n = list.first(); n != nullptr; n = n->next(0)) keys.emplace_back(n->key());
  return keys;
}

TEST(SkipList, EmptyListFindsNothing) {
  SizeClassPool pool;
  List list(pool);
  EXPECT_EQ(list.first(), nullptr);
  EXPECT_EQ(list.find_greater_or_equal("a"), nullptr);
  EXPECT_EQ(list.find_less_than("z"), nullptr);
  EXPECT_EQ(list.find_last(), nullptr);
}

TEST(SkipList, MatchesOrderedSetModelUnderInsertAndUnlink) {
  SizeClassPool pool;
  List list(pool);
  std::set<std::string> model;
  std::mt19937_64 rng(42);
  for (int step = 0; step < 20000; ++step) {
    std::string k = key_of(static_cast<int>(rng() % 3000));
    auto* n = list.find_greater_or_equal(k);
    bool present = n != nullptr && n->key() == k;
    ASSERT_EQ(present, model.count(k) == 1) << k;
    if (rng() % 3 == 0 && present) {
      list.unlink(n);
      list.destroy_node(n);  // no concurrent readers in this test
      model.erase(k);
    } else if (!present) {
      list.insert(k, rng());
      model.insert(k);
    }
  }
  // Forward, backward and seeks agree with the model.
  EXPECT_EQ(bottom_level(list), std::vector<std::string>(model.begin(), model.end()));
  ASSERT_NE(list.find_last(), nullptr);
  EXPECT_EQ(list.find_last()->key(), *model.rbegin());
  for (int i = 0; i < 3000; i += 7) {
    std::string k = key_of(i);
    auto ge = model.lower_bound(k);
    auto* n = list.find_greater_or_equal(k);
    if (ge == model.end()) {
      EXPECT_EQ(n, nullptr);
    } else {
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->key(), *ge);
    }
    auto* lt = list.find_less_than(k);
    if (ge == model.begin()) {
      EXPECT_EQ(lt, nullptr);
    } else {
      ASSERT_NE(lt, nullptr);
      EXPECT_EQ(lt->key(), *std::prev(ge));
    }
  }
}

// Unlinks of the first few nodes (a queue's head) find their predecessors by following
// pointers from the front; deeper ones seek. Both must leave every level linked right:
// seeks (which use the upper levels) and the bottom level agree with a model, and freed
// nodes are never reached again (the asan preset reports it if they are).
TEST(SkipList, UnlinksNearTheFrontAndDeeperMatchTheModel) {
  SizeClassPool pool;
  List list(pool);
  std::set<std::string> model;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 20000; ++step) {
    std::string k = key_of(static_cast<int>(rng() % 400));
    if (model.count(k) == 0) {
      list.insert(k, rng());
      model.insert(k);
    }
    if (rng() % 2 == 0 && !model.empty()) {
      // Mostly one of the first three nodes, sometimes one further on.
      const std::size_t depth = rng() % 8 == 0 ? rng() % model.size() : rng() % 3;
      List::Node* n = list.first();
      for (std::size_t i = 0; i < depth && n->next(0) != nullptr; ++i) n = n->next(0);
      model.erase(std::string(n->key()));
      list.unlink(n);
      list.destroy_node(n);  // no concurrent readers in this test
    }
    if (step % 97 == 0) {
      for (int i = 0; i < 400; i += 3) {
        const std::string probe = key_of(i);
        auto ge = model.lower_bound(probe);
        auto* found = list.find_greater_or_equal(probe);
        ASSERT_EQ(found == nullptr, ge == model.end()) << probe;
        if (found != nullptr) {
          ASSERT_EQ(found->key(), *ge);
        }
      }
    }
  }
  EXPECT_EQ(bottom_level(list), std::vector<std::string>(model.begin(), model.end()));
}

// In-order inserts right after the previous one take their predecessors from it (the
// finger); the links they make must be the ones a seek would have made, on every level,
// whatever came between: ascending runs, keys slotted just after the last insert in the
// middle of the list, random keys inserted either way, unlinks.
TEST(SkipList, InOrderInsertsLinkEveryLevelAsASeekWould) {
  SizeClassPool pool;
  List list(pool);
  std::set<std::string> model;
  std::mt19937_64 rng(7);
  auto insert = [&](const std::string& k, bool in_order) {
    if (model.insert(k).second) list.insert(k, rng(), in_order);
  };
  for (int round = 0; round < 200; ++round) {
    const int base = static_cast<int>(rng() % 90000);
    for (int i = 0; i < 50; ++i) insert(key_of(base + 2 * i), true);  // an ascending run
    const std::string gap = key_of(base + 2 * static_cast<int>(rng() % 50) + 1);
    insert(gap, true);        // a gap in the run
    insert(gap + "x", true);  // just after it, in the middle of the list
    insert(key_of(static_cast<int>(rng() % 100000)), rng() % 2 == 0);  // anywhere
    // Unlink the last in-order insert or a node of its run (on the finger's levels), then
    // insert right after where it was: the finger must not be used.
    const std::string last = key_of(base + 2 * (round % 3 == 0 ? 49 : 48));
    if (auto* n = list.find_greater_or_equal(last); n != nullptr && n->key() == last) {
      insert(key_of(base + 99), true);  // the last in-order insert, right after `last`
      model.erase(last);
      list.unlink(n);
      list.destroy_node(n);
      insert(key_of(base + 99) + "y", true);
    }
    if (rng() % 4 == 0) {
      auto* n = list.find_greater_or_equal(key_of(static_cast<int>(rng() % 100000)));
      if (n != nullptr) {
        model.erase(std::string(n->key()));
        list.unlink(n);
        list.destroy_node(n);
      }
    }
  }
  std::vector<const List::Node*> nodes;
  for (auto* n = list.first(); n != nullptr; n = n->next(0)) nodes.push_back(n);
  std::vector<std::string> keys;
  for (const auto* n : nodes) keys.emplace_back(n->key());
  ASSERT_EQ(keys, std::vector<std::string>(model.begin(), model.end()));
  // On each level, every node links to the next node (in key order) that is on that level.
  for (int level = 1; level < List::kMaxHeight; ++level) {
    const List::Node* expected = nullptr;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      if ((*it)->height() <= level) continue;
      ASSERT_EQ((*it)->next(level), expected) << "level " << level << " at " << (*it)->key();
      expected = *it;
    }
  }
  for (const auto& k : model) {
    auto* n = list.find_greater_or_equal(k);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->key(), k);
  }
}

std::vector<List::Path*> pointers_to(std::vector<List::Path>& paths) {
  std::vector<List::Path*> pointers;
  for (List::Path& p : paths) pointers.push_back(&p);
  return pointers;
}

// Every level of `list` links exactly the nodes at least that tall, in key order.
void expect_levels_consistent(const List& list) {
  std::vector<const List::Node*> all;
  for (const List::Node* n = list.first(); n != nullptr; n = n->next(0)) all.push_back(n);
  for (std::size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1]->key(), all[i]->key());
  for (int level = 1; level < List::kMaxHeight; ++level) {
    std::vector<const List::Node*> expect;
    for (const List::Node* n : all) {
      if (n->height() > level) expect.push_back(n);
    }
    std::vector<const List::Node*> linked;
    for (const List::Node* n = list.head()->next(level); n != nullptr; n = n->next(level)) {
      linked.push_back(n);
    }
    ASSERT_EQ(linked, expect) << "level " << level;
  }
}

// The walks prefetch_paths takes for a batch end where a seek for each key would: over an
// empty list, before the first key, after the last, at present keys, between keys, with
// repeats, and with more keys than one group of walks (32) holds. On every level the
// path's node comes before the key and the next one does not. The list is unchanged.
// Each path holds its key's predecessor on every level, as a seek finds them.
void expect_seek_paths(const List& list, const std::vector<std::string>& keys,
                       const std::vector<List::Path>& paths) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const List::Node* before = list.find_less_than(keys[i]);
    EXPECT_EQ(paths[i].prev[0], before != nullptr ? before : list.head()) << keys[i];
    EXPECT_EQ(paths[i].height, list.height());
    for (int level = 0; level < paths[i].height; ++level) {
      const List::Node* at = paths[i].prev[level];
      EXPECT_TRUE(at == list.head() || at->key() < keys[i]) << keys[i] << " " << level;
      const List::Node* next = at->next(level);
      EXPECT_TRUE(next == nullptr || next->key() >= keys[i]) << keys[i] << " " << level;
    }
  }
}

// Up to 5,000 random even-numbered keys, inserted; returns them.
std::set<std::string> insert_even_keys(List& list, std::mt19937_64& rng) {
  std::set<std::string> keys;
  for (int i = 0; i < 5000; ++i) {
    std::string k = key_of(static_cast<int>(rng() % 100000) * 2);
    if (keys.insert(k).second) list.insert(k, rng());
  }
  return keys;
}

TEST(SkipList, PrefetchPathsEndWhereSeeksEnd) {
  SizeClassPool pool;
  List list(pool);
  std::mt19937_64 rng(11);
  auto check = [&](const std::vector<std::string>& keys) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<List::Path> paths(keys.size());
    list.prefetch_paths(views, pointers_to(paths));
    expect_seek_paths(list, keys, paths);
    list.prefetch_paths(views);  // no output wanted: only fetches
  };
  std::vector<std::string> probes = {"", "a", "k", key_of(0), key_of(500), "z"};
  check(probes);  // empty list: every walk ends at the head

  const std::set<std::string> model = insert_even_keys(list, rng);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> keys = probes;
    for (int i = 0; i < 70; ++i) {
      keys.push_back(key_of(static_cast<int>(rng() % 200002)));  // present, absent, past the end
    }
    keys.push_back(keys[7]);  // a repeat
    check(keys);
  }
  std::vector<std::string> in_order(model.begin(), model.end());
  EXPECT_EQ(in_order.front(), list.first()->key());
  std::size_t count = 0;
  for (const List::Node* n = list.first(); n != nullptr; n = n->next(0)) ++count;
  EXPECT_EQ(count, model.size());
}

// Finger searches for ascending keys find what seeks find: keys close together (a step
// apart), far apart (a climb to the top), repeated, before the first and past the last.
TEST(SkipList, FindPathsInOrderEndWhereSeeksEnd) {
  SizeClassPool pool;
  List list(pool);
  std::mt19937_64 rng(12);
  auto check = [&](std::vector<std::string> keys) {
    std::sort(keys.begin(), keys.end());
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<List::Path> paths(keys.size());
    list.find_paths_in_order(views, pointers_to(paths));
    expect_seek_paths(list, keys, paths);
  };
  std::vector<std::string> probes = {"", "a", "k", key_of(0), key_of(500), "z"};
  check(probes);  // empty list: every path is the head's
  insert_even_keys(list, rng);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> keys = probes;
    const int spread = round % 2 == 0 ? 200002 : 300;  // sparse, or dense in a corner
    for (int i = 0; i < 70; ++i) keys.push_back(key_of(static_cast<int>(rng() % spread)));
    keys.push_back(keys[7]);  // a repeat
    check(keys);
  }
  check({key_of(1)});  // one key: a plain descent
  check({});
}

// Keys inserted along paths walked before any of them went in land where plain inserts
// would: each later insert walks past the earlier ones on every level, including levels
// the list grew after the walk and keys that share a predecessor.
TEST(SkipList, InsertAlongPathsWalkedBeforeTheBatchKeepsEveryLevelOrdered) {
  SizeClassPool pool;
  List list(pool);
  std::set<std::string> model;
  std::mt19937_64 rng(5);
  for (int round = 0; round < 60; ++round) {
    // Early rounds start from a short list, so the batch often raises its height.
    std::vector<std::string> keys;
    const int batch = 1 + static_cast<int>(rng() % 80);
    for (int i = 0; i < batch; ++i) keys.push_back(key_of(static_cast<int>(rng() % 20000)));
    if (round % 3 == 0) std::sort(keys.begin(), keys.end());  // neighbours share paths
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<List::Path> paths(keys.size());
    list.prefetch_paths(views, pointers_to(paths));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!model.insert(keys[i]).second) continue;  // present, or a repeat in the batch
      // Taller nodes than usual: new levels appear between a walk and its insert.
      const std::uint64_t bits = rng() << (2 * (rng() % 6));
      const List::Node* n = list.insert_along(keys[i], paths[i], bits);
      EXPECT_EQ(n->key(), keys[i]);
    }
    expect_levels_consistent(list);
  }
  std::vector<std::string> listed;
  for (const List::Node* n = list.first(); n != nullptr; n = n->next(0)) {
    listed.emplace_back(n->key());
  }
  EXPECT_EQ(listed, std::vector<std::string>(model.begin(), model.end()));
}

// find_last_less_than_if agrees with a backward scan of the model, whatever the keep
// predicate rejects: single nodes, long runs (a drained queue's tail), or everything.
TEST(SkipList, LastLessThanIfMatchesABackwardScan) {
  SizeClassPool pool;
  List list(pool);
  std::set<std::string> model;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4000; ++i) {
    std::string k = key_of(static_cast<int>(rng() % 6000));
    if (model.insert(k).second) list.insert(k, rng());
  }
  for (int step = 0; step < 3000; ++step) {
    // Keep keys whose number is a multiple of `every`: 1 keeps all, 100000 keeps none.
    const int every = std::array{1, 2, 7, 97, 1000, 100000}[rng() % 6];
    auto keep_key = [every](std::string_view k) {
      return std::stoi(std::string(k.substr(1))) % every == 0;
    };
    std::string key = key_of(static_cast<int>(rng() % 6100));
    std::string floor = rng() % 4 == 0 ? std::string() : key_of(static_cast<int>(rng() % 6000));
    const std::string* expect = nullptr;
    for (auto it = model.lower_bound(key); it != model.begin();) {
      --it;
      if (*it < floor) break;
      if (keep_key(*it)) {
        expect = &*it;
        break;
      }
    }
    auto* got = list.find_last_less_than_if(
        key, floor, [&](const List::Node* n) { return keep_key(n->key()); });
    if (expect == nullptr) {
      ASSERT_EQ(got, nullptr) << "step " << step;
    } else {
      ASSERT_NE(got, nullptr) << "step " << step;
      ASSERT_EQ(got->key(), *expect) << "step " << step;
    }
  }
}

// The same in small lists, for every key, floor and rejected set: the floor is then a few
// steps from the head or from a level's predecessor (found by walking there, not seeking).
TEST(SkipList, LastLessThanIfInSmallLists) {
  std::mt19937_64 rng(11);
  for (int size = 0; size <= 12; ++size) {
    SizeClassPool pool;
    List list(pool);
    std::vector<std::string> keys;  // 2, 4, 6, ...: odd keys and floors fall between them
    for (int i = 1; i <= size; ++i) {
      keys.push_back(key_of(2 * i));
      list.insert(keys.back(), rng());
    }
    for (int rejected_mask = 0; rejected_mask < 8; ++rejected_mask) {
      // Rejects the keys whose index is in the mask's pattern (repeated every 3 keys).
      auto keep_index = [&](std::size_t i) { return ((rejected_mask >> (i % 3)) & 1) == 0; };
      for (int k = 0; k <= 2 * size + 2; ++k) {
        for (int f = -1; f <= k; ++f) {
          const std::string key = key_of(k);
          const std::string floor = f < 0 ? std::string() : key_of(f);
          const std::string* expect = nullptr;
          for (std::size_t i = keys.size(); i-- > 0;) {
            if (keys[i] >= key) continue;
            if (keys[i] < floor) break;
            if (keep_index(i)) {
              expect = &keys[i];
              break;
            }
          }
          const List::Node* got = list.find_last_less_than_if(key, floor, [&](const List::Node* n) {
            auto at = std::lower_bound(keys.begin(), keys.end(), std::string(n->key()));
            return keep_index(static_cast<std::size_t>(at - keys.begin()));
          });
          if (expect == nullptr) {
            ASSERT_EQ(got, nullptr) << size << " " << k << " " << f << " " << rejected_mask;
          } else {
            ASSERT_NE(got, nullptr) << size << " " << k << " " << f << " " << rejected_mask;
            ASSERT_EQ(got->key(), *expect) << size << " " << k << " " << f << " " << rejected_mask;
          }
        }
      }
    }
  }
}

// Random bits that draw a node `height` levels high (random_height: two bits a level).
std::uint64_t bits_for_height(int height) {
  return height >= List::kMaxHeight ? 0 : std::uint64_t{1} << (2 * (height - 1));
}
const std::uint64_t kHeight1 = bits_for_height(1);
const std::uint64_t kHeight2 = bits_for_height(2);
const std::uint64_t kTallest = bits_for_height(List::kMaxHeight);

// A seek steps past every node of a long stretch before its key: in a list high enough
// for seeks to miss the cache, an insert into a stretch of kCrowdedGap nodes or more on
// levels 0 to l-1 is made l + 1 high, whatever its random bits say.
TEST(SkipList, AnInsertIntoCrowdedStretchesIsMadeTallEnoughToSplitThem) {
  SizeClassPool pool;
  List list(pool);
  list.insert("a", kTallest);
  ASSERT_GE(list.height(), List::kCrowdingHeight);
  static_assert(List::kCrowdedGap == 4, "the stretches below are 4 nodes long");
  // Level 1: c1..c4 after "a". Each insert passes fewer than 4 nodes on each level.
  for (const char* k : {"c1", "c2", "c3", "c4"}) EXPECT_EQ(list.insert(k, kHeight2)->height(), 2);
  // d1 passes c1..c4 on level 1, but nothing on level 0: crowded above only, so height 1.
  for (const char* k : {"d1", "d2", "d3", "d4"}) EXPECT_EQ(list.insert(k, kHeight1)->height(), 1);
  // e passes c1..c4 on level 1 and d1..d4 on level 0: it splits both stretches.
  List::Node* e = list.insert("e", kHeight1);
  EXPECT_EQ(e->height(), 3);
  EXPECT_EQ(list.find_less_than("e")->key(), "d4");
  EXPECT_EQ(list.find_greater_or_equal("d5")->key(), "e");
  // f passes a on the top level and e on level 2, nothing below: its own bits decide.
  EXPECT_EQ(list.insert("f", kHeight1)->height(), 1);
  const std::vector<std::string> want = {"a",  "c1", "c2", "c3", "c4", "d1",
                                         "d2", "d3", "d4", "e",  "f"};
  EXPECT_EQ(bottom_level(list), want);
}

// A list `height` levels high where a seek for a key after all of them passes 4 nodes on
// every level: 4 nodes of each height from `height` down to 1, in key order.
void build_staircase(List& list, int height) {
  int i = 0;
  for (int h = height; h >= 1; --h) {
    for (int n = 0; n < 4; ++n)
      ASSERT_EQ(list.insert(key_of(i++), bits_for_height(h))->height(), h);
  }
  ASSERT_EQ(list.height(), height);
}

// Crowded on every level, an insert raises the list by one level, up to kMaxHeight.
TEST(SkipList, AnInsertCrowdedOnEveryLevelRaisesTheListUpToItsMostLevels) {
  for (const int height : {List::kCrowdingHeight, List::kMaxHeight - 1, List::kMaxHeight}) {
    SCOPED_TRACE(height);
    SizeClassPool pool;
    List list(pool);
    ASSERT_NO_FATAL_FAILURE(build_staircase(list, height));
    const int want = std::min(height + 1, List::kMaxHeight);
    EXPECT_EQ(list.insert("z", kHeight1)->height(), want);
    EXPECT_EQ(list.height(), want);
    EXPECT_EQ(list.find_less_than("z")->key(), key_of(4 * height - 1));
  }
}

// A list below kCrowdingHeight levels is cached: its inserts keep the heights drawn.
TEST(SkipList, ALowListKeepsTheHeightsDrawn) {
  SizeClassPool pool;
  List list(pool);
  list.insert("a", kHeight2);
  ASSERT_LT(list.height(), List::kCrowdingHeight);
  for (const char* k : {"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"}) {
    EXPECT_EQ(list.insert(k, kHeight1)->height(), 1);
  }
}

// A list that drains (a queue's) gives back the levels it no longer needs, so that seeks
// in what is left do not step through empty levels.
TEST(SkipList, HeightFallsAsTheListDrains) {
  SizeClassPool pool;
  List list(pool);
  std::mt19937_64 rng(3);
  std::vector<List::Node*> nodes;
  for (int i = 0; i < 5000; ++i) nodes.push_back(list.insert(key_of(i), rng()));
  EXPECT_GE(list.height(), 4);  // p = 1/4: below 4 levels for 5,000 keys is ~1e-11 likely
  for (int i = 0; i < 4999; ++i) {
    list.unlink(nodes[static_cast<std::size_t>(i)]);
    list.destroy_node(nodes[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(list.height(), nodes.back()->height());
  ASSERT_NE(list.find_greater_or_equal(""), nullptr);
  EXPECT_EQ(list.find_greater_or_equal("")->key(), key_of(4999));
  list.unlink(nodes.back());
  list.destroy_node(nodes.back());
  EXPECT_EQ(list.height(), 1);
  EXPECT_EQ(list.first(), nullptr);
  // It grows again as it fills.
  for (int i = 0; i < 5000; ++i) list.insert(key_of(i), rng());
  EXPECT_GE(list.height(), 4);
  EXPECT_EQ(list.find_less_than(key_of(2500))->key(), key_of(2499));
}

// Readers keep finding a key that stays while the writer fills and drains the list around
// it, so the height rises and falls under them. Unlinked nodes are not freed in the run.
TEST(SkipList, ReadersFindAStayingKeyWhileTheHeightRisesAndFalls) {
  SizeClassPool pool;
  List list(pool);
  const std::string staying = key_of(500000);
  std::mt19937_64 rng(11);
  list.insert(staying, 1);  // height 1: the list's height is the others'
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<int> seeks{0};
  auto reader = [&] {
    while (!done.load(std::memory_order_acquire)) {
      auto* n = list.find_greater_or_equal(key_of(400000));
      if (n == nullptr || n->key() != staying) failures.fetch_add(1);
      auto* lt = list.find_less_than(key_of(600000));
      if (lt == nullptr || lt->key() != staying) failures.fetch_add(1);
      seeks.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread r1(reader), r2(reader);
  std::vector<List::Node*> retired;
  for (int round = 0; round < 50; ++round) {
    std::vector<List::Node*> nodes;
    for (int i = 0; i < 400; ++i) nodes.push_back(list.insert(key_of(round * 1000 + i), rng()));
    for (auto* n : nodes) {
      list.unlink(n);
      retired.push_back(n);
    }
    EXPECT_EQ(list.height(), 1);
  }
  int target = seeks.load() + 100;
  while (seeks.load() < target) std::this_thread::yield();
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(failures.load(), 0);
  for (auto* n : retired) list.destroy_node(n);
}

// leveldb-style concurrent test: one writer inserts keys in random order while readers
// scan. A key inserted before a scan started must be seen by it, every scan is sorted,
// and no scan sees a key that was never inserted. Nodes are never freed during the run.
TEST(SkipList, ConcurrentReadersNeverMissKeysInsertedBeforeTheirScan) {
  constexpr int kKeys = 20000;
  // The payload is published after the link (as the MVCC store does): 0 until then.
  SizeClassPool pool;
  SkipList<std::atomic<int>> list(pool);
  std::vector<std::atomic<bool>> inserted(kKeys);
  std::atomic<bool> done{false};
  std::atomic<int> scans{0};
  std::atomic<int> failures{0};

  auto reader = [&] {
    std::vector<bool> before(kKeys);
    while (!done.load(std::memory_order_acquire)) {
      for (int i = 0; i < kKeys; ++i) before[i] = inserted[i].load(std::memory_order_acquire);
      std::string prev;
      std::vector<bool> seen(kKeys);
      for (auto* n = list.first(); n != nullptr; n = n->next(0)) {
        std::string k(n->key());
        if (!prev.empty() && k <= prev) failures.fetch_add(1);
        prev = k;
        int i = std::stoi(k.substr(1));
        int p = n->payload().load(std::memory_order_acquire);
        if (p != 0 && p != i + 1) failures.fetch_add(1);
        seen[i] = true;
      }
      for (int i = 0; i < kKeys; ++i) {
        if (before[i] && !seen[i]) failures.fetch_add(1);
      }
      scans.fetch_add(1);
    }
  };
  std::thread r1(reader), r2(reader);
  std::vector<int> order(kKeys);
  for (int i = 0; i < kKeys; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  std::mt19937_64 rng(9);
  for (int i : order) {
    auto* n = list.insert(key_of(i), rng());
    n->payload().store(i + 1, std::memory_order_release);
    inserted[i].store(true, std::memory_order_release);
  }
  // Let the readers finish at least one full scan after the last insert.
  int target = scans.load() + 2;
  while (scans.load() < target) std::this_thread::yield();
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(failures.load(), 0);
}

// find_greater_or_equal returns the node it compared with the key, not a second load of
// before->next(0), which could be a node inserted in between (a smaller key): a lookup of
// an existing key never misses it. Readers look up existing keys while the writer inserts
// keys just before them.
TEST(SkipList, LookupOfAnExistingKeyNeverMissesDuringInserts) {
  constexpr int kKeys = 4000;
  SizeClassPool pool;
  SkipList<int> list(pool);
  std::mt19937_64 rng(5);
  for (int i = 0; i < kKeys; ++i) list.insert(key_of(2 * i + 1), rng());  // odd keys exist
  std::atomic<bool> done{false};
  std::atomic<long> misses{0}, lookups{0};
  auto reader = [&] {
    std::mt19937 r(11);
    while (!done.load(std::memory_order_acquire)) {
      std::string k = key_of(2 * static_cast<int>(r() % kKeys) + 1);
      auto* n = list.find_greater_or_equal(k);
      if (n == nullptr || n->key() != k) misses.fetch_add(1);
      lookups.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < 40; ++round) {
    // key_of(2i) + "xx..." sorts between key_of(2i) and key_of(2i + 1): every insert
    // lands in the gap a lookup of key_of(2i + 1) compares across.
    for (int i = 0; i < kKeys; ++i) list.insert(key_of(2 * i) + std::string(round, 'x'), rng());
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_GT(lookups.load(), 0);
  EXPECT_EQ(misses.load(), 0) << "of " << lookups.load() << " lookups";
}

// The invariants (base/invariant.hpp) run in the sanitizer builds: there, linking a key
// that is already in the list (insert's precondition broken) stops the process at once
// rather than leave two nodes of one key. Elsewhere the checks compile to nothing.
TEST(SkipListDeathTest, InsertingALinkedKeyAgainBreaksAnInvariantWhereChecksRun) {
  if (!base::kDebugInvariants) GTEST_SKIP() << "built without STRATA_DEBUG_INVARIANTS";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        SizeClassPool pool;
        List list(pool);
        list.insert("a", 3);
        list.insert("a", 3);
      },
      "invariant failed");
}

}  // namespace
}  // namespace strata::kv
