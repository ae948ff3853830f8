// strata/error.hpp: the one error type and the one table of error codes.
//
// Every failure in strata is thrown as strata::Error. Codes below 4000 reuse
// FoundationDB's numbers and meanings; codes 9000 and up are strata's own, for
// failures FoundationDB reports differently (bad tuple bytes, files).
//
// A code exists only if a caller can act on it. retryable() says whether the
// whole transaction may simply be run again (Transaction::on_error does this).
#pragma once

#include <exception>
#include <string>
#include <string_view>

namespace strata {

// X(name, number, retryable, sentence)
#define STRATA_ERROR_CODES(X)                                                                      \
  X(success, 0, false, "Success")                                                                  \
  X(operation_failed, 1000, false, "Operation failed")                                             \
  X(transaction_too_old, 1007, true, "Transaction is too old to perform reads or be committed")    \
  X(future_version, 1009, true, "Request for future version")                                      \
  X(not_committed, 1020, true,                                                                     \
    "Transaction not committed due to conflict with another transaction")                          \
  X(commit_unknown_result, 1021, true, "Transaction may or may not have committed")                \
  X(transaction_cancelled, 1025, false, "Operation aborted because the transaction was cancelled") \
  X(transaction_timed_out, 1031, false, "Operation aborted because the transaction timed out")     \
  X(too_many_watches, 1032, false, "Too many watches currently set")                               \
  X(watches_disabled, 1034, false, "Watches cannot be set if read your writes is disabled")        \
  X(accessed_unreadable, 1036, false, "Read or wrote an unreadable key")                           \
  X(commit_proxy_memory_limit_exceeded, 1042, true, "CommitProxy commit memory limit exceeded")    \
  X(operation_cancelled, 1101, false, "Asynchronous operation cancelled")                          \
  X(client_invalid_operation, 2000, false, "Invalid API call")                                     \
  X(key_outside_legal_range, 2004, false, "Key outside legal range")                               \
  X(inverted_range, 2005, false, "Range begin key larger than end key")                            \
  X(read_version_already_set, 2010, false, "Transaction already has a read version set")           \
  X(range_limits_invalid, 2012, false, "Range limits not valid")                                   \
  X(used_during_commit, 2017, false, "Operation issued while a commit was outstanding")            \
  X(invalid_mutation_type, 2018, false, "Unrecognized atomic mutation type")                       \
  X(no_commit_version, 2021, false,                                                                \
    "Transaction is read-only and therefore does not have a commit version")                       \
  X(transaction_too_large, 2101, false, "Transaction exceeds byte limit")                          \
  X(key_too_large, 2102, false, "Key length exceeds limit")                                        \
  X(value_too_large, 2103, false, "Value length exceeds limit")                                    \
  X(api_version_not_supported, 2203, false, "API version is not supported")                        \
  X(internal_error, 4100, false, "An internal error occurred")                                     \
  X(invalid_tuple, 9001, false, "Malformed packed tuple")                                          \
  X(key_not_in_subspace, 9002, false, "Key is not in the subspace")                                \
  X(invalid_argument, 9003, false, "Invalid argument")                                             \
  X(io_error, 9010, false, "I/O operation on a database file failed")                              \
  X(corrupt_data, 9011, false, "A database file is corrupt")                                       \
  X(database_locked, 9012, false, "The database directory is in use by another handle")            \
  X(database_failed, 9013, false, "The database stopped after a failed write; reopen it")          \
  X(client_library_unavailable, 9014, false, "FoundationDB's client library could not be loaded")

enum class ErrorCode : int {
#define STRATA_ERROR_ENUM(name, number, retry, text) name = number,
  STRATA_ERROR_CODES(STRATA_ERROR_ENUM)
#undef STRATA_ERROR_ENUM
};

// The name of a code ("not_committed"), or "unknown_error" for a number not
// in the table.
std::string_view error_name(ErrorCode code) noexcept;
// FoundationDB's one-sentence description of a code.
std::string_view error_description(ErrorCode code) noexcept;
// Whether on_error retries this code: FoundationDB's retryable codes, those of the table
// marked so (1007, 1009, 1020, 1021, 1042) and those strata never produces (1037, 1038,
// 1039, 1051, 1078, 1213, 1223, 1235, 1242), as its fdb_error_predicate(RETRYABLE).
bool error_retryable(ErrorCode code) noexcept;

// Thread safety: an Error is an immutable value.
class Error : public std::exception {
 public:
  // `detail` names the offending input, e.g. "key of 10001 bytes (limit 10000)".
  explicit Error(ErrorCode code, std::string detail = {});

  int code() const noexcept { return static_cast<int>(code_); }
  ErrorCode error_code() const noexcept { return code_; }
  // "name: detail", or "name: description" when there is no detail.
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& detail() const noexcept { return detail_; }
  bool retryable() const noexcept { return error_retryable(code_); }

 private:
  ErrorCode code_;
  std::string detail_;
  std::string message_;
};

}  // namespace strata
