// bench/peers/wiredtiger_peer.cpp: WiredTiger in memory (in_memory=true: no files, no log,
// no checkpoints), every operation in a snapshot-isolation transaction, one WT_SESSION and
// one cursor per table per client thread. A commit or an operation returning WT_ROLLBACK
// (a write-write conflict) rolls back and retries.
//
// Recipes as a WiredTiger user writes them (head_hint.hpp): enqueue takes its index from an
// in-process counter and inserts; dequeue search_near()s from the head hint, reads the first
// key at or after it, removes it and commits (two dequeuers removing one key conflict, and
// one retries). The priority queue takes a per-priority counter on push and starts pop_min
// at the shared hint. Point gets are a search in a transaction of their own.
#include "peer.hpp"

#ifdef STRATA_PEER_WIREDTIGER

#include <stdexcept>
#include <vector>

#include "head_hint.hpp"
#include <wiredtiger.h>

namespace peers {
namespace {

void check(int rc, const char* what) {
  if (rc != 0)
    throw std::runtime_error(std::string("wiredtiger ") + what + ": " + wiredtiger_strerror(rc));
}

WT_ITEM item(std::string_view s) {
  WT_ITEM it{};
  it.data = s.data();
  it.size = s.size();
  return it;
}

// The table's configuration: raw byte keys and values.
constexpr const char* kTableConfig = "key_format=u,value_format=u";

class WtPeer final : public Peer {
 public:
  explicit WtPeer(const std::filesystem::path& dir) : dir_(dir, "wiredtiger") {
    check(wiredtiger_open(dir_.path().c_str(), nullptr,
                          "create,in_memory=true,cache_size=2GB,session_max=64,"
                          "statistics=(none)",
                          &conn_),
          "open");
    WT_SESSION* s = nullptr;
    check(conn_->open_session(conn_, nullptr, nullptr, &s), "open_session");
    for (const char* t : {"table:q", "table:p", "table:kv"})
      check(s->create(s, t, kTableConfig), "create");
    check(s->close(s, nullptr), "close_session");
  }
  ~WtPeer() override {
    release();
    conn_->close(conn_, nullptr);
  }

  void prepare(int threads) override {
    release();
    clients_.resize(static_cast<std::size_t>(threads));
    for (Client& c : clients_) {
      check(conn_->open_session(conn_, nullptr, nullptr, &c.session), "open_session");
      check(c.session->open_cursor(c.session, "table:q", nullptr, nullptr, &c.q), "open_cursor");
      check(c.session->open_cursor(c.session, "table:p", nullptr, nullptr, &c.p), "open_cursor");
      check(c.session->open_cursor(c.session, "table:kv", nullptr, nullptr, &c.kv), "open_cursor");
    }
    queue_.prepare(threads);
  }

  void enqueue(int t, std::string_view value) override {
    const std::string key = queue_key(queue_.allocate(t));
    insert(client(t), client(t).q, key, value);
    queue_.finished(t);
  }
  bool dequeue(int t, std::string& out) override {
    const std::uint64_t floor = queue_.floor();
    std::string start(8, '\0');
    put_be64(start.data(), queue_.start(t));
    std::string key;
    if (!pop_from(client(t), client(t).q, start, key, out)) return false;
    queue_.popped(t, get_be64(key.data()), floor);
    return true;
  }

  void pq_push(int t, int priority, std::string_view value) override {
    const std::string key = pq_key(priority, pq_.next_count(priority));
    pq_.push_begins();
    pq_.insert(key, [&] { insert(client(t), client(t).p, key, value); });
  }
  bool pq_pop_min(int t, std::string& out) override {
    const PqHead::Seen seen = pq_.seen();
    std::string key;
    if (!pop_from(client(t), client(t).p, seen.low, key, out)) return false;
    pq_.popped(seen, key);
    return true;
  }

  void set(int t, std::string_view key, std::string_view value) override {
    insert(client(t), client(t).kv, key, value);
  }
  bool get(int t, std::string_view key, std::string& out) override {
    Client& c = client(t);
    check(c.session->begin_transaction(c.session, "isolation=snapshot"), "begin");
    WT_ITEM k = item(key);
    c.kv->set_key(c.kv, &k);
    int rc = c.kv->search(c.kv);
    if (rc == 0) {
      WT_ITEM v{};
      check(c.kv->get_value(c.kv, &v), "get_value");
      out.assign(static_cast<const char*>(v.data), v.size);
    }
    check(c.kv->reset(c.kv), "reset");
    check(c.session->commit_transaction(c.session, nullptr), "commit");
    if (rc == WT_NOTFOUND) return false;
    check(rc, "search");
    return true;
  }
  void load(std::uint64_t n, std::string_view value) override {
    WT_SESSION* s = nullptr;
    check(conn_->open_session(conn_, nullptr, nullptr, &s), "open_session");
    WT_CURSOR* c = nullptr;
    check(s->open_cursor(s, "table:kv", nullptr, nullptr, &c), "open_cursor");
    constexpr std::uint64_t kBatch = 10000;
    for (std::uint64_t i = 0; i < n; i += kBatch) {
      check(s->begin_transaction(s, nullptr), "begin");
      for (std::uint64_t j = i; j < n && j < i + kBatch; ++j) {
        const std::string key = point_key(j);
        WT_ITEM k = item(key), v = item(value);
        c->set_key(c, &k);
        c->set_value(c, &v);
        check(c->insert(c), "insert");
      }
      check(s->commit_transaction(s, nullptr), "commit");
    }
    check(s->close(s, nullptr), "close_session");
  }
  std::string counters() override {
    std::uint64_t n = rollbacks_.exchange(0);
    return n == 0 ? std::string() : std::to_string(n) + " rollbacks";
  }

 private:
  struct Client {
    WT_SESSION* session = nullptr;
    WT_CURSOR* q = nullptr;
    WT_CURSOR* p = nullptr;
    WT_CURSOR* kv = nullptr;
  };
  Client& client(int t) { return clients_[static_cast<std::size_t>(t)]; }

  // Ends a failed attempt: WT_ROLLBACK means retry, anything else is an error.
  void roll_back(Client& c, int rc, const char* what) {
    c.session->rollback_transaction(c.session, nullptr);
    if (rc != WT_ROLLBACK) check(rc, what);
    rollbacks_.fetch_add(1, std::memory_order_relaxed);
  }

  void insert(Client& c, WT_CURSOR* cur, std::string_view key, std::string_view value) {
    for (;;) {
      check(c.session->begin_transaction(c.session, "isolation=snapshot"), "begin");
      WT_ITEM k = item(key), v = item(value);
      cur->set_key(cur, &k);
      cur->set_value(cur, &v);
      int rc = cur->insert(cur);
      if (rc == 0)
        rc = c.session->commit_transaction(c.session, nullptr);
      else {
        roll_back(c, rc, "insert");
        continue;
      }
      if (rc == 0) return;
      if (rc != WT_ROLLBACK) check(rc, "commit");  // a failed commit has rolled back
      rollbacks_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Removes the first key at or after `start` and returns it and its value.
  bool pop_from(Client& c, WT_CURSOR* cur, const std::string& start, std::string& key,
                std::string& out) {
    for (;;) {
      check(c.session->begin_transaction(c.session, "isolation=snapshot"), "begin");
      int rc = 0;
      if (start.empty()) {
        rc = cur->next(cur);
      } else {
        WT_ITEM s = item(start);
        cur->set_key(cur, &s);
        int exact = 0;
        rc = cur->search_near(cur, &exact);
        if (rc == 0 && exact < 0) rc = cur->next(cur);
      }
      if (rc == WT_NOTFOUND) {
        cur->reset(cur);
        check(c.session->commit_transaction(c.session, nullptr), "commit");
        return false;
      }
      if (rc != 0) {
        cur->reset(cur);
        roll_back(c, rc, "search");
        continue;
      }
      WT_ITEM k{}, v{};
      check(cur->get_key(cur, &k), "get_key");
      check(cur->get_value(cur, &v), "get_value");
      key.assign(static_cast<const char*>(k.data), k.size);
      out.assign(static_cast<const char*>(v.data), v.size);
      rc = cur->remove(cur);
      cur->reset(cur);
      if (rc != 0) {
        roll_back(c, rc, "remove");
        continue;
      }
      rc = c.session->commit_transaction(c.session, nullptr);
      if (rc == 0) return true;
      if (rc != WT_ROLLBACK) check(rc, "commit");
      rollbacks_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void release() {
    for (Client& c : clients_) {
      if (c.session != nullptr) c.session->close(c.session, nullptr);  // closes its cursors
    }
    clients_.clear();
  }

  ScratchDir dir_;
  WT_CONNECTION* conn_ = nullptr;
  std::vector<Client> clients_;
  QueueHead queue_;
  PqHead pq_;
  std::atomic<std::uint64_t> rollbacks_{0};
};

}  // namespace

std::unique_ptr<Peer> make_wiredtiger_peer(const std::filesystem::path& dir) {
  return std::make_unique<WtPeer>(dir);
}

}  // namespace peers

#else

namespace peers {
std::unique_ptr<Peer> make_wiredtiger_peer(const std::filesystem::path&) { return nullptr; }
}  // namespace peers

#endif
