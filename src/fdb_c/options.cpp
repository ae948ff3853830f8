#include "fdb_c/options.hpp"

#include <optional>

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

}  // namespace

fdb_error_t apply_transaction_option(TransactionOptions& options, int code, const uint8_t* value,
                                     int length) {
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
    case FDB_TR_OPTION_READ_SYSTEM_KEYS:
      options.read_system_keys = true;
      return 0;
    default:
      return 0;  // priorities, tracing, causal-read risk, ...: nothing to do in-process
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
      defaults.report_conflicting_keys = true;
      return 0;
    case FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE:
      ++defaults.snapshot_ryw_count;
      return 0;
    case FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE:
      --defaults.snapshot_ryw_count;
      return 0;
    default:
      return 0;  // location cache, machine and datacenter ids, ...: nothing to do
  }
}

}  // namespace strata::fdb_c
