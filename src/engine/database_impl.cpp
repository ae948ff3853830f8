#include "engine/database_impl.hpp"

#include <utility>

namespace strata::engine {

DatabaseImpl::DatabaseImpl(Options options) : options_(std::move(options)) {
  if (!options_.path.empty()) {
    throw Error(ErrorCode::invalid_argument,
                "on-disk databases are not supported yet (path '" + options_.path.string() + "')");
  }
  if (options_.mvcc_window.count() <= 0) {
    throw Error(ErrorCode::invalid_argument, "mvcc_window must be positive, got " +
                                                 std::to_string(options_.mvcc_window.count()) +
                                                 " ms");
  }
}

}  // namespace strata::engine
