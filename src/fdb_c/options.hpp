// fdb_c/options.hpp: the transaction options strata acts on, decoded from the C API's
// (code, bytes) form.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fdb_c/fdb_c.h"

namespace strata::fdb_c {

inline constexpr std::int64_t kDefaultSizeLimit = 10'000'000;
inline constexpr std::int64_t kMaxWatchesCeiling = 1'000'000;  // FoundationDB's
// TAG and AUTO_THROTTLE_TAG, and how many distinct tags an attempt may carry (FoundationDB's
// client knob MAX_TAGS_PER_TRANSACTION).
inline constexpr int kTagOption = 800;
inline constexpr int kAutoThrottleTagOption = 801;
inline constexpr std::size_t kMaxTagsPerTransaction = 5;
inline constexpr int kTransactionLoggingEnableOption = 402;
inline constexpr int kDebugTransactionIdentifierOption = 403;
inline constexpr int kLogTransactionOption = 404;

// An integer option's value (8 bytes, little-endian) in [low, high] into `out`; else
// invalid_option_value (2006).
fdb_error_t int_option(const uint8_t* value, int length, std::int64_t low, std::int64_t high,
                       std::int64_t& out);

struct TransactionOptions {
  std::int64_t timeout_ms = 0;    // 0: none
  std::int64_t retry_limit = -1;  // -1: unlimited
  std::int64_t max_retry_delay_ms = 1000;
  std::int64_t size_limit = kDefaultSizeLimit;
  bool read_your_writes = true;
  // As FoundationDB, a count: SNAPSHOT_RYW_ENABLE adds one, DISABLE takes one away, and
  // snapshot reads see the transaction's writes while it is positive.
  int snapshot_ryw_count = 1;
  bool report_conflicting_keys = false;
  bool special_key_space_relaxed = false;  // special-key reads outside a module read empty
  bool read_system_keys = false;           // ACCESS_SYSTEM_KEYS or READ_SYSTEM_KEYS
  bool write_system_keys = false;          // ACCESS_SYSTEM_KEYS
  bool special_key_space_writes = false;   // SPECIAL_KEY_SPACE_ENABLE_WRITES
  bool snapshot_read_your_writes() const { return snapshot_ryw_count > 0; }
};

// Whether FoundationDB 7.4 defines the transaction option `code`.
bool transaction_option_known(int code);

// Applies a transaction option. Returns 0; invalid_option (2007) for a code FoundationDB
// 7.4 does not define; or, as FoundationDB checks the value of each option it defines,
// invalid_option_value (2006) for a value of the wrong shape (a value given to an option
// that takes none, none given to one that needs it, a wrong size or an integer out of
// range), invalid_option for an idempotency id of the wrong size and tag_too_long (2110)
// for a tag longer than 255 bytes. Options strata has no use for are otherwise accepted
// and ignored.
fdb_error_t apply_transaction_option(TransactionOptions& options, int code, const uint8_t* value,
                                     int length);

// Applies a database option to the defaults of new transactions, as above.
fdb_error_t apply_database_option(TransactionOptions& defaults, int code, const uint8_t* value,
                                  int length);

// Whether FoundationDB 7.4 defines the database option `code`.
bool database_option_known(int code);

// Whether FoundationDB's client checks the database option `code` on its network thread
// (DatabaseContext::setOption, fdbclient/NativeAPI.actor.cpp: LOCATION_CACHE_SIZE,
// MAX_WATCHES, MACHINE_ID, DATACENTER_ID, SNAPSHOT_RYW_ENABLE and _DISABLE,
// USE_CONFIG_DATABASE, TEST_CAUSAL_READ_RISKY), so that a value it refuses becomes the
// database's deferred error rather than the call's.
bool database_option_deferred(int code);

// 0 for a network option code FoundationDB 7.4 defines (none has an effect in-process),
// otherwise invalid_option (2007).
fdb_error_t check_network_option(int code);

}  // namespace strata::fdb_c
