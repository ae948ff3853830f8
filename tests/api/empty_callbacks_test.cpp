// Empty std::functions where the API calls back: commit_async's callback, Watch::on_ready's
// and visit_range's visitor are refused with invalid_argument (9003) when given, before
// anything happens, in memory and on disk; the transaction or watch goes on as before.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/strata.hpp"

#include "api/api_test_util.hpp"
#include "durability/temp_dir.hpp"
#include "support/error_matchers.hpp"
#include "support/test_database.hpp"

namespace strata {
namespace {

using apitest::read_key;
using testing::TempDir;
using testing::ThrowsCode;

struct Place {
  const char* name;
  bool durable;
};

class EmptyCallbacks : public ::testing::TestWithParam<Place> {
 protected:
  void SetUp() override {
    if (GetParam().durable) STRATA_SKIP_ON_CLUSTER("the durable case opens a directory");
  }
  Database open() {
    Options o;
    if (GetParam().durable) o.path = dir_.path();
    return testing::open_database(o);
  }
  TempDir dir_;
};

TEST_P(EmptyCallbacks, CommitAsyncRefusesAnEmptyCallbackAndCommitsNothing) {
  Database db = open();
  Transaction tr = db.create_transaction();
  tr.set("k", "v");
  EXPECT_THAT([&] { tr.commit_async(CommitCallback{}); }, ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([&] { tr.commit_async(nullptr); }, ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_EQ(read_key(db, "k"), std::nullopt);
  // The transaction is as it was: it commits.
  EXPECT_EQ(tr.get("k"), "v");
  tr.commit();
  EXPECT_EQ(read_key(db, "k"), "v");
  // A read-only transaction, which commit_async settles at once, refuses it too.
  Transaction reader = db.create_transaction();
  (void)reader.get("k");
  EXPECT_THAT([&] { reader.commit_async(CommitCallback{}); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_NO_THROW(reader.commit());
}

TEST_P(EmptyCallbacks, OnReadyRefusesAnEmptyCallback) {
  Database db = open();
  Transaction tr = db.create_transaction();
  Watch w = tr.watch("k");
  tr.commit();
  EXPECT_THAT([&] { w.on_ready({}); }, ThrowsCode(ErrorCode::invalid_argument));
  int fired = 0;
  w.on_ready([&] { ++fired; });
  db.run([](Transaction& t) { t.set("k", "v"); });  // fires the watch
  if (testing::on_cluster()) w.wait();              // there, on FoundationDB's network thread
  EXPECT_TRUE(w.wait_for(std::chrono::milliseconds(0)));
  EXPECT_EQ(fired, 1);
  // On a watch that has fired (whose callbacks run at once) too.
  EXPECT_THAT([&] { w.on_ready(std::function<void()>{}); },
              ThrowsCode(ErrorCode::invalid_argument));
}

TEST_P(EmptyCallbacks, VisitRangeRefusesAnEmptyVisitorBeforeReading) {
  Database db = open();
  db.run([](Transaction& t) { t.set("a", "1"); });
  Transaction tr = db.create_transaction();
  const RowVisitor empty;
  EXPECT_THAT([&] { tr.visit_range("a", "z", {}, empty); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT(
      [&] {
        tr.visit_range(KeyRange{"a", "z"}, {}, empty);
      },
      ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([&] { tr.snapshot().visit_range("a", "z", {}, empty); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT(
      [&] {
        tr.snapshot().visit_range(KeyRange{"a", "z"}, {}, empty);
      },
      ThrowsCode(ErrorCode::invalid_argument));
  // Nothing was read: no read conflict range, and the transaction reads on.
  EXPECT_TRUE(tr.read_conflict_ranges().empty());
  std::size_t rows = tr.visit_range("a", "z", {}, [](std::string_view, std::string_view) {});
  EXPECT_EQ(rows, 1U);
}

INSTANTIATE_TEST_SUITE_P(InMemoryAndOnDisk, EmptyCallbacks,
                         ::testing::Values(Place{"InMemory", false}, Place{"OnDisk", true}),
                         [](const ::testing::TestParamInfo<Place>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace strata
