#include "fdb_c/special_keys.hpp"

#include <algorithm>
#include <iterator>

#include "fdb_c/error_codes.hpp"

namespace strata::fdb_c {
namespace {

constexpr std::string_view kManagementBegin("\xff\xff/management/");
constexpr std::string_view kManagementEnd("\xff\xff/management0");
constexpr std::string_view kModuleBegin("\xff\xff/transaction/");
constexpr std::string_view kModuleEnd("\xff\xff/transaction0");
constexpr std::string_view kConflicting = "conflicting_keys/";
constexpr std::string_view kReadConflicts = "read_conflict_range/";
constexpr std::string_view kWriteConflicts = "write_conflict_range/";

// The stretch of the space (a module, or a gap between modules) that holds `key`.
struct Stretch {
  std::string_view begin, end;
  bool module;
};

Stretch stretch_of(std::string_view key) {
  if (key < kManagementBegin) return {kSpecialSpaceBegin, kManagementBegin, false};
  if (key < kManagementEnd) return {kManagementBegin, kManagementEnd, true};
  if (key < kModuleBegin) return {kManagementEnd, kModuleBegin, false};
  if (key < kModuleEnd) return {kModuleBegin, kModuleEnd, true};
  return {kModuleEnd, kSpecialSpaceEnd, false};
}

// Appends FoundationDB's encoding of `ranges` (merged and sorted) under `ns`.
void encode(std::string_view ns, const std::vector<KeyRange>& ranges, SpecialRows& out) {
  std::string prefix(kModuleBegin);
  prefix.append(ns);
  for (const KeyRange& r : ranges) {
    out.rows.emplace_back(prefix + r.begin, "1");
    out.rows.emplace_back(prefix + r.end, "0");
  }
}

}  // namespace

SpecialRows special_rows(const Transaction& tr, std::string_view begin_key,
                         std::string_view end_key, bool relaxed) {
  SpecialRows out{kSpecialSpaceBegin, kSpecialSpaceEnd, {}};
  if (!relaxed) {
    // As FoundationDB: the stretch holding the begin key must hold the end key too, and
    // be a module.
    const Stretch s = stretch_of(begin_key);
    if (end_key > s.end) throw CApiError{kSpecialKeysCrossModuleRead};
    if (!s.module) throw CApiError{kSpecialKeysNoModuleFound};  // outside both modules
    out.begin = s.begin;
    out.end = s.end;
    if (s.begin == kManagementBegin) return out;  // no tenant, nothing else managed
  }
  // The transaction module's namespaces in key order: conflicting_keys/ < read_conflict_range/ <
  // write_....
  encode(kConflicting, tr.conflicting_ranges(), out);
  encode(kReadConflicts, tr.read_conflict_ranges(), out);
  encode(kWriteConflicts, tr.write_conflict_ranges(), out);
  return out;
}

SpecialRows system_rows() {
  static constexpr std::string_view kShardMap("\xff/keyServers/");
  SpecialRows out{kSystemSpaceBegin, kSpecialSpaceBegin, {}};
  out.rows.emplace_back(std::string(kShardMap), "");
  out.rows.emplace_back(std::string(kShardMap) + "\xff", "");
  return out;
}

std::string resolve_special(const SpecialRows& rows, std::string_view key, bool or_equal,
                            int offset) {
  // The first row past the base (the last row < key, or <= key).
  auto past_base = rows.lower_bound(key);
  if (or_equal && past_base != rows.rows.end() && past_base->first == key) ++past_base;
  const std::ptrdiff_t i = std::distance(rows.rows.begin(), past_base) - 1 + offset;
  if (i < 0) return std::string(rows.begin);
  if (i >= static_cast<std::ptrdiff_t>(rows.rows.size())) return std::string(rows.end);
  return rows.rows[static_cast<std::size_t>(i)].first;  // every row lies within the bounds
}

}  // namespace strata::fdb_c
