// Counters: atomic_add changes a key without reading it, so transactions that only add
// never conflict, however many threads add at once. The value is FoundationDB's counter,
// 8 bytes little-endian; int64_value reads it.
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <strata/strata.hpp>

int main() {
  strata::Database db = strata::Database::open();
  constexpr int kThreads = 4;
  constexpr int kAddsPerThread = 1000;

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&db, t] {
      for (int i = 0; i < kAddsPerThread; ++i) {
        db.run([&](strata::Transaction& tr) {
          tr.atomic_add("hits", 1);                             // one counter all threads share
          tr.atomic_add("hits/thread" + std::to_string(t), 1);  // and one per thread
          tr.atomic_add("bytes", 512);
        });
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  db.run(
      [](strata::Transaction& tr) { tr.atomic_add("bytes", -48); });  // a negative delta subtracts
  auto [hits, bytes, thread0] = db.run([](strata::Transaction& tr) {
    return std::tuple(strata::int64_value(tr.get("hits").value()),
                      strata::int64_value(tr.get("bytes").value()),
                      strata::int64_value(tr.get("hits/thread0").value()));
  });
  std::printf("hits: %lld, thread 0: %lld, bytes: %lld\n", static_cast<long long>(hits),
              static_cast<long long>(thread0), static_cast<long long>(bytes));
  std::printf("conflicts: %llu\n", static_cast<unsigned long long>(db.stats().conflicts));

  // (A counter kept as read, add one, write back would conflict whenever two threads
  // overlap, and Database::run would retry it.)
  std::printf("stored as %zu bytes\n",
              db.run([](strata::Transaction& tr) { return tr.get("hits")->size(); }));
}

// Output:
//   hits: 4000, thread 0: 1000, bytes: 2047952
//   conflicts: 0
//   stored as 8 bytes
