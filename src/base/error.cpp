// Implements include/strata/error.hpp from the single code table.
#include "strata/error.hpp"

#include <utility>

namespace strata {

std::string_view error_name(ErrorCode code) noexcept {
  switch (code) {
#define STRATA_ERROR_NAME(name, number, retry, text) \
  case ErrorCode::name:                              \
    return #name;
    STRATA_ERROR_CODES(STRATA_ERROR_NAME)
#undef STRATA_ERROR_NAME
  }
  return "unknown_error";
}

std::string_view error_description(ErrorCode code) noexcept {
  switch (code) {
#define STRATA_ERROR_TEXT(name, number, retry, text) \
  case ErrorCode::name:                              \
    return text;
    STRATA_ERROR_CODES(STRATA_ERROR_TEXT)
#undef STRATA_ERROR_TEXT
  }
  return "Unknown error";
}

bool error_retryable(ErrorCode code) noexcept {
  // NOLINTBEGIN(bugprone-branch-clone): one case per code, from the table
  switch (code) {
#define STRATA_ERROR_RETRY(name, number, retry, text) \
  case ErrorCode::name:                               \
    return retry;
    STRATA_ERROR_CODES(STRATA_ERROR_RETRY)
#undef STRATA_ERROR_RETRY
  }
  // NOLINTEND(bugprone-branch-clone)
  // FoundationDB's other retryable codes (bindings/c/fdb_c.cpp, fdb_error_predicate
  // RETRYABLE), which strata never produces and so keeps out of its table, but which a
  // caller may hand to on_error: process_behind, database_locked, cluster_version_changed,
  // batch_transaction_throttled, grv_proxy_memory_limit_exceeded, tag_throttled,
  // proxy_tag_throttled, transaction_throttled_hot_shard, transaction_rejected_range_locked.
  switch (static_cast<int>(code)) {
    case 1037:
    case 1038:
    case 1039:
    case 1051:
    case 1078:
    case 1213:
    case 1223:
    case 1235:
    case 1242:
      return true;
    default:
      return false;
  }
}

Error::Error(ErrorCode code, std::string detail) : code_(code), detail_(std::move(detail)) {
  message_ = std::string(error_name(code_));
  message_ += ": ";
  message_ += detail_.empty() ? std::string(error_description(code_)) : detail_;
}

}  // namespace strata
