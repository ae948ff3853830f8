// The whole life of the network in one process (strata_fdb_c_network_test, its own
// executable because the API version and the network can be set up once per process):
// calls before the API version, setup, run, completion hooks, stop, and no restart.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

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

  auto stop_started = Clock::now();
  ASSERT_EQ(fdb_stop_network(), 0);
  network.join();
  EXPECT_LT(Clock::now() - stop_started, std::chrono::seconds(5));  // returns promptly
  EXPECT_EQ(run_result, 0);

  // Completion hooks ran once, on the network thread, as it left.
  EXPECT_EQ(hook.calls.load(), 1);
  EXPECT_EQ(hook.thread, env().network_thread);
  EXPECT_EQ(early.calls.load(), 0);  // the hook refused before setup never runs

  // No callback after fdb_run_network has returned, even when the watch's key changes.
  EXPECT_EQ(write(key, "2"), 0);
  EXPECT_EQ(late_probe.count(), 0);

  // The network cannot be restarted or set up again.
  EXPECT_EQ(fdb_run_network(), 2025);
  EXPECT_EQ(fdb_setup_network(), 2009);

  late.reset();
  tr.reset();
  fdb_database_destroy(d);
  env().db = nullptr;
}

}  // namespace
}  // namespace fdbc_test
