// cluster/future.hpp: one FDBFuture, owned, and the blocking wait on it.
//
// Thread safety: a Future belongs to one thread at a time.
#pragma once

#include <string>
#include <utility>

#include "strata/error.hpp"

#include "cluster/client.hpp"

namespace strata::cluster {

class Future {
 public:
  Future(const FdbApi& api, FDBFuture* f) : api_(&api), f_(f) {}
  Future(Future&& other) noexcept : api_(other.api_), f_(std::exchange(other.f_, nullptr)) {}
  Future& operator=(Future&& other) noexcept {
    if (this != &other) {
      reset();
      api_ = other.api_;
      f_ = std::exchange(other.f_, nullptr);
    }
    return *this;
  }
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
  ~Future() { reset(); }

  // Blocks until ready (fdb_future_block_until_ready), then throws the future's error.
  // Callers first check that the wait can end (check_may_block); once the network has
  // stopped it fails with client_invalid_operation (2000) without waiting.
  void wait(const char* what) const;
  // wait(), then the error code instead of a throw.
  fdb_error_t wait_code() const;

  FDBFuture* get() const { return f_; }
  explicit operator bool() const { return f_ != nullptr; }
  // Destroys the future; after the network stopped, leaves it to the exiting process.
  void reset() noexcept {
    if (f_ != nullptr && !network_stopped()) api_->future_destroy(f_);
    f_ = nullptr;
  }

 private:
  const FdbApi* api_;
  FDBFuture* f_;
};

}  // namespace strata::cluster
