#include "strata/error.hpp"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(Error, CarriesFoundationDbNumberAndName) {
  Error e(ErrorCode::not_committed);
  EXPECT_EQ(e.code(), 1020);
  EXPECT_STREQ(e.what(),
               "not_committed: Transaction not committed due to conflict with another transaction");
  EXPECT_TRUE(e.retryable());
}

TEST(Error, DetailNamesTheOffendingInput) {
  Error e(ErrorCode::key_too_large, "key of 10001 bytes (limit 10000)");
  EXPECT_EQ(e.code(), 2102);
  EXPECT_STREQ(e.what(), "key_too_large: key of 10001 bytes (limit 10000)");
  EXPECT_FALSE(e.retryable());
}

TEST(Error, OnlyTooOldFutureVersionNotCommittedAndUnknownResultAreRetryable) {
  for (ErrorCode c : {ErrorCode::transaction_too_old, ErrorCode::future_version,
                      ErrorCode::not_committed, ErrorCode::commit_unknown_result}) {
    EXPECT_TRUE(error_retryable(c)) << error_name(c);
  }
  for (ErrorCode c : {ErrorCode::transaction_cancelled, ErrorCode::transaction_timed_out,
                      ErrorCode::used_during_commit, ErrorCode::key_too_large,
                      ErrorCode::watches_disabled, ErrorCode::invalid_tuple, ErrorCode::io_error}) {
    EXPECT_FALSE(error_retryable(c)) << error_name(c);
  }
}

TEST(Error, UnknownNumberHasAName) {
  EXPECT_EQ(error_name(static_cast<ErrorCode>(12345)), "unknown_error");
}

}  // namespace
}  // namespace strata
