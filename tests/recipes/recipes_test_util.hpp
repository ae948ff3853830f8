// Helpers shared by the recipe tests: sanitizer-aware sizes, item encoding for the
// producer/consumer tests, and raw reads of a subspace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/subspace.hpp"
#include "strata/transaction.hpp"
#include "strata/tuple.hpp"

#include "support/sanitizers.hpp"

namespace strata::recipestest {

using strata::testing::kSanitized;
using strata::testing::scaled;

// An item value naming its producer and sequence number: "p:seq".
inline std::string item_value(int producer, int seq) {
  return std::to_string(producer) + ":" + std::to_string(seq);
}
inline std::pair<int, int> parse_item(std::string_view v) {
  auto colon = v.find(':');
  return {std::stoi(std::string(v.substr(0, colon))), std::stoi(std::string(v.substr(colon + 1)))};
}

// A counter's value as FoundationDB stores it (8 bytes, little-endian), written out here
// rather than with strata::int64_operand so the tests check the layout independently.
inline std::string le64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// What each of got.size() waiters received: every one an item, together "item0",
// "item1", ... once each.
inline void expect_items_once(const std::vector<std::optional<std::string>>& got) {
  std::multiset<std::string> values;
  for (const auto& g : got) {
    ASSERT_TRUE(g.has_value());
    values.insert(*g);
  }
  std::multiset<std::string> expected;
  for (std::size_t i = 0; i < got.size(); ++i) expected.insert("item" + std::to_string(i));
  EXPECT_EQ(values, expected);
}

// Every row of [begin, end), read in one transaction.
inline std::vector<KeyValue> read_all(Database& db, const KeyRange& range) {
  Transaction tr = db.create_transaction();
  return tr.get_range(range);
}

// Every row whose key starts with `prefix`.
inline std::vector<KeyValue> read_prefix(Database& db, const std::string& prefix) {
  return read_all(db, KeyRange{prefix, strinc(prefix)});
}

// A high-contention queue's bookkeeping subspace `name` (("pop",), ("result",),
// ("pop", "min"), ...), written out from the layout in docs/recipes.md: under the queue's
// key + \xff, outside its items.
inline Subspace bookkeeping(const Subspace& queue, const Tuple& name) {
  return Subspace(name, queue.key() + "\xff");
}

// Registers a high-contention pop request under `requests` as a popper does, for a popper
// that does not exist (stalled, or gone with its process). Returns the request's
// (versionstamp, id) tuple: its key under `requests`, and its result slot's under the
// results subspace.
inline Tuple register_pop_request(Database& db, const Subspace& requests, const Bytes& id) {
  Transaction tr = db.create_transaction();
  tr.atomic_op(MutationType::set_versionstamped_key,
               requests.pack_with_versionstamp(Tuple{Versionstamp::incomplete(), id}), "");
  tr.commit();
  Versionstamp stamp;
  const std::string committed = tr.versionstamp();
  std::copy(committed.begin(), committed.end(), stamp.tr.begin());
  return Tuple{stamp, id};
}

// Blocks until `key` exists, on a watch of it (no polling, no sleep): how a test waits for a
// blocking pop to register in a queue's waiter count.
inline void await_present(Database& db, const std::string& key) {
  for (;;) {
    std::optional<Watch> watch;
    const bool present = db.run([&](Transaction& tr) {
      if (tr.get(key)) return true;
      watch = tr.watch(key);
      return false;
    });
    if (present) return;
    watch->wait();
  }
}

}  // namespace strata::recipestest
