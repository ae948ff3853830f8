// Futures: readiness, callbacks (calling thread when ready, else once on the network
// thread), cancel, destroy, and the typed getters with their error rules.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

class Futures : public FdbTest {
 protected:
  // A watch made by a committed transaction: pending until `key` changes.
  Future pending(const std::string& key) {
    Tr tr = make_tr();
    Future w(fdb_transaction_watch(tr.get(), u8(key), len(key)));
    EXPECT_EQ(commit(tr), 0);
    EXPECT_FALSE(fdb_future_is_ready(w.get()));
    return w;
  }
  // Changes `key`, firing watches on it.
  void fire(const std::string& key) {
    ASSERT_EQ(run([&](const Tr& tr) {
                Value v = get(tr, key);
                if (v.error != 0) return v.error;
                set(tr, key, v.value + "+");
                return 0;
              }),
              0);
  }
};

TEST_F(Futures, ReadsReturnReadyFutures) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  EXPECT_TRUE(fdb_future_is_ready(g.get()));
  Future c(fdb_transaction_commit(tr.get()));
  EXPECT_TRUE(fdb_future_is_ready(c.get()));
  EXPECT_EQ(fdb_future_block_until_ready(c.get()), 0);
  EXPECT_EQ(fdb_future_get_error(c.get()), 0);
}

TEST_F(Futures, CallbackOnReadyFutureRunsAtOnceOnTheCallingThread) {
  Tr tr = make_tr();
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  ASSERT_TRUE(fdb_future_is_ready(g.get()));
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(g.get(), &CallbackProbe::callback, &probe), 0);
  // Already called, before set_callback returned.
  EXPECT_EQ(probe.count(), 1);
  EXPECT_EQ(probe.called_on(), std::this_thread::get_id());
  EXPECT_EQ(probe.called_with(), 0);
  EXPECT_EQ(probe.future, g.get());
}

TEST_F(Futures, CallbackOnPendingFutureRunsOnceOnTheNetworkThread) {
  Future w = pending(k("w"));
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  EXPECT_EQ(probe.count(), 0);
  fire(k("w"));
  ASSERT_TRUE(probe.wait_calls(1));
  EXPECT_EQ(probe.called_on(), network_thread());
  EXPECT_NE(probe.called_on(), std::this_thread::get_id());
  EXPECT_EQ(probe.called_with(), 0);
  EXPECT_EQ(probe.future, w.get());
  EXPECT_TRUE(fdb_future_is_ready(w.get()));
  // Exactly once, even when the key changes again.
  fire(k("w"));
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 1);
}

TEST_F(Futures, BlockUntilReadyWaitsForAPendingFuture) {
  Future w = pending(k("w"));
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_EQ(fdb_future_block_until_ready(w.get()), 0);
    returned = true;
  });
  EXPECT_FALSE(returned.load());
  fire(k("w"));
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_TRUE(fdb_future_is_ready(w.get()));
  EXPECT_EQ(fdb_future_get_error(w.get()), 0);
}

TEST_F(Futures, SeveralThreadsMayBlockOnOneFuture) {
  Future w = pending(k("w"));
  std::atomic<int> done{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i)
    waiters.emplace_back([&] {
      EXPECT_EQ(fdb_future_block_until_ready(w.get()), 0);
      ++done;
    });
  fire(k("w"));
  for (auto& t : waiters) t.join();
  EXPECT_EQ(done.load(), 4);
}

TEST_F(Futures, CallbackMayDestroyItsOwnPendingFuture) {
  FDBFuture* w = pending(k("w")).release();
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool called = false;
    fdb_error_t error = -1;
    std::thread::id thread;
  } state;
  auto cb = [](FDBFuture* f, void* p) {
    auto* s = static_cast<State*>(p);
    fdb_error_t e = fdb_future_get_error(f);
    fdb_future_destroy(f);  // the callback owns the future from here
    std::lock_guard<std::mutex> lock(s->m);
    s->called = true;
    s->error = e;
    s->thread = std::this_thread::get_id();
    s->cv.notify_all();
  };
  ASSERT_EQ(fdb_future_set_callback(w, cb, &state), 0);
  fire(k("w"));
  std::unique_lock<std::mutex> lock(state.m);
  ASSERT_TRUE(state.cv.wait_for(lock, kWait, [&] { return state.called; }));
  EXPECT_EQ(state.error, 0);
  EXPECT_EQ(state.thread, network_thread());
}

TEST_F(Futures, CallbackMayDestroyItsOwnReadyFuture) {
  Tr tr = make_tr();
  FDBFuture* g = fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0);
  bool called = false;
  auto cb = [](FDBFuture* f, void* p) {
    fdb_future_destroy(f);
    *static_cast<bool*>(p) = true;
  };
  ASSERT_EQ(fdb_future_set_callback(g, cb, &called), 0);
  EXPECT_TRUE(called);
}

TEST_F(Futures, CancelPendingFutureMakesItReadyWithOperationCancelled) {
  Future w = pending(k("w"));
  fdb_future_cancel(w.get());
  EXPECT_EQ(fdb_future_block_until_ready(w.get()), 0);
  EXPECT_TRUE(fdb_future_is_ready(w.get()));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1101);
  // The watch is disarmed: a change later leaves the result as it was.
  fire(k("w"));
  EXPECT_EQ(fdb_future_get_error(w.get()), 1101);
}

TEST_F(Futures, CancelCallsThePendingCallbackOnceOnTheNetworkThread) {
  Future w = pending(k("w"));
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
  fdb_future_cancel(w.get());
  ASSERT_TRUE(probe.wait_calls(1));
  EXPECT_EQ(probe.called_with(), 1101);
  EXPECT_EQ(probe.called_on(), network_thread());
  fire(k("w"));
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 1);
  fdb_future_cancel(w.get());  // already ready: nothing happens
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 1);
}

TEST_F(Futures, CancelOnReadyFutureDoesNothing) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  Tr tr = make_tr();
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  ASSERT_TRUE(fdb_future_is_ready(g.get()));
  fdb_future_cancel(g.get());
  Value v = value_of(g.get());
  EXPECT_EQ(v.error, 0);
  EXPECT_TRUE(v.present);
  EXPECT_EQ(v.value, "v");
}

// FoundationDB's fdb_future_destroy is a cancel (bindings/c/fdb_c.cpp), and a cancelled
// operation ends its future with operation_cancelled (1101), which fires the callbacks set
// on it (CAPICallback::error in fdb_c.cpp, ThreadSingleAssignmentVarBase::trySendError in
// flow/include/flow/ThreadHelper.h): at most once (api-c.rst), and not dropped.
TEST_F(Futures, DestroyingAPendingFutureRunsItsCallbackWithOperationCancelled) {
  FDBFuture* w = pending(k("w")).release();
  CallbackProbe probe;
  ASSERT_EQ(fdb_future_set_callback(w, &CallbackProbe::callback, &probe), 0);
  fdb_future_destroy(w);
  ASSERT_TRUE(probe.wait_calls());
  EXPECT_EQ(probe.called_with(), 1101);
  EXPECT_EQ(probe.called_on(), network_thread());
  fire(k("w"));
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 1);
}

// A future that became ready runs its callbacks even if it is destroyed before the network
// thread gets to them: FoundationDB fires them as the future is set (ThreadHelper.h's
// send()), so no destroy can come between.
TEST_F(Futures, DestroyingAReadyFutureWhoseCallbackIsDueStillRunsIt) {
  struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool entered = false;
    bool open = false;
  };
  // On the heap, and kept should the test stop part-way: the network thread may still
  // reach them then. The gate opens on every way out, so that thread is never left held.
  struct Guard {
    struct Shared {
      Gate gate;
      CallbackProbe probe;
    };
    Shared* shared = new Shared;
    bool passed = false;
    Guard() = default;
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    void open() const {
      {
        std::lock_guard<std::mutex> lock(shared->gate.m);
        shared->gate.open = true;
      }
      shared->gate.cv.notify_all();
    }
    ~Guard() {
      open();
      if (passed) delete shared;  // the network thread is done with it (the barrier below)
    }
  } guard;
  Gate& gate = guard.shared->gate;
  CallbackProbe& probe = guard.shared->probe;
  Future held = pending(k("held"));
  auto hold = [](FDBFuture*, void* p) {
    auto* g = static_cast<Gate*>(p);
    std::unique_lock<std::mutex> lock(g->m);
    g->entered = true;
    g->cv.notify_all();
    g->cv.wait(lock, [&] { return g->open; });
  };
  ASSERT_EQ(fdb_future_set_callback(held.get(), hold, &gate), 0);
  FDBFuture* w = pending(k("w")).release();
  ASSERT_EQ(fdb_future_set_callback(w, &CallbackProbe::callback, &probe), 0);
  fire(k("held"));
  {
    std::unique_lock<std::mutex> lock(gate.m);
    ASSERT_TRUE(gate.cv.wait_for(lock, kWait, [&] { return gate.entered; }));
  }
  fire(k("w"));  // ready now; its callback waits behind the held one
  ASSERT_TRUE(fdb_future_is_ready(w));
  EXPECT_EQ(probe.count(), 0);
  fdb_future_destroy(w);
  guard.open();
  ASSERT_TRUE(probe.wait_calls());
  EXPECT_EQ(probe.called_with(), 0);
  network_barrier(k("barrier"));
  EXPECT_EQ(probe.count(), 1);
  guard.passed = true;
}

TEST_F(Futures, GettersOnPendingFutureAreFutureNotSet) {
  Future w = pending(k("w"));
  int64_t i = 0;
  const uint8_t* key = nullptr;
  int n = 0;
  fdb_bool_t present = 0;
  const FDBKeyValue* kv = nullptr;
  fdb_bool_t more = 0;
  EXPECT_EQ(fdb_future_get_int64(w.get(), &i), 2015);
  EXPECT_EQ(fdb_future_get_key(w.get(), &key, &n), 2015);
  EXPECT_EQ(fdb_future_get_value(w.get(), &present, &key, &n), 2015);
  EXPECT_EQ(fdb_future_get_keyvalue_array(w.get(), &kv, &n, &more), 2015);
  fdb_future_cancel(w.get());
}

TEST_F(Futures, GetErrorOnPendingFutureIsFutureNotSet) {
  Future w = pending(k("w"));
  EXPECT_EQ(fdb_future_get_error(w.get()), 2015);
  fdb_future_cancel(w.get());
}

TEST_F(Futures, GettersOnFailedFutureReturnItsError) {
  Tr tr = make_tr();
  std::string sys = "\xff/x";
  Future g(fdb_transaction_get(tr.get(), u8(sys), len(sys), 0));
  ASSERT_EQ(wait(g), 2004);
  fdb_bool_t present = 0;
  const uint8_t* v = nullptr;
  int n = 0;
  EXPECT_EQ(fdb_future_get_value(g.get(), &present, &v, &n), 2004);
}

TEST_F(Futures, GettersOfTheWrongKindAreClientInvalidOperation) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  Tr tr = make_tr();
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  Future rv(fdb_transaction_get_read_version(tr.get()));
  ASSERT_EQ(wait(g), 0);
  ASSERT_EQ(wait(rv), 0);
  int64_t i = 0;
  const uint8_t* key = nullptr;
  int n = 0;
  const FDBKeyValue* kv = nullptr;
  fdb_bool_t more = 0;
  fdb_bool_t present = 0;
  const char** strings = nullptr;
  const FDBKey* keys = nullptr;
  EXPECT_EQ(fdb_future_get_int64(g.get(), &i), 2000);
  EXPECT_EQ(fdb_future_get_key(g.get(), &key, &n), 2000);
  EXPECT_EQ(fdb_future_get_keyvalue_array(g.get(), &kv, &n, &more), 2000);
  EXPECT_EQ(fdb_future_get_string_array(g.get(), &strings, &n), 2000);
  EXPECT_EQ(fdb_future_get_key_array(g.get(), &keys, &n), 2000);
  EXPECT_EQ(fdb_future_get_value(rv.get(), &present, &key, &n), 2000);
  Future c(fdb_transaction_commit(tr.get()));
  ASSERT_EQ(wait(c), 0);
  EXPECT_EQ(fdb_future_get_int64(c.get(), &i), 2000);
  EXPECT_EQ(fdb_future_get_value(c.get(), &present, &key, &n), 2000);
}

TEST_F(Futures, GetValueReportsAbsentAndEmptyApart) {
  ASSERT_EQ(write(k("empty"), ""), 0);
  Tr tr = make_tr();
  Value absent = get(tr, k("absent"));
  Value empty = get(tr, k("empty"));
  ASSERT_EQ(absent.error, 0);
  ASSERT_EQ(empty.error, 0);
  EXPECT_FALSE(absent.present);
  EXPECT_TRUE(empty.present);
  EXPECT_EQ(empty.value, "");
}

TEST_F(Futures, ResultMemoryStaysValidUntilDestroy) {
  std::string big(5000, 'q');
  ASSERT_EQ(write(k("a"), big), 0);
  Tr tr = make_tr();
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  ASSERT_EQ(wait(g), 0);
  fdb_bool_t present = 0;
  const uint8_t* v = nullptr;
  int n = 0;
  ASSERT_EQ(fdb_future_get_value(g.get(), &present, &v, &n), 0);
  // Later activity on the transaction and the database leaves the result alone.
  set(tr, k("a"), "other");
  ASSERT_EQ(commit(tr), 0);
  ASSERT_EQ(write(k("a"), "third"), 0);
  EXPECT_EQ(str(v, n), big);
  // The same memory again from a second call.
  const uint8_t* v2 = nullptr;
  int n2 = 0;
  ASSERT_EQ(fdb_future_get_value(g.get(), &present, &v2, &n2), 0);
  EXPECT_EQ(str(v2, n2), big);
}

// As FoundationDB (callOrSetAsCallback): a future takes more than one callback. Python's
// Future.on_ready, wait_for_any and add_done_callback each set one (and raise on an
// error); Go's BlockUntilReady from two goroutines sets one each and ignores the result.
TEST_F(Futures, ASecondCallbackOnAReadyFutureRunsAtOnceToo) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  Tr tr = make_tr();
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  CallbackProbe first;
  CallbackProbe second;
  ASSERT_EQ(fdb_future_set_callback(g.get(), &CallbackProbe::callback, &first), 0);
  EXPECT_EQ(fdb_future_set_callback(g.get(), &CallbackProbe::callback, &second), 0);
  EXPECT_EQ(first.count(), 1);
  EXPECT_EQ(second.count(), 1);
}

TEST_F(Futures, TwoCallbacksOnAPendingFutureBothRunOnce) {
  ASSERT_EQ(write(k("w"), "0"), 0);
  Tr tr = make_tr();
  Future w(fdb_transaction_watch(tr.get(), u8(k("w")), len(k("w"))));
  ASSERT_EQ(commit(tr), 0);
  CallbackProbe first;
  CallbackProbe second;
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &first), 0);
  ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &second), 0);
  ASSERT_EQ(write(k("w"), "1"), 0);
  EXPECT_TRUE(first.wait_calls(1));
  EXPECT_TRUE(second.wait_calls(1));
  EXPECT_EQ(first.count(), 1);
  EXPECT_EQ(second.count(), 1);
}

// api-c.rst: once fdb_future_release_memory has been called as many times as the
// fdb_future_get_* functions, they return future_released. Until then a reader on
// another thread keeps what it got, so freeing the result at the first call would be wrong.
TEST_F(Futures, ReleaseMemoryFreesTheResultAfterItsLastReader) {
  ASSERT_EQ(write(k("a"), "value"), 0);
  Tr tr = make_tr();
  Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  ASSERT_EQ(wait(g), 0);
  fdb_bool_t present = 0;
  const uint8_t* v1 = nullptr;
  const uint8_t* v2 = nullptr;
  int n1 = 0;
  int n2 = 0;
  ASSERT_EQ(fdb_future_get_value(g.get(), &present, &v1, &n1), 0);
  ASSERT_EQ(fdb_future_get_value(g.get(), &present, &v2, &n2), 0);
  fdb_future_release_memory(g.get());  // one reader is done, the other is not
  EXPECT_EQ(str(v2, n2), "value");
  EXPECT_EQ(fdb_future_get_error(g.get()), 0);
  ASSERT_EQ(fdb_future_get_value(g.get(), &present, &v1, &n1), 0);
  fdb_future_release_memory(g.get());
  fdb_future_release_memory(g.get());  // the last reader: freed
  EXPECT_EQ(fdb_future_get_value(g.get(), &present, &v1, &n1), 1102);
  EXPECT_EQ(fdb_future_get_error(g.get()), 1102);  // an error from then on, as FoundationDB's
}

// The same across threads: a get either counts its reader before the last release frees
// the result, and reads the value intact, or returns future_released (1102).
TEST_F(Futures, ReleaseMemoryRacingAGetLeavesTheGetterEitherTheValueOrReleased) {
  ASSERT_EQ(write(k("a"), "value"), 0);
  for (int round = 0; round < 200; ++round) {
    Tr tr = make_tr();
    Future g(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
    ASSERT_EQ(wait(g), 0);
    std::atomic<int> torn{0};
    auto reader = [&] {
      for (;;) {
        fdb_bool_t present = 0;
        const uint8_t* v = nullptr;
        int n = 0;
        const fdb_error_t e = fdb_future_get_value(g.get(), &present, &v, &n);
        if (e == 1102) {
          // Released for every thread at once: the future's error says so too.
          if (fdb_future_get_error(g.get()) != 1102) ++torn;
          return;
        }
        if (e != 0 || str(v, n) != "value") ++torn;
        fdb_future_release_memory(g.get());
        if (e != 0) return;
      }
    };
    std::thread other(reader);
    reader();
    other.join();
    EXPECT_EQ(torn.load(), 0) << "round " << round;
  }
}

TEST_F(Futures, ReleaseMemoryThenDestroy) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  Tr tr = make_tr();
  Future r(start_range(tr.get(), first_greater_or_equal(prefix()),
                       first_greater_or_equal(prefix_end()), {}));
  ASSERT_EQ(wait(r), 0);
  fdb_future_release_memory(r.get());
  // Destroying afterwards is still fine (ASan checks there is no double free).
}

TEST_F(Futures, FuturesOutliveTheirTransaction) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  Future g;
  {
    Tr tr = make_tr();
    g.reset(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  }
  Value v = value_of(g.get());
  EXPECT_EQ(v.error, 0);
  EXPECT_EQ(v.value, "v");
}

// Futures are recycled through a pool of the releasing thread (fdb_c/future.hpp): a future
// made after another was destroyed is likely the same object, and must carry nothing of
// its earlier life: not its rows, its error, its callback or its released memory.
TEST_F(Futures, AFutureReusedFromThePoolStartsClean) {
  ASSERT_EQ(write(k("a"), "v"), 0);
  ASSERT_EQ(write(k("b"), "w"), 0);
  Tr tr = make_tr();
  for (int round = 0; round < 3; ++round) {
    // A range read with rows, a callback and released memory, then destroyed.
    FDBFuture* rows = start_range(tr.get(), first_greater_or_equal(prefix()),
                                  first_greater_or_equal(prefix_end()), {});
    ASSERT_EQ(wait(rows), 0);
    CallbackProbe probe;
    ASSERT_EQ(fdb_future_set_callback(rows, &CallbackProbe::callback, &probe), 0);
    EXPECT_EQ(probe.count(), 1);
    fdb_future_release_memory(rows);
    fdb_future_destroy(rows);

    // A point read of an absent key: a value future, absent, with no rows and a callback
    // slot of its own.
    Future absent(fdb_transaction_get(tr.get(), u8(k("none")), len(k("none")), 0));
    Value v = value_of(absent.get());
    EXPECT_EQ(v.error, 0);
    EXPECT_FALSE(v.present);
    const FDBKeyValue* kv = nullptr;
    int count = -1;
    fdb_bool_t more = 0;
    EXPECT_EQ(fdb_future_get_keyvalue_array(absent.get(), &kv, &count, &more), 2000);
    CallbackProbe second;
    EXPECT_EQ(fdb_future_set_callback(absent.get(), &CallbackProbe::callback, &second), 0);
    EXPECT_EQ(second.count(), 1);
    EXPECT_EQ(probe.count(), 1);
  }
  // A failed future, destroyed, then a successful read of the rows again.
  fdb_future_destroy(fdb_transaction_get_range_split_points(tr.get(), u8("a"), 1, u8("b"), 1, 0));
  const Range r = get_range(tr, prefix(), prefix_end());
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.rows, (Rows{{k("a"), "v"}, {k("b"), "w"}}));
}

}  // namespace
}  // namespace fdbc_test
