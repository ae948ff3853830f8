#include "fdb_c/options.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "fdb_c/error_codes.hpp"

namespace strata::fdb_c {
namespace {

// Integer options arrive as 8 bytes, little-endian.
std::optional<std::int64_t> int_value(const uint8_t* value, int length) {
  if (value == nullptr || length != 8) return std::nullopt;
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | value[i];
  return static_cast<std::int64_t>(v);
}

// Sets `field` from an integer option in [low, high].
fdb_error_t set_int(std::int64_t& field, const uint8_t* value, int length, std::int64_t low,
                    std::int64_t high) {
  auto v = int_value(value, length);
  if (!v || *v < low || *v > high) return kInvalidOptionValue;
  field = *v;
  return 0;
}

constexpr std::int64_t kIntMax = 2147483647;

// Database options strata has no use for but checks, as FoundationDB's client does.
constexpr int kLocationCacheSizeOption = 10;
constexpr int kMachineIdOption = 21;
constexpr int kDatacenterIdOption = 22;
constexpr int kUseConfigDatabaseOption = 800;
// The transaction defaults strata has no use for, each with the transaction option it
// stands for (fdb.options' defaultFor), whose value check it takes:
// TRANSACTION_LOGGING_MAX_FIELD_LENGTH, TRANSACTION_CAUSAL_READ_RISKY,
// _INCLUDE_PORT_IN_ADDRESS, _AUTOMATIC_IDEMPOTENCY, _BYPASS_UNREADABLE and
// _USED_DURING_COMMIT_PROTECTION_DISABLE.
constexpr std::pair<int, int> kUnusedDefaults[] = {{405, 405}, {504, 20},   {505, 23},
                                                   {506, 505}, {700, 1100}, {701, 701}};
constexpr int kTestCausalReadRiskyOption = 900;

// Every option code FoundationDB 7.4's fdb.options defines, deprecated and hidden ones
// included, in ascending order. A code outside its list fails with invalid_option (2007),
// as FoundationDB's client answers (its "Unknown...Option" paths), so a program that
// passes a wrong code learns it here rather than on a real cluster.
constexpr std::array kNetworkOptionCodes{10, 20, 30, 31, 32, 33, 34, 35,   36,   37,  38, 39, 40,
                                         41, 42, 43, 45, 46, 47, 48, 49,   50,   51,  52, 53, 54,
                                         55, 60, 61, 62, 63, 64, 65, 66,   67,   68,  69, 70, 71,
                                         72, 80, 81, 82, 83, 90, 91, 1000, 1001, 1002};
constexpr std::array kDatabaseOptionCodes{10,  20,  21,  22,  26,  27,  405, 500, 501, 502,
                                          503, 504, 505, 506, 700, 701, 702, 800, 900};
constexpr std::array kTransactionOptionCodes{
    10,  20,  21,  23,  30,  40,   50,   51,   52,   110,  120,  130, 200, 201, 300,
    301, 302, 303, 304, 400, 401,  402,  403,  404,  405,  406,  500, 501, 502, 503,
    504, 505, 507, 508, 509, 510,  511,  600,  601,  700,  701,  702, 710, 711, 712,
    713, 714, 800, 801, 900, 1000, 1100, 1101, 1102, 2000, 4000, 4001};
static_assert(std::is_sorted(kNetworkOptionCodes.begin(), kNetworkOptionCodes.end()));
static_assert(std::is_sorted(kDatabaseOptionCodes.begin(), kDatabaseOptionCodes.end()));
static_assert(std::is_sorted(kTransactionOptionCodes.begin(), kTransactionOptionCodes.end()));

template <std::size_t N>
fdb_error_t known(const std::array<int, N>& codes, int code) {
  return std::binary_search(codes.begin(), codes.end(), code) ? 0 : kInvalidOption;
}

// The transaction options that take no value: causal write risky, causal read risky,
// include port in address, next write no write conflict range, commit on first proxy,
// check writes enable, read your writes disable, read ahead disable, priority system
// immediate, priority batch, initialize new database, access system keys, read system
// keys, raw access, debug dump, log transaction, server request tracing, automatic
// idempotency, snapshot RYW enable and disable, lock aware, used during commit protection
// disable, read lock aware, first in batch, use provisional proxies, report conflicting
// keys, special key space relaxed and enable writes, expensive clear cost estimation
// enable, bypass unreadable, use and skip GRV cache, enable replica consistency check.
constexpr std::array kOptionsWithoutValue{
    10,  20,  23,  30,  40,  50,  51,  52,  200, 201, 300, 301,  302,  303,  400,  404, 406,
    505, 600, 601, 700, 701, 702, 710, 711, 712, 713, 714, 1000, 1100, 1101, 1102, 4000};
static_assert(std::is_sorted(kOptionsWithoutValue.begin(), kOptionsWithoutValue.end()));

// The shape FoundationDB 7.4 asks of a transaction option's value before it acts on it
// (Transaction::setOption in fdbclient/NativeAPI.actor.cpp and
// ReadYourWritesTransaction::setOptionImpl in fdbclient/ReadYourWrites.actor.cpp, through
// validateOptionValueNotPresent, validateOptionValuePresent and extractIntOption, and
// TagSet::addTag in fdbclient/TagThrottle.actor.cpp). Integer options strata acts on are
// checked where they are read (set_int). A null pointer is no value; an option that takes
// none accepts an empty one.
fdb_error_t check_value(int code, const uint8_t* value, int length) {
  const bool present = value != nullptr;
  if (present && length < 0) return kInvalidOptionValue;
  const auto sized = [&](int low, int high) {
    return present && length >= low && length <= high ? 0 : kInvalidOptionValue;
  };
  if (std::binary_search(kOptionsWithoutValue.begin(), kOptionsWithoutValue.end(), code)) {
    return present && length > 0 ? kInvalidOptionValue : 0;
  }
  switch (code) {
    case 402:  // transaction logging enable: a debug transaction identifier, then logging
    case 403:  // debug transaction identifier
      return sized(1, 100);
    case 800:  // tag
    case 801:  // auto throttle tag: at most 255 bytes (the client's MAX_TRANSACTION_TAG_LENGTH)
      if (!present) return kInvalidOptionValue;
      return length <= 255 ? 0 : kTagTooLong;
    case 900:  // span parent: a serialized span context
      return sized(33, 33);
    case 504:  // idempotency id: a wrong size is invalid_option, not a bad value
      if (!present) return kInvalidOptionValue;
      return length >= 16 && length < 256 ? 0 : kInvalidOption;
    case 405: {  // transaction logging max field length: -1 (no limit) or positive
      const auto v = int_value(value, length);
      return v && *v >= -1 && *v != 0 && *v <= kIntMax ? 0 : kInvalidOptionValue;
    }
    case 4001: {  // consistency check required replicas
      const auto v = int_value(value, length);
      return v && *v >= -2 ? 0 : kInvalidOptionValue;
    }
    default:  // the options strata reads, and those that take any value or none
      return 0;
  }
}

}  // namespace

bool transaction_option_known(int code) { return known(kTransactionOptionCodes, code) == 0; }

fdb_error_t apply_transaction_option(TransactionOptions& options, int code, const uint8_t* value,
                                     int length) {
  if (!transaction_option_known(code)) return kInvalidOption;
  if (const fdb_error_t e = check_value(code, value, length)) return e;
  switch (code) {
    case FDB_TR_OPTION_TIMEOUT:
      return set_int(options.timeout_ms, value, length, 0, kIntMax);
    case FDB_TR_OPTION_RETRY_LIMIT:
      return set_int(options.retry_limit, value, length, -1, kIntMax);
    case FDB_TR_OPTION_MAX_RETRY_DELAY:
      return set_int(options.max_retry_delay_ms, value, length, 0, kIntMax);
    case FDB_TR_OPTION_SIZE_LIMIT:
      return set_int(options.size_limit, value, length, 32, 10'000'000);
    case FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE:
      options.read_your_writes = false;
      return 0;
    case FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE:
      ++options.snapshot_ryw_count;
      return 0;
    case FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE:
      --options.snapshot_ryw_count;
      return 0;
    case FDB_TR_OPTION_REPORT_CONFLICTING_KEYS:
      options.report_conflicting_keys = true;
      return 0;
    case FDB_TR_OPTION_SPECIAL_KEY_SPACE_RELAXED:
      options.special_key_space_relaxed = true;
      return 0;
    case FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES:
      options.special_key_space_writes = true;
      return 0;
    case FDB_TR_OPTION_ACCESS_SYSTEM_KEYS:
      options.read_system_keys = true;
      options.write_system_keys = true;
      return 0;
    case FDB_TR_OPTION_READ_SYSTEM_KEYS:
      options.read_system_keys = true;
      return 0;
    default:  // priorities, tracing, causal-read risk, ...: nothing to do in-process
      return 0;
  }
}

fdb_error_t apply_database_option(TransactionOptions& defaults, int code, const uint8_t* value,
                                  int length) {
  switch (code) {
    case FDB_DB_OPTION_TRANSACTION_TIMEOUT:
      return apply_transaction_option(defaults, FDB_TR_OPTION_TIMEOUT, value, length);
    case FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT:
      return apply_transaction_option(defaults, FDB_TR_OPTION_RETRY_LIMIT, value, length);
    case FDB_DB_OPTION_TRANSACTION_MAX_RETRY_DELAY:
      return apply_transaction_option(defaults, FDB_TR_OPTION_MAX_RETRY_DELAY, value, length);
    case FDB_DB_OPTION_TRANSACTION_SIZE_LIMIT:
      return apply_transaction_option(defaults, FDB_TR_OPTION_SIZE_LIMIT, value, length);
    case FDB_DB_OPTION_TRANSACTION_REPORT_CONFLICTING_KEYS:
      if (fdb_error_t e = check_value(FDB_TR_OPTION_REPORT_CONFLICTING_KEYS, value, length)) {
        return e;
      }
      defaults.report_conflicting_keys = true;
      return 0;
    case kUseConfigDatabaseOption:
      // validateOptionValueNotPresent in DatabaseContext::setOption.
      return value != nullptr && length != 0 ? kInvalidOptionValue : 0;
    case FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE:
    case FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE:
      // validateOptionValueNotPresent: none, or an empty one.
      if (value != nullptr && length != 0) return kInvalidOptionValue;
      defaults.snapshot_ryw_count += code == FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE ? 1 : -1;
      return 0;
    case kLocationCacheSizeOption: {
      std::int64_t size = 0;
      return set_int(size, value, length, 0, kIntMax);
    }
    case kTestCausalReadRiskyOption: {
      std::int64_t percent = 0;
      return set_int(percent, value, length, 0, 100);
    }
    default:  // machine and datacenter ids, ...: nothing to do
      for (const auto& [database_code, transaction_code] : kUnusedDefaults) {
        if (code == database_code) return check_value(transaction_code, value, length);
      }
      return known(kDatabaseOptionCodes, code);
  }
}

bool database_option_known(int code) { return known(kDatabaseOptionCodes, code) == 0; }

bool database_option_deferred(int code) {
  switch (code) {
    case kUseConfigDatabaseOption:
    case kLocationCacheSizeOption:
    case FDB_DB_OPTION_MAX_WATCHES:
    case kMachineIdOption:
    case kDatacenterIdOption:
    case FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE:
    case FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE:
    case kTestCausalReadRiskyOption:
      return true;
    default:
      return false;
  }
}

fdb_error_t check_network_option(int code) { return known(kNetworkOptionCodes, code); }

fdb_error_t int_option(const uint8_t* value, int length, std::int64_t low, std::int64_t high,
                       std::int64_t& out) {
  return set_int(out, value, length, low, high);
}

}  // namespace strata::fdb_c
