// bench/peers/rocksdb_peer.cpp: RocksDB OptimisticTransactionDB as its users run it in
// memory: no WAL (WriteOptions::disableWAL), no sync, files on the run's tmpfs directory.
// Point keys live in the default column family, whose write buffer is big enough that
// nothing flushes during a cell. Both queues live in a column family of their own with a
// small write buffer, so popped items leave the memtable soon: a pop removes its key with
// SingleDelete (every queue key is written once), and at flush a SingleDelete and the Put
// it covers both vanish. Commit() returning Busy / TryAgain means retry.
//
// Recipes (head_hint.hpp): enqueue takes its index from an in-process counter and puts;
// push takes a per-priority counter and puts. Dequeue and pop_min seek from the head hint
// (ReadOptions::iterate_lower_bound), then GetForUpdate the key they found (so a concurrent
// pop of it fails this commit), SingleDelete it and commit.
#include "peer.hpp"

#ifdef STRATA_PEER_ROCKSDB

#include <atomic>
#include <stdexcept>
#include <vector>

#include "head_hint.hpp"
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/optimistic_transaction_db.h>
#include <rocksdb/utilities/transaction.h>

namespace peers {
namespace {

void check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string("rocksdb ") + what + ": " + s.ToString());
}

bool retryable(const rocksdb::Status& s) { return s.IsBusy() || s.IsTryAgain(); }

rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

class RocksPeer final : public Peer {
 public:
  explicit RocksPeer(const std::filesystem::path& dir) : dir_(dir, "rocksdb") {
    rocksdb::DBOptions db_options;
    db_options.create_if_missing = true;
    db_options.create_missing_column_families = true;
    rocksdb::ColumnFamilyOptions points;
    points.write_buffer_size = std::size_t{2} << 30;  // nothing flushes within a run
    points.max_write_buffer_number = 4;
    rocksdb::ColumnFamilyOptions queues;
    queues.write_buffer_size = std::size_t{1} << 20;
    queues.max_write_buffer_number = 4;
    // Optimistic commits validate against memtables; keep recent ones for that.
    queues.max_write_buffer_size_to_maintain = std::int64_t{4} << 20;
    std::vector<rocksdb::ColumnFamilyDescriptor> families{
        {rocksdb::kDefaultColumnFamilyName, points}, {"queues", queues}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::OptimisticTransactionDB* db = nullptr;
    check(rocksdb::OptimisticTransactionDB::Open(db_options, dir_.path().string(), families,
                                                 &handles, &db),
          "open");
    db_.reset(db);
    kv_ = handles[0];
    queues_ = handles[1];
    write_.disableWAL = true;
  }
  ~RocksPeer() override {
    release_txns();
    for (rocksdb::ColumnFamilyHandle* h : {kv_, queues_}) {
      if (h != nullptr) (void)db_->DestroyColumnFamilyHandle(h);
    }
    db_.reset();
  }

  void prepare(int threads) override {
    release_txns();
    txns_.assign(static_cast<std::size_t>(threads), nullptr);
    queue_.prepare(threads);
  }

  void enqueue(int t, std::string_view value) override {
    // The queue's keys start with 'q', the priority queue's with 'p', in one column family.
    std::string key = "q" + queue_key(queue_.allocate(t));
    put(t, queues_, key, value);
    queue_.finished(t);
  }
  bool dequeue(int t, std::string& out) override {
    const std::uint64_t floor = queue_.floor();
    std::string start(1 + 8, 'q');
    put_be64(start.data() + 1, queue_.start(t));
    std::string key;
    if (!pop_first(t, start, "r", key, out)) return false;
    queue_.popped(t, get_be64(key.data() + 1), floor);
    return true;
  }

  void pq_push(int t, int priority, std::string_view value) override {
    std::string key = "p" + pq_key(priority, pq_.next_count(priority));
    pq_.push_begins();
    pq_.insert(key, [&] { put(t, queues_, key, value); });
  }
  bool pq_pop_min(int t, std::string& out) override {
    const PqHead::Seen seen = pq_.seen();
    std::string key;
    if (!pop_first(t, seen.low.empty() ? std::string("p") : seen.low, "q", key, out)) return false;
    pq_.popped(seen, key);
    return true;
  }

  void set(int t, std::string_view key, std::string_view value) override {
    put(t, kv_, key, value);
  }
  bool get(int, std::string_view key, std::string& out) override {
    // A read-only transaction in RocksDB is a plain read of the latest state.
    rocksdb::Status s = db_->Get(read_, kv_, slice(key), &out);
    if (s.IsNotFound()) return false;
    check(s, "get");
    return true;
  }
  void load(std::uint64_t n, std::string_view value) override {
    constexpr std::uint64_t kBatch = 10000;
    for (std::uint64_t i = 0; i < n; i += kBatch) {
      rocksdb::WriteBatch batch;
      for (std::uint64_t j = i; j < n && j < i + kBatch; ++j) {
        check(batch.Put(kv_, point_key(j), slice(value)), "put");
      }
      check(db_->Write(write_, &batch), "write");
    }
  }
  std::string counters() override {
    std::uint64_t n = retries_.exchange(0);
    return n == 0 ? std::string() : std::to_string(n) + " retries";
  }

 private:
  rocksdb::Transaction* begin(int t) {
    rocksdb::Transaction*& txn = txns_[static_cast<std::size_t>(t)];
    txn = db_->BeginTransaction(write_, rocksdb::OptimisticTransactionOptions(), txn);
    return txn;
  }

  void put(int t, rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value) {
    for (;;) {
      rocksdb::Transaction* txn = begin(t);
      check(txn->Put(cf, slice(key), slice(value)), "put");
      rocksdb::Status s = txn->Commit();
      if (s.ok()) return;
      if (!retryable(s)) check(s, "commit");
      retries_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Takes the first key in [start, end) of the queues' column family.
  bool pop_first(int t, const std::string& start, const char* end, std::string& key,
                 std::string& out) {
    const rocksdb::Slice lower(start), upper(end);
    rocksdb::ReadOptions bounded = read_;
    bounded.iterate_lower_bound = &lower;
    bounded.iterate_upper_bound = &upper;
    for (;;) {
      rocksdb::Transaction* txn = begin(t);
      {
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(bounded, queues_));
        it->SeekToFirst();
        check(it->status(), "iterate");
        if (!it->Valid()) {
          check(txn->Rollback(), "rollback");
          return false;
        }
        key = it->key().ToString();
      }
      rocksdb::Status s = txn->GetForUpdate(read_, queues_, slice(key), &out);
      if (s.IsNotFound()) {  // taken by another client since the seek
        check(txn->Rollback(), "rollback");
        retries_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (retryable(s)) continue;
      check(s, "get_for_update");
      check(txn->SingleDelete(queues_, slice(key)), "single_delete");
      s = txn->Commit();
      if (s.ok()) return true;
      if (!retryable(s)) check(s, "commit");
      retries_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void release_txns() {
    for (rocksdb::Transaction* txn : txns_) delete txn;
    txns_.clear();
  }

  ScratchDir dir_;
  std::unique_ptr<rocksdb::OptimisticTransactionDB> db_;
  rocksdb::ColumnFamilyHandle* kv_ = nullptr;
  rocksdb::ColumnFamilyHandle* queues_ = nullptr;
  rocksdb::WriteOptions write_;
  rocksdb::ReadOptions read_;
  std::vector<rocksdb::Transaction*> txns_;
  QueueHead queue_;
  PqHead pq_;
  std::atomic<std::uint64_t> retries_{0};
};

}  // namespace

std::unique_ptr<Peer> make_rocksdb_peer(const std::filesystem::path& dir) {
  return std::make_unique<RocksPeer>(dir);
}

}  // namespace peers

#else

namespace peers {
std::unique_ptr<Peer> make_rocksdb_peer(const std::filesystem::path&) { return nullptr; }
}  // namespace peers

#endif
