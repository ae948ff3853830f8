// Blocking on an FDBFuture.
#include "cluster/future.hpp"

namespace strata::cluster {

void check_may_block(const char* what) {
  if (on_network_thread()) [[unlikely]] {
    throw Error(ErrorCode::client_invalid_operation,
                std::string(what) +
                    " would block FoundationDB's network thread (inside a commit_async or "
                    "on_ready callback), which has to run for it to finish");
  }
  check_network_running(what);
}

void check_network_running(const char* what) {
  if (network_stopped()) [[unlikely]] {
    throw Error(ErrorCode::client_invalid_operation,
                std::string(what) +
                    " would wait forever: FoundationDB's network has stopped (the process "
                    "is exiting)");
  }
}

fdb_error_t Future::wait_code() const {
  if (network_stopped()) [[unlikely]] {
    return static_cast<fdb_error_t>(ErrorCode::client_invalid_operation);
  }
  if (const fdb_error_t e = api_->future_block_until_ready(f_)) return e;
  return api_->future_get_error(f_);
}

void Future::wait(const char* what) const {
  if (const fdb_error_t e = wait_code()) throw_fdb(*api_, e, what);
}

}  // namespace strata::cluster
