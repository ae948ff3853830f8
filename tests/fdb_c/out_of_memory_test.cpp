// The C API out of memory (docs/decisions/0038): this executable's operator new fails on
// demand (support/failing_allocator.hpp), and libfdb_c.so takes operator new from the
// executable (it imports it; AllocationsInsideTheLibraryFail checks that they fail). For
// each entry point, the n-th allocation of one call fails, for n = 1, 2, ... until the call
// makes fewer than n. Each time: no exception leaves the call, a future is never null and
// becomes ready with success or a FoundationDB error that fdb_get_error describes, and the
// transaction or database goes on working. ASan's leak check (the ASan build) finds
// anything left behind.
//
// The codes are FoundationDB's (bindings/c/fdb_c.cpp: RETURN_ON_ERROR and
// RETURN_FUTURE_ON_ERROR answer a C++ exception that is not a flow Error, std::bad_alloc
// among them, with unknown_error, 4000); a commit the engine refuses for memory fails with
// commit_proxy_memory_limit_exceeded (1042, docs/decisions/0032).
//
// Each call runs on a thread of its own: a thread's recycled futures would otherwise spare
// its calls the allocations under test. The countdown is per thread, so the network
// thread's allocations never fail.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"
#include "support/failing_allocator.hpp"
#include <unistd.h>

namespace fdbc_test {
namespace {

namespace fa = strata::testing::failing_allocator;

constexpr fdb_error_t kUnknownError = 4000;        // FoundationDB's unknown_error
constexpr fdb_error_t kCommitMemoryLimit = 1042;   // commit_proxy_memory_limit_exceeded
constexpr fdb_error_t kOperationCancelled = 1101;  // operation_cancelled
constexpr uint64_t kServerProtocol = 0x0FDB00B074000000;
constexpr long kMostAllocations = 2000;  // more in one call would be a loop, not a call

// Runs `call` with the n-th allocation this thread makes failing. Returns whether that
// allocation was reached; an exception out of `call` fails the test.
template <class Call>
bool armed(long n, Call&& call) {
  bool escaped = false;
  fa::fail_nth(n);
  try {
    call();
  } catch (...) {
    escaped = true;
  }
  const bool fired = fa::fired();
  fa::fail_nth(0);
  EXPECT_FALSE(escaped) << "an exception left the C API with allocation " << n << " failing";
  return fired;
}

// Runs step(n) on a thread of its own for n = 1, 2, ... until a step's call ran without
// reaching its n-th allocation (step returns whether it did). Returns that n: the number
// of allocations the call makes, plus one.
long sweep(const std::function<bool(long)>& step) {
  for (long n = 1; n <= kMostAllocations; ++n) {
    bool fired = false;
    std::thread([&] { fired = step(n); }).join();
    if (!fired || ::testing::Test::HasFailure()) return n;
  }
  ADD_FAILURE() << "the call still allocates after " << kMostAllocations << " allocations";
  return kMostAllocations;
}

// fdb_get_error describes `e` (an unknown code reads "UNKNOWN_ERROR").
void expect_described(fdb_error_t e) { EXPECT_STRNE(fdb_get_error(e), "UNKNOWN_ERROR") << e; }

// The outcome of a future made with an allocation failing: not null, ready, and 0 or one of
// `codes`.
fdb_error_t outcome(FDBFuture* f, std::initializer_list<fdb_error_t> codes = {kUnknownError}) {
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return -1;
  EXPECT_TRUE(wait_ready_for(f));
  const fdb_error_t e = fdb_future_get_error(f);
  expect_described(e);
  if (e != 0) {
    EXPECT_NE(std::find(codes.begin(), codes.end(), e), codes.end()) << e;
  }
  return e;
}

class OutOfMemory : public FdbTest {};

TEST_F(OutOfMemory, AllocationsInsideTheLibraryFail) {
  // A thread with no recycled future: the read's first allocation is its future.
  Tr tr = make_tr();
  std::thread([&] {
    FDBFuture* f = nullptr;
    const std::string key = k("a");
    EXPECT_TRUE(armed(1, [&] { f = fdb_transaction_get(tr.get(), u8(key), len(key), 0); }));
    EXPECT_EQ(outcome(f), kUnknownError);
    fdb_future_destroy(f);
  }).join();
}

TEST_F(OutOfMemory, OneSharedFailedFutureStandsInForOneThatCannotBeMade) {
  Tr tr = make_tr();
  const std::string key = k("a");
  ASSERT_EQ(write(key, "v"), 0);
  constexpr int kThreads = 4;
  std::vector<FDBFuture*> seen(kThreads, nullptr);
  std::vector<CallbackProbe> probes(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      FDBFuture* f = nullptr;
      FDBFuture* again = nullptr;
      EXPECT_TRUE(armed(1, [&] { f = fdb_transaction_get(tr.get(), u8(key), len(key), 0); }));
      EXPECT_TRUE(armed(1, [&] { again = fdb_transaction_get(tr.get(), u8(key), len(key), 0); }));
      EXPECT_EQ(again, f);  // nothing was freed: the same, shared future
      seen[i] = f;
      EXPECT_EQ(fdb_future_is_ready(f), 1);
      EXPECT_EQ(fdb_future_block_until_ready(f), 0);
      EXPECT_EQ(fdb_future_get_error(f), kUnknownError);
      fdb_bool_t present = 0;
      const uint8_t* data = nullptr;
      int length = 0;
      EXPECT_EQ(fdb_future_get_value(f, &present, &data, &length), kUnknownError);
      // A ready future's callback runs at once, on this thread.
      EXPECT_EQ(fdb_future_set_callback(f, &CallbackProbe::callback, &probes[i]), 0);
      EXPECT_EQ(probes[i].count(), 1);
      EXPECT_EQ(probes[i].called_on(), std::this_thread::get_id());
      EXPECT_EQ(probes[i].called_with(), kUnknownError);
      fdb_future_release_memory(f);
      fdb_future_cancel(f);
      fdb_future_destroy(f);
      fdb_future_destroy(again);
      // Unharmed, and the thread reads on.
      EXPECT_EQ(fdb_future_get_error(f), kUnknownError);
      EXPECT_EQ(get(tr, key).value, "v");
    });
  }
  for (std::thread& t : threads) t.join();
  for (FDBFuture* f : seen) EXPECT_EQ(f, seen[0]);
  EXPECT_STREQ(fdb_get_error(kUnknownError), "An unknown error occurred");
}

// A read whose future is checked by `verify` when it succeeds.
struct Read {
  const char* name;
  std::function<FDBFuture*(FDBTransaction*)> call;
  std::function<void(FDBFuture*)> verify;
};

TEST_F(OutOfMemory, ReadsFailWithUnknownErrorAndTheTransactionReadsOn) {
  constexpr int kRows = 20;
  const std::string value(100, 'v');  // past the short-string buffer: the copy allocates
  ASSERT_EQ(run([&](const Tr& tr) {
              for (int i = 0; i < kRows; ++i) set(tr, k("r" + std::to_string(100 + i)), value);
              return 0;
            }),
            0);
  const std::string first = k("r100");
  const std::string begin = prefix();
  const std::string end = prefix_end();
  // Made here: the calls under test allocate nothing of the test's own.
  const Selector range_begin = first_greater_or_equal(begin);
  const Selector range_end = first_greater_or_equal(end);
  const std::vector<Read> reads = {
      {"get", [&](FDBTransaction* tr) { return fdb_transaction_get(tr, u8(first), len(first), 0); },
       [&](FDBFuture* f) { EXPECT_EQ(value_of(f).value, value); }},
      {"get_key",
       [&](FDBTransaction* tr) {
         return fdb_transaction_get_key(tr, u8(begin), len(begin), 0, 1, 0);
       },
       [&](FDBFuture* f) { EXPECT_EQ(key_of(f).key, first); }},
      {"get_range", [&](FDBTransaction* tr) { return start_range(tr, range_begin, range_end, {}); },
       [&](FDBFuture* f) {
         Range r = range_of(f);
         EXPECT_EQ(r.error, 0);
         EXPECT_EQ(r.rows.size(), std::size_t{kRows});
       }},
      {"get_read_version", [](FDBTransaction* tr) { return fdb_transaction_get_read_version(tr); },
       [](FDBFuture* f) {
         int64_t v = 0;
         EXPECT_EQ(fdb_future_get_int64(f, &v), 0);
         EXPECT_GT(v, 0);
       }},
      {"get_addresses_for_key",
       [&](FDBTransaction* tr) {
         return fdb_transaction_get_addresses_for_key(tr, u8(first), len(first));
       },
       [](FDBFuture* f) {
         const char** strings = nullptr;
         int count = 0;
         EXPECT_EQ(fdb_future_get_string_array(f, &strings, &count), 0);
         EXPECT_EQ(count, 1);
       }},
      {"get_range_split_points",
       [&](FDBTransaction* tr) {
         return fdb_transaction_get_range_split_points(tr, u8(begin), len(begin), u8(end), len(end),
                                                       500);
       },
       [&](FDBFuture* f) {
         const FDBKey* keys = nullptr;
         int count = 0;
         EXPECT_EQ(fdb_future_get_key_array(f, &keys, &count), 0);
         EXPECT_GT(count, 2);
       }},
      {"get_estimated_range_size_bytes",
       [&](FDBTransaction* tr) {
         return fdb_transaction_get_estimated_range_size_bytes(tr, u8(begin), len(begin), u8(end),
                                                               len(end));
       },
       [](FDBFuture* f) {
         int64_t bytes = 0;
         EXPECT_EQ(fdb_future_get_int64(f, &bytes), 0);
         EXPECT_GT(bytes, 0);
       }},
      {"get_approximate_size",
       [](FDBTransaction* tr) { return fdb_transaction_get_approximate_size(tr); },
       [](FDBFuture* f) {
         int64_t size = -1;
         EXPECT_EQ(fdb_future_get_int64(f, &size), 0);
       }},
  };
  for (const Read& read : reads) {
    SCOPED_TRACE(read.name);
    const long calls = sweep([&](long n) {
      Tr tr = make_tr();
      FDBFuture* f = nullptr;
      const bool fired = armed(n, [&] { f = read.call(tr.get()); });
      if (outcome(f) == 0) read.verify(f);
      fdb_future_destroy(f);
      // The transaction reads on.
      Future again(read.call(tr.get()));
      EXPECT_EQ(wait(again), 0);
      read.verify(again.get());
      return fired;
    });
    EXPECT_GT(calls, 1);  // it allocates, and each of its allocations failed once
  }
}

// A write and whether its effect is in the database.
struct Write {
  const char* name;
  std::function<void(FDBTransaction*)> call;
  std::function<bool()> done;
};

TEST_F(OutOfMemory, AWriteThatFailsFailsTheCommitWithUnknownError) {
  const std::string key = k("w");
  // Larger than a transaction's first arena block: the write takes a block of its own.
  const std::string value(90'000, 'w');
  const std::string end = key + "\xff";
  const std::vector<Write> writes = {
      {"set",
       [&](FDBTransaction* tr) {
         fdb_transaction_set(tr, u8(key), len(key), u8(value), len(value));
       },
       [&] { return read(key).value == value; }},
      {"atomic_op",
       [&](FDBTransaction* tr) {
         fdb_transaction_atomic_op(tr, u8(key), len(key), u8(value), len(value),
                                   FDB_MUTATION_TYPE_APPEND_IF_FITS);
       },
       [&] { return read(key).value == value; }},
      {"clear_range",
       [&](FDBTransaction* tr) {
         fdb_transaction_set(tr, u8(key), len(key), u8(value), len(value));
         fdb_transaction_clear_range(tr, u8(key), len(key), u8(end), len(end));
       },
       [&] { return !read(key).present; }},
  };
  for (const Write& w : writes) {
    SCOPED_TRACE(w.name);
    const long calls = sweep([&](long n) {
      EXPECT_EQ(run([&](const Tr& tr) {
                  clear(tr, key);
                  return 0;
                }),
                0);
      Tr tr = make_tr();
      const bool fired = armed(n, [&] { w.call(tr.get()); });
      const fdb_error_t e = commit(tr);
      expect_described(e);
      if (e != 0) {
        // As FoundationDB's deferred errors: the write's error fails the commit, and
        // nothing of the transaction is committed.
        EXPECT_EQ(e, kUnknownError);
        EXPECT_FALSE(read(key).present);
        EXPECT_EQ(on_error(tr, e), kUnknownError);  // not retryable
        fdb_transaction_reset(tr.get());
        w.call(tr.get());
        EXPECT_EQ(commit(tr), 0);
      }
      EXPECT_TRUE(w.done());
      return fired;
    });
    EXPECT_GT(calls, 1);
  }
}

TEST_F(OutOfMemory, ACommitThatReportsAnErrorCommittedNothing) {
  const std::string key = k("c");
  const long calls = sweep([&](long n) {
    const std::string value = "value " + std::to_string(n) + std::string(100, 'c');
    Tr tr = make_tr();
    set(tr, key, value);
    FDBFuture* f = nullptr;
    const bool fired = armed(n, [&] { f = fdb_transaction_commit(tr.get()); });
    const fdb_error_t e = outcome(f, {kUnknownError, kCommitMemoryLimit});
    fdb_future_destroy(f);
    EXPECT_EQ(read(key).value == value, e == 0) << e;
    if (e != 0) {
      const fdb_error_t retry = on_error(tr, e);  // 1042 retries, 4000 is given back
      EXPECT_EQ(retry, e == kCommitMemoryLimit ? 0 : e);
      fdb_transaction_reset(tr.get());
      set(tr, key, value);
      EXPECT_EQ(commit(tr), 0);
      EXPECT_EQ(read(key).value, value);
    }
    return fired;
  });
  EXPECT_GT(calls, 1);
}

TEST_F(OutOfMemory, AVersionstampThatCannotBeMadeLeavesTheCommitAlone) {
  const std::string key = k("s");
  const long calls = sweep([&](long n) {
    Tr tr = make_tr();
    set(tr, key, "x");
    FDBFuture* stamp = nullptr;
    const bool fired = armed(n, [&] { stamp = fdb_transaction_get_versionstamp(tr.get()); });
    EXPECT_EQ(commit(tr), 0);
    if (outcome(stamp) == 0) {
      const Key k = key_of(stamp);
      EXPECT_EQ(k.key.size(), 10u);
    }
    fdb_future_destroy(stamp);
    return fired;
  });
  EXPECT_GT(calls, 1);
}

TEST_F(OutOfMemory, AWatchThatFailsGivesBackItsPlace) {
  // One watch at a time on this handle: a place a failed watch kept would refuse the next.
  Db handle = open_db();
  ASSERT_EQ(set_db_option(handle.get(), FDB_DB_OPTION_MAX_WATCHES, 1), 0);
  const std::string key = k("watched");
  ASSERT_EQ(write(key, "0"), 0);
  const long calls = sweep([&](long n) {
    Tr tr = make_tr(handle.get());
    FDBFuture* w = nullptr;
    const bool fired = armed(n, [&] { w = fdb_transaction_watch(tr.get(), u8(key), len(key)); });
    EXPECT_NE(w, nullptr);
    EXPECT_EQ(commit(tr), 0);
    if (fdb_future_is_ready(w) == 0) {
      // Armed: a change fires it.
      EXPECT_EQ(write(key, std::to_string(n)), 0);
      EXPECT_EQ(outcome(w), 0);
    } else {
      EXPECT_EQ(outcome(w), kUnknownError);
    }
    fdb_future_destroy(w);
    // Its place is free again: another watch on the handle is armed.
    Tr next = make_tr(handle.get());
    Future again(fdb_transaction_watch(next.get(), u8(key), len(key)));
    EXPECT_EQ(commit(next), 0);
    fdb_future_cancel(again.get());
    EXPECT_EQ(wait(again), kOperationCancelled);  // not too_many_watches (1032)
    return fired;
  });
  EXPECT_GT(calls, 1);
}

TEST_F(OutOfMemory, OnErrorFailsWithUnknownErrorAndTheTransactionCommitsAfterAReset) {
  const std::string key = k("e");
  const long calls = sweep([&](long n) {
    Tr tr = make_tr();
    set(tr, key, "x");
    FDBFuture* f = nullptr;
    const bool fired = armed(n, [&] { f = fdb_transaction_on_error(tr.get(), 1020); });
    if (outcome(f) != 0) fdb_transaction_reset(tr.get());
    fdb_future_destroy(f);
    set(tr, key, std::to_string(n));
    EXPECT_EQ(commit(tr), 0);
    EXPECT_EQ(read(key).value, std::to_string(n));
    return fired;
  });
  EXPECT_GT(calls, 1);
}

TEST_F(OutOfMemory, HandlesThatCannotBeMadeReturnUnknownError) {
  const std::string key = k("h");
  ASSERT_EQ(write(key, "h"), 0);
  const long transactions = sweep([&](long n) {
    FDBTransaction* tr = nullptr;
    fdb_error_t e = -1;
    const bool fired = armed(n, [&] { e = fdb_database_create_transaction(db(), &tr); });
    expect_described(e);
    if (e == 0) {
      EXPECT_EQ(get(tr, key).value, "h");
      fdb_transaction_destroy(tr);
    } else {
      EXPECT_EQ(e, kUnknownError);
    }
    return fired;
  });
  EXPECT_GT(transactions, 1);
  const long databases = sweep([&](long n) {
    FDBDatabase* d = nullptr;
    fdb_error_t e = -1;
    const bool fired = armed(n, [&] { e = fdb_create_database(nullptr, &d); });
    expect_described(e);
    if (e == 0) {
      Tr tr = make_tr(d);
      EXPECT_EQ(get(tr, key).value, "h");
      tr.reset();
      fdb_database_destroy(d);
    } else {
      EXPECT_EQ(e, kUnknownError);
    }
    return fired;
  });
  EXPECT_GT(databases, 1);
  const long tenants = sweep([&](long n) {
    FDBTenant* t = nullptr;
    fdb_error_t e = -1;
    const std::string name = "tenant";
    const bool fired =
        armed(n, [&] { e = fdb_database_open_tenant(db(), u8(name), len(name), &t); });
    expect_described(e);
    if (e == 0) {
      fdb_tenant_destroy(t);
    } else {
      EXPECT_EQ(e, kUnknownError);
    }
    return fired;
  });
  EXPECT_GT(tenants, 1);
}

TEST_F(OutOfMemory, ACallbackThatCannotBeAddedIsNeverCalled) {
  const long calls = sweep([&](long n) {
    // Pending until cancelled: the in-process server's protocol never changes.
    Future f(fdb_database_get_server_protocol(db(), kServerProtocol));
    CallbackProbe first, second;
    EXPECT_EQ(fdb_future_set_callback(f.get(), &CallbackProbe::callback, &first), 0);
    fdb_error_t e = -1;
    const bool fired =
        armed(n, [&] { e = fdb_future_set_callback(f.get(), &CallbackProbe::callback, &second); });
    expect_described(e);
    if (e != 0) {
      EXPECT_EQ(e, kUnknownError);
    }
    fdb_future_cancel(f.get());
    EXPECT_TRUE(first.wait_calls(1));
    if (e == 0) {
      EXPECT_TRUE(second.wait_calls(1));
    } else {
      network_barrier(k("barrier"));  // everything queued so far has run
    }
    EXPECT_EQ(first.count(), 1);
    EXPECT_EQ(second.count(), e == 0 ? 1 : 0);
    return fired;
  });
  EXPECT_GT(calls, 1);  // adding the second callback allocates, and that allocation failed
}

// A future made ready on a thread with no memory left still calls its callbacks, each
// once, on the network thread: queueing them allocates nothing (docs/decisions/0038), as
// FoundationDB's client allocates a callback when it is set, not when it fires. Bindings
// that wait through a callback (Go's BlockUntilReady, Python's on_ready) depend on it.
TEST_F(OutOfMemory, CallbacksOfAFutureMadeReadyWithNoMemoryLeftAreEachCalledOnce) {
  const std::string key = k("watched");
  ASSERT_EQ(write(key, "0"), 0);
  Tr tr = make_tr();
  Future watch(fdb_transaction_watch(tr.get(), u8(key), len(key)));
  ASSERT_EQ(commit(tr), 0);
  // Pending until cancelled: the in-process server's protocol never changes.
  Future protocol(fdb_database_get_server_protocol(db(), kServerProtocol));
  const std::vector<FDBFuture*> futures = {watch.get(), protocol.get()};
  // Two callbacks on each: the first is kept in the future itself, the second in its list.
  CallbackProbe probes[2][2];
  for (std::size_t i = 0; i < futures.size(); ++i) {
    for (CallbackProbe& probe : probes[i]) {
      ASSERT_EQ(fdb_future_set_callback(futures[i], &CallbackProbe::callback, &probe), 0);
    }
  }
  std::thread([&] {
    fa::fail_from(1);  // every allocation of this thread fails from here on
    for (FDBFuture* f : futures) fdb_future_cancel(f);
    fa::fail_nth(0);
  }).join();
  for (auto& on_one : probes) {
    for (CallbackProbe& probe : on_one) EXPECT_TRUE(probe.wait_calls(1));
  }
  network_barrier(k("barrier"));  // a second call would have come before this returns
  for (auto& on_one : probes) {
    for (CallbackProbe& probe : on_one) {
      EXPECT_EQ(probe.count(), 1);
      EXPECT_EQ(probe.called_on(), network_thread());
      EXPECT_EQ(probe.called_with(), kOperationCancelled);
    }
  }
}

// The same for a versionstamp future that a commit completes, with each allocation of the
// commit failing in turn on the committing thread, then all of them.
TEST_F(OutOfMemory, AVersionstampCallbackIsCalledOnceWhateverTheCommitRanOutOf) {
  const std::string key = k("stamped");
  auto step = [&](long n, bool from_n_on) {
    Tr tr = make_tr();
    set(tr, key, std::to_string(n));
    Future stamp(fdb_transaction_get_versionstamp(tr.get()));
    CallbackProbe probe;
    EXPECT_EQ(fdb_future_set_callback(stamp.get(), &CallbackProbe::callback, &probe), 0);
    FDBFuture* f = nullptr;
    bool fired = false;
    if (from_n_on) {
      fa::fail_from(n);
      f = fdb_transaction_commit(tr.get());
      fired = fa::fired();
      fa::fail_nth(0);
    } else {
      fired = armed(n, [&] { f = fdb_transaction_commit(tr.get()); });
    }
    const fdb_error_t e = outcome(f, {kUnknownError, kCommitMemoryLimit});
    fdb_future_destroy(f);
    EXPECT_TRUE(probe.wait_calls(1));
    network_barrier(k("barrier"));
    EXPECT_EQ(probe.count(), 1);
    EXPECT_EQ(probe.called_on(), network_thread());
    const fdb_error_t stamp_error = probe.called_with();
    expect_described(stamp_error);
    if (e != 0) {
      EXPECT_NE(stamp_error, 0);  // no stamp for a commit that did not happen
    }
    return fired;
  };
  const long calls = sweep([&](long n) { return step(n, false); });
  EXPECT_GT(calls, 1);
  std::thread([&] { EXPECT_TRUE(step(1, true)); }).join();
}

// A durable database's commit made while the thread's last commit is unwaited goes in
// flight (queued for strata's pipeline thread, FDB_transaction::commit_in_flight). With
// each of its allocations failing in turn: a commit reported failed committed nothing, one
// reported done is there, and the transaction commits after a reset.
TEST_F(OutOfMemory, ADurableCommitInFlightThatFailsCommittedNothing) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("strata-fdbc-out-of-memory-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string connection = "strata:" + (dir / "data").string();
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database_from_connection_string(connection.c_str(), &d), 0);
  Db durable(d);
  const std::string key = k("durable");
  auto durable_value = [&] {
    Tr reader = make_tr(durable.get());
    return get(reader, key);
  };
  const long calls = sweep([&](long n) {
    // This thread's first commit, left unwaited: the next one goes in flight.
    Tr first = make_tr(durable.get());
    set(first, k("first"), std::to_string(n));
    Future first_commit(fdb_transaction_commit(first.get()));
    const std::string value = "value " + std::to_string(n) + std::string(100, 'd');
    Tr tr = make_tr(durable.get());
    set(tr, key, value);
    FDBFuture* f = nullptr;
    const bool fired = armed(n, [&] { f = fdb_transaction_commit(tr.get()); });
    const fdb_error_t e = outcome(f, {kUnknownError, kCommitMemoryLimit});
    fdb_future_destroy(f);
    EXPECT_EQ(wait(first_commit), 0);
    EXPECT_EQ(durable_value().value == value, e == 0) << e;
    if (e != 0) {
      fdb_transaction_reset(tr.get());
      set(tr, key, value);
      EXPECT_EQ(commit(tr), 0);
      EXPECT_EQ(durable_value().value, value);
    }
    return fired;
  });
  EXPECT_GT(calls, 1);
  // The database stays open until the process exits: its directory is left in the temp
  // directory, as database_test.cpp's.
}

// cancel, reset and destroy finish the transaction's versionstamp futures. One of them was
// destroyed by the user while pending, so its last reference goes inside the call, and
// the future goes back to this thread's pool, whose first growth is the call's
// allocation: out of memory, the future is freed instead. The other has a callback,
// queued inside the call.
TEST_F(OutOfMemory, CancelResetAndDestroyThrowNothing) {
  const std::string key = k("d");
  for (const char* what : {"cancel", "reset", "destroy"}) {
    SCOPED_TRACE(what);
    const std::string w = what;
    long deferred = 0;  // resets that could not finish
    const long calls = sweep([&](long n) {
      Tr tr = make_tr();
      set(tr, key, "d");
      Future stamp(fdb_transaction_get_versionstamp(tr.get()));
      CallbackProbe probe;
      EXPECT_EQ(fdb_future_set_callback(stamp.get(), &CallbackProbe::callback, &probe), 0);
      fdb_future_destroy(fdb_transaction_get_versionstamp(tr.get()));
      const bool fired = armed(n, [&] {
        if (w == "cancel") {
          fdb_transaction_cancel(tr.get());
        } else if (w == "reset") {
          fdb_transaction_reset(tr.get());
        } else {
          fdb_transaction_destroy(tr.release());
        }
      });
      EXPECT_EQ(wait(stamp), 1025);  // transaction_cancelled, for each of the three
      EXPECT_TRUE(probe.wait_calls(1));
      if (w == "cancel") {
        // Cancelled whatever failed: the next read and commit say so.
        EXPECT_EQ(get(tr, key).error, 1025);
        EXPECT_EQ(commit(tr), 1025);
      } else if (w == "reset") {
        // A reset left half done defers unknown_error to the next read and commit (until
        // the next reset); one that finished leaves the transaction fresh.
        const fdb_error_t next = get(tr, key).error;
        if (next != 0) {
          EXPECT_EQ(next, kUnknownError);
          EXPECT_EQ(commit(tr), kUnknownError);
          ++deferred;
        }
      }
      if (tr != nullptr) {
        fdb_transaction_reset(tr.get());
        set(tr, key, "again");
        EXPECT_EQ(commit(tr), 0);
      }
      network_barrier(k("barrier"));
      EXPECT_EQ(probe.count(), 1);
      return fired;
    });
    EXPECT_GT(calls, 1);  // each of the three allocates, and each allocation failed once
    // The reset's own work (strata's reset, the options) allocates nothing on an
    // in-process database, so no reset is left half done here.
    EXPECT_EQ(deferred, 0);
  }
}

}  // namespace
}  // namespace fdbc_test
