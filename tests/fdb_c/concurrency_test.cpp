// Futures and transactions under concurrency: callbacks set while futures complete,
// cancel and destroy racing completion, callbacks destroying their futures, retry loops
// and atomic ops from many threads. Run under TSan and ASan.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"
#include "support/sanitizers.hpp"

namespace fdbc_test {
namespace {

using strata::testing::scaled;
using Concurrency = FdbTest;

// Counts down to zero; waiters wake when it gets there.
class Latch {
 public:
  explicit Latch(int n) : n_(n) {}
  void count_down() {
    std::lock_guard<std::mutex> lock(m_);
    if (--n_ == 0) cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(m_);
    return cv_.wait_for(lock, limit, [&] { return n_ <= 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_;
};

// One pending watch and what happened to its callback.
struct Slot {
  std::string key;
  FDBFuture* future = nullptr;
  std::thread::id owner;  // the thread that sets the callback
  std::atomic<int> calls{0};
  std::atomic<fdb_error_t> error{-1};
  std::atomic<bool> wrong_thread{false};
  Latch* done = nullptr;

  static void callback(FDBFuture* f, void* p) {
    auto* s = static_cast<Slot*>(p);
    auto me = std::this_thread::get_id();
    if (me != network_thread() && me != s->owner) s->wrong_thread = true;
    s->error = fdb_future_get_error(f);
    s->calls.fetch_add(1);
    s->done->count_down();
  }
};

// Commits a watch on each slot's key (value "0").
void arm(std::vector<std::unique_ptr<Slot>>& slots) {
  for (std::size_t start = 0; start < slots.size(); start += 100) {
    Tr tr = make_tr();
    for (std::size_t i = start; i < slots.size() && i < start + 100; ++i) {
      set(tr, slots[i]->key, "0");
    }
    ASSERT_EQ(commit(tr), 0);
  }
  for (auto& s : slots) {
    Tr tr = make_tr();
    s->future = fdb_transaction_watch(tr.get(), u8(s->key), len(s->key));
    ASSERT_EQ(commit(tr), 0);
  }
}

void fire_all(const std::vector<std::unique_ptr<Slot>>& slots) {
  for (const auto& s : slots) ASSERT_EQ(write(s->key, "1"), 0);
}

std::vector<std::unique_ptr<Slot>> make_slots(const std::string& prefix, int n, Latch* done) {
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < n; ++i) {
    slots.push_back(std::make_unique<Slot>());
    slots.back()->key = prefix + "w" + std::to_string(i);
    slots.back()->done = done;
  }
  return slots;
}

TEST_F(Concurrency, SetCallbackRacingCompletionCallsEachOnceOnAnAllowedThread) {
  const int kThreads = 4;
  const int kPer = scaled(100, 25);
  Latch done(kThreads * kPer);
  auto slots = make_slots(prefix(), kThreads * kPer, &done);
  arm(slots);

  std::thread writer([&] { fire_all(slots); });
  std::vector<std::thread> setters;
  for (int t = 0; t < kThreads; ++t)
    setters.emplace_back([&, t] {
      for (int i = t * kPer; i < (t + 1) * kPer; ++i) {
        Slot& s = *slots[i];
        s.owner = std::this_thread::get_id();
        EXPECT_EQ(fdb_future_set_callback(s.future, &Slot::callback, &s), 0);
      }
    });
  for (auto& t : setters) t.join();
  writer.join();
  ASSERT_TRUE(done.wait_for(kWait));
  network_barrier(k("barrier"));
  for (auto& s : slots) {
    EXPECT_EQ(s->calls.load(), 1) << s->key;
    EXPECT_EQ(s->error.load(), 0) << s->key;
    EXPECT_FALSE(s->wrong_thread.load()) << s->key;
    fdb_future_destroy(s->future);
  }
}

TEST_F(Concurrency, CancelRacingCompletionCallsEachOnce) {
  const int kThreads = 4;
  const int kPer = scaled(100, 25);
  Latch done(kThreads * kPer);
  auto slots = make_slots(prefix(), kThreads * kPer, &done);
  arm(slots);
  for (auto& s : slots) {
    s->owner = std::this_thread::get_id();
    ASSERT_EQ(fdb_future_set_callback(s->future, &Slot::callback, s.get()), 0);
  }
  std::thread writer([&] { fire_all(slots); });
  std::vector<std::thread> cancellers;
  for (int t = 0; t < kThreads; ++t)
    cancellers.emplace_back([&, t] {
      for (int i = t * kPer; i < (t + 1) * kPer; ++i) fdb_future_cancel(slots[i]->future);
    });
  for (auto& t : cancellers) t.join();
  writer.join();
  ASSERT_TRUE(done.wait_for(kWait));
  network_barrier(k("barrier"));
  for (auto& s : slots) {
    EXPECT_EQ(s->calls.load(), 1) << s->key;
    fdb_error_t e = s->error.load();
    EXPECT_TRUE(e == 0 || e == 1101) << s->key << ": " << e;
    EXPECT_EQ(fdb_future_get_error(s->future), e);
    fdb_future_destroy(s->future);
  }
}

// A callback that does not look at its future (another thread may be destroying it).
struct Counter {
  std::atomic<int> calls{0};
  static void callback(FDBFuture*, void* p) { static_cast<Counter*>(p)->calls.fetch_add(1); }
};

// Either way each callback runs once: with the value, or with operation_cancelled when the
// destroy came first (FoundationDB's destroy is a cancel; see futures_test.cpp).
TEST_F(Concurrency, DestroyRacingCompletionIsSafeAndCallsEachOnce) {
  const int kThreads = 4;
  const int kPer = scaled(100, 25);
  Latch unused(0);
  auto slots = make_slots(prefix(), kThreads * kPer, &unused);
  arm(slots);
  std::vector<Counter> counters(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i)
    ASSERT_EQ(fdb_future_set_callback(slots[i]->future, &Counter::callback, &counters[i]), 0);
  std::thread writer([&] { fire_all(slots); });
  std::vector<std::thread> destroyers;
  for (int t = 0; t < kThreads; ++t)
    destroyers.emplace_back([&, t] {
      for (int i = t * kPer; i < (t + 1) * kPer; ++i) fdb_future_destroy(slots[i]->future);
    });
  for (auto& t : destroyers) t.join();
  writer.join();
  network_barrier(k("barrier"));
  for (auto& c : counters) EXPECT_EQ(c.calls.load(), 1);
}

TEST_F(Concurrency, CallbacksDestroyingTheirOwnFuturesWhileOthersFire) {
  const int kCount = scaled(300, 60);
  Latch done(kCount);
  auto slots = make_slots(prefix(), kCount, &done);
  arm(slots);
  std::atomic<int> errors{0};
  struct Ctx {
    Latch* done;
    std::atomic<int>* errors;
  } ctx{&done, &errors};
  auto cb = [](FDBFuture* f, void* p) {
    auto* c = static_cast<Ctx*>(p);
    if (fdb_future_get_error(f) != 0) c->errors->fetch_add(1);
    fdb_future_destroy(f);
    c->done->count_down();
  };
  std::thread writer([&] { fire_all(slots); });
  for (auto& s : slots) ASSERT_EQ(fdb_future_set_callback(s->future, cb, &ctx), 0);
  writer.join();
  ASSERT_TRUE(done.wait_for(kWait));
  EXPECT_EQ(errors.load(), 0);
}

TEST_F(Concurrency, ReadModifyWriteRetryLoopsLoseNoIncrement) {
  const int kThreads = 4;
  const int kPer = scaled(50, 15);
  ASSERT_EQ(write(k("n"), le64(0)), 0);
  std::atomic<int> retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kPer; ++i) {
        Tr tr = make_tr();
        ASSERT_EQ(set_option(tr, FDB_TR_OPTION_MAX_RETRY_DELAY, 5), 0);
        for (;;) {
          Value v = get(tr, k("n"));
          fdb_error_t e = v.error;
          if (e == 0) {
            set(tr, k("n"), le64(from_le(v.value) + 1));
            e = commit(tr);
          }
          if (e == 0) break;
          ++retries;
          ASSERT_EQ(on_error(tr, e), 0) << e;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(from_le(read(k("n")).value), kThreads * kPer);
  // Not asserted: how many retries contention caused (possibly none on a quiet machine).
  RecordProperty("retries", retries.load());
}

TEST_F(Concurrency, AtomicAddsFromManyThreadsNeverConflict) {
  const int kThreads = 4;
  const int kPer = scaled(200, 40);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kPer; ++i) {
        Tr tr = make_tr();
        atomic(tr, k("n"), le64(1), FDB_MUTATION_TYPE_ADD);
        EXPECT_EQ(commit(tr), 0);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(from_le(read(k("n")).value), kThreads * kPer);
}

TEST_F(Concurrency, WatchersAndWritersOnManyThreads) {
  const int kThreads = 4;
  const int kRounds = scaled(20, 5);
  // Each watcher thread, round after round, watches its key and waits for the writer
  // thread paired with it to change the key.
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    std::string key = k("w" + std::to_string(t));
    ASSERT_EQ(write(key, "0"), 0);
    threads.emplace_back([&, key] {
      for (int r = 0; r < kRounds; ++r) {
        Tr tr = make_tr();
        Future w(fdb_transaction_watch(tr.get(), u8(key), len(key)));
        ASSERT_EQ(commit(tr), 0);
        CallbackProbe probe;
        ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
        std::thread writer([&] { EXPECT_EQ(write(key, std::to_string(r + 1)), 0); });
        ASSERT_TRUE(probe.wait_calls(1));
        writer.join();
        EXPECT_EQ(probe.called_with(), 0);
        EXPECT_TRUE(probe.called_on() == network_thread() ||
                    probe.called_on() == std::this_thread::get_id());
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST_F(Concurrency, ReadsAndCommitsFromManyThreadsOnSharedTransactions) {
  const int kThreads = 4;
  const int kOps = scaled(200, 40);
  Tr shared = make_tr();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        std::string key = k("s" + std::to_string(t) + "/" + std::to_string(i % 10));
        set(shared, key, std::to_string(i));
        Value v = get(shared, key);
        EXPECT_EQ(v.error, 0);
        Range r = get_range(shared, k("s" + std::to_string(t) + "/"),
                            k("s" + std::to_string(t) + "0"), {.limit = 3});
        EXPECT_EQ(r.error, 0);
        Future sz(fdb_transaction_get_approximate_size(shared.get()));
        EXPECT_EQ(wait(sz), 0);
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_EQ(commit(shared), 0);
  Tr check = make_tr();
  EXPECT_EQ(get_range(check, prefix(), prefix_end()).rows.size(),
            static_cast<std::size_t>(kThreads * 10));
}

}  // namespace
}  // namespace fdbc_test
