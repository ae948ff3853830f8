// The README's example: tuple keys in a subspace, a Queue whose consumer blocks in
// dequeue_wait, and a PriorityQueue. CTest checks that README.md shows this code.
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include <strata/strata.hpp>

using namespace std::chrono_literals;
using strata::Tuple;

int main() {
  strata::Database db = strata::Database::open();  // in memory; {.path = "dir"}: on disk

  // Keys are tuples, packed under a subspace: ("users", 42, "name") -> "Ada".
  strata::Subspace users(Tuple{"users"});
  db.run([&](strata::Transaction& tr) {
    tr.set(users.pack(Tuple{42, "name"}), "Ada");
    tr.set(users.pack(Tuple{42, "email"}), "ada@example.com");
  });
  auto rows = db.run([&](strata::Transaction& tr) { return tr.get_range(users.range(Tuple{42})); });
  for (const strata::KeyValue& row : rows) {
    Tuple key = users.unpack(row.key);  // (42, "email"), then (42, "name")
    std::printf("user 42 %s: %s\n", key[1].get<std::string>().c_str(), row.value.c_str());
  }

  // A Queue: the consumer sleeps in dequeue_wait until an item comes (or 10 s pass).
  strata::Queue jobs(strata::Subspace(Tuple{"jobs"}));
  std::thread consumer([&] {
    for (int i = 0; i < 3; ++i) {
      std::optional<std::string> job = jobs.dequeue_wait(db, 10s);
      std::printf("job: %s\n", job ? job->c_str() : "none within 10 s");
    }
  });
  for (const char* job : {"resize", "upload", "notify"}) jobs.enqueue(db, job);
  consumer.join();

  // A PriorityQueue: pop_min takes the lowest priority first (one type for all priorities).
  strata::PriorityQueue tasks(strata::Subspace(Tuple{"tasks"}));
  tasks.push(db, "write docs", 3);
  tasks.push(db, "fix the bug", 1);
  tasks.push(db, "review", 2);
  while (std::optional<std::string> task = tasks.pop_min(db)) {
    std::printf("task: %s\n", task->c_str());
  }
}

// Output:
//   user 42 email: ada@example.com
//   user 42 name: Ada
//   job: resize
//   job: upload
//   job: notify
//   task: fix the bug
//   task: review
//   task: write docs
