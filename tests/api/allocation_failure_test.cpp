// Running out of memory inside a commit: every allocation the commit path makes is failed
// in turn (support/failing_allocator.hpp: this executable's operator new fails on demand),
// in memory and on disk. Each time the process lives on, the commit either happened whole
// or not at all, a commit refused for memory fails with FoundationDB's retryable
// commit_proxy_memory_limit_exceeded (1042) or std::bad_alloc, and the database keeps
// committing. (The store's slabs and index tables come from malloc, not operator new:
// their failures take the same path, a std::bad_alloc before the point of no return.)
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  Database open() const { return open(GetParam()); }
  Database open(const Place& place) const {
    Options o;
    if (place.durable) {
      o.path = dir_.path();
      o.durability = place.durability;
    }
    return Database::open(o);
  }

 public:
  // Every row.
  static std::string state(Database& db) {
    Transaction tr = db.create_transaction();
    std::string out;
    tr.visit_range("", "\xff", {}, [&](std::string_view k, std::string_view v) {
      out.append(k).append("=").append(v).append(",");
    });
    return out;
  }

 protected:
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

// Fails each allocation of a commit of `write` in turn (round n: the n-th), `prepare`
// running before each outside the failure; each time the commit happens whole or not at
// all, a refused one with 1042 or std::bad_alloc, and the database commits on. Returns how
// many commits failed.
int fail_each_allocation(Database& db, const std::function<void(Transaction&, int)>& write,
                         const std::function<void(Database&)>& prepare = {}) {
  int failed = 0;
  for (long n = 1;; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n));
    if (prepare) prepare(db);
    const std::string before = AllocationFailure::state(db);
    Transaction tr = db.create_transaction();
    write(tr, static_cast<int>(n));
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
      EXPECT_EQ(AllocationFailure::state(db), before);
    } else {
      EXPECT_NE(AllocationFailure::state(db), before);
    }
    // The database goes on committing.
    EXPECT_NO_THROW(db.run([&](Transaction& t) { write(t, static_cast<int>(n)); }));
    if (::testing::Test::HasFailure() || !fired) break;  // each allocation has failed once
  }
  return failed;
}

TEST_P(AllocationFailure, EveryAllocationOfACommitMayFailWithoutHarm) {
  Database db = open();
  db.run([](Transaction& tr) { write_round(tr, 0); });
  EXPECT_GT(fail_each_allocation(db, write_round), 0);
}

// A clear_range pushes a tombstone on each live key in it: thousands of keys grow the
// store's collection queues (which an emptied queue gives back) during the apply.
TEST_P(AllocationFailure, AClearRangeOfManyKeys) {
  Database db = open();
  constexpr int kRangeKeys = 5000;
  auto fill = [](Database& d) {
    d.run([](Transaction& tr) {
      for (int i = 0; i < kRangeKeys; ++i) tr.set("r" + std::to_string(10000 + i), "v");
    });
  };
  EXPECT_GT(fail_each_allocation(
                db, [](Transaction& tr, int) { tr.clear_range("r", "s"); }, fill),
            0);
}

// Records of values over 1 KiB come from operator new rather than the store's slabs.
TEST_P(AllocationFailure, ValuesOverOneKibibyte) {
  Database db = open();
  EXPECT_GT(fail_each_allocation(db,
                                 [](Transaction& tr, int round) {
                                   tr.set("big", std::string(2000 + round, 'b'));
                                   tr.set("huge", std::string(90'000 + round, 'h'));
                                   tr.set("new" + std::to_string(round), std::string(5000, 'n'));
                                 }),
            0);
}

// Atomic operations' results are computed at apply time, longer than a short string and
// than 1 KiB: appends that grow a value, wide adds, byte_max, min and max, compare_and_clear.
TEST_P(AllocationFailure, LongAtomicResults) {
  Database db = open();
  db.run([](Transaction& tr) { tr.set("grow", std::string(1500, 'g')); });
  EXPECT_GT(fail_each_allocation(
                db,
                [](Transaction& tr, int round) {
                  const std::string wide(40, static_cast<char>(round));
                  tr.atomic_op(MutationType::append_if_fits, "grow", std::string(30, 'a'));
                  tr.atomic_op(MutationType::add, "wide", wide);
                  tr.atomic_op(MutationType::byte_max, "bmax",
                               std::string(64, 'm') + std::to_string(round));
                  tr.atomic_op(MutationType::max, "max", wide);
                  tr.atomic_op(MutationType::min, "min", wide);
                  tr.atomic_op(MutationType::compare_and_clear, "grow", wide);
                  tr.atomic_op(MutationType::bit_xor, "new" + std::to_string(round),
                               std::string(2000, 'x'));
                }),
            0);
}

// Versionstamped keys and values are made at apply time, from templates longer than a
// short string.
TEST_P(AllocationFailure, LongVersionstampedKeysAndValues) {
  Database db = open();
  auto operand = [](std::string tmpl, std::uint32_t offset) {
    for (int i = 0; i < 4; ++i) tmpl.push_back(static_cast<char>((offset >> (8 * i)) & 0xff));
    return tmpl;
  };
  EXPECT_GT(fail_each_allocation(
                db,
                [&](Transaction& tr, int round) {
                  tr.atomic_op(MutationType::set_versionstamped_key,
                               operand("stamped-key-" + std::string(10, '\0') + "-" +
                                           std::string(30, 'k') + std::to_string(round),
                                       12),
                               std::string(100, 'v'));
                  tr.atomic_op(MutationType::set_versionstamped_value, "stamped-value",
                               operand(std::string(10, '\0') + std::string(3000, 'v'), 0));
                }),
            0);
}

// The descriptors this process has open.
std::size_t open_descriptors() {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}

// Every opening of a durable database starts its log in a new segment, with the first
// commit: its file, its name and the writer's lists are allocated then. A refused commit
// leaves no descriptor of that file open.
TEST_P(AllocationFailure, ANewLogSegment) {
  if (!GetParam().durable || GetParam().durability == Durability::none) {
    GTEST_SKIP() << "no log";
  }
  const std::size_t descriptors = open_descriptors();
  std::optional<Database> db(open());
  auto reopen = [&](Database&) {
    db.reset();
    db.emplace(open());
  };
  EXPECT_GT(fail_each_allocation(
                *db, [](Transaction& tr, int round) { tr.set("k", std::to_string(round)); },
                [&](Database&) { reopen(*db); }),
            0);
  db.reset();
  EXPECT_EQ(open_descriptors(), descriptors);
}

// A commit that changes a watched key fires the watch after its point of no return:
// firing must not allocate (the watch saw a value longer than a short string).
TEST_P(AllocationFailure, FiringWatches) {
  Database db = open();
  std::vector<Watch> watches;
  auto arm = [&](Database& d) {
    Transaction tr = d.create_transaction();
    watches.push_back(tr.watch("watched"));
    watches.push_back(tr.watch("watched2"));
    tr.commit();
  };
  EXPECT_GT(fail_each_allocation(
                db,
                [](Transaction& tr, int round) {
                  tr.set("watched", std::string(40, 'w') + std::to_string(round));
                  tr.clear_range("watched2", "watched3");
                  tr.set("watched2", std::string(40, 'v') + std::to_string(round));
                },
                arm),
            0);
  // Each was fired by the commit, or by the one after a refused commit.
  for (Watch& w : watches) w.wait();
}

// A get into a string too short for the value grows the string: when that allocation (or
// any other of the get's) fails, the get throws and the caller's string is as it was.
TEST(GetAllocation, AGetThatCannotAllocateLeavesTheCallersStringAsItWas) {
  Database db = Database::open();
  const std::string value(1000, 'v');
  db.run([&](Transaction& tr) { tr.set("k", value); });
  Transaction tr = db.create_transaction();
  bool fired_once = false;
  for (long n = 1;; ++n) {
    std::string out = "what the caller had";
    fa::fail_nth(n);
    try {
      EXPECT_TRUE(tr.get("k", out));
      fa::fail_nth(0);
      EXPECT_EQ(out, value);
      break;
    } catch (const std::bad_alloc&) {
      fa::fail_nth(0);
      fired_once = true;
      EXPECT_EQ(out, "what the caller had") << "allocation " << n;
    }
    tr.reset();
  }
  EXPECT_TRUE(fired_once);  // some allocation of the get was failed
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
