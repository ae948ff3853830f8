// Watches: wait until a key changes instead of polling it. A watch is made in a
// transaction and armed when that transaction commits; it fires once, when the key's value
// differs from what the transaction saw. Keep the Watch while you wait: destroying the last
// copy cancels it.
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include <strata/strata.hpp>

using namespace std::chrono_literals;

int main() {
  strata::Database db = strata::Database::open();
  db.run([](strata::Transaction& tr) { tr.set("config/mode", "normal"); });

  // Read the value and watch it in one transaction: a change after this read fires it.
  auto [mode, watch] = db.run([](strata::Transaction& tr) {
    return std::pair(tr.get("config/mode").value(), tr.watch("config/mode"));
  });
  std::printf("mode: %s\n", mode.c_str());
  std::printf("changed within 10 ms: %s\n", watch.wait_for(10ms) ? "yes" : "no");

  std::thread admin(
      [&db] { db.run([](strata::Transaction& tr) { tr.set("config/mode", "maintenance"); }); });
  watch.wait();  // blocks until the admin thread's commit
  admin.join();
  std::printf("woke up, mode: %s\n", db.run([](strata::Transaction& tr) {
                                         return tr.get("config/mode").value();
                                       }).c_str());

  // A callback instead of a waiting thread: it runs once, on the thread that fires the
  // watch (here the committing one), and must be short and must not throw.
  strata::Watch on_clear = db.run([](strata::Transaction& tr) { return tr.watch("config/mode"); });
  on_clear.on_ready([] { std::printf("callback: config/mode changed\n"); });
  db.run([](strata::Transaction& tr) { tr.clear("config/mode"); });

  // Setting a key to the value it already has is no change: the watch stays quiet.
  db.run([](strata::Transaction& tr) { tr.set("config/level", "1"); });
  strata::Watch level = db.run([](strata::Transaction& tr) { return tr.watch("config/level"); });
  db.run([](strata::Transaction& tr) { tr.set("config/level", "1"); });
  std::printf("same value written, fired: %s\n", level.wait_for(10ms) ? "yes" : "no");
}

// Output:
//   mode: normal
//   changed within 10 ms: no
//   woke up, mode: maintenance
//   callback: config/mode changed
//   same value written, fired: no
