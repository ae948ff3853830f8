#include "engine/database_impl.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "engine/closing_databases.hpp"

namespace strata::engine {

std::shared_ptr<DatabaseImpl> DatabaseImpl::open(Options options) {
  // A close of this directory under way on a thread of its own holds its lock until done:
  // wait for it, unless this thread is one such a close waits for (a pipeline's, in a
  // commit_async callback), which would wait for itself.
  if (!options.path.empty() && !CommitPipeline::settling_here()) {
    closing_databases::wait_for(closing_databases::key_of(options.path));
  }
  auto close = [](DatabaseImpl* db) noexcept {
    if (!CommitPipeline::settling_here()) {
      delete db;
      return;
    }
    std::string key;  // in memory: nothing to reopen, nothing to wait for
    try {
      if (!db->options_.path.empty()) key = closing_databases::key_of(db->options_.path);
      if (!key.empty()) closing_databases::begin(key);
    } catch (...) {  // out of memory: the close goes on unmarked
      key.clear();
    }
    std::thread([db, key = std::move(key)] {
      delete db;
      if (!key.empty()) closing_databases::end(key);
    }).detach();
  };
  return {new DatabaseImpl(std::move(options)), close};
}

DatabaseImpl::DatabaseImpl(Options options) : options_(std::move(options)) {
  if (options_.mvcc_window.count() <= 0) {
    throw Error(ErrorCode::invalid_argument, "mvcc_window must be positive, got " +
                                                 std::to_string(options_.mvcc_window.count()) +
                                                 " ms");
  }
  using Window = base::CoarseClock::duration;
  const auto longest = std::chrono::floor<std::chrono::milliseconds>(Window::max());
  mvcc_window_ = options_.mvcc_window >= longest ? Window::max() : Window(options_.mvcc_window);
  auto refuse = [](const std::string& what) { throw Error(ErrorCode::invalid_argument, what); };
  if (options_.transaction_timeout.count() < 0) {
    refuse("transaction_timeout must not be negative, got " +
           std::to_string(options_.transaction_timeout.count()) + " ms");
  }
  if (options_.transaction_retry_limit < -1) {
    refuse("transaction_retry_limit must be -1 (no limit) or more, got " +
           std::to_string(options_.transaction_retry_limit));
  }
  if (options_.transaction_max_retry_delay.count() < 0) {
    refuse("transaction_max_retry_delay must not be negative, got " +
           std::to_string(options_.transaction_max_retry_delay.count()) + " ms");
  }
  if (options_.max_watches > WatchRegistry::kMaxWatchesCeiling) {
    refuse("max_watches must be at most " + std::to_string(WatchRegistry::kMaxWatchesCeiling) +
           ", got " + std::to_string(options_.max_watches));
  }
  pipeline_.watches().set_limit(options_.max_watches);
  if (!options_.path.empty()) {
    persistence_ = std::make_unique<Persistence>(options_, store_);
    pipeline_.set_persistence(persistence_.get());
  }
  opened_version_ = store_.committed();
  if (options_.keep_mvcc_window) pipeline_.hold_versions(mvcc_window_.count());
}

DatabaseStats DatabaseImpl::stats() const {
  DatabaseStats s = pipeline_.stats();
  if (persistence_) s.checkpoint_failures = persistence_->checkpoint_failures();
  return s;
}

void DatabaseImpl::checkpoint() {
  if (persistence_) persistence_->checkpoint();
}

}  // namespace strata::engine
