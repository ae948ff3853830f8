// bench/peers/rocksdb_peer.cpp: RocksDB OptimisticTransactionDB, memtable only: no WAL
// (WriteOptions::disableWAL) and a write buffer big enough that nothing flushes during a
// cell. Recipes: the last / first key comes from a plain DB iterator (an unprotected read);
// dequeue and pop_min then GetForUpdate the key (so a concurrent delete of it fails our
// commit), delete it and commit; Commit() returning Busy / TryAgain means retry.
#include "peer.hpp"

#ifdef STRATA_PEER_ROCKSDB

#include <stdexcept>
#include <vector>

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
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = std::size_t{2} << 30;  // nothing flushes within a run
    options.max_write_buffer_number = 4;
    options.db_write_buffer_size = 0;
    rocksdb::OptimisticTransactionDB* db = nullptr;
    check(rocksdb::OptimisticTransactionDB::Open(options, dir_.path().string(), &db), "open");
    db_.reset(db);
    write_.disableWAL = true;
  }
  ~RocksPeer() override {
    release_txns();
    db_.reset();
  }

  void prepare(int threads) override {
    release_txns();
    txns_.assign(static_cast<std::size_t>(threads), nullptr);
  }

  void enqueue(int t, std::string_view value) override {
    for (;;) {
      rocksdb::Transaction* txn = begin(t);
      std::uint64_t index = 1;
      {
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_));
        it->SeekToLast();
        if (it->Valid() && it->key().size() >= 8) index = get_be64(it->key().data()) + 1;
        check(it->status(), "iterate");
      }
      std::string key = queue_key(index);
      check(txn->Put(slice(key), slice(value)), "put");
      rocksdb::Status s = txn->Commit();
      if (s.ok()) return;
      if (!retryable(s)) check(s, "commit");
    }
  }
  bool dequeue(int t, std::string& out) override { return pop_first(t, out); }

  void pq_push(int t, int priority, std::string_view value) override {
    for (;;) {
      rocksdb::Transaction* txn = begin(t);
      std::uint64_t count = 0;
      {
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_));
        std::string bound(1, static_cast<char>(priority));
        bound.append(8 + kQueueSuffix, '\xff');
        it->SeekForPrev(bound);
        if (it->Valid()) count = pq_next_count(priority, it->key().data(), it->key().size());
        check(it->status(), "iterate");
      }
      std::string key = pq_key(priority, count);
      check(txn->Put(slice(key), slice(value)), "put");
      rocksdb::Status s = txn->Commit();
      if (s.ok()) return;
      if (!retryable(s)) check(s, "commit");
    }
  }
  bool pq_pop_min(int t, std::string& out) override { return pop_first(t, out); }

  void set(int t, std::string_view key, std::string_view value) override {
    for (;;) {
      rocksdb::Transaction* txn = begin(t);
      check(txn->Put(slice(key), slice(value)), "put");
      rocksdb::Status s = txn->Commit();
      if (s.ok()) return;
      if (!retryable(s)) check(s, "commit");
    }
  }
  bool get(int, std::string_view key, std::string& out) override {
    // A read-only transaction in RocksDB is a plain read of the latest state.
    rocksdb::Status s = db_->Get(read_, slice(key), &out);
    if (s.IsNotFound()) return false;
    check(s, "get");
    return true;
  }
  void load(std::uint64_t n, std::string_view value) override {
    constexpr std::uint64_t kBatch = 10000;
    for (std::uint64_t i = 0; i < n; i += kBatch) {
      rocksdb::WriteBatch batch;
      for (std::uint64_t j = i; j < n && j < i + kBatch; ++j) {
        check(batch.Put(point_key(j), slice(value)), "put");
      }
      check(db_->Write(write_, &batch), "write");
    }
  }

 private:
  rocksdb::Transaction* begin(int t) {
    rocksdb::Transaction*& txn = txns_[static_cast<std::size_t>(t)];
    txn = db_->BeginTransaction(write_, rocksdb::OptimisticTransactionOptions(), txn);
    return txn;
  }

  // Both queues live alone in their DB instance, so "first key" is SeekToFirst.
  bool pop_first(int t, std::string& out) {
    for (;;) {
      rocksdb::Transaction* txn = begin(t);
      std::string key;
      {
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_));
        it->SeekToFirst();
        check(it->status(), "iterate");
        if (!it->Valid()) {
          check(txn->Rollback(), "rollback");
          return false;
        }
        key = it->key().ToString();
      }
      rocksdb::Status s = txn->GetForUpdate(read_, slice(key), &out);
      if (s.IsNotFound()) {  // taken by another client since the seek
        check(txn->Rollback(), "rollback");
        continue;
      }
      if (retryable(s)) continue;
      check(s, "get_for_update");
      check(txn->Delete(slice(key)), "delete");
      s = txn->Commit();
      if (s.ok()) return true;
      if (!retryable(s)) check(s, "commit");
    }
  }

  void release_txns() {
    for (rocksdb::Transaction* txn : txns_) delete txn;
    txns_.clear();
  }

  ScratchDir dir_;
  std::unique_ptr<rocksdb::OptimisticTransactionDB> db_;
  rocksdb::WriteOptions write_;
  rocksdb::ReadOptions read_;
  std::vector<rocksdb::Transaction*> txns_;
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
