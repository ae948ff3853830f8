// A priority queue: pop_min takes the lowest priority, pop_max the highest, and items of one
// priority leave in the order they were pushed. pop_min_wait blocks until there is an item.
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include <strata/strata.hpp>

using namespace std::chrono_literals;

int main() {
  strata::Database db = strata::Database::open();
  strata::PriorityQueue tasks(strata::Subspace(strata::Tuple{"tasks"}));

  tasks.push(db, "send newsletter", 5);
  tasks.push(db, "page the on-call", 0);
  tasks.push(db, "rotate logs", 5);
  tasks.push(db, "rebuild index", 9);
  std::printf("next: %s\n", tasks.peek_min(db).value().c_str());  // looks, takes nothing
  std::printf("pop_max: %s\n", tasks.pop_max(db).value().c_str());
  while (std::optional<std::string> task = tasks.pop_min(db))
    std::printf("pop_min: %s\n", task->c_str());

  // A worker blocks in pop_min_wait on the empty queue (it sleeps on a watch; it does not
  // poll) until the push below, or 10 s.
  std::thread worker([&] {
    std::optional<std::string> task = tasks.pop_min_wait(db, 10s);
    std::printf("worker woke with: %s\n", task ? task->c_str() : "nothing");
  });
  tasks.push(db, "urgent fix", 1);
  worker.join();
  std::printf("after 20 ms of nothing: %s\n", tasks.pop_min_wait(db, 20ms) ? "an item" : "nullopt");

  // Priorities order as tuple elements: by type first, so every integer comes before every
  // double, and pop_min takes 100 before 2.5. Give all of one queue's priorities one type.
  strata::PriorityQueue mixed(strata::Subspace(strata::Tuple{"mixed"}));
  mixed.push(db, "priority 2.5", 2.5);
  mixed.push(db, "priority 100", 100);
  std::printf("mixed types, pop_min: %s\n", mixed.pop_min(db).value().c_str());
  strata::PriorityQueue doubles(strata::Subspace(strata::Tuple{"doubles"}));
  doubles.push(db, "priority 2.5", 2.5);
  doubles.push(db, "priority 100.0", 100.0);
  std::printf("all doubles, pop_min: %s\n", doubles.pop_min(db).value().c_str());
}

// Output:
//   next: page the on-call
//   pop_max: rebuild index
//   pop_min: page the on-call
//   pop_min: send newsletter
//   pop_min: rotate logs
//   worker woke with: urgent fix
//   after 20 ms of nothing: nullopt
//   mixed types, pop_min: priority 100
//   all doubles, pop_min: priority 2.5
