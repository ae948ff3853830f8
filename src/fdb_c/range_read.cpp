// Range reads through the C API: key selectors, FoundationDB's batch sizing (limit,
// target_bytes, streaming mode, iteration), range size estimates and split points.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fdb_c/bytes.hpp"
#include "fdb_c/special_keys.hpp"
#include "fdb_c/transaction.hpp"

namespace fc = strata::fdb_c;
using fc::bytes;
using fc::key_after;
using Kind = FDB_future::Kind;

namespace {

const std::string kKeyspaceEnd = "\xff";  // the largest readable key; selectors clamp to it

struct Selector {
  std::string_view key;
  bool or_equal;
  int offset;
  bool is_plain_key() const { return !or_equal && offset == 1; }  // first_greater_or_equal
};

// Whether FoundationDB's client answers a range read from `first` to `last` as empty
// without starting a read (ReadYourWritesTransaction::getRange): or_equal taken out (the
// key moved just past itself), the begin's offset not below the end's and its key not
// below the end's.
bool inverted(const Selector& first, const Selector& last) {
  if (first.offset < last.offset) return false;
  const std::size_t n = std::min(first.key.size(), last.key.size());
  if (const int c = first.key.substr(0, n).compare(last.key.substr(0, n)); c != 0) return c > 0;
  // One key begins the other (or they are equal): rare enough to compare copies.
  auto past = [](const Selector& s) {
    std::string key(s.key);
    if (s.or_equal) key.push_back('\0');
    return key;
  };
  return past(first) >= past(last);
}

// The last key of a range read, without copying the rows (a selector needs no values).
// Returns the number of rows read; `last` is their last key.
std::size_t last_key_of(strata::Transaction& tr, bool snapshot, std::string_view begin,
                        std::string_view end, strata::RangeOptions options, std::string& last) {
  auto keep = [&last](std::string_view key, std::string_view) { last.assign(key); };
  return snapshot ? tr.snapshot().visit_range(begin, end, options, keep)
                  : tr.visit_range(begin, end, options, keep);
}

// Whether `key` sorts after "\xff": it starts with that byte and goes on.
bool beyond_keyspace_end(std::string_view key) { return key.size() > 1 && key[0] == '\xff'; }

void check_selector_key(std::string_view key) {
  if (beyond_keyspace_end(key)) [[unlikely]] {
    throw strata::Error(strata::ErrorCode::key_outside_legal_range,
                        "key selector beyond \\xff (strata has no system keys)");
  }
}

// FoundationDB's key selector (docs/fdb_c.md): the last key < key (<= with or_equal), then
// `offset` keys on, clamped to "" and "\xff". The limited range reads add exactly the
// conflict ranges FoundationDB's get_key adds (fdbclient/ReadYourWrites.actor.cpp).
std::string resolve(strata::Transaction& tr, const Selector& s, bool snapshot) {
  check_selector_key(s.key);
  if (s.offset >= 1) {
    std::string start = s.or_equal ? key_after(s.key) : std::string(s.key);
    if (start >= kKeyspaceEnd) return kKeyspaceEnd;
    std::string last;
    const std::size_t rows =
        last_key_of(tr, snapshot, start, kKeyspaceEnd, {.limit = s.offset}, last);
    return rows == static_cast<std::size_t>(s.offset) ? last : kKeyspaceEnd;
  }
  std::string end = s.or_equal ? key_after(s.key) : std::string(s.key);
  end = std::min(end, kKeyspaceEnd);
  if (end.empty()) return {};
  // Keys to step back, offset 0 being the base key itself: up to 2^31 + 1 (offset INT_MIN),
  // one more than a read's int limit holds, so it is counted in 64 bits and read in steps.
  std::int64_t wanted = 1 - static_cast<std::int64_t>(s.offset);
  std::string last;
  while (wanted > 0) {
    const int step = static_cast<int>(std::min<std::int64_t>(wanted, INT_MAX));
    const std::size_t rows =
        last_key_of(tr, snapshot, "", end, {.limit = step, .reverse = true}, last);
    if (rows < static_cast<std::size_t>(step)) return {};  // off the beginning: ""
    wanted -= step;
    end = last;
  }
  return last;
}

// FoundationDB's batch sizing for get_range (its C binding's rules).
struct Batch {
  int limit = 0;         // rows, 0: unlimited
  int target_bytes = 0;  // 0: unlimited
  fdb_error_t error = 0;
};

Batch batch_for(int limit, int target_bytes, FDBStreamingMode mode, int iteration) {
  static constexpr int kModeBytes[] = {0, 256, 1000, 4096, 80000};  // EXACT..SERIAL
  static constexpr int kIteratorBytes[] = {4096,  6144,  9216,  13824, 20736,
                                           31104, 46656, 69984, 80000, 120000};
  Batch b;
  // -1 is "unlimited", as 0 (FoundationDB's GetRangeLimits); below it is invalid.
  if (limit < -1 || target_bytes < -1) return {0, 0, fc::kRangeLimitsInvalid};
  limit = std::max(limit, 0);
  target_bytes = std::max(target_bytes, 0);
  if (limit == 0 && target_bytes == 0 && mode == FDB_STREAMING_MODE_EXACT) {
    return {0, 0, fc::kExactModeWithoutLimits};
  }
  if (mode == FDB_STREAMING_MODE_WANT_ALL) mode = FDB_STREAMING_MODE_SERIAL;
  int mode_bytes = 0;
  if (mode == FDB_STREAMING_MODE_ITERATOR) {
    if (iteration <= 0) return {0, 0, fc::kClientInvalidOperation};
    mode_bytes = kIteratorBytes[std::min<int>(iteration, std::size(kIteratorBytes)) - 1];
  } else if (mode >= FDB_STREAMING_MODE_EXACT && mode <= FDB_STREAMING_MODE_SERIAL) {
    mode_bytes = kModeBytes[mode];
  } else {
    return {0, 0, fc::kClientInvalidOperation};
  }
  b.limit = limit;
  if (target_bytes == 0) {
    b.target_bytes = mode_bytes;
  } else {
    b.target_bytes = mode_bytes == 0 ? target_bytes : std::min(target_bytes, mode_bytes);
  }
  return b;
}

// Whether the row limit or the byte target ended the batch (FoundationDB's "more"), after
// `rows` rows of `bytes` key and value bytes.
bool reached(std::size_t rows, std::size_t bytes, const Batch& batch) {
  if (rows == 0) return false;
  if (batch.limit > 0 && rows >= static_cast<std::size_t>(batch.limit)) return true;
  return batch.target_bytes > 0 && bytes >= static_cast<std::size_t>(batch.target_bytes);
}

// A get_range whose begin selector's key is materialized (a special key, or a system key
// under ACCESS_SYSTEM_KEYS): over the rows fdb_c/special_keys.hpp makes, with the same
// batch rules.
void read_special_range(const FDB_transaction& tr, const Selector& first, const Selector& last,
                        const Batch& batch, bool reverse, FDB_future::Result& r) REQUIRES(tr.mu) {
  const fc::SpecialRows rows = tr.special_rows(first.key, last.key);
  const std::string begin = fc::resolve_special(rows, first.key, first.or_equal, first.offset);
  const std::string end = fc::resolve_special(rows, last.key, last.or_equal, last.offset);
  if (begin >= end) return;
  const auto lo = rows.lower_bound(begin);
  const auto hi = rows.lower_bound(end);
  std::size_t count = 0;
  auto keep = [&](const std::pair<std::string, std::string>& row) {
    r.row_bytes.append(row.first).append(row.second);
    r.row_sizes.emplace_back(static_cast<std::uint32_t>(row.first.size()),
                             static_cast<std::uint32_t>(row.second.size()));
    ++count;
    return reached(count, r.row_bytes.size(), batch);
  };
  bool stopped = false;
  if (reverse) {
    for (auto it = hi; it != lo && !stopped;) stopped = keep(*--it);
  } else {
    for (auto it = lo; it != hi && !stopped; ++it) stopped = keep(*it);
  }
  r.more = reached(count, r.row_bytes.size(), batch);
}

}  // namespace

extern "C" {

FDBFuture* fdb_transaction_get_key(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                                   fdb_bool_t or_equal, int offset, fdb_bool_t snapshot) {
  Selector selector{bytes(key_name, key_name_length), or_equal != 0, offset};
  return tr->read([&](FDB_future::Result& r) {
    tr->mu.assert_held();
    r.kind = Kind::key;
    // Under the system-key options, \xff\xff (where the special key space begins) is the
    // largest key a selector may name, as FoundationDB's getMaxReadKey: it resolves among
    // the system keys (FoundationDB's bindings ask for last_less_than(\xff\xff)).
    if (tr->reads_system_keys() && selector.key == fc::kSpecialSpaceBegin) {
      r.bytes =
          fc::resolve_special(fc::system_rows(), selector.key, selector.or_equal, selector.offset);
      tr->note_read_started();  // FoundationDB's get_key has no special key space of its own
      return;
    }
    if (tr->materialized(selector.key)) {
      const fc::SpecialRows rows = tr->special_rows(selector.key, key_after(selector.key));
      r.bytes = fc::resolve_special(rows, selector.key, selector.or_equal, selector.offset);
      tr->note_read_started();
      return;
    }
    r.bytes = resolve(tr->tr, selector, snapshot != 0);
    tr->note_read_started();
  });
}

FDBFuture* fdb_transaction_get_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                     int begin_key_name_length, fdb_bool_t begin_or_equal,
                                     int begin_offset, const uint8_t* end_key_name,
                                     int end_key_name_length, fdb_bool_t end_or_equal,
                                     int end_offset, int limit, int target_bytes,
                                     FDBStreamingMode mode, int iteration, fdb_bool_t snapshot,
                                     fdb_bool_t reverse) {
  Batch batch = batch_for(limit, target_bytes, mode, iteration);
  if (batch.error != 0) return FDB_future::failed(batch.error);
  Selector first{bytes(begin_key_name, begin_key_name_length), begin_or_equal != 0, begin_offset};
  Selector last{bytes(end_key_name, end_key_name_length), end_or_equal != 0, end_offset};
  return tr->read([&](FDB_future::Result& r) {
    tr->mu.assert_held();
    r.kind = Kind::key_values;
    const bool reads = !inverted(first, last);
    if (tr->materialized(first.key)) {
      read_special_range(*tr, first, last, batch, reverse != 0, r);
      if (reads && !fc::is_special_key(first.key)) tr->note_read_started();  // system keys
      return;
    }
    // Plain keys (first_greater_or_equal) are used in place; other selectors resolve.
    std::string resolved_begin, resolved_end;
    std::string_view begin = first.key, end = last.key;
    if (first.is_plain_key()) {
      check_selector_key(first.key);
    } else {
      resolved_begin = resolve(tr->tr, first, snapshot != 0);
      begin = resolved_begin;
    }
    if (last.is_plain_key()) {
      check_selector_key(last.key);
    } else {
      resolved_end = resolve(tr->tr, last, snapshot != 0);
      end = resolved_end;
    }
    if (reads) tr->note_read_started();
    if (begin >= end) return;
    strata::RangeOptions options{
        .limit = batch.limit, .reverse = reverse != 0, .target_bytes = batch.target_bytes};
    // The rows go straight into the future's buffer: one copy each.
    auto keep = [&r](std::string_view key, std::string_view value) {
      r.row_bytes.append(key).append(value);
      r.row_sizes.emplace_back(static_cast<std::uint32_t>(key.size()),
                               static_cast<std::uint32_t>(value.size()));
    };
    const std::size_t rows = snapshot != 0
                                 ? tr->tr.snapshot().visit_range(begin, end, options, keep)
                                 : tr->tr.visit_range(begin, end, options, keep);
    r.more = reached(rows, r.row_bytes.size(), batch);
    tr->add_read_cost(r.row_bytes.size());
  });
}

FDBFuture* fdb_transaction_get_estimated_range_size_bytes(FDBTransaction* tr,
                                                          const uint8_t* begin_key_name,
                                                          int begin_key_name_length,
                                                          const uint8_t* end_key_name,
                                                          int end_key_name_length) {
  std::string_view begin = bytes(begin_key_name, begin_key_name_length);
  std::string_view end = bytes(end_key_name, end_key_name_length);
  // FoundationDB builds the range first: an inverted one fails before anything else.
  if (begin > end) return FDB_future::failed(fc::kInvertedRange);
  // As FoundationDB's, which asks the storage servers' metrics: no read version needed, so
  // a version set that reads cannot use (too old, not yet committed) does not fail it.
  return tr->read(
      [&](FDB_future::Result& r) {
        tr->mu.assert_held();
        r.kind = Kind::int64;
        if (begin >= end) return;
        auto add = [&r](std::string_view key, std::string_view value) {
          r.int64 += static_cast<std::int64_t>(key.size() + value.size());
        };
        // Visited, not copied: a size estimate of a large range copied all of it before.
        if (tr->version_set_apart()) {
          tr->database().create_transaction().snapshot().visit_range(begin, end, {}, add);
        } else {
          tr->tr.snapshot().visit_range(begin, end, {}, add);
        }
      },
      true, false);
}

FDBFuture* fdb_transaction_get_range_split_points(FDBTransaction* tr, const uint8_t* begin_key_name,
                                                  int begin_key_name_length,
                                                  const uint8_t* end_key_name,
                                                  int end_key_name_length, int64_t chunk_size) {
  std::string_view begin = bytes(begin_key_name, begin_key_name_length);
  std::string_view end = bytes(end_key_name, end_key_name_length);
  if (begin > end) return FDB_future::failed(fc::kInvertedRange);
  if (chunk_size <= 0) return FDB_future::failed(fc::kClientInvalidOperation);
  return tr->read([&](FDB_future::Result& r) {
    tr->mu.assert_held();
    r.kind = Kind::keys;
    r.strings.emplace_back(begin);
    if (begin < end) {
      std::int64_t filled = 0;
      tr->tr.snapshot().visit_range(
          begin, end, {}, [&](std::string_view key, std::string_view value) {
            if (filled >= chunk_size && key != r.strings.back()) {
              r.strings.emplace_back(key);
              filled = 0;
            }
            filled += static_cast<std::int64_t>(key.size() + value.size());
          });
    }
    if (end != r.strings.back()) r.strings.emplace_back(end);
  });
}

}  // extern "C"
