// Queue: producers enqueue numbered items (waiting while the backlog is full; bench/backlog.hpp),
// consumers dequeue until the producers are done and the queue is empty. Checks: every item
// delivered exactly once; FIFO per producer in commit order (simple mode: every dequeue's commit
// order is known) or per consumer (high-contention mode: delivery is staged through pop requests).
#include <map>
#include <thread>

#include "workloads.hpp"

namespace stress {
namespace {

// 24 bytes: a run of millions of items keeps one per item until it is verified.
struct Delivery {
  strata::Version version;  // the dequeue's commit order (CommitOrder); -1 when unknown
  std::uint16_t order;
  std::int32_t producer;
  std::uint64_t seq;
  CommitOrder commit_order() const { return {version, order}; }
};
// As `strata-stress --help` states it; simple mode's check copies them once more.
static_assert(sizeof(Delivery) == 24);

}  // namespace

template <class Api>
RunResult run_queue(RunContext<Api>& ctx) {
  const StressOptions& o = ctx.options;
  typename Api::Queue queue(strata::Subspace(strata::Tuple{"stress", "queue", ctx.run_id}),
                            ctx.high_contention);
  const int producers = o.clients / 2, consumers = o.clients - producers;
  const auto run_start = Clock::now();
  const auto deadline = run_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.seconds));
  const std::uint64_t quota = o.ops ? (o.ops + producers - 1) / producers : ~0ull;
  std::atomic<int> producers_running{producers};
  std::vector<std::uint64_t> produced(producers, 0);
  std::vector<std::vector<Delivery>> delivered(consumers);
  std::vector<Latencies> latency(o.clients);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.clients));  // producers + consumers

  for (int p = 0; p < producers; ++p) {
    threads.emplace_back(guarded([&, p] {
      std::uint64_t seq = 0;
      for (; seq < quota && (o.ops || Clock::now() < deadline); ++seq) {
        if (!ctx.backlog.enter([&] { return !o.ops && Clock::now() >= deadline; })) break;
        auto start = Clock::now();
        queue.enqueue(ctx.db, make_item(p, seq, o.value_size));
        latency[p].add(Clock::now() - start);
        ctx.live.in_flight.fetch_add(1, std::memory_order_relaxed);
      }
      produced[p] = seq;
      producers_running.fetch_sub(1);
    }));
  }
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back(guarded([&, c] {
      auto tr = ctx.db.create_transaction();
      for (;;) {
        bool done = producers_running.load() == 0;
        auto start = Clock::now();
        std::optional<std::string> item;
        CommitOrder order;
        if (ctx.high_contention) {
          item = queue.dequeue(ctx.db);
        } else {
          tr.reset();
          item = commit_with_retry<Api>(tr, [&](auto& t) {
            request_versionstamp(t);
            return queue.dequeue(t);
          });
          if (item) order = commit_order(tr);
        }
        if (item) latency[producers + c].add(Clock::now() - start);  // waits not counted
        if (!item && !done) item = queue.dequeue_wait(ctx.db, std::chrono::milliseconds(20));
        if (!item) {
          if (done) break;
          continue;
        }
        Delivery d{order.version, order.order, -1, 0};
        if (!parse_item(*item, d.producer, d.seq)) d.producer = -2;
        delivered[c].push_back(d);
        ctx.live.ops.fetch_add(1, std::memory_order_relaxed);
        ctx.live.in_flight.fetch_sub(1, std::memory_order_relaxed);
        ctx.backlog.leave();
      }
    }));
  }
  for (auto& t : threads) t.join();
  // The clients' time: the checks below are not the workload's.
  const double seconds = std::chrono::duration<double>(Clock::now() - run_start).count();

  RunResult r;
  r.seconds = seconds;
  // The run ends only when the queue is empty.
  auto left = ctx.db.run([&](auto& tr) { return tr.get_range(queue.subspace().range()).size(); });
  if (left != 0) {
    r.violations.push_back(std::to_string(left) + " items were left in the queue at the end");
  }
  // High-contention bookkeeping (requests and results) must be gone too.
  std::string book = queue.subspace().key() + "\xff";
  auto stale = ctx.db.run([&](auto& tr) { return tr.get_range(book, strata::strinc(book)); });
  for (const auto& kv : stale) {
    r.violations.push_back("pop bookkeeping left behind: key of " + std::to_string(kv.key.size()) +
                           " bytes, value of " + std::to_string(kv.value.size()) + " bytes" +
                           (kv.value.size() >= 18 ? " (" + kv.value.substr(0, 17) + ")" : ""));
  }
  // Exactly once.
  std::vector<std::vector<std::uint8_t>> seen(producers);  // deliveries, counted up to 2
  for (int p = 0; p < producers; ++p) seen[p].assign(produced[p], 0);
  std::uint64_t deliveries = 0;
  for (const auto& v : delivered) {
    deliveries += v.size();
    for (const Delivery& d : v) {
      if (d.producer < 0 || d.producer >= producers || d.seq >= produced[d.producer]) {
        r.violations.emplace_back("a consumer received an item nobody enqueued");
        continue;
      }
      std::uint8_t& count = seen[d.producer][d.seq];
      if (count < 2 && ++count == 2) {
        r.violations.push_back("item " + std::to_string(d.producer) + ":" + std::to_string(d.seq) +
                               " was delivered twice");
      }
    }
  }
  for (int p = 0; p < producers; ++p) {
    for (std::uint64_t s = 0; s < produced[p]; ++s) {
      if (seen[p][s] == 0) {
        r.violations.push_back("item " + std::to_string(p) + ":" + std::to_string(s) + " was lost");
      }
    }
  }
  seen.clear();
  // FIFO per producer as each consumer received them.
  for (const auto& v : delivered) {
    std::map<int, std::uint64_t> last;
    for (const Delivery& d : v) {
      auto it = last.find(d.producer);
      if (it != last.end() && d.seq < it->second) {
        r.violations.push_back("FIFO: a consumer got producer " + std::to_string(d.producer) +
                               "'s items out of order");
        break;
      }
      last[d.producer] = d.seq;
    }
  }
  // FIFO per producer in commit order, where it is known. The deliveries move into one
  // vector, each consumer's freed as it goes: the check needs no second copy of them all.
  std::vector<Delivery> ordered;
  ordered.reserve(deliveries);
  for (auto& v : delivered) {
    for (const Delivery& d : v) {
      if (d.version >= 0 && d.producer >= 0) ordered.push_back(d);
    }
    std::vector<Delivery>().swap(v);
  }
  std::sort(ordered.begin(), ordered.end(), [](const Delivery& a, const Delivery& b) {
    return a.commit_order() < b.commit_order();
  });
  std::map<int, std::uint64_t> next;
  for (const Delivery& d : ordered) {
    auto it = next.find(d.producer);
    if (it != next.end() && d.seq < it->second) {
      r.violations.push_back("FIFO: producer " + std::to_string(d.producer) + "'s item " +
                             std::to_string(d.seq) + " was dequeued after a later one");
      break;
    }
    next[d.producer] = d.seq + 1;
  }
  r.ops = deliveries;
  summarise(latency, r);
  return r;
}

template RunResult run_queue(RunContext<CppApi>&);

}  // namespace stress
