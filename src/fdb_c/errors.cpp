// API version selection, error messages and error predicates.
#include <atomic>

#include "fdb_c/api_version.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/fdb_c.h"

namespace strata::fdb_c {
namespace {

std::atomic<int> g_api_version{0};

// FoundationDB's messages for the codes a client of this library can meet.
const char* message(fdb_error_t code) {
  switch (code) {
    case 0:
      return "Success";
    case 1000:
      return "Operation failed";
    case 1004:
      return "Operation timed out";
    case 1007:
      return "Transaction is too old to perform reads or be committed";
    case 1009:
      return "Request for future version";
    case 1020:
      return "Transaction not committed due to conflict with another transaction";
    case 1021:
      return "Transaction may or may not have committed";
    case 1025:
      return "Operation aborted because the transaction was cancelled";
    case 1031:
      return "Operation aborted because the transaction timed out";
    case 1032:
      return "Too many watches currently set";
    case 1034:
      return "Watches cannot be set if read your writes is disabled";
    case 1036:
      return "Read or wrote an unreadable key";
    case 1037:
      return "Storage process does not have recent mutations";
    case 1038:
      return "Database is locked";
    case 1039:
      return "The protocol version of the cluster has changed";
    case 1042:
      return "CommitProxy commit memory limit exceeded";
    case 1101:
      return "Asynchronous operation cancelled";
    case 1102:
      return "Future has been released";
    case 1510:
      return "Disk i/o operation failed";
    case 1522:
      return "A structurally corrupt data file was detected";
    case 1529:
      return "Unable to lock the file";
    case 2000:
      return "Invalid API call";
    case 2004:
      return "Key outside legal range";
    case 2005:
      return "Range begin key larger than end key";
    case 2006:
      return "Option set with an invalid value";
    case 2007:
      return "Option not valid in this context";
    case 2008:
      return "Action not possible before the network is configured";
    case 2009:
      return "Network can be configured only once";
    case 2010:
      return "Transaction already has a read version set";
    case 2011:
      return "Version not valid";
    case 2012:
      return "Range limits not valid";
    case 2015:
      return "Future not ready";
    case 2017:
      return "Operation issued while a commit was outstanding";
    case 2018:
      return "Unrecognized atomic mutation type";
    case 2020:
      return "Transaction does not have a valid commit version";
    case 2021:
      return "Transaction is read-only and therefore does not have a commit version";
    case 2023:
      return "Attempted to commit a transaction specified as read-only";
    case 2025:
      return "Network can only be started once";
    case 2026:
      return "Detected a deadlock in a callback called from the network thread";
    case 2101:
      return "Transaction exceeds byte limit";
    case 2102:
      return "Key length exceeds limit";
    case 2103:
      return "Value length exceeds limit";
    case 2108:
      return "Operation is not supported";
    case 2109:
      return "Too many tags set on transaction";
    case 2110:
      return "Tag set on transaction is too long";
    case 2112:
      return "Special key space range read crosses modules. Refer to the "
             "`special_key_space_relaxed' transaction option for more details.";
    case 2113:
      return "Special key space range read does not intersect a module. Refer to the "
             "`special_key_space_relaxed' transaction option for more details.";
    // The tenant family: strata returns 2136, and 2131 for a tenant's id; the bindings'
    // tenant helpers raise 2131 and 2132 themselves and look up their messages here.
    case 2130:
      return "Tenant name must be specified to access data in the cluster";
    case 2131:
      return "Tenant does not exist";
    case 2132:
      return "A tenant with the given name already exists";
    case 2133:
      return "Cannot delete a non-empty tenant";
    case 2134:
      return "Tenant name cannot begin with \\xff";
    case 2136:
      return "Tenants have been disabled in the cluster";
    case 2137:
      return "Tenant is not available from this server";
    case 2200:
      return "API version is not set";
    case 2201:
      return "API version may be set only once";
    case 2202:
      return "API version not valid";
    case 2203:
      return "API version not supported";
    case 2210:
      return "EXACT streaming mode requires limits, but none were given";
    case 4000:
      return "An unknown error occurred";
    case 4100:
      return "An internal error occurred";
    default:
      return nullptr;
  }
}

}  // namespace

int api_version() { return g_api_version.load(std::memory_order_acquire); }

fdb_error_t current_error() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return to_fdb_error(e);
  } catch (const CApiError& e) {
    return e.code;
  } catch (...) {
    return kUnknownError;
  }
}

}  // namespace strata::fdb_c

namespace fc = strata::fdb_c;

extern "C" {

fdb_error_t fdb_select_api_version_impl(int runtime_version, int header_version) {
  if (fc::g_api_version.load(std::memory_order_acquire) != 0) return fc::kApiVersionAlreadySet;
  if (runtime_version > header_version) return fc::kApiVersionInvalid;
  if (header_version > fc::kMaxApiVersion || header_version < fc::kMinHeaderVersion ||
      runtime_version < fc::kMinRuntimeVersion) {
    return fc::kApiVersionNotSupported;
  }
  int expected = 0;
  if (!fc::g_api_version.compare_exchange_strong(expected, runtime_version)) {
    return fc::kApiVersionAlreadySet;
  }
  return 0;
}

int fdb_get_max_api_version(void) { return fc::kMaxApiVersion; }

const char* fdb_get_client_version(void) { return fc::kClientVersion; }

const char* fdb_get_error(fdb_error_t code) {
  // As FoundationDB: codes outside [0, 30000] become unknown_error; other codes missing
  // from the table read "UNKNOWN_ERROR".
  if (code < 0 || code > 30000) return fc::message(fc::kUnknownError);
  const char* text = fc::message(code);
  return text != nullptr ? text : "UNKNOWN_ERROR";
}

fdb_bool_t fdb_error_predicate(int predicate_test, fdb_error_t code) {
  auto maybe_committed = [](fdb_error_t c) { return c == 1021 || c == 1039; };
  auto retryable_not_committed = [](fdb_error_t c) {
    switch (c) {
      case 1020:  // not_committed
      case 1007:  // transaction_too_old
      case 1009:  // future_version
      case 1038:  // database_locked
      case 1078:  // grv_proxy_memory_limit_exceeded
      case 1042:  // commit_proxy_memory_limit_exceeded
      case 1051:  // batch_transaction_throttled
      case 1037:  // process_behind
      case 1213:  // tag_throttled
      case 1223:  // proxy_tag_throttled
      case 1235:  // transaction_throttled_hot_shard
      case 1242:  // transaction_rejected_range_locked
        return true;
      default:
        return false;
    }
  };
  switch (predicate_test) {
    case FDB_ERROR_PREDICATE_RETRYABLE:
      return maybe_committed(code) || retryable_not_committed(code);
    case FDB_ERROR_PREDICATE_MAYBE_COMMITTED:
      return maybe_committed(code);
    case FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED:
      return retryable_not_committed(code);
    default:
      return 0;
  }
}

}  // extern "C"
