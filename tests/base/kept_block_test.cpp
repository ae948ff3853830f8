// base::KeptBlock: a thread reuses the block of the last object it destroyed, keeps one at
// most, and frees it at its exit (leaks show under the ASan build's LeakSanitizer).
#include "base/kept_block.hpp"

#include <memory>
#include <thread>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

struct Object final {
  static void* operator new(std::size_t size) { return KeptBlock<Object>::take(size); }
  static void operator delete(void* p, std::size_t size) noexcept {
    KeptBlock<Object>::give_back(p, size);
  }
  long payload[8] = {};
};

TEST(KeptBlock, TheNextObjectOfTheThreadTakesTheLastOnesBlock) {
  auto* first = new Object;
  void* block = first;
  delete first;
  auto* second = new Object;
  EXPECT_EQ(static_cast<void*>(second), block);
  EXPECT_EQ(second->payload[0], 0) << "constructed anew in the kept block";
  delete second;
}

TEST(KeptBlock, OneBlockIsKeptAndTheOthersAreFreed) {
  auto* a = new Object;
  auto* b = new Object;
  EXPECT_NE(a, b);
  void* kept = a;
  delete a;  // kept
  delete b;  // freed: a's block is already kept
  auto* c = new Object;
  EXPECT_EQ(static_cast<void*>(c), kept);
  auto* d = new Object;  // none kept now: a new block
  EXPECT_NE(static_cast<void*>(d), kept);
  delete c;
  delete d;
}

TEST(KeptBlock, BlocksMoveBetweenThreadsAndAreFreedAtTheirExit) {
  auto* made_here = new Object;
  Object* made_there = nullptr;
  std::thread([&] {
    delete made_here;  // kept by the other thread, freed when it exits
    made_there = new Object;
  }).join();
  delete made_there;  // kept here
  std::thread([] {
    auto* own = new Object;
    delete own;
  }).join();
}

}  // namespace
}  // namespace strata::base
