// WaitWord: the commit pipeline's hand-off from the leader to a waiting committer.
#include "base/wait_word.hpp"

#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

TEST(WaitWord, ReturnsAtOnceWhenTheWordAlreadyChanged) {
  WaitWord word(0);
  word.set(2);
  EXPECT_EQ(word.wait_while(0, 0), 2);
  EXPECT_EQ(word.load(), 2);
  EXPECT_FALSE(word.has_sleeper());
}

TEST(WaitWord, ASleepingWaiterIsWokenWithTheNewValue) {
  WaitWord word(0);
  int seen = -1;
  std::thread waiter([&] { seen = word.wait_while(0, 0); });
  while (!word.has_sleeper()) std::this_thread::yield();  // it went to sleep (no spins)
  EXPECT_EQ(word.load(), 0);  // the sleeping mark is not part of the value
  word.set(1);
  waiter.join();
  EXPECT_EQ(seen, 1);
  EXPECT_FALSE(word.has_sleeper());
}

TEST(WaitWord, ASpinningWaiterSeesTheNewValue) {
  WaitWord word(0);
  std::atomic<bool> started{false};
  int seen = -1;
  std::thread waiter([&] {
    started = true;
    seen = word.wait_while(0, 1 << 30);  // spins far longer than the test runs
  });
  while (!started) std::this_thread::yield();
  word.set(2);
  waiter.join();
  EXPECT_EQ(seen, 2);
}

// The waiter frees the word as soon as it sees the new value, as a committer returns and
// destroys its request. Under AddressSanitizer a set() that touched the word after its
// exchange would be a use after free.
TEST(WaitWord, TheWaiterMayDestroyTheWordAsSoonAsItReturns) {
  constexpr int kRounds = 20000;
  std::vector<WaitWord*> words(kRounds);
  for (auto& w : words) w = new WaitWord(0);
  std::atomic<int> published{-1};
  std::thread setter([&] {
    for (int i = 0; i < kRounds; ++i) {
      while (published.load(std::memory_order_acquire) < i) {
      }
      words[static_cast<std::size_t>(i)]->set(2);
    }
  });
  int done = 0;
  for (int i = 0; i < kRounds; ++i) {
    WaitWord* w = words[static_cast<std::size_t>(i)];
    published.store(i, std::memory_order_release);
    // Alternate spinning and sleeping waits so both paths race with set().
    done += w->wait_while(0, (i % 2) * 64) == 2 ? 1 : 0;
    delete w;
  }
  setter.join();
  EXPECT_EQ(done, kRounds);
}

}  // namespace
}  // namespace strata::base
