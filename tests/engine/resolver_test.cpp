#include "engine/resolver.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

// Model: the newest version written at each single-byte key position 'a'..'z' (keys
// in the tests are one letter, and a range [b, e) covers the letters b <= x < e).
struct Model {
  std::map<char, Version> v;
  Version newest(char b, char e) const {
    Version best = 0;
    for (char c = b; c < e; ++c) {
      auto it = v.find(c);
      if (it != v.end()) best = std::max(best, it->second);
    }
    return best;
  }
};

TEST(Resolver, EmptyHistoryHasNoWrites) {
  Resolver r;
  EXPECT_EQ(r.newest_write("a", "z"), 0);
}

TEST(Resolver, TouchingRangesDoNotOverlap) {
  Resolver r;
  r.record_write("c", "e", 5);
  EXPECT_EQ(r.newest_write("a", "c"), 0);
  EXPECT_EQ(r.newest_write("e", "g"), 0);
  EXPECT_EQ(r.newest_write("d", std::string("d\0", 2)), 5);
  EXPECT_EQ(r.newest_write("a", "z"), 5);
}

TEST(Resolver, NewerWriteInsideOlderKeepsTheOuterParts) {
  Resolver r;
  r.record_write("a", "z", 3);
  r.record_write("m", "n", 7);
  EXPECT_EQ(r.newest_write("b", "c"), 3);
  EXPECT_EQ(r.newest_write("m", "n"), 7);
  EXPECT_EQ(r.newest_write("n", "y"), 3);
  EXPECT_EQ(r.newest_write("l", "o"), 7);
}

TEST(Resolver, MatchesModelOnRandomWritesAndQueries) {
  Resolver r;
  Model m;
  std::mt19937 rng(1);
  Version version = 0;
  for (int step = 0; step < 5000; ++step) {
    char b = static_cast<char>('a' + rng() % 26);
    char e = static_cast<char>('a' + rng() % 27);
    if (b >= e) continue;
    if (rng() % 2 == 0) {
      ++version;
      r.record_write(std::string(1, b), std::string(1, e), version);
      for (char c = b; c < e; ++c) m.v[c] = version;
    } else {
      ASSERT_EQ(r.newest_write(std::string(1, b), std::string(1, e)), m.newest(b, e))
          << "[" << b << ", " << e << ") at step " << step;
    }
  }
}

// Pruning may forget anything at or below `oldest`, but must keep every answer above it.
TEST(Resolver, PruningKeepsEveryAnswerAboveTheWatermark) {
  Resolver r;
  Model m;
  std::mt19937 rng(2);
  Version version = 0;
  for (int step = 0; step < 3000; ++step) {
    char b = static_cast<char>('a' + rng() % 26);
    char e = static_cast<char>(b + 1 + rng() % 3);
    if (e > 'z' + 1) e = 'z' + 1;
    ++version;
    r.record_write(std::string(1, b), std::string(1, e), version);
    for (char c = b; c < e; ++c) m.v[c] = version;
    Version oldest = version - 20;
    r.prune(oldest);
    char qb = static_cast<char>('a' + rng() % 26);
    char qe = static_cast<char>(qb + 1 + rng() % 5);
    Version expect = m.newest(qb, qe);
    Version got = r.newest_write(std::string(1, qb), std::string(1, qe));
    if (expect > oldest) {
      ASSERT_EQ(got, expect) << "step " << step;
    } else {
      ASSERT_LE(got, oldest) << "step " << step;
    }
  }
  // Old history is really forgotten: the boundary count stays bounded.
  EXPECT_LT(r.boundary_count(), 200u);
}

// Keys of any length, single-key writes [k, k+00) (the fast path) mixed with ranges, and
// pruning, against a brute-force list of every write.
TEST(Resolver, SingleKeyWritesMatchABruteForceModel) {
  struct Write {
    std::string begin, end;
    Version version;
  };
  std::vector<Write> all;
  auto newest = [&](const std::string& b, const std::string& e) {
    Version best = 0;
    for (const Write& w : all) {
      if (w.begin < e && b < w.end) best = std::max(best, w.version);
    }
    return best;
  };
  std::mt19937 rng(3);
  auto random_key = [&] {
    std::string k(rng() % 4, 'a');
    for (char& c : k) c = static_cast<char>(rng() % 3 == 0 ? '\0' : 'a' + rng() % 3);
    return k;
  };
  auto random_range = [&](std::string& b, std::string& e) {
    if (rng() % 2 == 0) {
      b = random_key();
      e = b + '\0';
      return;
    }
    do {
      b = random_key();
      e = random_key();
    } while (!(b < e));
  };
  Resolver r;
  Version version = 0;
  for (int step = 0; step < 4000; ++step) {
    std::string b, e;
    random_range(b, e);
    ++version;
    if (e == b + '\0' && rng() % 2 == 0) {
      r.record_write_at(b, version);  // the same write, without building b+00
    } else {
      r.record_write(b, e, version);
    }
    all.push_back({b, e, version});
    Version oldest = version - 30;
    r.prune(oldest);
    for (int q = 0; q < 3; ++q) {
      std::string qb, qe;
      random_range(qb, qe);
      Version expect = newest(qb, qe);
      Version got = r.newest_write(qb, qe);
      if (qe == qb + '\0') {
        ASSERT_EQ(r.newest_write_at(qb), got) << "step " << step;
      }
      if (expect > oldest) {
        ASSERT_EQ(got, expect) << "step " << step;
      } else {
        ASSERT_LE(got, oldest) << "step " << step;
      }
    }
  }
  EXPECT_LT(r.boundary_count(), 400u);
}

TEST(Resolver, PruningEverythingEmptiesTheHistory) {
  Resolver r;
  for (int i = 0; i < 100; ++i)
    r.record_write("k" + std::to_string(i), "k" + std::to_string(i) + "x", i + 1);
  r.prune(1000, /*force=*/true);
  EXPECT_EQ(r.boundary_count(), 0u);
  EXPECT_EQ(r.newest_write("", "\xff"), 0);
}

// A burst that an old reader held in the treap leaves it once the reader is gone, though
// the writes after it, pruned in the ring, never double the treap's boundary count (it
// kept every boundary, and its keys, until they did).
TEST(Resolver, ATreapLeftByABurstEmptiesOnceItIsHistory) {
  Resolver r;
  Version v = 0;
  for (int i = 0; i < 20000; ++i) {  // more than the ring holds: they spill into the treap
    const std::string key = "k" + std::to_string(i);
    r.record_write(key, key + "x", ++v);
    r.prune(0);  // a reader holds version 0
  }
  ASSERT_GT(r.boundary_count(), 0u);
  for (int i = 0; i < 1000; ++i) {  // the reader is gone: one client
    r.prune(v);
    r.record_write_at("q", ++v);
  }
  EXPECT_EQ(r.boundary_count(), 0u);
  EXPECT_EQ(r.newest_write_at("q"), v);
}

// One client: each commit's reader started after the previous commit, so every write is
// history by the next prune and should never cost a treap insert.
TEST(Resolver, WritesPrunedWhileRecentNeverEnterTheTreap) {
  Resolver r;
  for (Version v = 1; v <= 1000; ++v) {
    EXPECT_EQ(r.newest_write("q1", "q2"), v == 1 ? 0 : v - 1);  // the previous write, kept
    r.prune(v - 1);                                             // readers are at v - 1
    r.record_write("q1", std::string("q1\0", 3), v);
  }
  EXPECT_EQ(r.boundary_count(), 0u);
  EXPECT_EQ(r.recent_count(), 1u);
  EXPECT_EQ(r.newest_write("q", "r"), 1000);
  EXPECT_EQ(r.newest_write("q2", "r"), 0);
}

// More recent writes than the ring holds (kMaxRecent, 16,384): they move into the treap,
// and answers are the same whichever side a write is on.
TEST(Resolver, RecentWritesSpillIntoTheTreapInOrder) {
  Resolver r;
  constexpr Version kWrites = 20000;
  for (Version v = 1; v <= kWrites; ++v) r.record_write("a", "c", v);  // same range, rising
  r.record_write("b", std::string("b\0", 2), kWrites + 1);
  EXPECT_GT(r.boundary_count(), 0u);
  EXPECT_LT(r.recent_count(), static_cast<std::size_t>(kWrites));
  EXPECT_EQ(r.newest_write("a", "b"), kWrites);
  EXPECT_EQ(r.newest_write("b", "c"), kWrites + 1);
  EXPECT_TRUE(r.written_after("a", "b", kWrites - 1));
  EXPECT_FALSE(r.written_after("a", "b", kWrites));
  r.prune(kWrites);
  EXPECT_EQ(r.recent_count(), 1u);
  EXPECT_EQ(r.newest_write("b", "c"), kWrites + 1);
  EXPECT_LE(r.newest_write("a", "b"), kWrites);
}

// The recent list is a ring: with readers a few versions behind, writes age out of it
// oldest first while new ones arrive, wrapping around many times; answers stay exact.
TEST(Resolver, RecentWritesAgeOutOldestFirstAcrossTheRing) {
  Resolver r;
  std::map<std::string, Version> newest;
  for (Version v = 1; v <= 500; ++v) {
    std::string key(1, static_cast<char>('a' + v % 7));
    r.record_write_at(key, v);
    newest[key] = v;
    const Version oldest = v - 5;
    r.prune(oldest);
    EXPECT_LE(r.recent_count(), 5u);
    for (const auto& [k, written] : newest) {
      if (written > oldest) {
        ASSERT_EQ(r.newest_write_at(k), written) << "key " << k << " at " << v;
      } else {
        ASSERT_LE(r.newest_write_at(k), oldest) << "key " << k << " at " << v;
      }
    }
  }
  EXPECT_EQ(r.boundary_count(), 0u);  // nothing ever spilled into the treap
}

// With readers far behind (more clients than cores), writes wait in the ring, which grows
// instead of spilling into the treap, until it holds kMaxRecent of them.
TEST(Resolver, RingGrowsToHoldTheHistoryOfLaggingReaders) {
  Resolver r;
  constexpr Version kLag = 1000;
  for (Version v = 1; v <= 10 * kLag; ++v) {
    r.record_write_at("k" + std::to_string(v % 97), v);
    r.prune(std::max<Version>(0, v - kLag));
  }
  EXPECT_EQ(r.boundary_count(), 0u);
  EXPECT_EQ(r.recent_count(), static_cast<std::size_t>(kLag));
  EXPECT_TRUE(r.written_after_at("k3", 10 * kLag - 200));  // written at 9,797
  EXPECT_FALSE(r.written_after_at("k3", 10 * kLag - 3));
}

// An old reader with many read ranges: prepare() moves the ring into the treap rather than
// scanning it once per range, and every answer stays the same.
TEST(Resolver, PrepareMovesALongRingIntoTheTreapForManyQueries) {
  Resolver r;
  for (Version v = 1; v <= 2000; ++v) r.record_write_at("k" + std::to_string(v % 50), v);
  std::vector<bool> before;
  for (int k = 0; k < 60; ++k) before.push_back(r.written_after_at("k" + std::to_string(k), 1990));
  r.prepare(1990, 60);  // 10 newer writes x 60 queries: cheaper to scan, kept
  EXPECT_EQ(r.boundary_count(), 0u);
  r.prepare(100, 60);  // 1,900 newer writes x 60 queries: cheaper to move
  EXPECT_EQ(r.recent_count(), 0u);
  EXPECT_GT(r.boundary_count(), 0u);
  for (int k = 0; k < 60; ++k) {
    EXPECT_EQ(r.written_after_at("k" + std::to_string(k), 1990),
              before[static_cast<std::size_t>(k)])
        << "k" << k;
  }
}

// written_after(range, v) is newest_write(range) > v, wherever the writes are: in a ring
// of any size, in the treap after a spill or a prepare(), or pruned up to the watermark.
TEST(Resolver, WrittenAfterAgreesWithNewestWriteEverywhere) {
  std::mt19937 rng(4);
  auto random_key = [&] {
    std::string k(1 + rng() % 3, 'a');
    for (char& c : k) c = static_cast<char>(rng() % 4 == 0 ? '\0' : 'a' + rng() % 4);
    return k;
  };
  Resolver r;
  Version version = 0;
  Version oldest = 0;
  for (int step = 0; step < 40000; ++step) {
    ++version;
    std::string b = random_key();
    if (rng() % 2 == 0) {
      r.record_write_at(b, version);
    } else {
      std::string e = random_key();
      if (!(b < e)) e = b + "z";
      r.record_write(b, e, version);
    }
    // Readers lag by a varying amount, sometimes past the ring's capacity.
    if (rng() % 64 == 0) oldest = version - static_cast<Version>(rng() % 20000);
    oldest = std::max<Version>(0, std::max(oldest, version - 18000));
    r.prune(oldest);
    const Version at = oldest + static_cast<Version>(rng() % (version - oldest + 1));
    if (rng() % 500 == 0) r.prepare(at, 1 + rng() % 64);
    std::string qb = random_key();
    std::string qe = rng() % 2 == 0 ? qb + '\0' : qb + "b";
    ASSERT_EQ(r.written_after(qb, qe, at), r.newest_write(qb, qe) > at) << "step " << step;
    ASSERT_EQ(r.written_after_at(qb, at), r.newest_write_at(qb) > at) << "step " << step;
  }
}

// recorded_after is what lets a commit skip its reads' checks: false only when no range
// or key has a write after the version, and true as soon as one has.
TEST(Resolver, RecordedAfterIsFalseOnlyWhenNothingWasWrittenAfter) {
  Resolver r;
  EXPECT_FALSE(r.recorded_after(0));
  r.record_write_at("k", 5);
  r.record_write("a", "c", 7);
  EXPECT_TRUE(r.recorded_after(4));
  EXPECT_TRUE(r.recorded_after(6));
  EXPECT_TRUE(r.written_after("a", "b", 6));
  EXPECT_FALSE(r.recorded_after(7));
  EXPECT_FALSE(r.written_after("", "\xff", 7));
  // Neither pruning nor moving the ring into the treap forgets the newest write.
  r.prepare(0, 1000);
  r.prune(6);
  EXPECT_TRUE(r.recorded_after(6));
  EXPECT_TRUE(r.written_after_at("b", 6));
  r.prune(7, /*force=*/true);
  EXPECT_FALSE(r.recorded_after(7));
}

}  // namespace
}  // namespace strata::engine
