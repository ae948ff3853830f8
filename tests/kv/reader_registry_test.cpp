#include "kv/reader_registry.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
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

// A committing transaction reads no more: its version holds back neither collection nor
// the readers' snapshot, only the conflict history its commit is checked against; and it
// passed its age check, so it is not revoked.
TEST(ReaderRegistry, ACommittingVersionHoldsOnlyTheHistoryItIsCheckedAgainst) {
  ReaderRegistry r;
  std::atomic<Version> committed{10};
  auto* committer = r.acquire();
  ASSERT_EQ(ReaderRegistry::announce(committer, committed, /*deadline=*/1), 10);
  committed = 20;
  auto* reader = r.acquire();
  ASSERT_EQ(ReaderRegistry::announce(reader, committed), 20);
  EXPECT_EQ(r.horizons(committed).reading, 10);

  ReaderRegistry::begin_commit(committer);
  EXPECT_EQ(r.horizons(committed).reading, 20);
  EXPECT_EQ(r.horizons(committed).resolving, 10);
  EXPECT_EQ(r.oldest(committed), 20);
  std::vector<Version> exact;
  Version tentative = 0;
  r.snapshot(exact, tentative);
  EXPECT_EQ(exact, std::vector<Version>{20});
  EXPECT_EQ(tentative, ReaderRegistry::kIdle);
  EXPECT_EQ(r.revoke_expired(/*now=*/2), 0u);  // its deadline has passed
  EXPECT_EQ(r.horizons(committed).resolving, 10);

  ReaderRegistry::withdraw(committer);  // the commit settled
  EXPECT_EQ(r.horizons(committed).resolving, 20);
  r.release(committer);
  ReaderRegistry::withdraw(reader);
  r.release(reader);
  EXPECT_EQ(r.horizons(committed).resolving, 20);
  EXPECT_EQ(r.horizons(committed).reading, 20);
}

// A reader past its deadline stops holding collection back once no read of it is under
// way; one without a deadline (a checkpoint's) never does.
TEST(ReaderRegistry, ExpiredVersionsAreRevokedAndNoLongerHeld) {
  ReaderRegistry r;
  std::atomic<Version> committed{10};
  auto* idle = r.acquire();
  auto* busy = r.acquire();
  auto* endless = r.acquire();
  auto* young = r.acquire();
  ReaderRegistry::announce(idle, committed, /*deadline=*/100);
  ReaderRegistry::announce(busy, committed, /*deadline=*/100);
  committed = 20;
  ReaderRegistry::announce(endless, committed);
  ReaderRegistry::announce(young, committed, /*deadline=*/1000);
  committed = 30;
  ASSERT_TRUE(ReaderRegistry::begin_read(busy));
  EXPECT_EQ(r.revoke_expired(/*now=*/99), 0u);
  EXPECT_EQ(r.oldest(committed), 10);

  EXPECT_EQ(r.revoke_expired(/*now=*/500), 2u);  // idle and busy
  EXPECT_EQ(r.oldest(committed), 10);            // busy's read holds 10 until it ends
  std::vector<Version> exact;
  Version tentative;
  r.snapshot(exact, tentative);
  EXPECT_EQ(exact, (std::vector<Version>{10, 20, 20}));
  // But it may not vouch for its version (MvccStore::pin_at asks without it).
  r.snapshot(exact, tentative, /*count_revoked=*/false);
  EXPECT_EQ(exact, (std::vector<Version>{20, 20}));
  ReaderRegistry::end_read(busy);
  EXPECT_EQ(r.oldest(committed), 20);
  r.snapshot(exact, tentative);
  EXPECT_EQ(exact, (std::vector<Version>{20, 20}));
  EXPECT_FALSE(ReaderRegistry::begin_read(idle));  // refused: it reports too old
  EXPECT_FALSE(ReaderRegistry::begin_read(busy));
  EXPECT_EQ(r.oldest(committed), 20);
  EXPECT_TRUE(ReaderRegistry::begin_read(young));
  ReaderRegistry::end_read(young);

  EXPECT_EQ(r.revoke_expired(/*now=*/2000), 1u);  // young; endless has no deadline
  EXPECT_EQ(r.oldest(committed), 20);
  // A revoked slot that announces again holds its new version.
  ReaderRegistry::announce(idle, committed, /*deadline=*/3000);
  EXPECT_TRUE(ReaderRegistry::begin_read(idle));
  ReaderRegistry::end_read(idle);
  for (auto* s : {idle, busy, endless, young}) r.release(s);
  EXPECT_EQ(r.oldest(committed), 30);
}

// A writer that read a slot's expired deadline must not revoke the slot's next
// announcement, even when it holds the same version (no commit in between): that one's
// deadline has not passed. The reader alternates an expired and a fresh announcement at
// one version while a writer revokes in a loop; no fresh announcement may be refused.
TEST(ReaderRegistry, ARevocationNeverReachesTheNextAnnouncement) {
  ReaderRegistry r;
  std::atomic<Version> committed{10};
  auto* slot = r.acquire();
  std::atomic<bool> done{false};
  std::atomic<std::size_t> revocations{0};
  std::thread writer([&] {
    while (!done.load(std::memory_order_relaxed)) {
      revocations.fetch_add(r.revoke_expired(/*now=*/500), std::memory_order_relaxed);
    }
  });
  int refused = 0;
  // Until the writer has revoked often enough that it ran alongside the reader (on an idle
  // machine, a fraction of a second), or for at most two seconds: a loaded machine (CI's
  // sanitizer runs) may seldom run the two threads at once, and then the check is weaker.
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (std::int64_t i = 0; i < 100'000 || revocations.load() < 2'000; ++i) {
    if (i % 1024 == 0 && std::chrono::steady_clock::now() >= stop) break;
    ReaderRegistry::announce(slot, committed, /*deadline=*/100);  // expired: revocable
    ReaderRegistry::withdraw(slot);
    ReaderRegistry::announce(slot, committed, /*deadline=*/1000);  // fresh
    if (ReaderRegistry::begin_read(slot)) {
      ReaderRegistry::end_read(slot);
    } else {
      ++refused;
    }
    ReaderRegistry::withdraw(slot);
  }
  done = true;
  writer.join();
  EXPECT_EQ(refused, 0);
  r.release(slot);
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

// A slot acquired on one thread and released on another (a transaction handed between
// threads) is taken again by the acquiring thread: the releasing thread does not keep them
// all, which made a new slot per handover until the registry ran out (std::terminate at
// 262,144 slots).
TEST(ReaderRegistry, SlotsReleasedOnAnotherThreadAreReused) {
  ReaderRegistry r;
  std::atomic<ReaderRegistry::Slot*> mailbox{nullptr};
  std::atomic<bool> done{false};
  std::thread releaser([&] {
    r.release(r.acquire());  // this thread has a slot cache of its own
    while (!done.load()) {
      if (ReaderRegistry::Slot* s = mailbox.load()) {
        r.release(s);
        mailbox.store(nullptr);
      } else {
        std::this_thread::yield();
      }
    }
  });
  std::set<ReaderRegistry::Slot*> seen;
  for (int i = 0; i < 1000; ++i) {
    ReaderRegistry::Slot* s = r.acquire();
    seen.insert(s);
    mailbox.store(s);
    while (mailbox.load() != nullptr) std::this_thread::yield();
  }
  done = true;
  releaser.join();
  EXPECT_LE(seen.size(), 16u);
}

// Releases its slot when its thread exits.
struct ReleaseAtExit {
  ReaderRegistry* registry = nullptr;
  ReaderRegistry::Slot* slot = nullptr;
  ReleaseAtExit() = default;
  ReleaseAtExit(const ReleaseAtExit&) = delete;
  ReleaseAtExit& operator=(const ReleaseAtExit&) = delete;
  ~ReleaseAtExit() {
    if (slot != nullptr) registry->release(slot);
  }
};

// A slot released at thread exit after the thread's slot cache is gone (a thread-local
// transaction made before the thread's first read) goes back to the registry. It went into
// the destroyed cache: a use after free, and a slot lost per such thread.
TEST(ReaderRegistry, ASlotReleasedAfterItsThreadsCacheIsGoneIsReused) {
  ReaderRegistry r;
  ReaderRegistry::Slot* released = nullptr;
  std::thread([&] {
    thread_local ReleaseAtExit late;  // made before the thread's cache, so destroyed after it
    late.registry = &r;
    late.slot = r.acquire();
    released = late.slot;
  }).join();
  ReaderRegistry::Slot* again = nullptr;
  std::thread([&] {
    again = r.acquire();
    r.release(again);
  }).join();
  EXPECT_EQ(again, released);
}

}  // namespace
}  // namespace strata::kv
