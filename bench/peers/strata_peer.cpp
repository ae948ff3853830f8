// bench/peers/strata_peer.cpp: strata through its public API only: Queue, PriorityQueue
// (Database& overloads, which run the retry loop; simple or high-contention mode),
// Database::run for point sets, and for point gets a Transaction per thread, reset after
// each get (as LMDB's peer renews and resets a read transaction per thread).
#include <vector>

#include "peer.hpp"
#include <strata/strata.hpp>

namespace peers {
namespace {

bool g_high_contention = false;

class StrataPeer final : public Peer {
 public:
  StrataPeer() : db_(strata::Database::open()) {}

  void prepare(int threads) override {
    readers_.clear();
    for (int t = 0; t < threads; ++t) readers_.push_back(db_.create_transaction());
  }

  std::string counters() override {
    strata::DatabaseStats now = db_.stats();
    std::string out = "commits " + std::to_string(now.commits - last_.commits) + ", conflicts " +
                      std::to_string(now.conflicts - last_.conflicts) + ", batches " +
                      std::to_string(now.batches - last_.batches);
    last_ = now;
    return out;
  }

  void enqueue(int, std::string_view value) override { queue_.enqueue(db_, value); }
  // Into the harness's string, as the other peers read their values: no allocation per item.
  bool dequeue(int, std::string& out) override { return queue_.dequeue(db_, out); }

  void pq_push(int, int priority, std::string_view value) override {
    pqueue_.push(db_, value, strata::Element(priority));
  }
  bool pq_pop_min(int, std::string& out) override { return pqueue_.pop_min(db_, out); }

  void set(int, std::string_view key, std::string_view value) override {
    db_.run([&](strata::Transaction& tr) { tr.set(key, value); });
  }
  bool get(int t, std::string_view key, std::string& out) override {
    // A read-only transaction per get, on the thread's own Transaction: reset afterwards,
    // so that no read version stays pinned between gets. Into the harness's string, as
    // every other peer reads: no allocation per get.
    strata::Transaction& tr = readers_[static_cast<std::size_t>(t)];
    bool found = false;
    try {
      found = tr.get(key, out);
    } catch (...) {
      tr.reset();  // nothing stays pinned, whatever the caller does next
      throw;
    }
    tr.reset();
    return found;
  }
  void load(std::uint64_t n, std::string_view value) override {
    constexpr std::uint64_t kBatch = 1000;
    for (std::uint64_t i = 0; i < n; i += kBatch) {
      db_.run([&](strata::Transaction& tr) {
        for (std::uint64_t j = i; j < n && j < i + kBatch; ++j) tr.set(point_key(j), value);
      });
    }
  }

 private:
  strata::Database db_;
  strata::DatabaseStats last_{};
  std::vector<strata::Transaction> readers_;  // point gets: one per thread
  strata::Queue queue_{strata::Subspace(strata::Tuple{"Q"}), g_high_contention};
  strata::PriorityQueue pqueue_{strata::Subspace(strata::Tuple{"P"}), g_high_contention};
};

}  // namespace

void set_strata_high_contention(bool on) { g_high_contention = on; }
bool strata_high_contention() { return g_high_contention; }

std::unique_ptr<Peer> make_strata_peer(const std::filesystem::path&) {
  return std::make_unique<StrataPeer>();
}

}  // namespace peers
