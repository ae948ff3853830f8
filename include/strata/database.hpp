// strata/database.hpp: opening a database, and the retry loop.
//
// Thread safety: a Database is a handle; copies share one store and may be used from
// any number of threads at once. A moved-from Database throws client_invalid_operation
// (2000) from every method (assigning to it or destroying it is fine).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "strata/error.hpp"
#include "strata/transaction.hpp"
#include "strata/types.hpp"

namespace strata {

namespace engine {
class DatabaseImpl;
}  // namespace engine
namespace cluster {
class ClusterDatabase;
}  // namespace cluster

enum class Durability {
  none,      // no log: the directory holds checkpoints only, written on close and by
             // Database::checkpoint(); a failed closing one loses what the last held not
  buffered,  // log written at every commit, not synced: survives a process crash; after a
             // power loss opens to the state after some prefix of the commits
  fsync,     // log synced at every commit batch: survives power loss
};

struct Options {
  std::filesystem::path path;                 // empty: in memory only
  Durability durability = Durability::fsync;  // ignored when path is empty
  // Older read versions: error 1007. At most 0: open() throws invalid_argument (9003). A
  // window the clock's nanoseconds cannot count (from about 9.2e12 ms, milliseconds::max()
  // included) is no limit (docs/decisions/0030).
  std::chrono::milliseconds mvcc_window{5000};
  // Keep every version a transaction hands out readable by set_read_version for
  // mvcc_window, whether or not a transaction still holds it, as FoundationDB keeps 5 s of
  // versions whatever clients hold: read_version(), committed_version(), and the version of
  // a commit with a versionstamped key or value. Other versions go as when it is off
  // (Database::committed_version() included: it hands out no transaction's version).
  // Off: versions no live transaction holds are collected at once (a deleted key, such as
  // a popped queue item, goes as soon as no reader can see it), and set_read_version may
  // refuse a version nobody holds with transaction_too_old. libfdb_c.so's databases turn
  // it on (docs/decisions/0026).
  bool keep_mvcc_window = false;
  // On disk: write a checkpoint (and drop older log) each time the log grows by this much.
  std::uint64_t checkpoint_log_bytes = 64ull << 20;
  // What every transaction of this database starts with, and returns to on reset()
  // (FoundationDB's database options TRANSACTION_TIMEOUT, TRANSACTION_RETRY_LIMIT and
  // TRANSACTION_MAX_RETRY_DELAY); the transaction's own setters override them. Negative
  // values (below -1 for the retry limit) make open() throw invalid_argument (9003). A
  // timeout past the clock's range (milliseconds::max()) is none.
  std::chrono::milliseconds transaction_timeout{0};  // 0: none
  int transaction_retry_limit = -1;                  // -1: none
  std::chrono::milliseconds transaction_max_retry_delay{1000};
  // FoundationDB's MAX_WATCHES: watches armed at once past this many fail with
  // too_many_watches (1032). 0 .. 1,000,000 (FoundationDB's ceiling), else open() throws
  // invalid_argument (9003).
  std::size_t max_watches = 10'000;
  // A FoundationDB cluster instead of a strata store (docs/cluster.md): its cluster file.
  // Non-empty: open() loads FoundationDB's client library at run time (client_library;
  // empty: libfdb_c.so from the loader's search path), starts its network thread once
  // per process (stopped at exit), and opens the cluster; every call then goes through
  // FoundationDB's C API (API version 730, or the library's newest from 710 on), and its
  // errors keep FoundationDB's numbers. With path also set: invalid_argument (9003). A
  // library that cannot be loaded, or lacks a function: client_library_unavailable
  // (9014); one older than API 710: api_version_not_supported (2203); a second library
  // in one process: client_invalid_operation (2000). On a cluster, durability,
  // mvcc_window, keep_mvcc_window and checkpoint_log_bytes are the cluster's (checked as
  // in process, then unused); the transaction defaults and max_watches become
  // FoundationDB's database options.
  std::filesystem::path cluster_file{};
  std::filesystem::path client_library{};
};

// Counters since open (monotonic; read with relaxed ordering, so a snapshot of several
// counters may be slightly inconsistent).
struct DatabaseStats {
  std::uint64_t commits = 0;    // writing transactions committed
  std::uint64_t conflicts = 0;  // commits refused with not_committed (1020)
  std::uint64_t batches = 0;    // commit batches (group commits) published
  // Checkpoints that failed (disk full, I/O error): the background ones and those of
  // checkpoint(). The log still holds what a failed checkpoint would have; under
  // Durability::none nothing else does (docs/decisions/0031).
  std::uint64_t checkpoint_failures = 0;
};

class Database {
 public:
  // Opens a database. With an empty path the store lives in memory and is gone when the
  // last handle (and transaction) is destroyed. With a path, the directory is created if
  // needed, locked (database_locked if another handle or process has it open), and its
  // checkpoint and log are recovered; corrupt_data or io_error name the damaged file. The
  // directory is closed, with a final checkpoint, when the last handle and transaction go;
  // when they go inside a commit_async callback the close runs on a thread of its own, and
  // an open() of the same directory from this process waits for it (not from inside a
  // callback, which that close waits for: there it may throw database_locked).
  // Threads: an in-memory database starts none. A durable one runs one thread for its
  // checkpoints, and open() itself runs one more while a large recovery lasts (64 MiB of
  // log or more, or a checkpoint of 1 Mi entries or more), to fault memory in beside it.
  [[nodiscard]] static Database open(Options options = {});

  // A new transaction. It keeps the store alive while it exists.
  [[nodiscard]] Transaction create_transaction();

  // Runs f(Transaction&) and commits, retrying retryable errors through on_error, and
  // returns f's result. f may run more than once, so it must be idempotent apart from its
  // transaction. Non-retryable errors and exceptions thrown by f propagate.
  // The transaction borrows this database for the call (it takes no reference count), so
  // this Database must not be destroyed or reassigned while run() runs; a Transaction
  // moved out of f takes a reference of its own (and run(), left with the moved-from one,
  // throws client_invalid_operation, 2000, unless f throws).
  template <class F>
  auto run(F&& f) {
    Transaction tr = borrowing_transaction();
    for (;;) {
      try {
        if constexpr (std::is_void_v<std::invoke_result_t<F&, Transaction&>>) {
          f(tr);
          tr.commit();
          return;
        } else {
          auto result = f(tr);
          tr.commit();
          return result;
        }
      } catch (const Error& e) {
        tr.on_error(e);
      }
    }
  }

  // The newest committed (and visible) version. On a cluster: a read version fresh from
  // it, which is at least every version committed before the call.
  [[nodiscard]] Version committed_version() const;
  // The newest version recovered when this database was opened: 0 for an in-memory or a
  // new database. Every commit made through this opening is newer. Work recorded at or
  // below it was left by an earlier opening, whose threads are gone (the high-contention
  // recipes withdraw such pop requests rather than serve them). On a cluster: 0, as the
  // cluster outlives every client and no client knows which others are gone.
  [[nodiscard]] Version opened_version() const;
  // On a cluster: what this handle (and its copies) saw, commits and conflicts; batches
  // and checkpoint_failures are the cluster's and read 0.
  [[nodiscard]] DatabaseStats stats() const;
  // On disk: writes a checkpoint of every commit published so far (nothing if the last
  // checkpoint has them all), on the database's checkpoint thread, and returns when it is
  // durable; throws the error that made it fail (io_error naming the file), which also
  // counts in stats().checkpoint_failures. Commits go on meanwhile. Under
  // Durability::none this is how a program makes its commits durable, and learns whether
  // they are, before it closes: a checkpoint that fails when the last handle goes cannot be
  // reported, and loses the commits made since the last one that succeeded. In memory:
  // nothing to do. On a cluster: nothing to do (FoundationDB makes every commit durable
  // before acknowledging it).
  void checkpoint();

  // Whether the database lives in a directory (Options::path given): its commits reach its
  // files, and commit_async may call back on the thread that leads a batch. False in
  // memory. On a cluster: true (FoundationDB makes each commit durable before it answers).
  [[nodiscard]] bool durable() const;
  // Blocks until a commit has published `version` (true), or until `deadline` passes or
  // `stop()` returns true (false, unless the version arrived meanwhile). For a reader at a
  // version set ahead of the newest commit, as FoundationDB's storage servers wait for a
  // version they have not yet seen (libfdb_c.so waits so, for at most 1 s). `stop` is
  // called with a lock of the database's held, and must not use the database; a thread
  // that makes it true then calls wake_version_waiters(). No thread polls: waiters sleep
  // until a commit, their deadline or a wake. On a cluster both throw
  // client_invalid_operation (2000): there a reader sets its read version and reads, and
  // the storage servers wait for the version (docs/cluster.md).
  bool wait_for_version(Version version, std::chrono::steady_clock::time_point deadline,
                        const std::function<bool()>& stop) const;
  // Wakes every wait_for_version of this database to call its `stop` again.
  void wake_version_waiters() const;

 private:
  explicit Database(std::shared_ptr<engine::DatabaseImpl> impl) : impl_(std::move(impl)) {}
  explicit Database(std::shared_ptr<cluster::ClusterDatabase> cluster);
  Transaction borrowing_transaction();  // run()'s: see there
  // One of the two is set: impl_ in process, cluster_ on a cluster (neither: moved from).
  std::shared_ptr<engine::DatabaseImpl> impl_;
  std::shared_ptr<cluster::ClusterDatabase> cluster_;
};

}  // namespace strata
