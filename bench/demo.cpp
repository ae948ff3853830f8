// strata-demo: a short tour of transactions (replaced by the stress tool later).
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

int main() {
  strata::Database db = strata::Database::open();
  // Eight threads move 1 from a random account to another, 10,000 times each.
  constexpr int kAccounts = 100;
  db.run([&](strata::Transaction& tr) {
    for (int i = 0; i < kAccounts; ++i) tr.set("acct/" + std::to_string(1000 + i), "100");
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&db, t] {
      unsigned seed = 17u * static_cast<unsigned>(t) + 1;
      for (int n = 0; n < 10000; ++n) {
        seed = seed * 1103515245u + 12345u;
        std::string from = "acct/" + std::to_string(1000 + (seed >> 8) % kAccounts);
        std::string to = "acct/" + std::to_string(1000 + (seed >> 16) % kAccounts);
        if (from == to) continue;
        db.run([&](strata::Transaction& tr) {
          int a = std::stoi(*tr.get(from));
          int b = std::stoi(*tr.get(to));
          tr.set(from, std::to_string(a - 1));
          tr.set(to, std::to_string(b + 1));
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  long total = db.run([](strata::Transaction& tr) {
    long sum = 0;
    for (const auto& kv : tr.get_range("acct/", "acct0")) sum += std::stol(kv.value);
    return sum;
  });
  std::printf("accounts: %d, total after 80,000 concurrent transfers: %ld (expected %d)\n",
              kAccounts, total, kAccounts * 100);
  std::printf("committed version: %lld\n", static_cast<long long>(db.committed_version()));
  return total == kAccounts * 100 ? 0 : 1;
}
