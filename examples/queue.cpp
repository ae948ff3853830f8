// A work queue: producers enqueue, consumers block in dequeue_wait until there is an item.
// Every item goes to exactly one consumer, and items leave in the order they were enqueued.
// Each producer ends with a "stop" item; a consumer stops at the first it takes, so the
// last consumer to stop has drained everything before it.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

using namespace std::chrono_literals;

int main() {
  strata::Database db = strata::Database::open();
  strata::Queue queue(strata::Subspace(strata::Tuple{"work"}));
  constexpr int kProducers = 2, kConsumers = 2, kItems = 500;

  std::mutex mu;
  std::vector<std::vector<int>> seen(kProducers);  // items taken, by producer, in take order
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&] {
      for (;;) {
        // Sleeps on a watch while the queue is empty; nullopt only after 10 s without items.
        std::optional<std::string> item = queue.dequeue_wait(db, 10s);
        if (!item || *item == "stop") return;
        const int producer = item->at(0) - '0';
        const std::lock_guard lock(mu);
        seen[producer].push_back(std::stoi(item->substr(2)));
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kItems; ++i)
        queue.enqueue(db, std::to_string(p) + ":" + std::to_string(i));
      queue.enqueue(db, "stop");
    });
  }
  for (std::thread& t : producers) t.join();
  for (std::thread& t : consumers) t.join();

  // Each item must have reached one consumer, once.
  for (int p = 0; p < kProducers; ++p) {
    std::vector<int> items = seen[p];
    std::sort(items.begin(), items.end());
    bool each_once = items.size() == kItems;
    for (int i = 0; each_once && i < kItems; ++i) each_once = items[i] == i;
    std::printf("producer %d: %zu items, each exactly once: %s\n", p, seen[p].size(),
                each_once ? "yes" : "no");
  }
  std::printf("left in the queue: %s\n", queue.empty(db) ? "nothing" : "items");
}

// Output:
//   producer 0: 500 items, each exactly once: yes
//   producer 1: 500 items, each exactly once: yes
//   left in the queue: nothing
