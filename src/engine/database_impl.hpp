// engine/database_impl.hpp: what a Database handle shares: the store, the commit
// pipeline and the options.
//
// Thread safety: all members are safe to use from many threads as documented on each.
#pragma once

#include <memory>

#include "strata/database.hpp"

#include "base/coarse_clock.hpp"
#include "engine/commit_pipeline.hpp"
#include "engine/persistence.hpp"
#include "kv/mvcc_store.hpp"

namespace strata::engine {

// Made only by open(), shared: a borrowed transaction that needs a reference takes one
// with weak_from_this().
class DatabaseImpl : public std::enable_shared_from_this<DatabaseImpl> {
 public:
  // Opens (recovers) the database. Its last reference closes it on the releasing thread,
  // but for a commit_async callback's: that thread may be the pipeline's own, which
  // closing stops and waits for, so the close runs on a thread of its own. Opening a
  // directory whose close runs so waits for that close first (engine/closing_databases.hpp),
  // but from inside a commit_async callback, where it may be the wait's own thread.
  static std::shared_ptr<DatabaseImpl> open(Options options);
  explicit DatabaseImpl(Options options);

  kv::MvccStore& store() { return store_; }
  CommitPipeline& pipeline() { return pipeline_; }
  const Options& options() const { return options_; }
  // Options::mvcc_window in the coarse clock's nanoseconds. A window too long for them
  // (from about 9.2e12 ms, milliseconds::max() included) is duration::max(): no limit,
  // which no transaction's age reaches.
  base::CoarseClock::duration mvcc_window() const { return mvcc_window_; }
  Version opened_version() const { return opened_version_; }
  // The pipeline's counters and the checkpoints that failed.
  DatabaseStats stats() const;
  // Persistence::checkpoint(); nothing in memory.
  void checkpoint();

 private:
  Options options_;
  base::CoarseClock::duration mvcc_window_{};
  kv::MvccStore store_;
  std::unique_ptr<Persistence> persistence_;  // null in memory; closed before store_ goes
  CommitPipeline pipeline_{store_};
  Version opened_version_ = 0;  // what recovery left published
};

}  // namespace strata::engine
