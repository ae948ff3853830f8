#include "engine/database_impl.hpp"

#include <utility>

namespace strata::engine {

DatabaseImpl::DatabaseImpl(Options options) : options_(std::move(options)) {
  if (options_.mvcc_window.count() <= 0) {
    throw Error(ErrorCode::invalid_argument, "mvcc_window must be positive, got " +
                                                 std::to_string(options_.mvcc_window.count()) +
                                                 " ms");
  }
  if (!options_.path.empty()) {
    persistence_ = std::make_unique<Persistence>(options_, store_);
    pipeline_.set_persistence(persistence_.get());
  }
}

}  // namespace strata::engine
