// Running out of memory inside a commit: every allocation the commit path makes is failed
// in turn (support/failing_allocator.hpp: this executable's operator new fails on demand),
// in memory and on disk. Each time the process lives on, the commit either happened whole
// or not at all, a commit refused for memory fails with FoundationDB's retryable
// commit_proxy_memory_limit_exceeded (1042) or std::bad_alloc, and the database keeps
// committing. (The store's slabs and index tables come from malloc, not operator new:
// their failures take the same path, a std::bad_alloc before the point of no return.)
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "durability/temp_dir.hpp"
#include "support/failing_allocator.hpp"

namespace strata {
namespace {

namespace fa = testing::failing_allocator;
using testing::TempDir;

constexpr int kKeys = 24;

std::string key(int i) { return "k" + std::to_string(100 + i); }

struct Place {
  const char* name;
  bool durable;
  Durability durability;
};

class AllocationFailure : public ::testing::TestWithParam<Place> {
 protected:
  Database open() {
    Options o;
    if (GetParam().durable) {
      o.path = dir_.path();
      o.durability = GetParam().durability;
    }
    return Database::open(o);
  }
  // Every row.
  static std::string state(Database& db) {
    Transaction tr = db.create_transaction();
    std::string out;
    tr.visit_range("", "\xff", {}, [&](std::string_view k, std::string_view v) {
      out.append(k).append("=").append(v).append(",");
    });
    return out;
  }
  TempDir dir_;
};

// The round-th commit: overwrites the keys (half of them with longer values), writes new
// ones, clears one, adds to a counter atomically and clears a range, so that sets, new
// keys, clears and atomic operations all meet the failure.
void write_round(Transaction& tr, int round) {
  const std::string v = "v" + std::to_string(round);
  for (int i = 0; i < kKeys; ++i) tr.set(key(i), i % 2 == 0 ? v : v + std::string(40, 'x'));
  for (int j = 0; j < 4; ++j) tr.set("n" + std::to_string(round) + "-" + std::to_string(j), v);
  tr.clear("n" + std::to_string(round - 1) + "-0");
  const char one[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  tr.atomic_op(MutationType::add, "counter", std::string_view(one, 8));
  tr.clear_range("n" + std::to_string(round - 1) + "-2", "n" + std::to_string(round - 1) + "-3");
}

TEST_P(AllocationFailure, EveryAllocationOfACommitMayFailWithoutHarm) {
  Database db = open();
  db.run([](Transaction& tr) { write_round(tr, 0); });
  int failed = 0;
  for (long n = 1;; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n));
    const std::string before = state(db);
    Transaction tr = db.create_transaction();
    write_round(tr, static_cast<int>(n));
    std::optional<int> error;
    fa::fail_nth(n);
    try {
      tr.commit();
    } catch (const Error& e) {
      error = e.code();
    } catch (const std::bad_alloc&) {
      error = -1;
    }
    const bool fired = fa::fired();
    fa::fail_nth(0);
    if (error) {
      ++failed;
      EXPECT_TRUE(fired);
      EXPECT_TRUE(*error == -1 || *error == 1042) << *error;
      // Not applied, and not half applied.
      EXPECT_EQ(state(db), before);
    } else {
      EXPECT_NE(state(db), before);
    }
    // The database goes on committing.
    ASSERT_NO_THROW(db.run([&](Transaction& t) { write_round(t, static_cast<int>(n)); }));
    if (!fired) break;  // the commit made fewer than n allocations: each one has failed once
  }
  EXPECT_GT(failed, 0);
}

// visit_range takes its visitor by reference (RowVisitorRef), so a visitor that captures
// more than std::function keeps in place costs no allocation: armed to fail the next
// operator new, a visit that passes every row to such a visitor allocates nothing.
TEST(VisitorAllocation, AVisitorCapturingMuchIsNotCopiedToTheHeap) {
  Database db = Database::open();
  db.run([](Transaction& tr) {
    for (int i = 0; i < kKeys; ++i) tr.set(key(i), "v");
  });
  Transaction tr = db.create_transaction();
  std::size_t rows = 0;
  std::size_t bytes = 0;
  std::string_view last;
  int calls = 0;
  auto visitor = [&rows, &bytes, &last, &calls](std::string_view k, std::string_view v) {
    ++rows;
    bytes += k.size() + v.size();
    last = k;
    ++calls;
  };
  static_assert(sizeof(visitor) > 2 * sizeof(void*), "more than std::function keeps in place");
  tr.visit_range("", "\xff", {}, visitor);  // the transaction's read version and buffers
  rows = 0;
  fa::fail_nth(1);
  tr.visit_range("", "\xff", {}, visitor);
  tr.snapshot().visit_range(KeyRange{"", "\xff"}, {.limit = 3}, visitor);
  const bool allocated = fa::fired();
  fa::fail_nth(0);
  EXPECT_FALSE(allocated);
  EXPECT_EQ(rows, static_cast<std::size_t>(kKeys) + 3);
}

INSTANTIATE_TEST_SUITE_P(InMemoryAndOnDisk, AllocationFailure,
                         ::testing::Values(Place{"InMemory", false, Durability::none},
                                           Place{"Fsync", true, Durability::fsync},
                                           Place{"Buffered", true, Durability::buffered},
                                           Place{"None", true, Durability::none}),
                         [](const ::testing::TestParamInfo<Place>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace strata
