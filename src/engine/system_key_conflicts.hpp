// engine/system_key_conflicts.hpp: explicit conflict ranges that reach into the system
// keyspace ("\xff" .. "\xff\xff"), for the C API. FoundationDB's client takes them under its
// system-keys options (ReadYourWritesTransaction::addReadConflictRange and
// addWriteConflictRange check the ends against getMaxReadKey and getMaxWriteKey:
// "\xff\xff" under READ_SYSTEM_KEYS or ACCESS_SYSTEM_KEYS for reads, under
// ACCESS_SYSTEM_KEYS for writes). strata's public API has no such options, and its
// add_read_conflict_range and add_write_conflict_range keep refusing system keys (2004);
// the C API calls these instead when its options allow (docs/decisions/0039).
#pragma once

#include <string_view>

#include "strata/transaction.hpp"

namespace strata::engine {

struct SystemKeyConflicts {
  // As Transaction::add_read_conflict_range and add_write_conflict_range, with ends up to
  // "\xff\xff" (beyond it: key_outside_legal_range, 2004), those in the system keyspace cut
  // at FoundationDB's SYSTEM_KEY_SIZE_LIMIT. `tr` is an in-process transaction.
  static void add_read_conflict_range(Transaction& tr, std::string_view begin,
                                      std::string_view end);
  static void add_write_conflict_range(Transaction& tr, std::string_view begin,
                                       std::string_view end);
};

}  // namespace strata::engine
