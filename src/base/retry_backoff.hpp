// base/retry_backoff.hpp: FoundationDB's wait before a transaction retries
// (fdbclient/NativeAPI.actor.cpp, Transaction::onError and getBackoff), part of the one
// retry step (Transaction::retry_step) that on_error and the C API's on_error share.
//
// transaction_too_old and future_version wait 10 ms (at most `max`) and leave the backoff
// as it is. Other errors wait a random part of the backoff, which starts at 10 ms and then
// doubles up to `max`: only a first retry can wait longer than a `max` below 10 ms.
//
// Thread safety: none; one per transaction, under its owner's synchronisation.
#pragma once

#include <algorithm>
#include <chrono>
#include <random>

#include "strata/error.hpp"

namespace strata::base {

class RetryBackoff {
 public:
  using Seconds = std::chrono::duration<double>;
  static constexpr Seconds kInitial{0.01};

  // The wait before the retry that `error` calls for.
  Seconds next(ErrorCode error, Seconds max) {
    if (error == ErrorCode::transaction_too_old || error == ErrorCode::future_version) {
      return std::min(kInitial, max);
    }
    thread_local std::minstd_rand rng{std::random_device{}()};
    const Seconds wait = backoff_ * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    backoff_ = std::min(backoff_ * 2, max);
    return wait;
  }
  // As a new transaction's (reset(), not on_error()).
  void reset() { backoff_ = kInitial; }

 private:
  Seconds backoff_ = kInitial;
};

}  // namespace strata::base
