#include "kv/reader_registry.hpp"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

TEST(ReaderRegistry, OldestIsCommittedWhenNobodyReads) {
  ReaderRegistry r;
  std::atomic<Version> committed{42};
  EXPECT_EQ(r.oldest(committed), 42);
}

TEST(ReaderRegistry, OldestIsTheOldestAnnouncedVersion) {
  ReaderRegistry r;
  std::atomic<Version> committed{10};
  auto* a = r.acquire();
  EXPECT_EQ(ReaderRegistry::announce(a, committed), 10);
  committed = 20;
  auto* b = r.acquire();
  EXPECT_EQ(ReaderRegistry::announce(b, committed), 20);
  EXPECT_EQ(r.oldest(committed), 10);
  r.release(a);
  EXPECT_EQ(r.oldest(committed), 20);
  r.release(b);
  EXPECT_EQ(r.oldest(committed), 20);
}

TEST(ReaderRegistry, SlotsAreReusedWithinAThread) {
  ReaderRegistry r;
  auto* a = r.acquire();
  r.release(a);
  EXPECT_EQ(r.acquire(), a);
}

// Slots handed out by threads that have exited go back to the registry.
TEST(ReaderRegistry, SlotsOfExitedThreadsAreReused) {
  ReaderRegistry r;
  ReaderRegistry::Slot* from_thread = nullptr;
  std::thread([&] {
    from_thread = r.acquire();
    r.release(from_thread);
  }).join();
  std::vector<ReaderRegistry::Slot*> mine;
  bool reused = false;
  for (int i = 0; i < 4 && !reused; ++i) {
    mine.push_back(r.acquire());
    reused = mine.back() == from_thread;
  }
  EXPECT_TRUE(reused);
  for (auto* s : mine) r.release(s);
}

}  // namespace
}  // namespace strata::kv
