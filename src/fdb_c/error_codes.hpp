// fdb_c/error_codes.hpp: FoundationDB error codes the C API returns that strata's own
// table (strata/error.hpp) does not need.
#pragma once

#include "fdb_c/fdb_c.h"

namespace strata::fdb_c {

inline constexpr fdb_error_t kOperationCancelled = 1101;
inline constexpr fdb_error_t kFutureReleased = 1102;
inline constexpr fdb_error_t kClientInvalidOperation = 2000;
inline constexpr fdb_error_t kInvertedRange = 2005;
inline constexpr fdb_error_t kInvalidOptionValue = 2006;
inline constexpr fdb_error_t kInvalidOption = 2007;
inline constexpr fdb_error_t kNetworkNotSetup = 2008;
inline constexpr fdb_error_t kNetworkAlreadySetup = 2009;
inline constexpr fdb_error_t kVersionInvalid = 2011;
inline constexpr fdb_error_t kRangeLimitsInvalid = 2012;
inline constexpr fdb_error_t kFutureNotSet = 2015;
inline constexpr fdb_error_t kTransactionInvalidVersion = 2020;
inline constexpr fdb_error_t kNetworkCannotBeRestarted = 2025;
inline constexpr fdb_error_t kBlockedFromNetworkThread = 2026;
inline constexpr fdb_error_t kUnsupportedOperation = 2108;
inline constexpr fdb_error_t kTooManyTags = 2109;
inline constexpr fdb_error_t kTagTooLong = 2110;
inline constexpr fdb_error_t kSpecialKeysCrossModuleRead = 2112;
inline constexpr fdb_error_t kSpecialKeysNoModuleFound = 2113;
inline constexpr fdb_error_t kTenantNotFound = 2131;
inline constexpr fdb_error_t kTenantsDisabled = 2136;
inline constexpr fdb_error_t kApiVersionUnset = 2200;
inline constexpr fdb_error_t kApiVersionAlreadySet = 2201;
inline constexpr fdb_error_t kApiVersionInvalid = 2202;
inline constexpr fdb_error_t kApiVersionNotSupported = 2203;
inline constexpr fdb_error_t kExactModeWithoutLimits = 2210;
// What an entry point answers for a C++ exception that is no FoundationDB error, std::bad_alloc
// above all (docs/decisions/0038).
inline constexpr fdb_error_t kUnknownError = 4000;

// Thrown inside the C API for a FoundationDB error with no strata::ErrorCode; the entry
// point returns `code`.
struct CApiError {
  fdb_error_t code;
};

}  // namespace strata::fdb_c

#include "strata/error.hpp"

namespace strata::fdb_c {

// The FoundationDB code for a strata error: codes below 9000 are FoundationDB's already;
// strata's own (files, arguments) map to FoundationDB's nearest.
inline fdb_error_t to_fdb_error(const Error& e) {
  switch (e.error_code()) {
    case ErrorCode::io_error:
    case ErrorCode::database_failed:
      return 1510;  // io_error
    case ErrorCode::corrupt_data:
      return 1522;  // file_corrupt
    case ErrorCode::database_locked:
      return 1529;  // lock_file_failure
    case ErrorCode::invalid_argument:
      return kClientInvalidOperation;
    default:
      return e.code() < 9000 ? e.code() : 1000;  // operation_failed
  }
}

// Inside a catch block: the FoundationDB code of the exception being handled (a
// strata::Error's, a CApiError's, else unknown_error). The entry points' catch (...) ends
// with it, so that no exception leaves the C API.
fdb_error_t current_error() noexcept;

}  // namespace strata::fdb_c
