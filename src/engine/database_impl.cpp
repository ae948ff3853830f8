#include "engine/database_impl.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <utility>

namespace strata::engine {

std::shared_ptr<DatabaseImpl> DatabaseImpl::open(Options options) {
  auto close = [](DatabaseImpl* db) noexcept {
    if (CommitPipeline::settling_here()) {
      std::thread([db] { delete db; }).detach();
    } else {
      delete db;
    }
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
}

}  // namespace strata::engine
