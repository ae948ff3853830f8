// fdb_c/special_keys.hpp: FoundationDB's special key space, keys from \xff\xff up to
// \xff\xff\xff, as far as one process has it. Two modules:
//   - the management module, \xff\xff/management/ to \xff\xff/management0, as on a
//     cluster whose tenant mode is disabled: it reads empty (no tenant in
//     tenant/map/), and under SPECIAL_KEY_SPACE_ENABLE_WRITES a write to tenant/map/
//     (creating or deleting a tenant) fails the commit with tenants_disabled
//     (docs/decisions/0018);
//   - the transaction module, \xff\xff/transaction/ to \xff\xff/transaction0. Its three
//     namespaces encode the transaction's conflict sets
// (FoundationDB's encoding: each merged range [b, e) is the rows <ns>b = "1", <ns>e = "0"):
//   conflicting_keys/      the read ranges that conflicted (REPORT_CONFLICTING_KEYS)
//   read_conflict_range/   what commit will check
//   write_conflict_range/  what commit will publish
// Reads of the rest of the space fail as FoundationDB's do without a module there:
// special_keys_no_module_found (2113), or special_keys_cross_module_read (2112) for a range
// that leaves its module; under SPECIAL_KEY_SPACE_RELAXED they read as empty instead.
// Writes stay key_outside_legal_range (2004). docs/fdb_c.md, "Special keys".
//
// The system keyspace, \xff up to \xff\xff, is read through the same machinery: under
// ACCESS_SYSTEM_KEYS or READ_SYSTEM_KEYS it holds FoundationDB's shard map as one process
// has it, and nothing else (system_rows below).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/transaction.hpp"

namespace strata::fdb_c {

// (No constant here holds a NUL, so each literal's length is its own.)
inline constexpr std::string_view kSpecialSpaceBegin("\xff\xff");
inline constexpr std::string_view kSpecialSpaceEnd("\xff\xff\xff");

// FoundationDB's metadata version key: a system key, but a stored one, which every
// transaction reads from the database with or without the system-keys options.
inline constexpr std::string_view kMetadataVersionKey("\xff/metadataVersion");

inline bool is_special_key(std::string_view key) {
  return key >= kSpecialSpaceBegin && key < kSpecialSpaceEnd;
}

inline constexpr std::string_view kSystemSpaceBegin("\xff");
inline constexpr std::string_view kTenantMapBegin("\xff\xff/management/tenant/map/");
inline constexpr std::string_view kTenantMapEnd("\xff\xff/management/tenant/map0");

inline bool is_tenant_map_key(std::string_view key) {
  return key >= kTenantMapBegin && key < kTenantMapEnd;
}
// Whether [begin, end) holds a tenant map key.
inline bool overlaps_tenant_map(std::string_view begin, std::string_view end) {
  return begin < kTenantMapEnd && end > kTenantMapBegin && begin < end;
}

inline bool is_system_key(std::string_view key) {
  return key >= kSystemSpaceBegin && key < kSpecialSpaceBegin;
}

// The rows a special-key read may return, in key order, and the bounds its key selectors
// resolve within (the module, or the whole space when relaxed).
struct SpecialRows {
  using Row = std::pair<std::string, std::string>;
  // The first row at or after `key`.
  std::vector<Row>::const_iterator lower_bound(std::string_view key) const {
    return std::lower_bound(rows.begin(), rows.end(), key,
                            [](const Row& row, std::string_view k) { return row.first < k; });
  }

  std::string_view begin, end;
  std::vector<Row> rows;
};

// The rows for a read of [begin_key, end_key) (the selectors' keys; a point read passes
// key and key+00). Throws CApiError 2113 or 2112 as above.
SpecialRows special_rows(const Transaction& tr, std::string_view begin_key,
                         std::string_view end_key, bool relaxed);

// The system keyspace's rows, bounded by it: \xff/keyServers/<k> at each shard boundary
// k, which for one process are "" (its one shard of user keys) and \xff (the system keys,
// a shard of their own on FoundationDB too). Their values, FoundationDB's encoding of the
// shard's servers, are empty: no client reads them but fdbcli. This is what the bindings'
// locality.get_boundary_keys reads. docs/fdb_c.md, "System keys".
SpecialRows system_rows();

// A key selector (docs/fdb_c.md) over `rows`: the last row < key (<= with or_equal), then `offset`
// rows on, clamped to the bounds.
std::string resolve_special(const SpecialRows& rows, std::string_view key, bool or_equal,
                            int offset);

}  // namespace strata::fdb_c
