// bench/peers/lmdb_peer.cpp: LMDB as a user would set it up for speed: on tmpfs, no sync
// (MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP). Writers are serialized by LMDB's writer
// lock, so the recipes never conflict and need no retry; readers reuse one read-only
// transaction per thread (mdb_txn_reset / mdb_txn_renew).
#include "peer.hpp"

#ifdef STRATA_PEER_LMDB

#include <stdexcept>
#include <vector>

#include <lmdb.h>

namespace peers {
namespace {

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS)
    throw std::runtime_error(std::string("lmdb ") + what + ": " + mdb_strerror(rc));
}

MDB_val val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }

class LmdbPeer final : public Peer {
 public:
  explicit LmdbPeer(const std::filesystem::path& dir) : dir_(dir, "lmdb") {
    check(mdb_env_create(&env_), "env_create");
    check(mdb_env_set_mapsize(env_, std::size_t{8} << 30), "set_mapsize");
    check(mdb_env_set_maxdbs(env_, 4), "set_maxdbs");
    check(mdb_env_set_maxreaders(env_, 256), "set_maxreaders");
    check(
        mdb_env_open(env_, dir_.path().c_str(),
                     MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP | MDB_NOTLS | MDB_NORDAHEAD, 0644),
        "env_open");
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "txn_begin");
    check(mdb_dbi_open(txn, "q", MDB_CREATE, &queue_), "dbi_open");
    check(mdb_dbi_open(txn, "p", MDB_CREATE, &pqueue_), "dbi_open");
    check(mdb_dbi_open(txn, "kv", MDB_CREATE, &kv_), "dbi_open");
    check(mdb_txn_commit(txn), "commit");
  }
  ~LmdbPeer() override {
    release_readers();
    mdb_env_close(env_);
  }

  void prepare(int threads) override {
    release_readers();
    readers_.assign(static_cast<std::size_t>(threads), nullptr);
  }

  void enqueue(int, std::string_view value) override {
    Write w(env_);
    MDB_cursor* c = w.cursor(queue_);
    MDB_val k{}, v{};
    std::uint64_t index = 1;
    if (mdb_cursor_get(c, &k, &v, MDB_LAST) == MDB_SUCCESS && k.mv_size >= 8) {
      index = get_be64(static_cast<const char*>(k.mv_data)) + 1;
    }
    std::string key = queue_key(index);
    MDB_val kk = val(key), vv = val(value);
    check(mdb_put(w.txn, queue_, &kk, &vv, 0), "put");
    w.commit();
  }
  bool dequeue(int, std::string& out) override { return pop_first(queue_, out); }

  void pq_push(int, int priority, std::string_view value) override {
    Write w(env_);
    MDB_cursor* c = w.cursor(pqueue_);
    // The last key of this priority: the key before the first of priority + 1.
    char next = static_cast<char>(priority + 1);
    MDB_val k{1, &next}, v{};
    int rc = priority < 255 ? mdb_cursor_get(c, &k, &v, MDB_SET_RANGE) : MDB_NOTFOUND;
    rc = rc == MDB_SUCCESS ? mdb_cursor_get(c, &k, &v, MDB_PREV)
                           : mdb_cursor_get(c, &k, &v, MDB_LAST);
    std::uint64_t count =
        rc == MDB_SUCCESS ? pq_next_count(priority, static_cast<const char*>(k.mv_data), k.mv_size)
                          : 0;
    std::string key = pq_key(priority, count);
    MDB_val kk = val(key), vv = val(value);
    check(mdb_put(w.txn, pqueue_, &kk, &vv, 0), "put");
    w.commit();
  }
  bool pq_pop_min(int, std::string& out) override { return pop_first(pqueue_, out); }

  void set(int, std::string_view key, std::string_view value) override {
    Write w(env_);
    MDB_val kk = val(key), vv = val(value);
    check(mdb_put(w.txn, kv_, &kk, &vv, 0), "put");
    w.commit();
  }
  bool get(int t, std::string_view key, std::string& out) override {
    MDB_txn*& txn = readers_[static_cast<std::size_t>(t)];
    if (txn == nullptr) {
      check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "txn_begin");
    } else {
      check(mdb_txn_renew(txn), "txn_renew");
    }
    MDB_val kk = val(key), v{};
    int rc = mdb_get(txn, kv_, &kk, &v);
    if (rc == MDB_SUCCESS) out.assign(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_txn_reset(txn);
    if (rc == MDB_NOTFOUND) return false;
    check(rc, "get");
    return true;
  }
  void load(std::uint64_t n, std::string_view value) override {
    constexpr std::uint64_t kBatch = 100000;
    for (std::uint64_t i = 0; i < n; i += kBatch) {
      Write w(env_);
      for (std::uint64_t j = i; j < n && j < i + kBatch; ++j) {
        std::string key = point_key(j);
        MDB_val kk = val(key), vv = val(value);
        check(mdb_put(w.txn, kv_, &kk, &vv, 0), "put");
      }
      w.commit();
    }
  }

 private:
  // A write transaction, aborted unless committed.
  struct Write {
    MDB_txn* txn = nullptr;
    MDB_cursor* cur = nullptr;
    explicit Write(MDB_env* env) { check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin"); }
    ~Write() {
      if (txn != nullptr) mdb_txn_abort(txn);
    }
    MDB_cursor* cursor(MDB_dbi dbi) {
      check(mdb_cursor_open(txn, dbi, &cur), "cursor_open");
      return cur;
    }
    void commit() {
      if (cur != nullptr) mdb_cursor_close(cur);
      cur = nullptr;
      int rc = mdb_txn_commit(txn);
      txn = nullptr;
      check(rc, "commit");
    }
  };

  bool pop_first(MDB_dbi dbi, std::string& out) {
    Write w(env_);
    MDB_cursor* c = w.cursor(dbi);
    MDB_val k{}, v{};
    if (mdb_cursor_get(c, &k, &v, MDB_FIRST) != MDB_SUCCESS) return false;
    out.assign(static_cast<const char*>(v.mv_data), v.mv_size);
    check(mdb_cursor_del(c, 0), "cursor_del");
    w.commit();
    return true;
  }

  void release_readers() {
    for (MDB_txn* txn : readers_) {
      if (txn != nullptr) mdb_txn_abort(txn);
    }
    readers_.clear();
  }

  ScratchDir dir_;
  MDB_env* env_ = nullptr;
  MDB_dbi queue_ = 0, pqueue_ = 0, kv_ = 0;
  std::vector<MDB_txn*> readers_;
};

}  // namespace

std::unique_ptr<Peer> make_lmdb_peer(const std::filesystem::path& dir) {
  return std::make_unique<LmdbPeer>(dir);
}

}  // namespace peers

#else

namespace peers {
std::unique_ptr<Peer> make_lmdb_peer(const std::filesystem::path&) { return nullptr; }
}  // namespace peers

#endif
