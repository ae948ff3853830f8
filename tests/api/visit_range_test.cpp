// Transaction::visit_range and ReadView::visit_range: the rows, limits and conflict spans
// of get_range, handed to a visitor instead of copied; a visitor that uses its own
// transaction is refused; a visitor that throws leaves the read conflicting on its whole
// range. (RywModel also compares every random range read's visit with the model.)
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strata/database.hpp"
#include "strata/transaction.hpp"

#include "api/api_test_util.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::put_all;
using apitest::reader_conflicts_with;

// The rows visit_range passes, copied, and checked against its return value.
std::vector<KeyValue> visited(Transaction& tr, std::string_view begin, std::string_view end,
                              RangeOptions options, bool snapshot = false) {
  std::vector<KeyValue> rows;
  auto copy = [&](std::string_view k, std::string_view v) {
    rows.push_back({std::string(k), std::string(v)});
  };
  std::size_t n = snapshot ? tr.snapshot().visit_range(begin, end, options, copy)
                           : tr.visit_range(begin, end, options, copy);
  EXPECT_EQ(n, rows.size());
  return rows;
}

Database five_keys() {
  Database db = testing::open_database();
  put_all(db, {{"k1", "1"}, {"k2", "2"}, {"k3", "3"}, {"k4", "4"}, {"k5", "5"}});
  return db;
}

bool conflicts(const std::function<void(Transaction&)>& reader, std::string_view written) {
  Database db = five_keys();
  return reader_conflicts_with(db, reader, [&](Transaction& tr) { tr.set(written, "w"); });
}

// Random keys among k0..k7 and k0x..k7x (between and beside five_keys()'s), and commits
// that set, rewrite and clear some of them: the reads below run over keys of every age.
class RandomKeys {
 public:
  explicit RandomKeys(unsigned seed) : rng_(seed) {}
  std::string key() { return "k" + std::to_string(rng_() % 8) + (rng_() % 2 ? "x" : ""); }
  std::mt19937& rng() { return rng_; }
  // Commits four writes: a clear one time in three, else a value of 1 to 3 bytes.
  void churn(Database& db) {
    Transaction tr = db.create_transaction();
    for (int i = 0; i < 4; ++i) {
      if (rng_() % 3 == 0) {
        tr.clear(key());
      } else {
        tr.set(key(), std::string(1 + rng_() % 3, 'v'));
      }
    }
    tr.commit();
  }

 private:
  std::mt19937 rng_;
};

TEST(VisitRange, MatchesGetRangeOverRandomReadsWithOwnWritesAndLimits) {
  Database db = five_keys();
  RandomKeys random(515);
  std::mt19937& rng = random.rng();
  auto key = [&] { return random.key(); };
  for (int iter = 0; iter < 300; ++iter) {
    Transaction tr = db.create_transaction();
    for (int op = 0; op < 6; ++op) {
      switch (rng() % 4) {
        case 0:
          tr.set(key(), "v" + std::to_string(rng() % 1000));
          break;
        case 1:
          tr.clear(key());
          break;
        case 2:
          tr.atomic_op(MutationType::append_if_fits, key(), "+");
          break;
        default: {
          std::string b = key(), e = key();
          if (b > e) std::swap(b, e);
          tr.clear_range(b, e);
        }
      }
      std::string b = key(), e = key();
      if (b > e) std::swap(b, e);
      RangeOptions o{.limit = static_cast<int>(rng() % 4),
                     .reverse = rng() % 2 == 0,
                     .target_bytes = rng() % 3 == 0 ? static_cast<int>(rng() % 8) : 0};
      bool snapshot = rng() % 2 == 0;
      std::vector<KeyValue> want =
          snapshot ? tr.snapshot().get_range(b, e, o) : tr.get_range(b, e, o);
      ASSERT_EQ(visited(tr, b, e, o, snapshot), want) << "iteration " << iter;
    }
  }
}

// A read with no writes of its own to merge walks the store alone; one with a write outside
// its range merges the write map. Both read at one version, over keys set, rewritten and
// cleared before and after it: same rows, same "more", with every limit, direction and
// byte target, snapshot or not.
TEST(VisitRange, StoreOnlyReadAnswersAsTheMergingRead) {
  Database db = five_keys();
  RandomKeys random(2049);
  std::mt19937& rng = random.rng();
  auto key = [&] { return random.key(); };
  auto churn = [&] { random.churn(db); };
  for (int iter = 0; iter < 200; ++iter) {
    churn();
    Transaction alone = db.create_transaction();
    Transaction merging = db.create_transaction();
    merging.set_read_version(alone.read_version());
    merging.set("~outside", "w");  // beyond every range read below
    churn();                       // newer versions neither read may see
    std::string b = key(), e = key();
    if (b > e) std::swap(b, e);
    if (rng() % 4 == 0) b = "";
    RangeOptions o{.limit = static_cast<int>(rng() % 4),
                   .reverse = rng() % 2 == 0,
                   .target_bytes = rng() % 3 == 0 ? static_cast<int>(rng() % 8) : 0};
    bool snapshot = rng() % 2 == 0;
    RangeResult want =
        snapshot ? merging.snapshot().get_range(b, e, o) : merging.get_range(b, e, o);
    RangeResult got = snapshot ? alone.snapshot().get_range(b, e, o) : alone.get_range(b, e, o);
    ASSERT_EQ(got, want) << "iteration " << iter;
    ASSERT_EQ(got.more, want.more) << "iteration " << iter;
    ASSERT_EQ(visited(alone, b, e, o, snapshot), visited(merging, b, e, o, snapshot))
        << "iteration " << iter;
    ASSERT_EQ(alone.read_conflict_ranges(), merging.read_conflict_ranges()) << "iteration " << iter;
  }
}

// A visit of one row with no writes of its own to merge takes a path of its own (a queue's
// push and pop). It answers as get_range of one row does, which walks the store through the
// general read, and leaves the same conflict span; so does a visit of one row that merges a
// write outside its range. Cases: keys set, rewritten and cleared before and after the read
// version (a range whose first key is a deleted one), both directions, byte targets,
// snapshot or not, ranges empty or reversed, a transaction that wrote in the range but does
// not see its writes (snapshot reads without read-your-writes), and one with a pending
// versionstamped key (its reads check the span, as get_range's do).
TEST(VisitRange, OneRowVisitWithNothingToMergeAnswersAsTheGeneralRead) {
  Database db = five_keys();
  RandomKeys random(4093);
  std::mt19937& rng = random.rng();
  auto key = [&] { return random.key(); };
  auto churn = [&] { random.churn(db); };
  // The answer, or the error code it throws.
  struct Answer {
    std::vector<KeyValue> rows;
    int error = 0;
    bool operator==(const Answer&) const = default;
  };
  auto answer = [](const std::function<std::vector<KeyValue>()>& read) {
    Answer a;
    try {
      a.rows = read();
    } catch (const Error& e) {
      a.error = e.code();
    }
    return a;
  };
  for (int iter = 0; iter < 400; ++iter) {
    churn();
    Transaction visiting = db.create_transaction();
    Transaction reading = db.create_transaction();  // get_range: the general read
    Transaction merging = db.create_transaction();  // a write outside every range below
    const Version version = visiting.read_version();
    reading.set_read_version(version);
    merging.set_read_version(version);
    merging.set("~outside", "w");
    const int own = static_cast<int>(rng() % 4);
    for (Transaction* tr : {&visiting, &reading, &merging}) {
      if (own == 1) {  // written in the range, read without seeing it
        tr->set_snapshot_read_your_writes(false);
        tr->set("k3", "own");
        tr->clear("k1");
      } else if (own == 2) {  // a versionstamped key that may land in the range
        std::string stamped = "k4";
        stamped.append(10, '\0');
        stamped.append("\x02\0\0\0", 4);
        tr->atomic_op(MutationType::set_versionstamped_key, stamped, "v");
      }
    }
    churn();  // newer versions none of the reads may see
    std::string b = key(), e = key();
    if (rng() % 4 != 0 && b > e) std::swap(b, e);
    if (rng() % 5 == 0) b = "";
    const RangeOptions o{.limit = 1,
                         .reverse = rng() % 2 == 0,
                         .target_bytes = rng() % 3 == 0 ? static_cast<int>(rng() % 8) : 0};
    const bool snapshot = rng() % 2 == 0;
    const Answer want = answer([&] {
      return snapshot ? reading.snapshot().get_range(b, e, o) : reading.get_range(b, e, o);
    });
    const Answer got = answer([&] { return visited(visiting, b, e, o, snapshot); });
    ASSERT_EQ(got, want) << "iteration " << iter;
    ASSERT_EQ(visiting.read_conflict_ranges(), reading.read_conflict_ranges())
        << "iteration " << iter;
    ASSERT_EQ(answer([&] { return visited(merging, b, e, o, snapshot); }), want)
        << "iteration " << iter;
    ASSERT_EQ(merging.read_conflict_ranges(), reading.read_conflict_ranges())
        << "iteration " << iter;
    // A visitor that throws at the row leaves the whole range conflicting, on either path.
    auto give_up = [](std::string_view, std::string_view) { throw std::runtime_error("no"); };
    auto throwing_visit = [&](Transaction& tr) {
      try {
        snapshot ? tr.snapshot().visit_range(b, e, o, give_up) : tr.visit_range(b, e, o, give_up);
      } catch (const std::runtime_error&) {
        return true;
      } catch (const Error&) {
      }
      return false;
    };
    Transaction visiting2 = db.create_transaction();
    Transaction merging2 = db.create_transaction();
    visiting2.set_read_version(version);
    merging2.set_read_version(version);
    merging2.set("~outside", "w");
    ASSERT_EQ(throwing_visit(visiting2), throwing_visit(merging2)) << "iteration " << iter;
    ASSERT_EQ(visiting2.read_conflict_ranges(), merging2.read_conflict_ranges())
        << "iteration " << iter;
  }
}

TEST(VisitRange, ViewsAreValidDuringTheCallAndNothingIsCopiedBeforeIt) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  tr.set("k2", "own");
  std::string seen;
  tr.visit_range("k0", "k9", {}, [&](std::string_view k, std::string_view v) {
    seen.append(k).append("=").append(v).append(" ");
  });
  EXPECT_EQ(seen, "k1=1 k2=own k3=3 k4=4 k5=5 ");
}

TEST(VisitRange, LimitedForwardVisitConflictsOnlyUpToItsLastRow) {
  auto visit2 = [](Transaction& tr) {
    ASSERT_EQ(apitest::keys_of(visited(tr, "k0", "k9", {.limit = 2})),
              (std::vector<std::string>{"k1", "k2"}));
  };
  EXPECT_TRUE(conflicts(visit2, "k0"));
  EXPECT_TRUE(conflicts(visit2, "k2"));
  EXPECT_FALSE(conflicts(visit2, std::string("k2") + '\0')) << "just after the last row";
  EXPECT_FALSE(conflicts(visit2, "k3"));
}

TEST(VisitRange, LimitedReverseVisitConflictsFromItsLastRowToTheEnd) {
  auto visit2 = [](Transaction& tr) {
    ASSERT_EQ(apitest::keys_of(visited(tr, "k0", "k9", {.limit = 2, .reverse = true})),
              (std::vector<std::string>{"k5", "k4"}));
  };
  EXPECT_TRUE(conflicts(visit2, "k4"));
  EXPECT_TRUE(conflicts(visit2, "k8"));
  EXPECT_FALSE(conflicts(visit2, "k3\xff"));
}

TEST(VisitRange, SnapshotVisitAddsNoConflict) {
  auto visit_all = [](Transaction& tr) { visited(tr, "k0", "k9", {}, /*snapshot=*/true); };
  EXPECT_FALSE(conflicts(visit_all, "k3"));
}

TEST(VisitRange, VisitorMayNotUseItsOwnTransaction) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  Transaction other = db.create_transaction();
  const Error retryable(ErrorCode::not_committed, "test");
  std::vector<std::function<void()>> uses = {
      [&] { (void)tr.get("k1"); },
      [&] { (void)tr.snapshot().get("k1"); },
      [&] { (void)tr.get_range("k0", "k9"); },
      [&] { tr.visit_range("k0", "k9", {}, [](std::string_view, std::string_view) {}); },
      [&] { tr.set("k7", "x"); },
      [&] { tr.clear("k1"); },
      [&] { tr.atomic_op(MutationType::add, "n", std::string(8, '\1')); },
      [&] { tr.add_read_conflict_key("k1"); },
      [&] { tr.commit(); },
      [&] { tr.reset(); },
      [&] { tr.cancel(); },
      [&] { tr.on_error(retryable); },
  };
  for (std::size_t i = 0; i < uses.size(); ++i) {
    int code = 0;
    tr.visit_range("k0", "k9", {.limit = 1}, [&](std::string_view, std::string_view) {
      try {
        uses[i]();
      } catch (const Error& e) {
        code = e.code();
      }
      (void)other.get("k2");  // other transactions are fine
    });
    EXPECT_EQ(code, static_cast<int>(ErrorCode::client_invalid_operation)) << "use " << i;
  }
  // Untouched by all that: it still reads, writes and commits.
  tr.set("k9", "9");
  EXPECT_EQ(tr.get("k9"), "9");
  tr.commit();
  EXPECT_EQ(apitest::read_key(db, "k9"), "9");
}

TEST(VisitRange, VisitorExceptionPropagatesAndConflictsOnTheWholeRange) {
  auto throw_at_first_row = [](Transaction& tr) {
    EXPECT_THROW(tr.visit_range("k0", "k9", {.limit = 1},
                                [](std::string_view, std::string_view) {
                                  throw std::runtime_error("visitor gives up");
                                }),
                 std::runtime_error);
    tr.set("~after", "x");  // still usable
  };
  // A limited read of one row would not conflict on k3; a read its visitor abandoned does.
  EXPECT_TRUE(conflicts(throw_at_first_row, "k3"));
  EXPECT_TRUE(conflicts(throw_at_first_row, "k8"));
  EXPECT_FALSE(conflicts(throw_at_first_row, "k9"));
}

TEST(VisitRange, PendingVersionstampedKeyRefusesBeforeAnyRowIsVisited) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  std::string key = "k3";
  key.append(10, '\0');
  key.append("\x02\0\0\0", 4);  // offset 2: the stamp goes right after "k3"
  tr.atomic_op(MutationType::set_versionstamped_key, key, "v");
  int rows = 0;
  try {
    tr.visit_range("k0", "k9", {}, [&](std::string_view, std::string_view) { ++rows; });
    FAIL() << "expected accessed_unreadable";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), static_cast<int>(ErrorCode::accessed_unreadable));
  }
  EXPECT_EQ(rows, 0);
  // A limited visit that ends before the stamped keys may land sees its rows.
  EXPECT_EQ(apitest::keys_of(visited(tr, "k0", "k9", {.limit = 2})),
            (std::vector<std::string>{"k1", "k2"}));
}

// The visitor is any callable of the row's shape, taken by reference: a lambda, a
// RowVisitor kept in a variable, a function or a pointer to one, a callable that returns a
// value (ignored) or that converts to bool; an empty RowVisitor or a null function pointer
// is refused with invalid_argument (9003) before anything is read.
int g_rows = 0;
void count_row(std::string_view, std::string_view) { ++g_rows; }

struct FalsyCounter {
  int* rows;
  void operator()(std::string_view, std::string_view) const { ++*rows; }
  explicit operator bool() const { return false; }  // not an emptiness std::function knows
};

TEST(VisitRange, TakesAnyCallableByReference) {
  Database db = Database::open();
  put_all(db, {{"a", "1"}, {"b", "2"}, {"c", "3"}});
  Transaction tr = db.create_transaction();
  int from_lambda = 0;
  EXPECT_EQ(
      tr.visit_range("a", "z", {}, [&](std::string_view, std::string_view) { ++from_lambda; }), 3u);
  EXPECT_EQ(from_lambda, 3);

  std::string keys;
  const RowVisitor kept = [&](std::string_view k, std::string_view) { keys.append(k); };
  EXPECT_EQ(tr.snapshot().visit_range(KeyRange{"a", "z"}, {.reverse = true}, kept), 3u);
  EXPECT_EQ(keys, "cba");

  g_rows = 0;
  EXPECT_EQ(tr.visit_range("b", "z", {}, count_row), 2u);
  EXPECT_EQ(tr.visit_range("b", "z", {}, &count_row), 2u);
  EXPECT_EQ(g_rows, 4);

  int returned = 0;
  EXPECT_EQ(
      tr.visit_range("a", "z", {}, [&](std::string_view, std::string_view) { return ++returned; }),
      3u);
  EXPECT_EQ(returned, 3);

  int falsy_rows = 0;
  EXPECT_EQ(tr.visit_range("a", "z", {}, FalsyCounter{&falsy_rows}), 3u);
  EXPECT_EQ(falsy_rows, 3);

  void (*null_visitor)(std::string_view, std::string_view) = nullptr;
  try {
    (void)tr.visit_range("a", "z", {}, null_visitor);
    ADD_FAILURE() << "a null visitor was called";
  } catch (const Error& e) {
    EXPECT_EQ(e.error_code(), ErrorCode::invalid_argument);
  }
}

TEST(VisitRange, BadArgumentsThrowAsGetRangeDoes) {
  Database db = five_keys();
  Transaction tr = db.create_transaction();
  auto none = [](std::string_view, std::string_view) {};
  try {
    tr.visit_range("k0", "k9", {.limit = -1}, none);
    FAIL() << "expected range_limits_invalid";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), static_cast<int>(ErrorCode::range_limits_invalid));
  }
  try {
    tr.visit_range("\xff\x01", "\xff\x02", {}, none);
    FAIL() << "expected key_outside_legal_range";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), static_cast<int>(ErrorCode::key_outside_legal_range));
  }
  EXPECT_EQ(tr.visit_range("k9", "k0", {}, none), 0u) << "begin >= end reads nothing";
}

}  // namespace
}  // namespace strata
