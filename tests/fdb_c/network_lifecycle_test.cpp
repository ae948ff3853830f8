// The whole life of the network in one process (strata_fdb_c_network_test, its own
// executable because the API version and the network can be set up once per process):
// calls before the API version, setup, run, completion hooks, stop, and no restart.
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

using Clock = std::chrono::steady_clock;

struct Hook {
  std::atomic<int> calls{0};
  std::thread::id thread;
  static void run(void* p) {
    auto* h = static_cast<Hook*>(p);
    h->thread = std::this_thread::get_id();
    h->calls.fetch_add(1);
  }
};

// One test: each step depends on the process state the previous ones left.
TEST(NetworkLifecycle, FromUnsetVersionToNoRestart) {
  // Before an API version is selected.
  FDBDatabase* d = nullptr;
  EXPECT_EQ(fdb_setup_network(), 2200);
  EXPECT_EQ(fdb_create_database(nullptr, &d), 2200);
  EXPECT_EQ(fdb_create_database_from_connection_string("desc:id@127.0.0.1:4500", &d), 2200);

  ASSERT_EQ(fdb_select_api_version_impl(720, 720), 0);
  EXPECT_EQ(fdb_stop_network(), 2008);
  // Before setup, as FoundationDB's client: no database, no completion hook.
  EXPECT_EQ(fdb_create_database(nullptr, &d), 2008);
  EXPECT_EQ(fdb_create_database_from_connection_string("desc:id@127.0.0.1:4500", &d), 2008);
  EXPECT_EQ(d, nullptr);
  Hook early;
  EXPECT_EQ(fdb_add_network_thread_completion_hook(&Hook::run, &early), 2008);

  ASSERT_EQ(fdb_setup_network(), 0);
  EXPECT_EQ(fdb_setup_network(), 2009);
  Hook hook;
  ASSERT_EQ(fdb_add_network_thread_completion_hook(&Hook::run, &hook), 0);

  std::atomic<bool> returned{false};
  fdb_error_t run_result = -1;
  std::thread network([&] {
    run_result = fdb_run_network();
    returned = true;
  });
  env().network_thread = network.get_id();

  ASSERT_EQ(fdb_create_database(nullptr, &d), 0);
  env().db = d;
  const std::string key = "fdbc/NetworkLifecycle/w";
  ASSERT_EQ(write(key, "0"), 0);

  // The network thread runs callbacks of futures that complete later.
  {
    Tr tr = make_tr();
    Future w(fdb_transaction_watch(tr.get(), u8(key), len(key)));
    ASSERT_EQ(commit(tr), 0);
    CallbackProbe probe;
    ASSERT_EQ(fdb_future_set_callback(w.get(), &CallbackProbe::callback, &probe), 0);
    ASSERT_EQ(write(key, "1"), 0);
    ASSERT_TRUE(probe.wait_calls(1));
    EXPECT_EQ(probe.called_on(), network.get_id());
  }
  EXPECT_FALSE(returned.load());  // fdb_run_network blocks until fdb_stop_network
  EXPECT_EQ(hook.calls.load(), 0);

  // A watch still pending when the network stops.
  Tr tr = make_tr();
  Future late(fdb_transaction_watch(tr.get(), u8(key), len(key)));
  ASSERT_EQ(commit(tr), 0);
  CallbackProbe late_probe;
  ASSERT_EQ(fdb_future_set_callback(late.get(), &CallbackProbe::callback, &late_probe), 0);

  // Callbacks queued when the network is told to stop still run before fdb_run_network
  // returns, and so does that of an on_error delay still pending: a callback's parameter is
  // often the only owner of what it frees (FoundationDB's bindings free theirs there).
  // A first callback holds the network thread until the stop has been asked for.
  const std::string busy_key = "fdbc/NetworkLifecycle/busy";
  const std::string queued_key = "fdbc/NetworkLifecycle/queued";
  ASSERT_EQ(write(busy_key, "0"), 0);
  ASSERT_EQ(write(queued_key, "0"), 0);
  Tr busy_tr = make_tr();
  Future busy(fdb_transaction_watch(busy_tr.get(), u8(busy_key), len(busy_key)));
  Future queued(fdb_transaction_watch(busy_tr.get(), u8(queued_key), len(queued_key)));
  ASSERT_EQ(commit(busy_tr), 0);
  struct Gate {
    std::promise<void> entered;
    std::promise<void> open;
    static void callback(FDBFuture* /*f*/, void* self) {
      auto* g = static_cast<Gate*>(self);
      g->entered.set_value();
      g->open.get_future().wait();
    }
  } gate;
  ASSERT_EQ(fdb_future_set_callback(busy.get(), &Gate::callback, &gate), 0);
  CallbackProbe queued_probe;
  ASSERT_EQ(fdb_future_set_callback(queued.get(), &CallbackProbe::callback, &queued_probe), 0);
  ASSERT_EQ(write(busy_key, "1"), 0);
  gate.entered.get_future().wait();      // the network thread is held in the gate's callback
  ASSERT_EQ(write(queued_key, "1"), 0);  // so this watch's callback is queued behind it
  Tr retry_tr = make_tr();
  Future retry(fdb_transaction_on_error(retry_tr.get(), 1020));  // not_committed: a delay
  CallbackProbe retry_probe;
  ASSERT_EQ(fdb_future_set_callback(retry.get(), &CallbackProbe::callback, &retry_probe), 0);

  // A callback that arms another on_error delay each time it runs would keep a draining
  // network busy for ever (a stop makes every delay due at once): the queue is run for a
  // bounded time, then what is left is dropped, so that the stop ends.
  struct Rearm {
    FDBTransaction* tr = nullptr;
    std::vector<FDBFuture*> futures;  // touched by the network thread until it is joined
    std::atomic<int> calls{0};
    static void callback(FDBFuture* /*f*/, void* self) {
      auto* r = static_cast<Rearm*>(self);
      r->calls.fetch_add(1);
      r->futures.push_back(fdb_transaction_on_error(r->tr, 1020));
      (void)fdb_future_set_callback(r->futures.back(), &Rearm::callback, r);
    }
  };
  Tr rearm_tr = make_tr();
  Rearm rearm;
  rearm.tr = rearm_tr.get();
  rearm.futures.push_back(fdb_transaction_on_error(rearm_tr.get(), 1020));
  ASSERT_EQ(fdb_future_set_callback(rearm.futures.back(), &Rearm::callback, &rearm), 0);

  auto stop_started = Clock::now();
  ASSERT_EQ(fdb_stop_network(), 0);
  gate.open.set_value();
  network.join();
  EXPECT_GT(rearm.calls.load(), 0);
  const int rearm_calls = rearm.calls.load();
  EXPECT_EQ(queued_probe.count(), 1);
  EXPECT_EQ(queued_probe.called_on(), env().network_thread);
  EXPECT_EQ(retry_probe.count(), 1);
  EXPECT_EQ(retry_probe.called_with(), 0);
  EXPECT_LT(Clock::now() - stop_started, std::chrono::seconds(5));  // returns promptly
  EXPECT_EQ(run_result, 0);

  // Completion hooks ran once, on the network thread, as it left.
  EXPECT_EQ(hook.calls.load(), 1);
  EXPECT_EQ(hook.thread, env().network_thread);
  EXPECT_EQ(early.calls.load(), 0);  // the hook refused before setup never runs

  // No callback after fdb_run_network has returned, even when the watch's key changes.
  EXPECT_EQ(write(key, "2"), 0);
  EXPECT_EQ(late_probe.count(), 0);
  EXPECT_EQ(rearm.calls.load(), rearm_calls);
  for (FDBFuture* f : rearm.futures) fdb_future_destroy(f);

  // The network cannot be restarted or set up again.
  EXPECT_EQ(fdb_run_network(), 2025);
  EXPECT_EQ(fdb_setup_network(), 2009);

  late.reset();
  tr.reset();
  retry.reset();
  retry_tr.reset();
  busy.reset();
  queued.reset();
  busy_tr.reset();
  fdb_database_destroy(d);
  env().db = nullptr;
}

}  // namespace
}  // namespace fdbc_test
