// fdb_get_error (FoundationDB's messages) and fdb_error_predicate (its three predicates).
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

// FoundationDB's messages (flow/error_definitions.h) for the codes strata or the C API
// can return.
const std::vector<std::pair<int, std::string>>& messages() {
  static const std::vector<std::pair<int, std::string>> table = {
      {0, "Success"},
      {1000, "Operation failed"},
      {1007, "Transaction is too old to perform reads or be committed"},
      {1009, "Request for future version"},
      {1020, "Transaction not committed due to conflict with another transaction"},
      {1021, "Transaction may or may not have committed"},
      {1025, "Operation aborted because the transaction was cancelled"},
      {1031, "Operation aborted because the transaction timed out"},
      {1032, "Too many watches currently set"},
      {1034, "Watches cannot be set if read your writes is disabled"},
      {1036, "Read or wrote an unreadable key"},
      {1101, "Asynchronous operation cancelled"},
      {2000, "Invalid API call"},
      {2004, "Key outside legal range"},
      {2005, "Range begin key larger than end key"},
      {2006, "Option set with an invalid value"},
      {2007, "Option not valid in this context"},
      {2008, "Action not possible before the network is configured"},
      {2009, "Network can be configured only once"},
      {2010, "Transaction already has a read version set"},
      {2012, "Range limits not valid"},
      {2015, "Future not ready"},
      {2017, "Operation issued while a commit was outstanding"},
      {2018, "Unrecognized atomic mutation type"},
      {2021, "Transaction is read-only and therefore does not have a commit version"},
      {2025, "Network can only be started once"},
      {2101, "Transaction exceeds byte limit"},
      {2102, "Key length exceeds limit"},
      {2103, "Value length exceeds limit"},
      {2108, "Operation is not supported"},
      {2130, "Tenant name must be specified to access data in the cluster"},
      {2131, "Tenant does not exist"},
      {2132, "A tenant with the given name already exists"},
      {2133, "Cannot delete a non-empty tenant"},
      {2134, "Tenant name cannot begin with \\xff"},
      {2136, "Tenants have been disabled in the cluster"},
      {2137, "Tenant is not available from this server"},
      {2200, "API version is not set"},
      {2201, "API version may be set only once"},
      {2202, "API version not valid"},
      {2203, "API version not supported"},
      {2210, "EXACT streaming mode requires limits, but none were given"},
      {4000, "An unknown error occurred"},
      {4100, "An internal error occurred"},
  };
  return table;
}

TEST(GetError, ReturnsFoundationDbMessages) {
  for (const auto& [code, message] : messages()) {
    const char* got = fdb_get_error(code);
    ASSERT_NE(got, nullptr) << code;
    EXPECT_EQ(std::string(got), message) << "code " << code;
  }
}

// As FoundationDB: a code in [0, 30000] missing from the table reads "UNKNOWN_ERROR"; a code
// outside that range is converted to unknown_error (4000) first.
TEST(GetError, UnknownCodes) {
  for (int code : {1, 999, 1999, 3999, 5555, 30000}) {
    const char* got = fdb_get_error(code);
    ASSERT_NE(got, nullptr) << code;
    EXPECT_EQ(std::string(got), "UNKNOWN_ERROR") << "code " << code;
  }
  for (int code : {30001, 99999, -1}) {
    const char* got = fdb_get_error(code);
    ASSERT_NE(got, nullptr) << code;
    EXPECT_EQ(std::string(got), "An unknown error occurred") << "code " << code;
  }
}

TEST(GetError, MessagesStayValid) {
  // The pointer is to static storage: the same text on a later call, from another thread.
  const char* first = fdb_get_error(1020);
  std::string again;
  std::thread t([&] { again = fdb_get_error(1020); });
  t.join();
  EXPECT_EQ(std::string(first), again);
}

const std::vector<int> kMaybeCommitted = {1021, 1039};
// FoundationDB 7.4's list (fdb_c.cpp): 7.2's had unknown_tenant (2137), which 7.4 dropped
// with the code, and lacked 1223, 1235 and 1242.
const std::vector<int> kRetryableNotCommitted = {1020, 1007, 1009, 1038, 1078, 1042,
                                                 1051, 1037, 1213, 1223, 1235, 1242};
const std::vector<int> kNotRetryable = {0,    1000, 1004, 1025, 1031, 1032, 1034, 1036, 1101, 2000,
                                        2004, 2005, 2010, 2017, 2021, 2101, 2102, 2137, 4100};

TEST(ErrorPredicate, MaybeCommitted) {
  for (int c : kMaybeCommitted)
    EXPECT_TRUE(fdb_error_predicate(FDB_ERROR_PREDICATE_MAYBE_COMMITTED, c)) << c;
  for (int c : kRetryableNotCommitted)
    EXPECT_FALSE(fdb_error_predicate(FDB_ERROR_PREDICATE_MAYBE_COMMITTED, c)) << c;
  for (int c : kNotRetryable)
    EXPECT_FALSE(fdb_error_predicate(FDB_ERROR_PREDICATE_MAYBE_COMMITTED, c)) << c;
}

TEST(ErrorPredicate, RetryableNotCommitted) {
  for (int c : kRetryableNotCommitted)
    EXPECT_TRUE(fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, c)) << c;
  for (int c : kMaybeCommitted)
    EXPECT_FALSE(fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, c)) << c;
  for (int c : kNotRetryable)
    EXPECT_FALSE(fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, c)) << c;
}

TEST(ErrorPredicate, RetryableIsTheUnion) {
  for (int c : kRetryableNotCommitted)
    EXPECT_TRUE(fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, c)) << c;
  for (int c : kMaybeCommitted)
    EXPECT_TRUE(fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, c)) << c;
  for (int c : kNotRetryable)
    EXPECT_FALSE(fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, c)) << c;
}

TEST(ErrorPredicate, UnknownPredicateIsFalse) {
  EXPECT_FALSE(fdb_error_predicate(12345, 1020));
  EXPECT_FALSE(fdb_error_predicate(0, 1020));
}

}  // namespace
}  // namespace fdbc_test
