// bench/peers/sqlite_peer.cpp: SQLite in WAL mode with synchronous=OFF on tmpfs, one
// connection per thread (opened NOMUTEX, used by its thread only), busy_timeout set. Writing
// recipes run in BEGIN IMMEDIATE ... COMMIT and start over on SQLITE_BUSY / SQLITE_LOCKED;
// point sets and gets are single statements (each its own transaction). Tables are
// WITHOUT ROWID with a BLOB primary key, so keys sort by memcmp like the other engines.
#include "peer.hpp"

#ifdef STRATA_PEER_SQLITE

#include <stdexcept>
#include <vector>

#include <sqlite3.h>

namespace peers {
namespace {

struct Busy {};  // thrown inside a transaction attempt: roll back and retry

void check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) throw Busy{};
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw std::runtime_error(std::string("sqlite ") + what + ": " + sqlite3_errmsg(db));
  }
}

class Conn {
 public:
  explicit Conn(const std::string& file) {
    int rc =
        sqlite3_open_v2(file.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) throw std::runtime_error("sqlite open failed: " + file);
    sqlite3_busy_timeout(db_, 10000);
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=OFF");
    exec("PRAGMA cache_size=-262144");  // 256 MiB page cache per connection
    exec("CREATE TABLE IF NOT EXISTS q (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID");
    exec("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID");
    begin_ = prepare("BEGIN IMMEDIATE");
    commit_ = prepare("COMMIT");
    last_ = prepare("SELECT k FROM q ORDER BY k DESC LIMIT 1");
    first_ = prepare("SELECT k, v FROM q ORDER BY k LIMIT 1");
    last_in_ = prepare("SELECT k FROM q WHERE k >= ?1 AND k < ?2 ORDER BY k DESC LIMIT 1");
    insert_ = prepare("INSERT INTO q (k, v) VALUES (?1, ?2)");
    delete_ = prepare("DELETE FROM q WHERE k = ?1");
    set_ = prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)");
    get_ = prepare("SELECT v FROM kv WHERE k = ?1");
  }
  ~Conn() {
    for (sqlite3_stmt* s : stmts_) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void exec(const char* sql) {
    for (;;) {
      int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
      if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) continue;
      check(db_, rc, sql);
      return;
    }
  }

  // Runs f() between BEGIN IMMEDIATE and COMMIT, retrying the whole transaction on busy.
  template <class F>
  auto transact(F&& f) {
    for (;;) {
      try {
        step_done(begin_);
        auto result = f();
        step_done(commit_);
        return result;
      } catch (const Busy&) {
        if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      }
    }
  }

  // Runs one statement to completion.
  void step_done(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    check(db_, rc, "step");
  }
  // Steps to the first row: true with a row (caller resets), false when none.
  bool step_row(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) return true;
    sqlite3_reset(s);
    check(db_, rc, "step");
    return false;
  }

  static void bind(sqlite3_stmt* s, int i, std::string_view b) {
    sqlite3_bind_blob(s, i, b.data(), static_cast<int>(b.size()), SQLITE_STATIC);
  }
  static std::string_view column(sqlite3_stmt* s, int i) {
    const void* p = sqlite3_column_blob(s, i);
    int n = sqlite3_column_bytes(s, i);
    return std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(n));
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt *begin_, *commit_, *last_, *first_, *last_in_, *insert_, *delete_, *set_, *get_;

 private:
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
    }
    stmts_.push_back(s);
    return s;
  }
  std::vector<sqlite3_stmt*> stmts_;
};

class SqlitePeer final : public Peer {
 public:
  explicit SqlitePeer(const std::filesystem::path& dir)
      : dir_(dir, "sqlite"), file_((dir_.path() / "db.sqlite").string()) {
    conns_.push_back(std::make_unique<Conn>(file_));
  }
  ~SqlitePeer() override { conns_.clear(); }

  void prepare(int threads) override {
    while (conns_.size() < static_cast<std::size_t>(threads)) {
      conns_.push_back(std::make_unique<Conn>(file_));
    }
  }

  void enqueue(int t, std::string_view value) override {
    Conn& c = conn(t);
    c.transact([&] {
      std::uint64_t index = 1;
      if (c.step_row(c.last_)) {
        std::string_view k = Conn::column(c.last_, 0);
        if (k.size() >= 8) index = get_be64(k.data()) + 1;
        sqlite3_reset(c.last_);
      }
      std::string key = queue_key(index);
      Conn::bind(c.insert_, 1, key);
      Conn::bind(c.insert_, 2, value);
      c.step_done(c.insert_);
      return 0;
    });
  }
  bool dequeue(int t, std::string& out) override { return pop_first(conn(t), out); }

  void pq_push(int t, int priority, std::string_view value) override {
    Conn& c = conn(t);
    c.transact([&] {
      char lo = static_cast<char>(priority);
      std::string hi = priority < 255 ? std::string(1, static_cast<char>(priority + 1))
                                      : std::string(1 + 8 + kQueueSuffix + 1, '\xff');
      Conn::bind(c.last_in_, 1, std::string_view(&lo, 1));
      Conn::bind(c.last_in_, 2, hi);
      std::uint64_t count = 0;
      if (c.step_row(c.last_in_)) {
        std::string_view k = Conn::column(c.last_in_, 0);
        count = pq_next_count(priority, k.data(), k.size());
        sqlite3_reset(c.last_in_);
      }
      std::string key = pq_key(priority, count);
      Conn::bind(c.insert_, 1, key);
      Conn::bind(c.insert_, 2, value);
      c.step_done(c.insert_);
      return 0;
    });
  }
  bool pq_pop_min(int t, std::string& out) override { return pop_first(conn(t), out); }

  void set(int t, std::string_view key, std::string_view value) override {
    Conn& c = conn(t);
    for (;;) {
      try {
        Conn::bind(c.set_, 1, key);
        Conn::bind(c.set_, 2, value);
        c.step_done(c.set_);
        return;
      } catch (const Busy&) {
      }
    }
  }
  bool get(int t, std::string_view key, std::string& out) override {
    Conn& c = conn(t);
    for (;;) {
      try {
        Conn::bind(c.get_, 1, key);
        if (!c.step_row(c.get_)) return false;
        std::string_view v = Conn::column(c.get_, 0);
        out.assign(v.data(), v.size());
        sqlite3_reset(c.get_);
        return true;
      } catch (const Busy&) {
      }
    }
  }
  void load(std::uint64_t n, std::string_view value) override {
    Conn& c = conn(0);
    constexpr std::uint64_t kBatch = 100000;
    for (std::uint64_t i = 0; i < n; i += kBatch) {
      c.transact([&] {
        for (std::uint64_t j = i; j < n && j < i + kBatch; ++j) {
          std::string key = point_key(j);
          Conn::bind(c.set_, 1, key);
          Conn::bind(c.set_, 2, value);
          c.step_done(c.set_);
        }
        return 0;
      });
    }
  }

 private:
  Conn& conn(int t) { return *conns_[static_cast<std::size_t>(t)]; }

  // The priority queue uses table q too: each workload cell has its own database file.
  static bool pop_first(Conn& c, std::string& out) {
    return c.transact([&] {
      if (!c.step_row(c.first_)) return false;
      std::string key(Conn::column(c.first_, 0));
      std::string_view v = Conn::column(c.first_, 1);
      out.assign(v.data(), v.size());
      sqlite3_reset(c.first_);
      Conn::bind(c.delete_, 1, key);
      c.step_done(c.delete_);
      return true;
    });
  }

  ScratchDir dir_;
  std::string file_;
  std::vector<std::unique_ptr<Conn>> conns_;
};

}  // namespace

std::unique_ptr<Peer> make_sqlite_peer(const std::filesystem::path& dir) {
  return std::make_unique<SqlitePeer>(dir);
}

}  // namespace peers

#else

namespace peers {
std::unique_ptr<Peer> make_sqlite_peer(const std::filesystem::path&) { return nullptr; }
}  // namespace peers

#endif
